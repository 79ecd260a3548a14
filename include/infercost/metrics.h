// What a run measured: counts, busy time per stage, throughput, memory.
// Written as JSON by --metrics and printed as the run summary.
//
// The run's stages overlap on their own threads, so stage seconds are busy
// seconds (time a stage spent working, summed over its threads), not slices of
// the wall time: they may add up to more than wall_seconds. infer_share()
// says how well the pipeline hides reading, tokenizing and writing behind
// inference (1.0: no inference worker ever waited).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "infercost/cost.h"
#include "infercost/gpu_usage.h"
#include "infercost/status.h"

namespace infercost {

// What one device did in a run.
struct DeviceRunMetrics {
  std::string name;     // "cpu", "cuda:0"
  int streams = 0;      // workers (backends) on it
  int64_t batches = 0;  // classify() calls that succeeded (halves of a split batch count apiece)
  int64_t rows = 0;
  double infer_seconds = 0;  // classify() busy seconds, summed over its streams
  int64_t oom_retries = 0;   // out-of-memory errors answered by splitting the batch
  // The most computed tokens per batch it learned from out-of-memory errors
  // (batches above it were split before classify); 0: none.
  int64_t max_computed_tokens = 0;

  bool operator==(const DeviceRunMetrics&) const = default;
};

// Calls f(name, member) for each field of `d` (a DeviceRunMetrics, const or
// not), in the order the metrics JSON lists them under "per_device": the one
// list of their JSON names, for its writer and its reader.
template <typename Device, typename F>
void for_each_device_metrics_field(Device& d, F&& f) {
  f("device", d.name);
  f("streams", d.streams);
  f("batches", d.batches);
  f("rows", d.rows);
  f("infer_seconds", d.infer_seconds);
  f("oom_retries", d.oom_retries);
  f("max_computed_tokens", d.max_computed_tokens);
}

// What a priced run cost (RunOptions::instance): the instance and its price,
// the pricing, and the estimate (cost::estimate_cost) with its projection to
// corpus_rows. Written as "cost" when instance is not empty.
struct RunCost {
  std::string instance;  // empty: the run was not priced
  std::string price_list;
  std::string price_source;
  std::string price_date;
  double instance_usd_per_hour = 0;
  double spot_discount = 0;
  double platform_usd_per_hour = 0;
  int machines = 1;
  // usd_per_hour: the whole cluster's, after discount and surcharge.
  cost::CostEstimate estimate;

  bool operator==(const RunCost&) const = default;
};

struct RunMetrics {
  int64_t rows = 0;       // rows classified and written
  int64_t rows_null = 0;  // rows with a null text, written with null outputs
  int64_t input_files = 0;
  int64_t output_files = 0;
  int64_t rows_skipped = 0;        // bad rows skipped under --on-error skip
  std::string first_skip_reason;   // why the first skipped row was bad
  int64_t tokens = 0;              // real tokens, [CLS]/[SEP] included, after truncation
  int64_t padded_tokens = 0;       // tokens in the padded batches (rows x batch length)
  int64_t computed_tokens = 0;     // tokens the backend computed: real ones if it skips padding
  int64_t rows_at_max_length = 0;  // rows whose ids reached --max-length (truncated, or exactly that long)
  int64_t batches = 0;
  // Rows per exact token length ([CLS]/[SEP] included, after truncation):
  // length_counts[L] rows had L tokens. Emitted binned as "length_histogram".
  std::vector<int64_t> length_counts;
  double wall_seconds = 0;  // from before the first read to after the last write
  // Busy seconds per stage: load (model, before the wall clock starts), read,
  // tokenize (summed over the tokenizer threads), batch, infer (summed over
  // the inference workers), write.
  std::map<std::string, double> stage_seconds;
  int64_t peak_rss_bytes = 0;
  int threads = 0;
  int batch_size = 0;        // resolved: the most rows per batch
  int max_batch_tokens = 0;  // resolved; binds under "tokens" batching only
  int window_rows = 0;       // resolved (seed: rounded up to whole batches)
  int tokenizer_threads = 0;
  int max_length = 0;
  std::string batching;              // batching_name(): "tokens" or "seed"
  std::string precision;             // backend::precision_name() of the backend that ran
  std::string device;                // as given: "cpu", "cuda:all", ...
  std::vector<std::string> devices;  // resolved: "cpu" or "cuda:0", "cuda:1", ...
  int workers = 0;                   // inference workers: streams over all devices
  std::vector<DeviceRunMetrics> per_device;
  int64_t oom_retries = 0;  // summed over devices
  // --batch-size auto / --max-batch-tokens auto, and the capacity they came
  // from: per stream, the smallest over the devices (Backend::capacity).
  bool batch_size_auto = false;
  bool max_batch_tokens_auto = false;
  int64_t capacity_max_tokens = 0;  // 0 when neither is auto
  int capacity_max_rows = 0;
  std::string capacity_basis;
  // Work of the classified rows at their real lengths (encoder_flops_of_lengths).
  double model_flops = 0;
  std::string model_name;
  bool model_synthetic = false;
  // The head's output function (head_function_name(); metrics from before it
  // was recorded read as softmax, all runs did then), whether the output had
  // the multi-label `labels` column, and its threshold (0 without one).
  std::string head_function = "softmax";
  bool labels_column = false;
  double threshold = 0;
  // What the run computed: "classify" (the head's outputs) or "embed" (a
  // vector per row; metrics from before it was recorded read as classify),
  // and for embeddings how: the vector's dimensions, pooling, whether
  // normalized, and the prefix put before each text.
  std::string task = "classify";
  int embedding_dimensions = 0;
  std::string embedding_pooling;
  bool embedding_normalized = false;
  std::string embedding_prefix;
  // GPUs sampled while the run ran (`infercost run` on a cuda device), or why
  // they could not be (gpu_monitor, e.g. "NVML not available: ..."); both
  // empty for a CPU run.
  std::vector<GpuUsage> gpus;
  std::string gpu_monitor;
  double gpu_sample_interval_seconds = 0;
  int64_t gpu_samples = 0;
  // Resumable runs (an output file or folder). rows, tokens and the rates
  // count only what this run classified.
  std::string checkpoint;  // the job's checkpoint file; empty for stdout and streams
  // The output is a stream other than stdout (a character device, a FIFO,
  // /dev/stdout by name): what it is. Written as rows came, no checkpoint.
  std::string output_stream;
  bool resumed = false;           // continued an earlier run's checkpoint
  int64_t resumed_rows = 0;       // input rows the earlier runs had done
  bool already_complete = false;  // --resume found the job finished: nothing ran
  int64_t checkpoints = 0;        // checkpoints this run saved
  double checkpoint_seconds = 0;  // spent saving them (fsyncs of the output included)

  RunCost cost;  // a priced run's cost (RunOptions::instance)

  double rows_per_second() const { return wall_seconds > 0 ? rows / wall_seconds : 0; }
  double tokens_per_second() const { return wall_seconds > 0 ? tokens / wall_seconds : 0; }
  // Real tokens / computed tokens: 1.0 when no compute goes to padding.
  double padding_efficiency() const { return computed_tokens > 0 ? double(tokens) / computed_tokens : 1.0; }
  // Real tokens / padded tokens: how full the batches are, whatever the backend computes.
  double batch_fill() const { return padded_tokens > 0 ? double(tokens) / padded_tokens : 1.0; }
  double model_flops_per_second() const { return wall_seconds > 0 ? model_flops / wall_seconds : 0; }
  // Inference busy seconds / (wall seconds x workers): the share of the
  // workers' time spent classifying.
  double infer_share() const;

  bool operator==(const RunMetrics&) const = default;

  // The --metrics JSON; parse_run_metrics() reads it back. Both go through
  // one list of the fields, for_each_run_metrics_field() in metrics.cc.
  // Adding a field: the member, its line in that list (and in
  // for_each_device_metrics_field for a device's), and its value in the round
  // trip of tests/pipeline/metrics_test.cc.
  std::string to_json() const;
  // Human summary for stderr, several lines.
  std::string to_summary() const;

 private:
  // to_summary()'s parts: the rows and the work done; the workers and GPUs;
  // how the run was set up (its output, checkpoints, settings and cost).
  void summarize_work(std::string& out) const;
  void summarize_devices(std::string& out) const;
  void summarize_setup(std::string& out) const;
};

}  // namespace infercost
