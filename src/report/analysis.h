// The report's analysis: benchmark records -> plain data (ReportModel) that
// the printers (report.h: the document, its answer, Markdown, HTML and SVG)
// turn into words. Nothing here touches the file system.
//
// Terms used throughout:
// - A configuration is what a benchmark point ran on and how: machine()
//   (instance, else label, else hostname), device, precision, batching
//   policy and its token budget (max_batch_tokens; "tokens" batching only),
//   max length, data (shape and content), threads, tokenizer threads, the
//   user's label, the model and the hourly price. Batch size is not part of
//   it: it is the x axis of the charts.
// - A point is one configuration at one batch size. Records of the same
//   point (the same sweep run twice) are merged: the median of their medians,
//   the least minimum and the greatest maximum.
// - The corpus is the number of rows every time and cost is projected to, so
//   that points measured on different data can be compared: --corpus-rows,
//   else the largest data.rows among the records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cost/prices.h"
#include "infercost/status.h"
#include "record/record.h"

namespace infercost::report {

// Parses a duration: one or more <number><unit> parts, units h, m and s in
// that order, each at most once: "2h", "90m", "3600s", "1h30m", "1.5h",
// "1h 30m". The result is in seconds and must be positive. Errors
// (kInvalidArgument) quote the text and say what is accepted.
Result<double> parse_duration(std::string_view text);

// The records are read with record::load_sourced_records (errors name the
// file and line); each keeps its origin ("results.jsonl: line 3"), which the
// report shows for failed points and reduces to the file elsewhere.

// Re-prices every record that names an instance: its hourly price becomes
// the instance's price (cost::find_instance in `lists`: with `list_name`
// only that list, else the user's lists, then the current built-in ones,
// then seed-2021) with the record's own spot discount, platform surcharge
// and machine count (cost::hourly_usd). Records without an instance stay
// unpriced. An instance missing from the lists is kInvalidArgument naming
// the instance, the file and line of a record holding it, and the lists
// searched.
Status reprice(std::vector<record::SourcedRecord>& records, const std::vector<cost::PriceList>& lists,
               const std::string& list_name);

// The order precisions are listed in (record.h).
using record::precision_rank;

struct Options {
  std::string title = "infercost benchmark report";
  std::optional<double> deadline_seconds;  // --deadline; none: not asked
  std::string deadline_text;               // as the user wrote it, e.g. "2h"
  int64_t corpus_rows = 0;                 // 0: the largest data.rows among the records
  std::string pricing_note;                // e.g. how the records were re-priced; "" if not
};

// A distinct input data set among the records: same content hash and rows.
struct DataSet {
  int index = 0;  // 1-based, in order of shape, rows and content hash
  std::string shape;
  std::string content_sha256;
  int64_t rows = 0;
  int64_t tokens = 0;
  std::vector<std::string> machines;  // that ran it, sorted
};

// A configuration (record::Setup: what identifies it, its price included)
// and what the report knows of it.
struct Configuration : record::Setup {
  // GPUs the configuration ran on: those cuda:N,M names; for cuda and
  // cuda:all the instance's GPUs, else those of the hardware; 0 on the CPU.
  int gpus = 0;
  std::string price_list;  // of the records' instance; "" when they name none
  // Short display name: the machine, then only the fields that differ
  // between the report's configurations ("p3.8xlarge cuda:all bf16 tokens").
  std::string name;
  // Every field, for tables: "cuda:all bf16 tokens json-3, threads auto,
  // 2 tokenizer threads, max length 512, at most 16,384 tokens per batch".
  std::string description;
};

// Its RunCounts: the rows its first record classified (classified_rows()),
// that record's other counts, and the median shares of its records.
struct Point : record::RunCounts {
  size_t config = 0;  // index into ReportModel::configs
  int batch_size = 0;
  std::string batch_size_rule;  // "40xgpus", ... or ""
  int records = 0;              // merged into this point
  std::vector<std::string> sources;
  record::Spread wall_seconds;
  record::Spread rows_per_second;
  record::Spread tokens_per_second;
  int64_t peak_rss_bytes = 0;
  double rss_mean_bytes = 0;
  // GPUs the point ran on, for rows per GPU: gpus_monitored, else
  // Configuration::gpus; 0 for CPU points.
  int gpus = 0;
  // GPU memory from monitor.gpus of GPU points (is_gpu_device(): config.device
  // is cuda, cuda:all or cuda:N,M), as fractions of each GPU's total memory;
  // a CPU point's monitor.gpus is ignored.
  int gpus_monitored = 0;              // 0: no GPU monitoring (or not a GPU point)
  int64_t gpu_memory_total_bytes = 0;  // of one GPU (the largest)
  double gpu_memory_peak = 0;          // peak used / total, mean over the GPUs
  double gpu_memory_peak_max = 0;      // the busiest GPU's peak used / total
  double gpu_memory_mean = 0;          // mean used / total, mean over the GPUs
  double gpu_utilization_mean = 0;     // 0..1, mean over the GPUs
  // Cost at Configuration::usd_per_hour (cost::estimate_cost at the median,
  // least and greatest wall time); all 0 when unpriced. Like the wall time,
  // they leave out loading the model (the record's stage "load").
  bool priced = false;
  record::Spread run_usd;               // this run's own data
  record::Spread usd_per_million_rows;  // from the wall time spread
  double usd_per_million_tokens = 0;
  // The corpus at the measured rate (rows / wall seconds), min..max from the
  // wall time spread. Seconds are set for unpriced points too.
  record::Spread corpus_seconds;
  record::Spread corpus_usd;
};

// A record that is not charted: status "failed", or "ok" without a usable
// timing (no rows or no time).
struct FailedPoint {
  std::string machine;
  std::string description;  // configuration fields
  int batch_size = 0;
  std::string reason;
  std::string source;  // file and line: "results.jsonl: line 9"
};

// A point's time and cost, for choosing among points.
struct TimeCost {
  double seconds = 0;
  double usd = 0;
};

// For a deadline: the cheapest point that finishes within it, or, when none
// does, the one that comes closest (the fastest).
struct DeadlineChoice {
  std::optional<size_t> meets;
  std::optional<size_t> closest;  // set only when nothing meets it
};

struct ReportModel {
  std::string title;
  std::vector<std::string> sources;  // the record files, as given, in order
  size_t records = 0;                // read
  // Earliest and latest started_at among the records ("" if none has one).
  std::string first_started_at, last_started_at;
  int64_t corpus_rows = 0;
  bool corpus_rows_given = false;  // --corpus-rows; else the largest data.rows
  std::optional<double> deadline_seconds;
  std::string deadline_text;
  std::string pricing_note;
  std::vector<std::string> price_sources;  // "seed-2021 (source; date)" for each list used
  // Which price list and date priced which instances (machine() for a record
  // priced without an instance), by list and date. When the priced points
  // span more than one list, or one instance is priced from more than one
  // list or date, the answer warns that their costs are not like for like.
  struct PriceUse {
    std::string list;  // "" when the records do not name it
    std::string date;
    std::vector<std::string> instances;  // sorted
  };
  std::vector<PriceUse> price_uses;
  std::vector<DataSet> data_sets;
  std::vector<Configuration> configs;  // sorted by their fields
  std::vector<Point> points;           // by configuration, then batch size
  std::vector<FailedPoint> failed;     // in record order
  std::vector<size_t> pareto;          // priced points on the time/cost front, fastest first
  // The priced points span more than one price list, or one instance is
  // priced from more than one list or date: their costs are not like for like.
  bool prices_mixed = false;
  bool any_gpu_monitor = false;  // a GPU point has GPU monitoring
  // The points the answer names (indices into points), at the corpus's
  // median time and cost.
  struct Choices {
    std::optional<size_t> fastest;         // of every point
    std::optional<size_t> cheapest;        // of the priced points (ties: the faster)
    std::optional<size_t> fastest_priced;  // of the priced points (ties: the cheaper)
    DeadlineChoice deadline;               // of the priced points, with a deadline
  } choices;
};

// Builds the model. kInvalidArgument when there are no records at all.
Result<ReportModel> build_model(const std::vector<record::SourcedRecord>& records, const Options& options);

// ---- The pieces of the analysis, exposed for tests. ----

// Indices of the points no other point dominates (at most as slow and at
// most as costly, and better in one), fastest first; equal points are all
// kept, in index order.
std::vector<size_t> pareto_front(const std::vector<TimeCost>& points);

// Index of the cheapest point (ties: the faster, then the lower index), and
// of the fastest (ties: the cheaper, then the lower index). Empty input: none.
std::optional<size_t> cheapest(const std::vector<TimeCost>& points);
std::optional<size_t> fastest(const std::vector<TimeCost>& points);

DeadlineChoice choose_for_deadline(const std::vector<TimeCost>& points, double deadline_seconds);

}  // namespace infercost::report
