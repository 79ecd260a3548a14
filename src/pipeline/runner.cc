#include "infercost/pipeline/runner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "infercost/backend/backend.h"
#include "infercost/core/crash_point.h"
#include "infercost/core/threads.h"
#include "infercost/io/prediction_writer.h"
#include "infercost/io/row_source.h"
#include "infercost/model/model_dir.h"
#include "infercost/text/tokenizer.h"
#include "pipeline/batcher.h"
#include "pipeline/bounded_queue.h"
#include "pipeline/job.h"
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

namespace {

// Rows one tokenizer task covers: small enough that several workers share a
// window, large enough that queueing costs nothing next to tokenizing.
constexpr size_t kTokenizeTaskRows = 512;
// Queue capacities. Windows in flight stay at about ordered + 1 (batcher) +
// those referenced by queued batches + to-write + 1 (writer): a few windows.
// The inference queue holds batches of successive windows and their window
// markers: kBatchesPerWorker items per worker keep two batches queued for
// each even when every window makes a single batch (a marker per batch).
constexpr size_t kWindowsAhead = 2;
constexpr size_t kTasksAhead = 64;
constexpr size_t kBatchesAhead = 8;
constexpr size_t kBatchesPerWorker = 4;
constexpr size_t kWindowsToWrite = 2;

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

// One device of the run: a backend per stream, and the out-of-memory limit
// its streams share.
struct Device {
  std::string name;
  std::vector<std::unique_ptr<backend::Backend>> streams;
  // Most computed tokens per batch known to fit; lowered by each
  // out-of-memory error, never raised.
  std::atomic<int64_t> limit{std::numeric_limits<int64_t>::max()};
  std::atomic<int64_t> oom_retries{0};

  void lower_limit(int64_t tokens) {
    int64_t now = limit.load();
    while (tokens < now && !limit.compare_exchange_weak(now, tokens)) {
    }
  }
};

// Computed tokens of a batch on a backend: what its memory holds.
int64_t computed_tokens(const backend::TokenBatch& t, bool skips_padding) {
  return skips_padding && !t.compute_padding ? t.real_tokens() : t.padded_tokens();
}

struct PipelineConfig {
  const RunOptions* options = nullptr;
  const std::vector<std::string>* inputs = nullptr;
  const std::vector<io::InputFormat>* input_formats = nullptr;
  const OutputPlan* plan = nullptr;
  const io::PredictionColumns* columns = nullptr;
  const text::Tokenizer* tokenizer = nullptr;
  std::vector<Device*> devices;
  bool skips_padding = true;                      // of the backends (one kind per run)
  io::PredictionWriter* single_writer = nullptr;  // when !plan->per_file
  BatchPolicy policy;
  size_t window_rows = 0;
  int tokenizer_threads = 1;
  int n_labels = 0;
  HeadFunction function = HeadFunction::kSoftmax;
  // A run with an output file or folder: its checkpoint and where it starts.
  ResumableJob* job = nullptr;
};

// What one inference worker did.
struct WorkerCounts {
  double infer_s = 0;
  int64_t rows = 0, batches = 0;
};

// Counters each stage keeps on its own thread; merged after the join.
struct StageCounts {
  double read_s = 0, batch_s = 0, write_s = 0;
  std::vector<double> tokenize_s;
  std::vector<WorkerCounts> workers;
  int64_t rows_null = 0, rows_skipped = 0, tokens = 0, padded_tokens = 0, computed_tokens = 0;
  int64_t rows_at_max_length = 0, batches = 0, output_files = 0;
  std::vector<int64_t> length_counts;  // rows per exact token length
  std::string first_skip_reason;
  std::vector<std::string> committed;  // parts the writer closed
};

// One inference worker: a backend (a stream of a device).
struct Worker {
  Device* device = nullptr;
  backend::Backend* engine = nullptr;
};

class Pipeline {
 public:
  explicit Pipeline(const PipelineConfig& config)
      : c_(config),
        workers_(make_workers(config.devices)),
        ordered_(kWindowsAhead),
        tasks_(kTasksAhead),
        infer_(std::max(kBatchesAhead, kBatchesPerWorker * workers_.size())),
        written_(kWindowsToWrite),
        workers_left_(static_cast<int>(workers_.size())) {
    counts_.tokenize_s.assign(static_cast<size_t>(c_.tokenizer_threads), 0.0);
    counts_.workers.resize(workers_.size());
    if (c_.job) progress_ = c_.job->start();
  }

  // Runs every stage to the end or to the first error; all threads joined.
  Status run() {
    // RunOptions::stop: a signal ends the run at the next durable step.
    std::thread watcher;
    std::atomic<bool> finished{false};
    if (const std::atomic<int>* stop = c_.options->stop) {
      watcher = std::thread([this, stop, &finished] {
        while (!finished.load()) {
          if (const int sig = stop->load(); sig != 0) {
            fail(cancelled(
                fmt::format("stopped by signal {} ({})", sig, sig == SIGINT ? "SIGINT" : "SIGTERM")));
            return;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
      });
    }
    std::vector<std::thread> threads;
    threads.emplace_back([this] { read_stage(); });
    for (int t = 0; t < c_.tokenizer_threads; ++t) {
      threads.emplace_back([this, t] { tokenize_stage(counts_.tokenize_s[static_cast<size_t>(t)]); });
    }
    threads.emplace_back([this] { batch_stage(); });
    for (size_t w = 0; w < workers_.size(); ++w) threads.emplace_back([this, w] { infer_stage(w); });
    threads.emplace_back([this] { write_stage(); });
    for (std::thread& t : threads) t.join();
    finished.store(true);
    if (watcher.joinable()) watcher.join();
    std::lock_guard<std::mutex> lock(mu_);
    return first_error_;
  }

  // After a failed run() that can be resumed from: a last checkpoint of the
  // rows written (whole windows only), where the writer was left clean.
  Status save_final_checkpoint() {
    if (!c_.job) return Status();
    if (!writer_clean_) return internal_error("the writer stopped inside a window");
    // Nothing written yet and nothing to resume: no checkpoint to leave.
    if (!c_.job->has_checkpoint() && progress_.rows_done == 0 && progress_.files_done == 0) return Status();
    return save_checkpoint();
  }
  // The rows the job has accounted for (the checkpoint's, the last one saved).
  const JobProgress& progress() const { return progress_; }
  // The part of a folder output still open (a failed run), to discard.
  io::PredictionWriter* open_part() { return part_.get(); }

  const StageCounts& counts() const { return counts_; }
  const std::vector<Worker>& workers() const { return workers_; }

 private:
  static std::vector<Worker> make_workers(const std::vector<Device*>& devices) {
    std::vector<Worker> out;
    for (Device* d : devices) {
      for (const std::unique_ptr<backend::Backend>& b : d->streams) out.push_back({d, b.get()});
    }
    return out;
  }

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
    uint64_t bytes_done = 0;  // input bytes behind the rows read, all files
    // A resumed run: the inputs the checkpoint says are done are not read;
    // the next one continues where it stopped.
    const size_t first = c_.job ? static_cast<size_t>(c_.job->start().files_done) : 0;
    for (size_t f = 0; f < first && f < c_.inputs->size(); ++f) {
      std::error_code ec;
      const uint64_t size = std::filesystem::file_size((*c_.inputs)[f], ec);
      bytes_done += ec ? 0 : size;
    }
    for (size_t f = first; f < c_.inputs->size(); ++f) {
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
          const bool resumed_file = c_.job && f == first && !scan;
          const io::SourcePosition at = resumed_file ? c_.job->start().position : io::SourcePosition();
          Status sought = at.rows > 0 || at.offset > 0 ? source->seek(at) : Status();
          if (!sought.ok()) {
            auto window = std::make_shared<Window>();
            window->file_index = static_cast<int>(f);
            window->read_status = sought;
            submit(window);
            return;
          }
        }
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
            window->end_position = source->position();
            window->source_rows_skipped = source->rows_skipped();
            bytes_done = bytes_before + source->bytes_read();
            if (RunProgress* p = c_.options->progress) {
              p->rows_read.fetch_add(static_cast<int64_t>(*got));
              p->bytes_read.store(bytes_done);
            }
          }
          if (end) {
            window->last_in_file = true;
            if (!scan) window->source_first_skip = source->first_skip_reason();
          }
          if (!submit(window)) return;
          if (end) break;
        }
      }
    }
  }

  void tokenize_stage(double& busy) {
    const text::Tokenizer& tokenizer = *c_.tokenizer;
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
    const bool skips_padding = c_.skips_padding;
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
        if (w.first_drop_reason.empty()) w.first_drop_reason = located.to_string();
        ++counts_.rows_skipped;
        w.dropped[i] = 1;
      }
      if (!w.read_status.ok()) {
        fail(w.read_status);
        return false;
      }
      if (RunProgress* p = options.progress; p && !w.scan) {
        p->rows_done.fetch_add(static_cast<int64_t>(n - classify.size()));  // null and skipped rows
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
        if (RunProgress* p = options.progress) p->rows_done.fetch_add(w.source_rows_skipped);
      }
      for (Batch& batch : batches) {
        const backend::TokenBatch& t = batch.tokens;
        const int64_t real = t.real_tokens();
        counts_.tokens += real;
        counts_.padded_tokens += t.padded_tokens();
        counts_.computed_tokens += computed_tokens(t, skips_padding);
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

  // Workers pop batches and window markers from infer_ in queue order (a
  // sequence number taken under pop_mu_), classify batches concurrently, and
  // hand a window to the writer once no batch popped before its marker is
  // still running.
  void infer_stage(size_t w) {
    if (!infer_batches(w)) return;
    // The last worker out: every batch has finished, so every marker is released.
    if (workers_left_.fetch_sub(1) == 1 && release_done()) written_.close();
  }

  bool infer_batches(size_t w) {
    for (;;) {
      std::optional<InferItem> item;
      uint64_t seq = 0;
      {
        std::lock_guard<std::mutex> pop(pop_mu_);
        item = infer_.pop();
        if (!item) break;
        std::lock_guard<std::mutex> lock(order_mu_);
        seq = next_seq_++;
        if (item->batch) {
          in_flight_.insert(seq);
        } else {
          held_.emplace_back(seq, std::move(item->done));
        }
      }
      if (item->batch) {
        Status s = classify(workers_[w], counts_.workers[w], *item->batch);
        if (!s.ok()) {
          fail(std::move(s));
          return false;
        }
        std::lock_guard<std::mutex> lock(order_mu_);
        in_flight_.erase(seq);
      }
      if (!release_done()) return false;
    }
    std::lock_guard<std::mutex> lock(mu_);
    return !cancelled_;
  }

  // Pushes to the writer, in order, the held markers no running batch precedes.
  bool release_done() {
    std::lock_guard<std::mutex> release(release_mu_);  // keeps the pushes in marker order
    std::vector<std::shared_ptr<Window>> ready;
    {
      std::lock_guard<std::mutex> lock(order_mu_);
      while (!held_.empty() && (in_flight_.empty() || held_.front().first < *in_flight_.begin())) {
        ready.push_back(std::move(held_.front().second));
        held_.pop_front();
      }
    }
    for (std::shared_ptr<Window>& window : ready) {
      if (!written_.push(std::move(window))) return false;
    }
    return true;
  }

  // Classifies `batch` into its windows' probs; on out of memory, splits it
  // and retries the halves (see run_classification).
  Status classify(const Worker& worker, WorkerCounts& counts, Batch& batch) {
    Device& device = *worker.device;
    const backend::TokenBatch& t = batch.tokens;
    const int64_t computed = computed_tokens(t, worker.engine->skips_padding());
    if (t.batch > 1 && computed > device.limit.load()) return classify_halves(worker, counts, batch);
    Result<backend::Logits> logits = backend::Logits();
    {
      BusyTimer timer(counts.infer_s);
      logits = worker.engine->classify(t);
    }
    if (!logits.ok()) {
      const Status& error = logits.status();
      if (error.code() != StatusCode::kResourceExhausted) {
        return device.name == "cpu" ? error : error.with_context(device.name);
      }
      device.lower_limit(computed - 1);
      if (t.batch == 1) {
        return resource_exhausted(fmt::format(
            "{}: a single row of {} tokens ({} computed) does not fit in the device's memory ({}); lower "
            "--max-length or use a device with more memory",
            device.name, t.lengths[0], computed, error.message()));
      }
      device.oom_retries.fetch_add(1);
      return classify_halves(worker, counts, batch);
    }
    const int labels = c_.n_labels;
    if (logits->rows != t.batch || logits->labels != labels) {
      return internal_error(fmt::format("{}: backend returned logits of the wrong shape", device.name));
    }
    apply_head_function(c_.function, logits->values.data(), logits->rows, labels);
    for (size_t k = 0; k < batch.targets.size(); ++k) {
      const Batch::Target& target = batch.targets[k];
      std::copy_n(logits->values.begin() + static_cast<ptrdiff_t>(k * labels), labels,
                  target.window->probs.begin() + static_cast<ptrdiff_t>(target.row) * labels);
    }
    counts.rows += t.batch;
    ++counts.batches;
    if (RunProgress* p = c_.options->progress) {
      p->rows_done.fetch_add(t.batch);
      p->tokens_done.fetch_add(t.real_tokens());
    }
    return Status();
  }

  Status classify_halves(const Worker& worker, WorkerCounts& counts, const Batch& batch) {
    auto [first, second] = split_batch(batch);
    INFERCOST_RETURN_IF_ERROR(classify(worker, counts, first));
    return classify(worker, counts, second);
  }

  void write_stage() {
    const RunOptions& options = *c_.options;
    const OutputPlan& plan = *c_.plan;
    const size_t labels = static_cast<size_t>(c_.n_labels);
    std::vector<std::string> texts;
    std::vector<uint8_t> nulls;
    std::vector<float> probs;
    int64_t rows_done = 0;
    int current_file = -1;
    io::SourcePosition file_position;  // of the current file, after the last window written
    int64_t source_skipped = 0;        // the current file's source had skipped this many so far
    auto last_checkpoint = std::chrono::steady_clock::now();
    while (std::optional<std::shared_ptr<Window>> popped = written_.pop()) {
      Window& w = **popped;
      if (w.file_index != current_file) {
        current_file = w.file_index;
        const bool resumed = c_.job && c_.job->resuming() && w.file_index == c_.job->start().files_done;
        file_position = resumed ? c_.job->start().position : io::SourcePosition();
        source_skipped = 0;
      }
      writer_clean_ = false;
      bool saved = false;
      {
        BusyTimer timer(counts_.write_s);
        const size_t f = static_cast<size_t>(w.file_index);
        io::PredictionWriter* out = c_.single_writer;
        if (plan.per_file) {
          if (!part_) {
            io::ResumableOutput resumable;
            if (c_.job) resumable = c_.job->output_for(f);
            Result<std::unique_ptr<io::PredictionWriter>> created = io::create_prediction_writer(
                plan.paths[f], plan.formats[f], *c_.columns, c_.job ? &resumable : nullptr);
            if (!created.ok()) {
              fail(created.status());
              return;
            }
            part_ = std::move(*created);
          }
          out = part_.get();
        }
        texts.clear();
        nulls.clear();
        probs.clear();
        int64_t nulls_here = 0, dropped_here = 0;
        for (size_t i = 0; i < w.rows.size(); ++i) {
          if (w.dropped[i]) {
            ++dropped_here;
            continue;
          }
          texts.push_back(options.keep_text ? std::move(w.rows.texts[i]) : std::string());
          nulls.push_back(w.rows.is_null[i]);
          nulls_here += w.rows.is_null[i] ? 1 : 0;
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
        // What the job has accounted for once these rows are durable.
        progress_.rows_done += w.end_position.rows - file_position.rows;
        progress_.rows_null += nulls_here;
        progress_.rows_skipped += dropped_here + (w.source_rows_skipped - source_skipped);
        source_skipped = w.source_rows_skipped;
        if (progress_.first_skip_reason.empty()) {
          progress_.first_skip_reason = !w.first_drop_reason.empty() ? w.first_drop_reason
                                        : w.source_first_skip.ok()   ? std::string()
                                                                     : w.source_first_skip.to_string();
        }
        file_position = w.end_position;
        progress_.position = w.end_position;
        if (w.last_in_file) {
          progress_.files_done = w.file_index + 1;
          progress_.position = io::SourcePosition();
        }
        if (w.last_in_file && plan.per_file) {
          Status s = part_->close();
          if (!s.ok()) {
            fail(s);
            return;
          }
          counts_.committed.push_back(plan.paths[f]);
          part_.reset();
          crash_point("part-done");
          // Between two parts: a checkpoint now says the part is done.
          if (c_.job) {
            Status saved_now = save_checkpoint();
            if (!saved_now.ok()) {
              fail(saved_now);
              return;
            }
            saved = true;
          }
        }
      }
      writer_clean_ = true;
      if (c_.job && !saved &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - last_checkpoint).count() >=
              options.checkpoint_seconds) {
        Status s = save_checkpoint();
        if (!s.ok()) {
          fail(s);
          return;
        }
        saved = true;
      }
      if (saved) last_checkpoint = std::chrono::steady_clock::now();
      if (options.progress) options.progress->rows_written.store(rows_done);
    }
  }

  // The output written so far made durable, then the checkpoint saying so.
  Status save_checkpoint() {
    io::PredictionWriter* out = c_.plan->per_file ? part_.get() : c_.single_writer;
    if (out) {
      INFERCOST_ASSIGN_OR_RETURN(progress_.output, out->checkpoint());
    } else {
      progress_.output = io::OutputCheckpoint();
    }
    crash_point("output-synced");  // the output durable, its checkpoint not yet written
    return c_.job->save(progress_);
  }

  const PipelineConfig& c_;
  const std::vector<Worker> workers_;
  BoundedQueue<std::shared_ptr<Window>> ordered_;
  BoundedQueue<TokenizeTask> tasks_;
  BoundedQueue<InferItem> infer_;
  BoundedQueue<std::shared_ptr<Window>> written_;
  // Inference order: lock order pop_mu_ -> order_mu_, release_mu_ -> order_mu_.
  std::mutex pop_mu_, order_mu_, release_mu_;
  uint64_t next_seq_ = 0;                                          // order_mu_
  std::set<uint64_t> in_flight_;                                   // order_mu_: batches popped, not done
  std::deque<std::pair<uint64_t, std::shared_ptr<Window>>> held_;  // order_mu_: markers not yet released
  std::atomic<int> workers_left_;
  std::mutex mu_;
  std::condition_variable tokenized_;
  bool cancelled_ = false;
  Status first_error_;
  StageCounts counts_;
  // The writer's: the part of a folder output being written (a destroyed,
  // unclosed part leaves nothing, or a resumable partial), the job's progress
  // after the last window written, and whether the writer is between windows.
  std::unique_ptr<io::PredictionWriter> part_;
  JobProgress progress_;
  bool writer_clean_ = true;
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

namespace {

int clamp_to_int(int64_t value) {
  return static_cast<int>(std::clamp<int64_t>(value, 1, std::numeric_limits<int>::max()));
}

// Creates and prepares the backend of one device (its first stream).
Result<std::unique_ptr<Device>> open_device(const RunOptions& options, const std::string& name,
                                            const backend::BackendOptions& backend_options,
                                            const model::LoadedModel& model) {
  auto device = std::make_unique<Device>();
  device->name = name;
  Result<std::unique_ptr<backend::Backend>> created = options.backend_factory
                                                          ? options.backend_factory(name, backend_options)
                                                          : backend::create_backend(name, backend_options);
  if (!created.ok()) return created.status();
  INFERCOST_RETURN_IF_ERROR((*created)->prepare(model.config, model.weights));
  device->streams.push_back(std::move(*created));
  return device;
}

// Opens every device, in parallel when there are several (weights upload to
// each GPU at once). The first error in device order wins.
Result<std::vector<std::unique_ptr<Device>>> open_devices(const RunOptions& options,
                                                          const std::vector<std::string>& names,
                                                          const backend::BackendOptions& backend_options,
                                                          const model::LoadedModel& model) {
  std::vector<std::optional<Result<std::unique_ptr<Device>>>> opened(names.size());
  if (names.size() == 1) {
    opened[0].emplace(open_device(options, names[0], backend_options, model));
  } else {
    std::vector<std::thread> threads;
    for (size_t i = 0; i < names.size(); ++i) {
      threads.emplace_back(
          [&, i] { opened[i].emplace(open_device(options, names[i], backend_options, model)); });
    }
    for (std::thread& t : threads) t.join();
  }
  std::vector<std::unique_ptr<Device>> devices;
  for (size_t i = 0; i < names.size(); ++i) {
    Result<std::unique_ptr<Device>>& r = *opened[i];
    if (!r.ok()) return names[i] == "cpu" ? r.status() : r.status().with_context(names[i]);
    devices.push_back(std::move(*r));
  }
  return devices;
}

// The capacity of a device (its first stream) for the run's auto sizes. Under
// kTokens with --batch-size auto the token budget (rows x longest row) bounds
// a batch, so its rows need only fit in memory beside the tokens: the
// capacity for rows of the shortest length, whose rows and tokens fit
// together (Backend::capacity), as long as one row of max_length still fits
// the budget. Otherwise, and under kSeed, the capacity for rows of max_length.
// `shortest_row`: the tokens of an empty text (the tokenizer's special tokens).
Result<backend::BatchCapacity> device_capacity(backend::Backend& engine, const RunOptions& options,
                                               int shortest_row) {
  if (options.batching == Batching::kTokens && options.batch_size_auto) {
    Result<backend::BatchCapacity> shortest = engine.capacity(shortest_row);
    if (shortest.ok() && shortest->max_tokens >= options.max_length) {
      shortest->basis += fmt::format(
          "; rows counted at {} tokens, the shortest row, since the token budget bounds a batch first",
          shortest_row);
      return shortest;
    }
  }
  return engine.capacity(options.max_length);
}

// The batch capacity per stream, the smallest over the devices.
Result<backend::BatchCapacity> stream_capacity(const std::vector<std::unique_ptr<Device>>& devices,
                                               const std::vector<backend::BatchCapacity>& per_device) {
  backend::BatchCapacity least;
  for (size_t i = 0; i < devices.size(); ++i) {
    const backend::BatchCapacity& c = per_device[i];
    const int streams = static_cast<int>(devices[i]->streams.size());
    if (c.max_tokens < 1 || c.max_rows < 1) {
      return resource_exhausted(
          fmt::format("{}: no batch fits in the memory left after loading the model ({}; {} tokens, {} rows)",
                      devices[i]->name, c.basis, c.max_tokens, c.max_rows));
    }
    const int64_t tokens = std::max<int64_t>(1, c.max_tokens / streams);
    const int rows = std::max(1, c.max_rows / streams);
    if (i == 0 || tokens < least.max_tokens) {
      least.basis = streams > 1
                        ? fmt::format("{} (shared by {} streams): {}", devices[i]->name, streams, c.basis)
                        : fmt::format("{}: {}", devices[i]->name, c.basis);
      least.max_tokens = tokens;
      least.free_bytes = c.free_bytes;
      least.total_bytes = c.total_bytes;
    }
    least.max_rows = i == 0 ? rows : std::min(least.max_rows, rows);
  }
  return least;
}

// What is known of the inputs' size before any row is read. A file that
// cannot be opened here fails later, in input order, in the reader.
void start_progress(RunProgress& progress, const std::vector<std::string>& inputs,
                    const std::vector<io::InputFormat>& formats,
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
        fmt::format("{}; the job stopped after {} rows (checkpoint {}{}): rerun with --resume to continue",
                    status.message(), job->last_saved().rows_done, job->checkpoint_path(),
                    saved.ok() ? "" : ", saved before the error"));
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

}  // namespace

Result<std::optional<HeadFunction>> check_head_options(const RunOptions& options) {
  if (options.threshold) {
    const double t = *options.threshold;
    if (!(t >= 0 && t <= 1)) return invalid_argument(fmt::format("--threshold {}: must be in [0, 1]", t));
  }
  if (options.function == "default") return std::optional<HeadFunction>();
  Result<HeadFunction> f = parse_head_function(options.function);
  if (!f.ok()) {
    return invalid_argument("--function '" + options.function +
                            "': expected softmax, sigmoid, none or default (the model's)");
  }
  return std::optional<HeadFunction>(*f);
}

Result<RunMetrics> run_classification(const RunOptions& options) {
  if (options.inputs.empty()) return invalid_argument("no input files given");
  INFERCOST_RETURN_IF_ERROR(
      check_batching_options(options.batch_size, options.max_batch_tokens, options.window_rows));
  if (options.tokenizer_threads < 0) {
    return invalid_argument("--tokenizer-threads must be at least 1 (or 0 for the device's default)");
  }
  if (options.threads < 0) return invalid_argument("--threads must be at least 1 (or 0 for all cores)");
  if (options.streams_per_device < 0 || options.streams_per_device > kMaxStreamsPerDevice) {
    return invalid_argument(
        fmt::format("--streams-per-device {}: must be 1 to {} (or 0 for the device's default)",
                    options.streams_per_device, kMaxStreamsPerDevice));
  }
  INFERCOST_RETURN_IF_ERROR(text::check_max_length(options.max_length));
  INFERCOST_ASSIGN_OR_RETURN(std::optional<HeadFunction> asked, check_head_options(options));
  INFERCOST_ASSIGN_OR_RETURN(backend::Precision precision,
                             backend::resolve_precision(options.device, options.precision));
  INFERCOST_ASSIGN_OR_RETURN(backend::DeviceSpec device_spec, backend::parse_device(options.device));
  // Before anything is read or created: a GPU run that cannot start here says why at once.
  INFERCOST_ASSIGN_OR_RETURN(
      std::vector<std::string> device_names,
      options.device_resolver ? options.device_resolver(device_spec) : backend::resolve_devices(device_spec));
  if (device_names.empty()) return unavailable("device '" + options.device + "': no device to run on");
  INFERCOST_ASSIGN_OR_RETURN(std::vector<std::string> inputs, io::expand_inputs(options.inputs));
  std::vector<io::InputFormat> input_formats;
  for (const std::string& path : inputs) {
    INFERCOST_ASSIGN_OR_RETURN(io::InputFormat format, io::input_format_for(path, options.input_format));
    input_formats.push_back(format);
  }
  INFERCOST_ASSIGN_OR_RETURN(OutputPlan plan, plan_outputs(options, inputs, input_formats));
  // An output file or folder is a resumable job: locked, checkpointed.
  std::unique_ptr<ResumableJob> job;
  if (options.output == "-") {
    if (options.resume)
      return invalid_argument("--resume needs an output file or folder (--output), not stdout");
  } else {
    INFERCOST_ASSIGN_OR_RETURN(job, ResumableJob::open(options, plan, inputs, input_formats));
  }

  RunMetrics metrics;
  metrics.threads = resolve_threads(options.threads);
  metrics.batching = batching_name(options.batching);
  const bool seed = options.batching == Batching::kSeed;
  metrics.tokenizer_threads = options.tokenizer_threads > 0 ? options.tokenizer_threads
                              : options.device == "cpu"     ? 1
                                                            : metrics.threads;
  metrics.max_length = options.max_length;
  metrics.device = options.device;
  metrics.devices = device_names;
  metrics.input_files = static_cast<int64_t>(inputs.size());
  metrics.batch_size_auto = options.batch_size_auto;
  metrics.max_batch_tokens_auto = options.max_batch_tokens_auto;
  if (job) {
    metrics.checkpoint = job->checkpoint_path();
    metrics.resumed = job->resuming();
    metrics.resumed_rows = job->start().rows_done;
    if (job->complete()) {
      metrics.already_complete = true;
      metrics.output_files = static_cast<int64_t>(plan.paths.size());
      return metrics;
    }
  }

  model::LoadedModel model;
  std::vector<std::unique_ptr<Device>> devices;
  {
    StageTimer timer(metrics, "load");
    model::LoadOptions load;
    load.max_length = options.max_length;
    INFERCOST_ASSIGN_OR_RETURN(model, model::load_model_dir(options.model_dir, load));
    if (options.max_length > model.config.max_positions()) {
      return invalid_argument("--max-length " + std::to_string(options.max_length) + " exceeds the model's " +
                              std::to_string(model.config.max_positions()) + " positions");
    }
    backend::BackendOptions backend_options;
    backend_options.threads = metrics.threads;
    backend_options.precision = precision;
    backend_options.precision_is_default = options.precision == "auto";
    INFERCOST_ASSIGN_OR_RETURN(devices, open_devices(options, device_names, backend_options, model));
    model.weights = model::EncoderWeights();  // every backend keeps its own copy
    // Capacity before the forks: each stream's share of what is free now.
    std::vector<backend::BatchCapacity> capacities;
    if (options.batch_size_auto || options.max_batch_tokens_auto) {
      for (const std::unique_ptr<Device>& d : devices) {
        Result<backend::BatchCapacity> c =
            device_capacity(*d->streams[0], options, std::max(1, model.tokenizer->special_tokens()));
        if (!c.ok()) return c.status().with_context(d->name + ": batch capacity");
        capacities.push_back(std::move(*c));
      }
    }
    const int streams = options.streams_per_device > 0 ? options.streams_per_device : 2;
    for (const std::unique_ptr<Device>& d : devices) {
      while (static_cast<int>(d->streams.size()) < streams) {
        Result<std::unique_ptr<backend::Backend>> forked = d->streams[0]->fork();
        if (!forked.ok()) {
          if (forked.status().code() == StatusCode::kUnsupported) break;  // one stream is what it runs
          return forked.status().with_context(d->name + ": another stream");
        }
        d->streams.push_back(std::move(*forked));
      }
    }
    if (!capacities.empty()) {
      INFERCOST_ASSIGN_OR_RETURN(backend::BatchCapacity c, stream_capacity(devices, capacities));
      metrics.capacity_max_tokens = c.max_tokens;
      metrics.capacity_max_rows = c.max_rows;
      metrics.capacity_basis = c.basis;
    }
  }
  // The batch policy, now that the devices' capacity is known.
  if (options.batch_size_auto) {
    // kSeed pads every row of a batch to at most max_length.
    metrics.batch_size = seed ? std::min(metrics.capacity_max_rows,
                                         clamp_to_int(metrics.capacity_max_tokens / options.max_length))
                              : metrics.capacity_max_rows;
  } else {
    metrics.batch_size = options.batch_size > 0
                             ? options.batch_size
                             : (seed ? kSeedRowsPerThread * metrics.threads : kDefaultTokensBatchSize);
  }
  if (options.max_batch_tokens_auto) {
    metrics.max_batch_tokens = clamp_to_int(metrics.capacity_max_tokens);
  } else {
    metrics.max_batch_tokens =
        options.max_batch_tokens > 0 ? options.max_batch_tokens : kDefaultMaxBatchTokens;
  }
  // Seed batches count from each file's start across windows; whole batches
  // per window keep them from straddling two.
  metrics.window_rows =
      seed ? (options.window_rows + metrics.batch_size - 1) / metrics.batch_size * metrics.batch_size
           : options.window_rows;
  // GPUs of different generations may run different precisions: "bf16+fp16".
  std::vector<std::string> precisions;
  for (const std::unique_ptr<Device>& d : devices) {
    const std::string p = backend::precision_name(d->streams[0]->precision());
    if (std::find(precisions.begin(), precisions.end(), p) == precisions.end()) precisions.push_back(p);
  }
  metrics.precision = fmt::format("{}", fmt::join(precisions, "+"));
  if (job) INFERCOST_RETURN_IF_ERROR(job->check_precision(metrics.precision));
  metrics.model_name = model.config.name;
  metrics.model_synthetic = model.config.synthetic;
  const HeadFunction function = asked ? *asked : default_head_function(model.config).function;
  const bool label_set = writes_label_set(function, model.config.num_labels());
  if (options.threshold && !label_set) {
    return invalid_argument(fmt::format(
        "--threshold {}: only multi-label outputs (--function sigmoid over more than one label) have a "
        "'labels' column for it to decide; this run's function is {} over {} label{}",
        *options.threshold, head_function_name(function), model.config.num_labels(),
        model.config.num_labels() == 1 ? "" : "s"));
  }
  metrics.head_function = head_function_name(function);
  metrics.labels_column = label_set;
  if (label_set) metrics.threshold = options.threshold.value_or(kDefaultThreshold);
  if (options.on_model_loaded) options.on_model_loaded(model.config);

  io::PredictionColumns columns;
  columns.keep_text = options.keep_text;
  columns.labels = model.config.labels;
  columns.compression = options.compression;
  columns.label_set = label_set;
  columns.threshold = static_cast<float>(metrics.threshold);
  std::unique_ptr<io::PredictionWriter> writer;
  if (!plan.per_file) {
    io::ResumableOutput resumable;
    if (job) resumable = job->output_for(0);
    INFERCOST_ASSIGN_OR_RETURN(writer, io::create_prediction_writer(plan.paths[0], plan.formats[0], columns,
                                                                    job ? &resumable : nullptr));
  }

  PipelineConfig config;
  config.options = &options;
  config.inputs = &inputs;
  config.input_formats = &input_formats;
  config.plan = &plan;
  config.columns = &columns;
  config.tokenizer = model.tokenizer.get();
  for (const std::unique_ptr<Device>& d : devices) config.devices.push_back(d.get());
  config.skips_padding = devices[0]->streams[0]->skips_padding();
  config.single_writer = writer.get();
  config.policy.batching = options.batching;
  config.policy.batch_size = metrics.batch_size;
  config.policy.max_batch_tokens = metrics.max_batch_tokens;
  config.policy.pad_id = model.tokenizer->pad_id();
  config.window_rows = static_cast<size_t>(metrics.window_rows);
  config.tokenizer_threads = metrics.tokenizer_threads;
  config.n_labels = model.config.num_labels();
  config.function = function;
  config.job = job.get();

  const auto wall_start = std::chrono::steady_clock::now();
  if (options.progress) {
    start_progress(*options.progress, inputs, input_formats, wall_start);
    if (job) {
      // Reading starts past what earlier runs did: rows and bytes read count it.
      options.progress->rows_resumed.store(job->start().rows_done);
      options.progress->rows_read.store(job->start().rows_done);
    }
  }
  Pipeline pipeline(config);
  Status status = pipeline.run();
  const StageCounts& counts = pipeline.counts();
  if (!status.ok()) return end_failed_run(status, job.get(), pipeline, writer.get(), plan);
  if (writer) {
    const auto start = std::chrono::steady_clock::now();
    Status closed = writer->close();
    metrics.stage_seconds["write"] +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!closed.ok()) return end_failed_run(closed, job.get(), pipeline, writer.get(), plan);
  }
  if (job) {
    crash_point("job-finish");  // every output in place, the checkpoint not yet removed
    job->finish();
    metrics.checkpoints = job->checkpoints_written();
    metrics.checkpoint_seconds = job->checkpoint_seconds();
  }
  metrics.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
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
  metrics.stage_seconds["write"] += counts.write_s;
  double infer_s = 0;
  for (const std::unique_ptr<Device>& d : devices) {
    DeviceRunMetrics m;
    m.name = d->name;
    m.streams = static_cast<int>(d->streams.size());
    m.oom_retries = d->oom_retries.load();
    const int64_t limit = d->limit.load();
    m.max_computed_tokens = limit == std::numeric_limits<int64_t>::max() ? 0 : limit;
    for (size_t w = 0; w < pipeline.workers().size(); ++w) {
      if (pipeline.workers()[w].device != d.get()) continue;
      const WorkerCounts& c = counts.workers[w];
      m.batches += c.batches;
      m.rows += c.rows;
      m.infer_seconds += c.infer_s;
    }
    metrics.rows += m.rows;
    metrics.oom_retries += m.oom_retries;
    metrics.workers += m.streams;
    infer_s += m.infer_seconds;
    metrics.per_device.push_back(std::move(m));
  }
  metrics.stage_seconds["infer"] += infer_s;
  const model::ModelConfig& shape = model.config;
  for (size_t length = 0; length < metrics.length_counts.size(); ++length) {
    if (metrics.length_counts[length] == 0) continue;
    metrics.model_flops += static_cast<double>(metrics.length_counts[length]) *
                           encoder_row_flops(shape.num_layers, shape.hidden_size, shape.intermediate_size,
                                             static_cast<double>(length));
  }
  metrics.peak_rss_bytes = peak_rss_bytes();
  return metrics;
}

}  // namespace infercost::pipeline
