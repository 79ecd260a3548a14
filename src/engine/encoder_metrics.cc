#include "engine/encoder_metrics.h"

#include <chrono>

#include "core/threads.h"
#include "engine/flops.h"
#include "engine/run_cost.h"
#include "engine/run_metrics.h"

namespace infercost::engine {

void set_option_metrics(RunMetrics& m, const ModelOptions& options, const std::vector<std::string>& devices) {
  m.threads = resolve_threads(options.threads);
  m.batching = batching_name(options.batching);
  m.tokenizer_threads = resolve_tokenizer_threads(options);
  m.max_length = options.max_length;
  m.device = options.device;
  m.devices = devices;
  m.batch_size_auto = options.batch_size_auto;
  m.max_batch_tokens_auto = options.max_batch_tokens_auto;
}

void add_encoder_metrics(RunMetrics& m, const Encoder& c, const EncoderStats& stats) {
  const BatchPolicy& policy = c.policy();
  m.max_length = c.max_length();  // resolved: the model's limit where 0 was asked
  m.batch_size = policy.batch_size;
  m.max_batch_tokens = policy.max_batch_tokens;
  m.capacity_max_tokens = c.capacity().max_tokens;  // 0, "" when no size was auto
  m.capacity_max_rows = c.capacity().max_rows;
  m.capacity_basis = c.capacity().basis;
  m.precision = c.precision();
  const model::ModelConfig& config = c.config();
  m.model_name = config.name;
  m.model_synthetic = config.synthetic;
  m.head_function = head_function_name(c.head_function());
  m.labels_column = c.label_set();
  m.threshold = c.threshold();
  m.task = task_name(c.task());
  if (const std::optional<EmbeddingSettings>& e = c.embedding()) {
    m.embedding_dimensions = e->dimensions;
    m.embedding_pooling = model::pooling_name(e->pooling);
    m.embedding_normalized = e->normalize;
    m.embedding_prefix = e->prefix;
  }

  m.rows_null += stats.rows_null;
  m.rows_skipped += stats.rows_skipped;
  m.tokens = stats.tokens;
  m.padded_tokens = stats.padded_tokens;
  m.computed_tokens = stats.computed_tokens;
  m.rows_at_max_length = stats.rows_at_max_length;
  m.batches = stats.batches;
  m.length_counts = stats.length_counts;
  m.stage_seconds["tokenize"] += stats.tokenize_seconds;
  m.stage_seconds["batch"] += stats.batch_seconds;
  m.stage_seconds["infer"] += stats.infer_seconds;
  m.per_device = stats.devices;
  for (const DeviceRunMetrics& d : stats.devices) {
    m.rows += d.rows;
    m.oom_retries += d.oom_retries;
    m.workers += d.streams;
  }
  m.model_flops = encoder_flops_of_lengths(config, m.length_counts);
  m.peak_rss_bytes = peak_rss_bytes();
}

EncoderStats stats_since(const EncoderStats& before, const EncoderStats& after) {
  EncoderStats d = after;
  d.rows -= before.rows;
  d.rows_null -= before.rows_null;
  d.rows_skipped -= before.rows_skipped;
  d.tokens -= before.tokens;
  d.padded_tokens -= before.padded_tokens;
  d.computed_tokens -= before.computed_tokens;
  d.rows_at_max_length -= before.rows_at_max_length;
  d.batches -= before.batches;
  for (size_t i = 0; i < before.length_counts.size() && i < d.length_counts.size(); ++i) {
    d.length_counts[i] -= before.length_counts[i];
  }
  d.tokenize_seconds -= before.tokenize_seconds;
  d.batch_seconds -= before.batch_seconds;
  d.infer_seconds -= before.infer_seconds;
  for (size_t i = 0; i < before.devices.size() && i < d.devices.size(); ++i) {
    d.devices[i].batches -= before.devices[i].batches;
    d.devices[i].rows -= before.devices[i].rows;
    d.devices[i].infer_seconds -= before.devices[i].infer_seconds;
    d.devices[i].oom_retries -= before.devices[i].oom_retries;
  }
  return d;
}

namespace {

// The GPU samples of a run or of a call (backend::RunGpuSampling::finish),
// or why there are none.
void add_gpu_metrics(RunMetrics& m, backend::GpuSampling sampled) {
  m.gpu_sample_interval_seconds = sampled.interval_seconds;
  m.gpu_samples = sampled.samples;
  m.gpus = std::move(sampled.gpus);
  m.gpu_monitor = std::move(sampled.why_not);
}

// The metrics of one call that took `wall_seconds`, from the encoder's stats
// before and after it.
RunMetrics call_metrics(const Encoder& c, const ModelOptions& options, const EncoderStats& before,
                        const EncoderStats& after, double wall_seconds) {
  RunMetrics m;
  set_option_metrics(m, options, c.devices());
  add_encoder_metrics(m, c, stats_since(before, after));
  m.wall_seconds = wall_seconds;
  return m;
}

}  // namespace

Result<RunMetrics> measure_call(const Encoder& c, const RunOptions& options, const RunCost& cost,
                                const std::function<Status()>& call) {
  const EncoderStats before = c.stats();
  const auto start = std::chrono::steady_clock::now();
  backend::RunGpuSampling gpu_sampling(c.device_spec(), options.nvml_library, options.gpu_sample_seconds);
  gpu_sampling.start();
  const Status status = call();
  backend::GpuSampling sampled = gpu_sampling.finish();
  if (!status.ok()) return status;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RunMetrics m = call_metrics(c, options, before, c.stats(), wall);
  complete_run_metrics(m, std::move(sampled), options, cost);  // priced as a run of these rows
  return m;
}

void complete_run_metrics(RunMetrics& m, backend::GpuSampling sampled, const RunOptions& options,
                          const RunCost& cost) {
  add_gpu_metrics(m, std::move(sampled));
  estimate_run_cost(options, m, m.cost = cost);
}

}  // namespace infercost::engine
