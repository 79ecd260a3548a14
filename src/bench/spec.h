// What `infercost bench` sweeps: list-valued axes whose cartesian product is
// the sweep's points, and the settings every point shares. Given as flags or
// as a JSON sweep file (docs/bench.md); flags override the file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "infercost/options.h"
#include "infercost/status.h"

namespace infercost::bench {

// A batch size on the sweep's batch-size axis: an absolute number of rows,
// the run's own default, the study's per-device rules N x vCPUs / N x GPUs,
// resolved for each point ("100xvcpus": 100 x the point's inference threads;
// "40xgpus": 40 x the GPUs of the point's device), or "auto" (the run sizes
// its batches from the device's memory: `infercost run --batch-size auto`).
struct BatchSize {
  enum class Rule { kNone, kVcpus, kGpus, kAuto };
  Rule rule = Rule::kNone;
  // kNone: rows per batch, 0 = the run's default; a vcpus/gpus rule: the
  // multiplier; kAuto: 0.
  int value = 0;

  bool is_default() const { return rule == Rule::kNone && value == 0; }
  bool is_auto() const { return rule == Rule::kAuto; }
  // "32", "default", "100xvcpus", "40xgpus", "auto".
  std::string text() const;
  // The record's config.batch_size_rule: "" for a number or the default.
  std::string rule_text() const { return rule == Rule::kNone ? std::string() : text(); }
  bool operator==(const BatchSize& other) const { return rule == other.rule && value == other.value; }
};

// Parses "32", "default" (or "0"), "100xvcpus", "40xgpus" (also "100x vcpus",
// case-insensitive "X"), "auto". kInvalidArgument naming the value and the forms.
Result<BatchSize> parse_batch_size(std::string_view text);

// The swept axes. An empty axis takes its default (see fill_defaults).
struct Axes {
  std::vector<std::string> shapes;      // json-3, parquet, parquet-10, jsonl, or files (the INPUTs)
  std::vector<std::string> devices;     // cpu, cuda, cuda:N, cuda:all
  std::vector<std::string> precisions;  // auto, fp32, bf16, int8
  std::vector<std::string> batchings;   // tokens, seed
  std::vector<BatchSize> batch_sizes;
  std::vector<int> threads;  // 0: every CPU of the affinity mask
  // 0: the run's default; kAutoMaxBatchTokens: "auto". Binds under tokens
  // batching only.
  std::vector<int> max_batch_tokens;
};

// The max_batch_tokens axis value "auto" (`infercost run --max-batch-tokens
// auto`): the run sizes the token budget from the device's memory.
inline constexpr int kAutoMaxBatchTokens = -1;
// "auto", "default" (0) or the number.
std::string max_batch_tokens_text(int max_batch_tokens);

struct SweepSpec {
  std::vector<std::string> inputs;  // the user's files (shape "files")
  std::string model;
  std::string out;
  bool append = false;
  Axes axes;
  // Generated data (shapes other than "files").
  int64_t rows = 20000;
  uint64_t data_seed = 1;
  std::string data_dir;  // empty: default_data_dir()
  // The run settings every point shares, as `infercost run` takes them
  // (engine/settings.cc, with its defaults: max_length 0 is the model's
  // limit): column, max_length, tokenizer_threads, and the task: kEmbed
  // times `infercost embed` (with `pooling` when given) instead of
  // `infercost run`, and the records say config.task "embed". Each point
  // sets its axes over them (point_settings). Its pricing (optional:
  // instance, price_list, price_files, spot_discount, platform_usd_per_hour,
  // machines, corpus_rows) prices the points' records; the child runs are
  // not priced.
  RunOptions run;
  std::string label;
  // Repetitions.
  int warmup = 1;
  int repetitions = 3;         // at least this many timed runs per point
  double min_seconds = 0;      // and at least this many timed seconds in total
  double timeout_seconds = 0;  // per run; 0: none
  double monitor_interval = 0.1;
};

// Sets spec.run's pooling from its text, parsed once (model::parse_pooling):
// kInvalidArgument naming --pooling and the choices.
Status set_pooling(SweepSpec& spec, const std::string& pooling);

// The most timed runs of one point, whatever --min-seconds asks.
int max_repetitions(const SweepSpec& spec);

// Sets one axis from its values as text, each of which may hold several
// comma-separated values (the flags' form: --batch-size 8,32,100xvcpus).
// `key` is the sweep-file key: shape, device, precision, batching,
// batch_size, threads, max_batch_tokens. Errors name the key and the value.
Status set_axis(Axes& axes, std::string_view key, const std::vector<std::string>& values);

// Fills empty axes with their defaults: shape "files" when there are inputs,
// else "json-3"; device cpu; precision auto; batching tokens; batch size
// default; threads 0; max_batch_tokens 0.
void fill_defaults(SweepSpec& spec);

// Checks the spec as a whole (after fill_defaults): model and out given,
// "files" in the shapes exactly when there are inputs, known axis values, a
// 'gpus' batch-size rule only when every device is a GPU, sane counts.
// kInvalidArgument naming the flag.
Status validate(const SweepSpec& spec);

// Reads a JSON sweep file: an object with the keys of docs/bench.md (the
// flags' names with '_' for '-'). List-valued keys take a value or an array.
// Relative paths (inputs, model, out, data_dir, prices) are taken from the
// file's folder. Unknown keys and wrong types are kInvalidArgument naming the
// file and the key.
Result<SweepSpec> load_sweep_file(const std::string& path);
Result<SweepSpec> parse_sweep_file(std::string_view json, const std::string& origin,
                                   const std::string& base_dir);

// One point of the sweep.
struct Point {
  int index = 0;  // 1-based, in expansion order
  std::string shape;
  std::string device;
  std::string precision;
  std::string batching;
  BatchSize batch_size;
  int threads = 0;
  int max_batch_tokens = 0;  // 0: the run's default; kAutoMaxBatchTokens: "auto"

  // "batch 32 fp32 tokens json-3 cpu 2 threads" for progress lines.
  std::string describe() const;
};

// The cartesian product of the axes, in this order (the first varies
// slowest): shape, device, precision, batching, batch size, threads,
// max_batch_tokens; each axis in the order given. Seed batching ignores
// max_batch_tokens, so seed points are not repeated for its values (they run
// with the run's default). Call after fill_defaults.
std::vector<Point> expand_points(const SweepSpec& spec);

// The settings of a point's runs: the sweep's (spec.run) with the point's
// axes stored by the settings table as its flags would store them (device,
// precision, batching, threads, "auto" sizes), `batch_size` rows per batch
// (0: the run's default), max_batch_tokens 0 for the run's default, and
// `force` (a repetition killed by its timeout leaves a checkpoint; the next
// one starts over). The child's command line and the record's config are
// both read from it.
RunOptions point_settings(const SweepSpec& spec, const Point& point, int batch_size);

// Rows per batch for a point: the number, or the rule times `threads`
// (resolved: never 0) or `gpus`; 0 for the run's default and for "auto"
// (the run resolves it).
int resolve_batch_size(const BatchSize& batch_size, int threads, int gpus);

}  // namespace infercost::bench
