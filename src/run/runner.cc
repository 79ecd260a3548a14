#include "run/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

#include "backend/backend.h"
#include "backend/gpu_monitor.h"
#include "core/file.h"
#include "core/test_point.h"
#include "engine/encoder_metrics.h"
#include "engine/run_cost.h"
#include "engine/settings.h"
#include "io/prediction_writer.h"
#include "io/row_source.h"
#include "io/whole_file.h"
#include "run/job.h"
#include "run/output_plan.h"
#include "run/pipeline.h"

namespace infercost::run {

Pipeline::Pipeline(const PipelineConfig& config)
    : c_(config),
      classifier_(*config.classifier),
      workers_(classifier_),
      policy_(classifier_.policy()),
      scratch_(workers_.workers()),
      ordered_(kWindowsAhead),
      tasks_(kTasksAhead),
      infer_(std::max(kBatchesAhead, kBatchesPerWorker * workers_.workers())),
      written_(kWindowsToWrite),
      workers_left_(static_cast<int>(workers_.workers())) {
  counts_.tokenize_s.assign(static_cast<size_t>(classifier_.tokenizer_threads()), 0.0);
  if (c_.job) progress_ = c_.job->start();
}

Status Pipeline::run() {
  // RunOptions::stop: a signal ends the run at the next durable step.
  std::thread watcher;
  std::atomic<bool> finished{false};
  if (c_.options->stop) watcher = std::thread([this, &finished] { watch_stop(finished); });
  std::vector<std::thread> threads;
  threads.emplace_back([this] { read_stage(); });
  for (int t = 0; t < classifier_.tokenizer_threads(); ++t) {
    threads.emplace_back([this, t] { tokenize_stage(counts_.tokenize_s[static_cast<size_t>(t)]); });
  }
  threads.emplace_back([this] { batch_stage(); });
  for (size_t w = 0; w < workers_.workers(); ++w) threads.emplace_back([this, w] { infer_stage(w); });
  threads.emplace_back([this] { write_stage(); });
  for (std::thread& t : threads) t.join();
  finished.store(true);
  if (watcher.joinable()) watcher.join();
  std::lock_guard<std::mutex> lock(mu_);
  counts_.rows_skipped += non_finite_skipped_;
  if (counts_.first_skip_reason.empty()) counts_.first_skip_reason = non_finite_first_;
  return first_error_;
}

void Pipeline::watch_stop(const std::atomic<bool>& finished) {
  const std::atomic<int>* stop = c_.options->stop;
  while (!finished.load()) {
    if (const int sig = stop->load(); sig != 0) {
      if (c_.options->on_stop_seen) c_.options->on_stop_seen(sig);
      test_point("signal-seen");
      fail(cancelled(fmt::format("stopped by signal {} ({})", sig, sig == SIGINT ? "SIGINT" : "SIGTERM")));
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Status Pipeline::save_final_checkpoint() {
  if (!c_.job) return Status();
  if (!writer_clean_) return internal_error("the writer stopped inside a window");
  // Nothing written yet and nothing to resume: no checkpoint to leave.
  if (!c_.job->has_checkpoint() && progress_.rows_done == 0 && progress_.files_done == 0) return Status();
  return save_checkpoint();
}

void Pipeline::fail(Status status) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_) return;
    first_error_ = std::move(status);
    cancelled_ = true;
  }
  tokenized_.notify_all();
  ordered_.cancel();
  tasks_.cancel();
  infer_.cancel();
  written_.cancel();
}

namespace {

// What is known of the inputs' size before any row is read. A file that
// cannot be opened here fails later, in input order, in the reader. A resumed
// job's reading starts past what earlier runs did: rows and bytes read count it.
void start_progress(RunProgress& progress, const std::vector<std::string>& inputs,
                    const std::vector<io::InputFormat>& formats, const ResumableJob* job,
                    std::chrono::steady_clock::time_point start) {
  uint64_t bytes = 0;
  int64_t rows = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::error_code ec;
    const uintmax_t size = std::filesystem::file_size(inputs[i], ec);
    if (!ec) bytes += size;
    if (rows >= 0) {
      Result<int64_t> stated = io::rows_stated(inputs[i], formats[i]);
      rows = !stated.ok() || *stated < 0 ? -1 : rows + *stated;
    }
  }
  progress.bytes_total.store(bytes);
  progress.rows_total.store(rows);
  progress.started_ns.store(
      std::chrono::duration_cast<std::chrono::nanoseconds>(start.time_since_epoch()).count());
  if (job) {
    progress.rows_resumed.store(job->start().rows_done);
    progress.rows_read.store(job->start().rows_done);
  }
}

// A failed run: where it can be resumed from (an interruption, an I/O,
// device or memory error), a last checkpoint of what was written and the
// partial outputs stay, and the message says how to go on; otherwise (bad
// data, bad usage) nothing of the output is left.
Status end_failed_run(const Status& status, ResumableJob* job, Pipeline& pipeline,
                      io::PredictionWriter* writer, const OutputPlan& plan) {
  if (job && resumable_failure(status)) {
    // Fails where the writer itself failed; the last checkpoint saved stands.
    Status saved = pipeline.save_final_checkpoint();
    if (!job->has_checkpoint()) {  // nothing to resume from: the partial output goes
      if (writer) writer->discard();
      if (io::PredictionWriter* part = pipeline.open_part()) part->discard();
      job->abandon(pipeline.counts().committed);
      return Status(status.code(), status.message() + "; no rows were checkpointed yet: a rerun starts over");
    }
    return Status(
        status.code(),
        fmt::format("{}; the job stopped after {} rows (checkpoint {}{}): rerun with {resume} to continue",
                    status.message(), job->last_saved().rows_done, job->checkpoint_path(),
                    saved.ok() ? "" : ", saved before the error", fmt::arg("resume", setting_ref("resume"))));
  }
  if (writer) writer->discard();
  if (io::PredictionWriter* part = pipeline.open_part()) part->discard();
  std::vector<std::string> written = pipeline.counts().committed;
  if (job) {
    // Parts of inputs an earlier run of the job finished go too.
    for (int64_t f = 0; f < job->start().files_done && plan.per_file; ++f) {
      written.push_back(plan.paths[static_cast<size_t>(f)]);
    }
    job->abandon(written);
  } else {
    for (const std::string& path : written) std::remove(path.c_str());
  }
  return status;
}

// The columns the run writes for `classifier`'s outputs.
io::PredictionColumns prediction_columns(const RunOptions& options, const Encoder& classifier) {
  io::PredictionColumns columns;
  columns.keep_text = options.keep_text;
  if (classifier.task() == Task::kEmbed) {
    columns.dimensions = classifier.outputs();
  } else {
    columns.labels = classifier.config().labels;
  }
  columns.compression = options.compression;
  columns.label_set = classifier.label_set();
  columns.threshold = static_cast<float>(classifier.threshold());
  return columns;
}

// A finished run's metrics: what the encoder counted (encoder_metrics.h)
// and what the runner's own stages did around it.
void add_run_counts(RunMetrics& metrics, const Encoder& classifier, const StageCounts& counts,
                    const OutputPlan& plan) {
  add_encoder_metrics(metrics, classifier, classifier.stats());
  metrics.rows_null += counts.rows_null;
  metrics.rows_skipped += counts.rows_skipped;
  metrics.first_skip_reason = counts.first_skip_reason;
  metrics.output_files = plan.per_file ? static_cast<int64_t>(counts.committed.size()) : 1;
  double tokenize_s = 0;
  for (double s : counts.tokenize_s) tokenize_s += s;
  metrics.stage_seconds["read"] += counts.read_s;
  metrics.stage_seconds["tokenize"] += tokenize_s;
  metrics.stage_seconds["batch"] += counts.batch_s;
  metrics.stage_seconds["write"] += counts.write_s;
}

// kInvalidArgument for a resume of a run to a stream.
Status resume_needs_a_file(const RunOptions& options, const OutputPlan& plan) {
  const std::string where =
      options.output == "-" ? std::string("stdout") : fmt::format("{}, {}", options.output, plan.stream_what);
  return invalid_argument(fmt::format(
      "{} needs an output file or folder ({}), not {}: a stream is written as rows come, with no checkpoint "
      "to resume from",
      setting_ref("resume"), setting_ref("output"), where));
}

Status write_metrics(const RunOptions& options, const RunMetrics& metrics) {
  if (options.metrics_path.empty()) return Status();
  return io::write_whole_file(options.metrics_path, metrics.to_json());
}

// A run's metrics completed (complete_run_metrics) and written to --metrics.
Status end_metrics(const RunOptions& options, RunMetrics& metrics, backend::RunGpuSampling& gpu_sampling,
                   const RunCost& cost) {
  complete_run_metrics(metrics, gpu_sampling.finish(), options, cost);
  return write_metrics(options, metrics);
}

// Each input's format (--input-format, or the file's extension).
Result<std::vector<io::InputFormat>> input_formats_of(const RunOptions& options,
                                                      const std::vector<std::string>& inputs) {
  std::vector<io::InputFormat> formats;
  for (const std::string& path : inputs) {
    INFERCOST_ASSIGN_OR_RETURN(io::InputFormat format, io::input_format_for(path, options.input_format));
    formats.push_back(format);
  }
  return formats;
}

// The run's classifier with the settings resolved before the run (its
// devices not asked for again), its load timed as the "load" stage;
// options.on_model_loaded is left to the caller, once the run's own checks
// pass.
Result<std::unique_ptr<Encoder>> open_run_classifier(const RunOptions& options, const BackendFactory& factory,
                                                     const ResolvedSettings& settings, RunMetrics& metrics) {
  BusyTimer timer(metrics.stage_seconds["load"]);
  ModelOptions classifier_options = options;
  classifier_options.on_model_loaded = nullptr;
  return Encoder::open(options.model_dir, classifier_options, settings, factory);
}

}  // namespace

bool output_is_stream(const std::string& output) {
  if (output == "-") return true;
  Result<OutputTarget> target = resolve_output_target(output);
  return target.ok() && target->kind == OutputTarget::Kind::kStream;
}

Result<RunMetrics> run_files(const RunOptions& options, const BackendFactory& factory) {
  if (options.inputs.empty()) return invalid_argument("no input files given");
  INFERCOST_RETURN_IF_ERROR(check_settings(options));
  // The price is resolved before the run, so a typo costs nothing.
  INFERCOST_ASSIGN_OR_RETURN(RunCost cost, resolve_run_cost(options));
  // Before anything is read or created: a GPU run that cannot start here says why at once.
  INFERCOST_ASSIGN_OR_RETURN(ResolvedSettings settings, resolve_settings(options, factory));
  INFERCOST_ASSIGN_OR_RETURN(std::vector<std::string> inputs, io::expand_inputs(options.inputs));
  INFERCOST_ASSIGN_OR_RETURN(std::vector<io::InputFormat> input_formats, input_formats_of(options, inputs));
  INFERCOST_ASSIGN_OR_RETURN(OutputPlan plan, plan_outputs(options, inputs, input_formats));
  if (!options.metrics_path.empty()) {
    INFERCOST_RETURN_IF_ERROR(
        check_output_apart(options.metrics_path, setting_ref("metrics_path"), options, inputs, plan));
  }
  // An output file or folder is a resumable job: locked, checkpointed.
  std::unique_ptr<ResumableJob> job;
  if (plan.stream) {
    if (options.resume) return resume_needs_a_file(options, plan);
  } else {
    INFERCOST_ASSIGN_OR_RETURN(job,
                               ResumableJob::open(options, settings.device, plan, inputs, input_formats));
  }

  // Samples from the model's load on; stopped (its thread joined) when the run ends, whatever its outcome.
  backend::RunGpuSampling gpu_sampling(settings.device, options.nvml_library, options.gpu_sample_seconds);
  RunMetrics metrics;
  set_option_metrics(metrics, options, settings.devices);
  metrics.input_files = static_cast<int64_t>(inputs.size());
  if (plan.stream && options.output != "-") metrics.output_stream = plan.stream_what;
  if (job) {
    metrics.checkpoint = job->checkpoint_path();
    metrics.resumed = job->resuming();
    metrics.resumed_rows = job->start().rows_done;
    if (job->complete()) {
      metrics.already_complete = true;
      metrics.output_files = static_cast<int64_t>(plan.paths.size());
      INFERCOST_RETURN_IF_ERROR(end_metrics(options, metrics, gpu_sampling, cost));
      return metrics;
    }
  }

  INFERCOST_ASSIGN_OR_RETURN(std::unique_ptr<Encoder> classifier,
                             open_run_classifier(options, factory, settings, metrics));
  // Seed batches count from each file's start across windows; whole batches
  // per window keep them from straddling two.
  const int batch_size = classifier->policy().batch_size;
  metrics.window_rows = options.batching == Batching::kSeed
                            ? (options.window_rows + batch_size - 1) / batch_size * batch_size
                            : options.window_rows;
  if (job) INFERCOST_RETURN_IF_ERROR(job->check_precision(classifier->precision()));
  const model::ModelConfig& config = classifier->config();
  if (options.on_model_loaded) options.on_model_loaded(model::synthetic_model_notice(config));
  gpu_sampling.start();

  const io::PredictionColumns columns = prediction_columns(options, *classifier);
  std::unique_ptr<io::PredictionWriter> writer;
  if (!plan.per_file) {
    io::ResumableOutput resumable;
    if (job) resumable = job->output_for(0);
    INFERCOST_ASSIGN_OR_RETURN(writer, io::create_prediction_writer(plan.paths[0], plan.formats[0], columns,
                                                                    job ? &resumable : nullptr));
  }

  PipelineConfig pipeline_config;
  pipeline_config.options = &options;
  pipeline_config.inputs = &inputs;
  pipeline_config.input_formats = &input_formats;
  pipeline_config.plan = &plan;
  pipeline_config.columns = &columns;
  pipeline_config.classifier = classifier.get();
  pipeline_config.single_writer = writer.get();
  pipeline_config.window_rows = static_cast<size_t>(metrics.window_rows);
  pipeline_config.job = job.get();

  const auto wall_start = std::chrono::steady_clock::now();
  if (options.progress) start_progress(*options.progress, inputs, input_formats, job.get(), wall_start);
  Pipeline pipeline(pipeline_config);
  Status status = pipeline.run();
  const StageCounts& counts = pipeline.counts();
  if (!status.ok()) return end_failed_run(status, job.get(), pipeline, writer.get(), plan);
  if (writer) {
    Status closed;
    {
      BusyTimer timer(metrics.stage_seconds["write"]);
      closed = writer->close();
    }
    if (!closed.ok()) return end_failed_run(closed, job.get(), pipeline, writer.get(), plan);
  }
  if (job) {
    test_point("job-finish");  // every output in place, the checkpoint not yet removed
    if (Status s = job->finish(pipeline.progress()); !s.ok()) return s;
    metrics.checkpoints = job->checkpoints_written();
    metrics.checkpoint_seconds = job->checkpoint_seconds();
  }
  metrics.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  add_run_counts(metrics, *classifier, counts, plan);
  INFERCOST_RETURN_IF_ERROR(end_metrics(options, metrics, gpu_sampling, cost));
  return metrics;
}

}  // namespace infercost::run
