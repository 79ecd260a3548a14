#include "infercost/pipeline/runner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <thread>

#include "infercost/backend/backend.h"
#include "infercost/backend/cpu_info.h"
#include "infercost/io/prediction_writer.h"
#include "infercost/io/row_source.h"
#include "infercost/model/model_dir.h"
#include "pipeline/batcher.h"
#include "pipeline/bounded_queue.h"
#include "pipeline/output_plan.h"

namespace infercost::pipeline {

const char* batching_name(Batching batching) {
  switch (batching) {
    case Batching::kTokens: return "tokens";
    case Batching::kSeed: return "seed";
  }
  return "?";
}

Result<Batching> parse_batching(const std::string& name) {
  for (Batching b : {Batching::kTokens, Batching::kSeed}) {
    if (name == batching_name(b)) return b;
  }
  return invalid_argument("unknown batching '" + name + "' (accepted: tokens, seed)");
}

void softmax_rows(float* logits, int rows, int labels) {
  for (int r = 0; r < rows; ++r) {
    float* x = logits + static_cast<size_t>(r) * labels;
    const float max = *std::max_element(x, x + labels);
    double sum = 0;
    for (int l = 0; l < labels; ++l) sum += std::exp(static_cast<double>(x[l] - max));
    for (int l = 0; l < labels; ++l)
      x[l] = static_cast<float>(std::exp(static_cast<double>(x[l] - max)) / sum);
  }
}

namespace {

// Rows one tokenizer task covers: small enough that several workers share a
// window, large enough that queueing costs nothing next to tokenizing.
constexpr size_t kTokenizeTaskRows = 512;
// Queue capacities. Windows in flight stay at about ordered + 1 (batcher) +
// those referenced by queued batches + to-write + 1 (writer): a few windows.
constexpr size_t kWindowsAhead = 2;
constexpr size_t kTasksAhead = 64;
constexpr size_t kBatchesAhead = 8;
constexpr size_t kWindowsToWrite = 2;

// 0: every CPU this process may run on (its affinity mask), as cpu_info counts them.
int resolve_threads(int requested) {
  return requested > 0 ? requested : backend::cpu_info().logical_cpus;
}

// Adds the time in scope to `total`; each stage thread owns its totals.
class BusyTimer {
 public:
  explicit BusyTimer(double& total) : total_(total), start_(std::chrono::steady_clock::now()) {}
  ~BusyTimer() { total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
  BusyTimer(const BusyTimer&) = delete;
  BusyTimer& operator=(const BusyTimer&) = delete;

 private:
  double& total_;
  std::chrono::steady_clock::time_point start_;
};

struct TokenizeTask {
  std::shared_ptr<Window> window;
  size_t begin = 0, end = 0;
};

// A batch to classify, or (batch empty) a window all of whose batches were
// queued before this item, so it can go to the writer once they ran.
struct InferItem {
  std::optional<Batch> batch;
  std::shared_ptr<Window> done;
};

struct PipelineConfig {
  const RunOptions* options = nullptr;
  const std::vector<std::string>* inputs = nullptr;
  const std::vector<io::InputFormat>* input_formats = nullptr;
  const OutputPlan* plan = nullptr;
  const io::PredictionColumns* columns = nullptr;
  const text::WordPieceTokenizer* tokenizer = nullptr;
  backend::Backend* engine = nullptr;
  io::PredictionWriter* single_writer = nullptr;  // when !plan->per_file
  BatchPolicy policy;
  size_t window_rows = 0;
  int tokenizer_threads = 1;
  int n_labels = 0;
};

// Counters each stage keeps on its own thread; merged after the join.
struct StageCounts {
  double read_s = 0, batch_s = 0, infer_s = 0, write_s = 0;
  std::vector<double> tokenize_s;
  int64_t rows = 0, rows_null = 0, rows_skipped = 0, tokens = 0, padded_tokens = 0, computed_tokens = 0;
  int64_t rows_at_max_length = 0, batches = 0, output_files = 0;
  std::vector<int64_t> length_counts;  // rows per exact token length
  std::string first_skip_reason;
  std::vector<std::string> committed;  // parts the writer closed
};

class Pipeline {
 public:
  explicit Pipeline(const PipelineConfig& config)
      : c_(config),
        ordered_(kWindowsAhead),
        tasks_(kTasksAhead),
        infer_(kBatchesAhead),
        written_(kWindowsToWrite) {
    counts_.tokenize_s.assign(static_cast<size_t>(c_.tokenizer_threads), 0.0);
  }

  // Runs every stage to the end or to the first error; all threads joined.
  Status run() {
    std::vector<std::thread> threads;
    threads.emplace_back([this] { read_stage(); });
    for (int t = 0; t < c_.tokenizer_threads; ++t) {
      threads.emplace_back([this, t] { tokenize_stage(counts_.tokenize_s[static_cast<size_t>(t)]); });
    }
    threads.emplace_back([this] { batch_stage(); });
    threads.emplace_back([this] { infer_stage(); });
    threads.emplace_back([this] { write_stage(); });
    for (std::thread& t : threads) t.join();
    std::lock_guard<std::mutex> lock(mu_);
    return first_error_;
  }

  const StageCounts& counts() const { return counts_; }

 private:
  void fail(Status status) {
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

  // Hands a window to the batcher (in order) and its rows to the tokenizers.
  bool submit(const std::shared_ptr<Window>& window) {
    const size_t n = window->rows.size();
    window->rows.is_null.resize(n, 0);
    window->ids.resize(n);
    window->errors.resize(n);
    const size_t tasks = (n + kTokenizeTaskRows - 1) / kTokenizeTaskRows;
    window->tasks_left = static_cast<int>(tasks);
    if (!ordered_.push(window)) return false;
    for (size_t t = 0; t < tasks; ++t) {
      const size_t begin = t * kTokenizeTaskRows;
      if (!tasks_.push({window, begin, std::min(n, begin + kTokenizeTaskRows)})) return false;
    }
    return true;
  }

  void read_stage() {
    read_files();
    ordered_.close();
    tasks_.close();
  }

  void read_files() {
    const RunOptions& options = *c_.options;
    io::SourceOptions source_options;
    source_options.column = options.column;
    source_options.on_bad_row = options.on_bad_row;
    const bool seed = c_.policy.batching == Batching::kSeed;
    uint64_t bytes_done = 0, bytes_total = 0;
    for (size_t f = 0; f < c_.inputs->size(); ++f) {
      // kSeed reads each file twice: a scan for its longest row, then the run.
      for (int pass = seed ? 0 : 1; pass < 2; ++pass) {
        const bool scan = pass == 0;
        std::unique_ptr<io::RowSource> source;
        {
          BusyTimer timer(counts_.read_s);
          Result<std::unique_ptr<io::RowSource>> opened =
              io::open_row_source((*c_.inputs)[f], (*c_.input_formats)[f], source_options);
          if (!opened.ok()) {
            auto window = std::make_shared<Window>();
            window->file_index = static_cast<int>(f);
            window->read_status = opened.status();
            submit(window);
            return;
          }
          source = std::move(*opened);
        }
        if (!scan) bytes_total += source->bytes_total();
        const uint64_t bytes_before = bytes_done;
        for (;;) {
          auto window = std::make_shared<Window>();
          window->file_index = static_cast<int>(f);
          window->scan = scan;
          window->location_unit = source->location_unit();
          Result<size_t> got = size_t{0};
          {
            BusyTimer timer(counts_.read_s);
            got = source->next(c_.window_rows, window->rows);
          }
          if (!got.ok()) {
            window->read_status = got.status();
            submit(window);
            return;
          }
          const bool end = *got == 0;
          if (!scan) {
            bytes_done = bytes_before + source->bytes_read();
            window->bytes_done = bytes_done;
            window->bytes_total = bytes_total;
          }
          if (end) {
            window->last_in_file = true;
            if (!scan) {
              window->source_rows_skipped = source->rows_skipped();
              window->source_first_skip = source->first_skip_reason();
            }
          }
          if (!submit(window)) return;
          if (end) break;
        }
      }
    }
  }

  void tokenize_stage(double& busy) {
    const text::WordPieceTokenizer& tokenizer = *c_.tokenizer;
    while (std::optional<TokenizeTask> task = tasks_.pop()) {
      Window& w = *task->window;
      {
        BusyTimer timer(busy);
        for (size_t i = task->begin; i < task->end; ++i) {
          if (w.rows.is_null[i]) continue;
          Result<size_t> r = tokenizer.encode_append(w.rows.texts[i], w.ids[i]);
          if (!r.ok()) w.errors[i] = r.status();
        }
      }
      std::lock_guard<std::mutex> lock(mu_);
      if (--w.tasks_left == 0) tokenized_.notify_all();
    }
  }

  void batch_stage() {
    if (batch_windows()) infer_.close();
  }

  // False when cancelled.
  bool batch_windows() {
    const RunOptions& options = *c_.options;
    const bool seed = c_.policy.batching == Batching::kSeed;
    const bool skips_padding = c_.engine->skips_padding();
    Batcher batcher(c_.policy);
    int current_file = -1, scan_file = -1;
    int scan_max = 0;
    std::vector<std::shared_ptr<Window>> waiting;  // windows whose rows may sit in a partial batch
    std::vector<int32_t> classify;
    std::vector<Batch> batches;
    while (std::optional<std::shared_ptr<Window>> popped = ordered_.pop()) {
      const std::shared_ptr<Window>& window = *popped;
      Window& w = *window;
      {
        std::unique_lock<std::mutex> lock(mu_);
        tokenized_.wait(lock, [&] { return w.tasks_left == 0 || cancelled_; });
        if (cancelled_) return false;
      }
      // Busy time only: the timer stops before the (blocking) pushes below.
      std::optional<BusyTimer> timer;
      timer.emplace(counts_.batch_s);
      const std::string& path = (*c_.inputs)[static_cast<size_t>(w.file_index)];
      const size_t n = w.rows.size();
      classify.clear();
      w.dropped.assign(n, 0);
      for (size_t i = 0; i < n; ++i) {
        if (w.rows.is_null[i]) {
          if (!w.scan) ++counts_.rows_null;
          continue;
        }
        if (w.errors[i].ok()) {
          classify.push_back(static_cast<int32_t>(i));
          continue;
        }
        Status located =
            w.errors[i].with_context(path + ": " + w.location_unit + " " + std::to_string(w.rows.lines[i]));
        if (options.on_bad_row == io::OnBadRow::kFail) {
          fail(located);
          return false;
        }
        if (w.scan) continue;  // counted in the real pass
        if (counts_.first_skip_reason.empty()) counts_.first_skip_reason = located.to_string();
        ++counts_.rows_skipped;
        w.dropped[i] = 1;
      }
      if (!w.read_status.ok()) {
        fail(w.read_status);
        return false;
      }
      if (w.scan) {
        if (w.file_index != scan_file) {
          scan_file = w.file_index;
          scan_max = 0;
        }
        for (int32_t i : classify) scan_max = std::max<int>(scan_max, static_cast<int>(w.ids[i].size()));
        continue;
      }
      if (w.file_index != current_file) {
        current_file = w.file_index;
        batcher.begin_file(seed ? scan_max : 0);
      }
      w.probs.assign(n * static_cast<size_t>(c_.n_labels), 0.0f);
      batches.clear();
      batcher.add(window, classify, batches);
      if (w.last_in_file) {
        batcher.end_file(batches);
        if (w.source_rows_skipped > 0 && counts_.first_skip_reason.empty()) {
          counts_.first_skip_reason = w.source_first_skip.to_string();
        }
        counts_.rows_skipped += w.source_rows_skipped;
      }
      for (Batch& batch : batches) {
        const backend::TokenBatch& t = batch.tokens;
        const int64_t real = t.real_tokens();
        counts_.tokens += real;
        counts_.padded_tokens += t.padded_tokens();
        counts_.computed_tokens += (skips_padding && !t.compute_padding) ? real : t.padded_tokens();
        for (int32_t len : t.lengths) {
          if (len >= options.max_length) ++counts_.rows_at_max_length;
          const size_t at = static_cast<size_t>(std::max(len, 0));
          if (at >= counts_.length_counts.size()) counts_.length_counts.resize(at + 1, 0);
          ++counts_.length_counts[at];
        }
        ++counts_.batches;
      }
      timer.reset();
      for (Batch& batch : batches) {
        if (!infer_.push(InferItem{std::move(batch), nullptr})) return false;
      }
      waiting.push_back(window);
      if (!batcher.holds_rows()) {
        for (std::shared_ptr<Window>& done : waiting) {
          if (!infer_.push(InferItem{std::nullopt, std::move(done)})) return false;
        }
        waiting.clear();
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    return !cancelled_;
  }

  void infer_stage() {
    if (infer_batches()) written_.close();
  }

  bool infer_batches() {
    const int labels = c_.n_labels;
    while (std::optional<InferItem> item = infer_.pop()) {
      if (!item->batch) {
        if (!written_.push(std::move(item->done))) return false;
        continue;
      }
      Batch& batch = *item->batch;
      Result<backend::Logits> logits = backend::Logits();
      {
        BusyTimer timer(counts_.infer_s);
        logits = c_.engine->classify(batch.tokens);
      }
      if (!logits.ok()) {
        fail(logits.status());
        return false;
      }
      if (logits->rows != batch.tokens.batch || logits->labels != labels) {
        fail(internal_error("backend returned logits of the wrong shape"));
        return false;
      }
      softmax_rows(logits->values.data(), logits->rows, labels);
      for (size_t k = 0; k < batch.targets.size(); ++k) {
        const Batch::Target& target = batch.targets[k];
        std::copy_n(logits->values.begin() + static_cast<ptrdiff_t>(k * labels), labels,
                    target.window->probs.begin() + static_cast<ptrdiff_t>(target.row) * labels);
      }
      counts_.rows += batch.tokens.batch;
    }
    std::lock_guard<std::mutex> lock(mu_);
    return !cancelled_;
  }

  void write_stage() {
    const RunOptions& options = *c_.options;
    const OutputPlan& plan = *c_.plan;
    const size_t labels = static_cast<size_t>(c_.n_labels);
    std::unique_ptr<io::PredictionWriter> part;  // a destroyed, unclosed part leaves nothing
    std::vector<std::string> texts;
    std::vector<uint8_t> nulls;
    std::vector<float> probs;
    int64_t rows_done = 0;
    while (std::optional<std::shared_ptr<Window>> popped = written_.pop()) {
      Window& w = **popped;
      {
        BusyTimer timer(counts_.write_s);
        io::PredictionWriter* out = c_.single_writer;
        if (plan.per_file) {
          if (!part) {
            const size_t f = static_cast<size_t>(w.file_index);
            Result<std::unique_ptr<io::PredictionWriter>> created =
                io::create_prediction_writer(plan.paths[f], plan.formats[f], *c_.columns);
            if (!created.ok()) {
              fail(created.status());
              return;
            }
            part = std::move(*created);
          }
          out = part.get();
        }
        texts.clear();
        nulls.clear();
        probs.clear();
        for (size_t i = 0; i < w.rows.size(); ++i) {
          if (w.dropped[i]) continue;
          texts.push_back(options.keep_text ? std::move(w.rows.texts[i]) : std::string());
          nulls.push_back(w.rows.is_null[i]);
          probs.insert(probs.end(), w.probs.begin() + static_cast<ptrdiff_t>(i * labels),
                       w.probs.begin() + static_cast<ptrdiff_t>((i + 1) * labels));
        }
        if (!texts.empty()) {
          Status s = out->write(texts, nulls, probs);
          if (!s.ok()) {
            fail(s);
            return;
          }
        }
        rows_done += static_cast<int64_t>(texts.size());
        if (w.last_in_file && plan.per_file) {
          Status s = part->close();
          if (!s.ok()) {
            fail(s);
            return;
          }
          counts_.committed.push_back(plan.paths[static_cast<size_t>(w.file_index)]);
          part.reset();
        }
      }
      if (options.progress && (!texts.empty() || w.last_in_file)) {
        options.progress(rows_done, w.bytes_done, w.bytes_total);
      }
    }
  }

  const PipelineConfig& c_;
  BoundedQueue<std::shared_ptr<Window>> ordered_;
  BoundedQueue<TokenizeTask> tasks_;
  BoundedQueue<InferItem> infer_;
  BoundedQueue<std::shared_ptr<Window>> written_;
  std::mutex mu_;
  std::condition_variable tokenized_;
  bool cancelled_ = false;
  Status first_error_;
  StageCounts counts_;
};

}  // namespace

Status check_batching_options(int batch_size, int max_batch_tokens, int window_rows) {
  if (batch_size < 0) {
    return invalid_argument("--batch-size must be at least 1 (or 0 for the batching policy's default)");
  }
  if (max_batch_tokens < 0) {
    return invalid_argument("--max-batch-tokens must be at least 1 (or 0 for the default " +
                            std::to_string(kDefaultMaxBatchTokens) + ")");
  }
  if (window_rows < 1) return invalid_argument("--window-rows must be at least 1");
  return Status();
}

Result<RunMetrics> run_classification(const RunOptions& options) {
  if (options.inputs.empty()) return invalid_argument("no input files given");
  INFERCOST_RETURN_IF_ERROR(
      check_batching_options(options.batch_size, options.max_batch_tokens, options.window_rows));
  if (options.tokenizer_threads < 0) {
    return invalid_argument("--tokenizer-threads must be at least 1 (or 0 for the device's default)");
  }
  if (options.threads < 0) return invalid_argument("--threads must be at least 1 (or 0 for all cores)");
  if (options.max_length < 2) return invalid_argument("--max-length must be at least 2 ([CLS] and [SEP])");
  INFERCOST_ASSIGN_OR_RETURN(backend::Precision precision,
                             backend::resolve_precision(options.device, options.precision));
  INFERCOST_ASSIGN_OR_RETURN(std::vector<std::string> inputs, io::expand_inputs(options.inputs));
  std::vector<io::InputFormat> input_formats;
  for (const std::string& path : inputs) {
    INFERCOST_ASSIGN_OR_RETURN(io::InputFormat format, io::input_format_for(path, options.input_format));
    input_formats.push_back(format);
  }
  INFERCOST_ASSIGN_OR_RETURN(OutputPlan plan, plan_outputs(options, inputs, input_formats));

  RunMetrics metrics;
  metrics.threads = resolve_threads(options.threads);
  metrics.batching = batching_name(options.batching);
  const bool seed = options.batching == Batching::kSeed;
  metrics.batch_size = options.batch_size > 0
                           ? options.batch_size
                           : (seed ? kSeedRowsPerThread * metrics.threads : kDefaultTokensBatchSize);
  metrics.max_batch_tokens = options.max_batch_tokens > 0 ? options.max_batch_tokens : kDefaultMaxBatchTokens;
  // Seed batches count from each file's start across windows; whole batches
  // per window keep them from straddling two.
  metrics.window_rows =
      seed ? (options.window_rows + metrics.batch_size - 1) / metrics.batch_size * metrics.batch_size
           : options.window_rows;
  metrics.tokenizer_threads = options.tokenizer_threads > 0 ? options.tokenizer_threads
                              : options.device == "cpu"     ? 1
                                                            : metrics.threads;
  metrics.max_length = options.max_length;
  metrics.device = options.device;
  metrics.input_files = static_cast<int64_t>(inputs.size());

  model::LoadedModel model;
  std::unique_ptr<backend::Backend> engine;
  {
    StageTimer timer(metrics, "load");
    model::LoadOptions load;
    load.max_length = options.max_length;
    INFERCOST_ASSIGN_OR_RETURN(model, model::load_model_dir(options.model_dir, load));
    if (options.max_length > model.config.max_position_embeddings) {
      return invalid_argument("--max-length " + std::to_string(options.max_length) + " exceeds the model's " +
                              std::to_string(model.config.max_position_embeddings) + " positions");
    }
    backend::BackendOptions backend_options;
    backend_options.threads = metrics.threads;
    backend_options.precision = precision;
    INFERCOST_ASSIGN_OR_RETURN(engine, backend::create_backend(options.device, backend_options));
    INFERCOST_RETURN_IF_ERROR(engine->prepare(model.config, model.weights));
    model.weights = model::EncoderWeights();  // the backend keeps its own copy
  }
  metrics.precision = backend::precision_name(engine->precision());
  metrics.model_name = model.config.name;
  metrics.model_synthetic = model.config.synthetic;
  if (options.on_model_loaded) options.on_model_loaded(model.config);

  io::PredictionColumns columns;
  columns.keep_text = options.keep_text;
  columns.labels = model.config.labels;
  columns.compression = options.compression;
  std::unique_ptr<io::PredictionWriter> writer;
  if (!plan.per_file) {
    INFERCOST_ASSIGN_OR_RETURN(writer, io::create_prediction_writer(plan.paths[0], plan.formats[0], columns));
  }

  PipelineConfig config;
  config.options = &options;
  config.inputs = &inputs;
  config.input_formats = &input_formats;
  config.plan = &plan;
  config.columns = &columns;
  config.tokenizer = model.tokenizer.get();
  config.engine = engine.get();
  config.single_writer = writer.get();
  config.policy.batching = options.batching;
  config.policy.batch_size = metrics.batch_size;
  config.policy.max_batch_tokens = metrics.max_batch_tokens;
  config.policy.pad_id = model.tokenizer->pad_id();
  config.window_rows = static_cast<size_t>(metrics.window_rows);
  config.tokenizer_threads = metrics.tokenizer_threads;
  config.n_labels = model.config.num_labels();

  const auto wall_start = std::chrono::steady_clock::now();
  Pipeline pipeline(config);
  Status status = pipeline.run();
  const StageCounts& counts = pipeline.counts();
  if (!status.ok()) {
    writer.reset();
    for (const std::string& path : counts.committed) std::remove(path.c_str());
    return status;
  }
  if (writer) {
    const auto start = std::chrono::steady_clock::now();
    Status closed = writer->close();
    metrics.stage_seconds["write"] +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!closed.ok()) return closed;
  }
  metrics.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  metrics.rows = counts.rows;
  metrics.rows_null = counts.rows_null;
  metrics.rows_skipped = counts.rows_skipped;
  metrics.first_skip_reason = counts.first_skip_reason;
  metrics.tokens = counts.tokens;
  metrics.padded_tokens = counts.padded_tokens;
  metrics.computed_tokens = counts.computed_tokens;
  metrics.rows_at_max_length = counts.rows_at_max_length;
  metrics.batches = counts.batches;
  metrics.length_counts = counts.length_counts;
  metrics.output_files = plan.per_file ? static_cast<int64_t>(counts.committed.size()) : 1;
  metrics.stage_seconds["read"] += counts.read_s;
  double tokenize_s = 0;
  for (double s : counts.tokenize_s) tokenize_s += s;
  metrics.stage_seconds["tokenize"] += tokenize_s;
  metrics.stage_seconds["batch"] += counts.batch_s;
  metrics.stage_seconds["infer"] += counts.infer_s;
  metrics.stage_seconds["write"] += counts.write_s;
  metrics.peak_rss_bytes = peak_rss_bytes();
  return metrics;
}

}  // namespace infercost::pipeline
