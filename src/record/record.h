// Benchmark records: one JSON object per benchmark point, one per line
// (JSON lines), written by `infercost bench` and read by `infercost report`
// and `infercost plan`. The schema is versioned ("schema": kSchema) and
// documented field by field in docs/bench-records.md; readers refuse other
// major versions and ignore fields they do not know.
//
// Data flows one way: a run's metrics -> a record -> cost and report.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "infercost/cost.h"
#include "infercost/gpu_usage.h"
#include "infercost/status.h"

namespace infercost::record {

inline constexpr const char* kSchema = "infercost.bench/1";

// A measure over the timed repetitions of a point.
struct Spread {
  double median = 0;
  double min = 0;
  double max = 0;
  // (max - min) / median; 0 when median is 0.
  double relative_spread() const { return median != 0 ? (max - min) / median : 0; }
};
// Median, min and max of `values` (empty -> all 0). The median of an even
// count is the mean of the two middle values.
Spread spread_of(std::vector<double> values);

// What the runs of a point counted (the same in each repetition), and the
// shares derived from those counts.
struct RunCounts {
  int64_t rows = 0;
  int64_t tokens = 0;
  int64_t padded_tokens = 0;
  int64_t computed_tokens = 0;
  double padding_efficiency = 0;  // tokens / computed_tokens
  double batch_fill = 0;          // tokens / padded_tokens
};

struct GpuInfo {
  int index = 0;
  std::string name;
  int64_t memory_bytes = 0;
  std::string compute_capability;  // e.g. "9.0"
  std::string driver;
};

struct Hardware {
  std::string hostname;
  std::string cpu_model;
  int logical_cpus = 0;  // in this process's affinity mask
  std::string isa;       // backend::CpuInfo::isa()
  int64_t memory_bytes = 0;
  std::vector<GpuInfo> gpus;  // empty: none found (or not looked for)
};

struct Software {
  std::string infercost;  // version, e.g. "0.1.0"
  std::string git;        // revision the binary was built from; "" if unknown
  std::string compiler;
  std::string onednn;
  std::string os;      // PRETTY_NAME of /etc/os-release
  std::string kernel;  // uname -r
};

struct ModelInfo {
  std::string name;
  std::string architecture;  // config model_type: "distilbert", "bert"
  bool synthetic = false;
  int64_t parameters = 0;
  int layers = 0, hidden = 0, heads = 0, intermediate = 0, vocab = 0;
  // What the FLOP model counts beyond those (engine::EncoderShape): a GLU
  // FFN, per layer the keys a query sees on each side (0: all; empty: every
  // layer global), the relative terms of disentangled attention. Written only
  // where set.
  bool glu = false;
  std::vector<int> attention_windows;
  int relative_terms = 0;  // DeBERTa: c2p / p2c terms of each attention score
};

struct DataInfo {
  // "json-3", "parquet", "parquet-10" (made by infercost datagen for the
  // sweep), or "files" (the user's inputs).
  std::string shape;
  std::vector<std::string> inputs;  // as given to the run
  int64_t files = 0;
  int64_t bytes = 0;  // of the input files
  int64_t rows = 0;   // rows classified (null texts excluded)
  int64_t tokens = 0;
  // Token length (CLS/SEP included, after truncation) histogram: counts[i]
  // rows had a length in [edges[i], edges[i+1]); the last bucket is
  // [edges.back(), inf). Default edges: 1,9,17,33,65,129,257,513.
  std::vector<int> length_edges;
  std::vector<int64_t> length_counts;
  std::string content_sha256;  // of the input files' bytes, in input order
};

// The run settings a point's runs were made with, as the runs resolved
// them: one type for a record's Config and for the Setup (configuration) it
// belongs to. (A run's own settings are RunOptions, which record,
// below pipeline, cannot name; the bench fills these from its point.)
struct RunSettings {
  std::string device;     // "cpu", "cuda:0", "cuda:all"
  std::string precision;  // resolved: "fp32", "bf16", "fp16", "int8"
  std::string batching;   // "tokens" or "seed"
  int max_batch_tokens = 0;
  int threads = 0;
  int tokenizer_threads = 0;
  int max_length = 0;
  // What the runs computed: "classify" (`infercost run`) or "embed"
  // (`infercost embed`); written for "embed" only, so a record without it
  // (every record before embeddings) is a classification's.
  std::string task = "classify";
};

// A point's settings and its batch size.
struct Config : RunSettings {
  int batch_size = 0;  // resolved rows per batch
  // How batch_size was chosen: "" when given as a number; "100xvcpus",
  // "40xgpus", "70xgpus" (the study's per-device rules).
  std::string batch_size_rule;
};

// The instance a point represents and how it was priced (cost::Pricing).
struct InstanceInfo {
  std::string name;
  std::string price_list;
  std::string price_source;
  std::string price_date;
  double on_demand_usd_per_hour = 0;  // the list's price of one machine
  double spot_discount = 0;
  double platform_usd_per_hour = 0;
  int machines = 1;
  double usd_per_hour = 0;  // cost::hourly_usd(): what the run is charged per hour
  int gpus = 0;
  std::string gpu;
  int vcpus = 0;
};

struct Repetition {
  double wall_seconds = 0;
  double rows_per_second = 0;
  double tokens_per_second = 0;
  int64_t peak_rss_bytes = 0;
  std::map<std::string, double> stage_seconds;  // busy seconds per stage
};

// Sampled while the timed repetitions ran (the study's monitoring).
struct Monitor {
  double interval_seconds = 0;
  int64_t samples = 0;
  double cpu_busy_mean = 0;  // CPUs busy on average (2.0 = two CPUs fully)
  double cpu_busy_peak = 0;
  double rss_mean_bytes = 0;
  int64_t rss_peak_bytes = 0;
  std::vector<GpuUsage> gpus;
};

// Cost figures at InstanceInfo::usd_per_hour (cost::estimate_cost), from the
// median wall time.
// A point's cost (corpus_rows: what the projection is for; = data.rows when not given).
using CostInfo = cost::CostEstimate;

// A point's record; its RunCounts are the runs'.
struct Record : RunCounts {
  std::string schema = kSchema;
  std::string sweep_id;  // same for every point of one `infercost bench` call
  int point = 0;         // 1-based index within the sweep
  int points = 0;
  std::string started_at;            // UTC, ISO 8601 (2026-12-01T03:40:00Z)
  std::vector<std::string> command;  // the bench command line, argv
  // The command line of each repetition (argv; `infercost run ...`).
  std::vector<std::string> run_command;
  std::string status = "ok";  // "ok" or "failed"
  std::string error;          // why it failed (status "failed")
  std::string label;          // optional user label (--label), e.g. "laptop"

  Config config;
  std::optional<InstanceInfo> instance;
  Hardware hardware;
  Software software;
  ModelInfo model;
  DataInfo data;

  int warmup = 0;           // untimed runs before the timed ones
  int min_repetitions = 0;  // asked for
  double min_seconds = 0;   // asked for: repeat until the timed total reaches it
  std::vector<Repetition> repetitions;

  // Over the repetitions.
  Spread wall_seconds;
  Spread rows_per_second;
  Spread tokens_per_second;
  std::map<std::string, double> stage_seconds;  // median busy seconds per stage
  int64_t peak_rss_bytes = 0;                   // max over repetitions
  Monitor monitor;
  std::optional<CostInfo> cost;

  bool ok() const { return status == "ok"; }
  // Rows and real tokens the point classified: the run's counts, else (a
  // record without them) its data's.
  int64_t classified_rows() const { return rows > 0 ? rows : data.rows; }
  int64_t classified_tokens() const { return tokens > 0 ? tokens : data.tokens; }
  // The machine this point ran on or represents: instance name, else
  // label, else hostname.
  std::string machine() const;
};

// What identifies a configuration: what a benchmark point ran on and how.
// Batch size is not part of it (the report's charts put it on the x axis).
// `infercost report` groups records into configurations by it; `infercost
// plan` names the one each prediction's record ran. Adding a field: here,
// setup_of() and tied() (record.cc); the report names it where it differs.
// Its RunSettings are the record's config's, but max_batch_tokens: the token
// budget of "tokens" batching, 0 for "seed" (it has none).
struct Setup : RunSettings {
  std::string machine;  // Record::machine()
  std::string shape;    // data.shape
  int data_set = 0;     // which data, numbered by the report (0: not numbered)
  std::string label;    // the record's label; "" when it is machine()
  std::string model;    // model name
  bool synthetic = false;
  double usd_per_hour = 0;  // the hourly price it was priced at; 0: unpriced

  // By machine, device, precision (precision_rank), then every other field.
  bool operator<(const Setup& other) const;
  bool operator==(const Setup& other) const;
};
// The setup of `r`, at `usd_per_hour` (the caller's price of the record),
// data_set 0.
Setup setup_of(const Record& r, double usd_per_hour);

// The order precisions are listed in: fp32, bf16, fp16, int8, then any
// other (all of those equal).
int precision_rank(const std::string& precision);

// One line of JSON (no trailing newline), keys in schema order. The keys are
// listed once, for the writer and parse_record() both: for_each_record_field
// in record.cc (adding a field: the member, its line there, its value in
// tests/record/record_test.cc's sample and line).
std::string to_json_line(const Record& record);

// Parses one line. `origin` (e.g. "results.jsonl:3") starts every error.
// kCorruption for malformed JSON or wrong types; kUnsupported for another
// schema major version. Missing optional fields keep their defaults.
Result<Record> parse_record(std::string_view line, const std::string& origin);

// A record and where it was read ("results.jsonl: line 3").
struct SourcedRecord {
  Record record;
  std::string origin;
};

// Every record of JSON lines files, in file order; blank lines are skipped.
// Errors name the file and line (kCorruption, kUnsupported), or the file
// (kNotFound).
Result<std::vector<SourcedRecord>> load_sourced_records(const std::vector<std::string>& paths);
Result<std::vector<Record>> load_records(const std::vector<std::string>& paths);

}  // namespace infercost::record
