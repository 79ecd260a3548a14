#include "infercost/pipeline/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "backend/gpu_monitor.h"
#include "core/test_point.h"
#include "core/threads.h"
#include "infercost/backend/backend.h"
#include "infercost/text/tokenizer.h"
#include "io/prediction_writer.h"
#include "io/row_source.h"
#include "pipeline/batcher.h"
#include "pipeline/bounded_queue.h"
#include "pipeline/classifier_metrics.h"
#include "pipeline/job.h"
#include "pipeline/output_plan.h"

namespace infercost::pipeline {

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

struct PipelineConfig {
  const RunOptions* options = nullptr;
  const std::vector<std::string>* inputs = nullptr;
  const std::vector<io::InputFormat>* input_formats = nullptr;
  const OutputPlan* plan = nullptr;
  const io::PredictionColumns* columns = nullptr;
  // The model on its devices: its tokenizer, policy and workers, and the
  // one function that classifies a batch.
  Classifier* classifier = nullptr;
  io::PredictionWriter* single_writer = nullptr;  // when !plan->per_file
  size_t window_rows = 0;
  // A run with an output file or folder: its checkpoint and where it starts.
  ResumableJob* job = nullptr;
};

// Counters each stage keeps on its own thread; merged after the join.
struct StageCounts {
  double read_s = 0, batch_s = 0, write_s = 0;
  std::vector<double> tokenize_s;
  int64_t rows_null = 0, rows_skipped = 0;
  std::string first_skip_reason;
  std::vector<std::string> committed;  // parts the writer closed
};

class Pipeline {
 public:
  explicit Pipeline(const PipelineConfig& config)
      : c_(config),
        classifier_(*config.classifier),
        policy_(classifier_.policy()),
        ordered_(kWindowsAhead),
        tasks_(kTasksAhead),
        infer_(std::max(kBatchesAhead, kBatchesPerWorker * classifier_.workers())),
        written_(kWindowsToWrite),
        workers_left_(static_cast<int>(classifier_.workers())) {
    counts_.tokenize_s.assign(static_cast<size_t>(classifier_.tokenizer_threads()), 0.0);
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
            if (c_.options->on_stop_seen) c_.options->on_stop_seen(sig);
            test_point("signal-seen");
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
    for (int t = 0; t < classifier_.tokenizer_threads(); ++t) {
      threads.emplace_back([this, t] { tokenize_stage(counts_.tokenize_s[static_cast<size_t>(t)]); });
    }
    threads.emplace_back([this] { batch_stage(); });
    for (size_t w = 0; w < classifier_.workers(); ++w) threads.emplace_back([this, w] { infer_stage(w); });
    threads.emplace_back([this] { write_stage(); });
    for (std::thread& t : threads) t.join();
    finished.store(true);
    if (watcher.joinable()) watcher.join();
    std::lock_guard<std::mutex> lock(mu_);
    counts_.rows_skipped += non_finite_skipped_;
    if (counts_.first_skip_reason.empty()) counts_.first_skip_reason = non_finite_first_;
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
    const bool seed = policy_.batching == Batching::kSeed;
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
    const text::Tokenizer& tokenizer = classifier_.tokenizer();
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
    const bool seed = policy_.batching == Batching::kSeed;
    Batcher batcher(policy_);
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
      w.probs.assign(n * static_cast<size_t>(classifier_.labels()), 0.0f);
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
        Status s = classify(w, *item->batch);
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

  // Classifies `batch` on worker `w` into its windows' probs (out of memory:
  // Classifier::infer_batch splits and retries).
  Status classify(size_t w, Batch& batch) {
    const backend::TokenBatch& t = batch.tokens;
    const size_t labels = static_cast<size_t>(classifier_.labels());
    std::vector<float>& out = scratch_[w];
    out.resize(static_cast<size_t>(t.batch) * labels);
    std::vector<int32_t> bad;
    INFERCOST_RETURN_IF_ERROR(classifier_.infer_batch(w, t, out, &bad));
    if (!bad.empty()) INFERCOST_RETURN_IF_ERROR(drop_non_finite(w, batch, bad));
    for (size_t k = 0; k < batch.targets.size(); ++k) {
      const Batch::Target& target = batch.targets[k];
      std::copy_n(
          out.begin() + static_cast<ptrdiff_t>(k * labels), labels,
          target.window->probs.begin() + static_cast<ptrdiff_t>(static_cast<size_t>(target.row) * labels));
    }
    if (RunProgress* p = c_.options->progress) {
      p->rows_done.fetch_add(t.batch);
      p->tokens_done.fetch_add(t.real_tokens());
    }
    return Status();
  }

  // Rows whose outputs are not finite: an error naming them (the first in
  // input order), or, with --on-error skip, dropped as bad rows are.
  Status drop_non_finite(size_t w, const Batch& batch, const std::vector<int32_t>& bad) {
    std::vector<std::pair<int, int64_t>> at;  // (file, line) of each
    for (int32_t k : bad) {
      const Batch::Target& target = batch.targets[static_cast<size_t>(k)];
      at.emplace_back(target.window->file_index, target.window->rows.lines[static_cast<size_t>(target.row)]);
    }
    std::sort(at.begin(), at.end());
    std::vector<int64_t> lines;  // of the first file named
    const Window* first = nullptr;
    for (size_t i = 0; i < bad.size(); ++i) {
      const Batch::Target& target = batch.targets[static_cast<size_t>(bad[i])];
      if (target.window->file_index == at[0].first) first = target.window;
    }
    for (const auto& [file, line] : at) {
      if (file == at[0].first) lines.push_back(line);
    }
    const std::string rows = fmt::format("{}: {}", (*c_.inputs)[static_cast<size_t>(at[0].first)],
                                         Classifier::name_rows(first->location_unit, lines));
    Status error = classifier_.non_finite_error(rows, w);
    if (c_.options->on_bad_row == io::OnBadRow::kFail) return error;
    std::lock_guard<std::mutex> lock(mu_);
    for (int32_t k : bad) {
      const Batch::Target& target = batch.targets[static_cast<size_t>(k)];
      target.window->dropped[static_cast<size_t>(target.row)] = 1;
      if (target.window->first_drop_reason.empty()) target.window->first_drop_reason = error.to_string();
    }
    non_finite_skipped_ += static_cast<int64_t>(bad.size());
    if (non_finite_first_.empty()) non_finite_first_ = error.to_string();
    return Status();
  }

  void write_stage() {
    const RunOptions& options = *c_.options;
    const OutputPlan& plan = *c_.plan;
    const size_t labels = static_cast<size_t>(classifier_.labels());
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
          test_point("part-done");
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
    test_point("output-synced");  // the output durable, its checkpoint not yet written
    return c_.job->save(progress_);
  }

  const PipelineConfig& c_;
  Classifier& classifier_;
  const BatchPolicy policy_;
  std::vector<std::vector<float>> scratch_ =
      std::vector<std::vector<float>>(classifier_.workers());  // per worker
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
  int64_t non_finite_skipped_ = 0;  // mu_: rows dropped for outputs that are not finite
  std::string non_finite_first_;    // mu_: why the first was
  // The writer's: the part of a folder output being written (a destroyed,
  // unclosed part leaves nothing, or a resumable partial), the job's progress
  // after the last window written, and whether the writer is between windows.
  std::unique_ptr<io::PredictionWriter> part_;
  JobProgress progress_;
  bool writer_clean_ = true;
};

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

void fill_gpu_metrics(RunMetrics& metrics, backend::GpuSampling sampled) {
  metrics.gpu_sample_interval_seconds = sampled.interval_seconds;
  metrics.gpu_samples = sampled.samples;
  metrics.gpus = std::move(sampled.gpus);
  metrics.gpu_monitor = std::move(sampled.why_not);
}

// A finished run's metrics: what the classifier counted (classifier_metrics.h)
// and what the runner's own stages did around it.
void add_run_counts(RunMetrics& metrics, const Classifier& classifier, const StageCounts& counts,
                    const OutputPlan& plan) {
  add_classifier_metrics(metrics, classifier, classifier.stats());
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

}  // namespace

Result<RunMetrics> run_classification(const RunOptions& options, const BackendFactory& factory) {
  if (options.inputs.empty()) return invalid_argument("no input files given");
  INFERCOST_RETURN_IF_ERROR(
      check_batching_options(options.batch_size, options.max_batch_tokens, options.window_rows));
  // Before anything is read or created: a GPU run that cannot start here says why at once.
  INFERCOST_ASSIGN_OR_RETURN(std::vector<std::string> device_names,
                             resolve_classifier_devices(options, factory));
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

  // Samples from the model's load on; stopped (its thread joined) when the run ends, whatever its outcome.
  backend::RunGpuSampling gpu_sampling(options.device, options.nvml_library, options.gpu_sample_seconds);
  RunMetrics metrics;
  set_option_metrics(metrics, options, device_names);
  metrics.input_files = static_cast<int64_t>(inputs.size());
  if (job) {
    metrics.checkpoint = job->checkpoint_path();
    metrics.resumed = job->resuming();
    metrics.resumed_rows = job->start().rows_done;
    if (job->complete()) {
      metrics.already_complete = true;
      metrics.output_files = static_cast<int64_t>(plan.paths.size());
      fill_gpu_metrics(metrics, gpu_sampling.finish());
      return metrics;
    }
  }

  std::unique_ptr<Classifier> classifier;
  {
    StageTimer timer(metrics, "load");
    ClassifierOptions classifier_options = options;
    classifier_options.on_model_loaded = nullptr;  // called below, once the run's own checks pass
    // The devices resolved above, not asked for again.
    BackendFactory resolved = factory;
    resolved.resolve_devices = [&device_names](const backend::DeviceSpec&) { return device_names; };
    INFERCOST_ASSIGN_OR_RETURN(classifier, Classifier::open(options.model_dir, classifier_options, resolved));
  }
  // Seed batches count from each file's start across windows; whole batches
  // per window keep them from straddling two.
  const int batch_size = classifier->policy().batch_size;
  metrics.window_rows = options.batching == Batching::kSeed
                            ? (options.window_rows + batch_size - 1) / batch_size * batch_size
                            : options.window_rows;
  if (job) INFERCOST_RETURN_IF_ERROR(job->check_precision(classifier->precision()));
  const model::ModelConfig& config = classifier->config();
  if (options.on_model_loaded) options.on_model_loaded(config);
  gpu_sampling.start();

  io::PredictionColumns columns;
  columns.keep_text = options.keep_text;
  columns.labels = config.labels;
  columns.compression = options.compression;
  columns.label_set = classifier->label_set();
  columns.threshold = static_cast<float>(classifier->threshold());
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
  if (options.progress) {
    start_progress(*options.progress, inputs, input_formats, wall_start);
    if (job) {
      // Reading starts past what earlier runs did: rows and bytes read count it.
      options.progress->rows_resumed.store(job->start().rows_done);
      options.progress->rows_read.store(job->start().rows_done);
    }
  }
  Pipeline pipeline(pipeline_config);
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
    test_point("job-finish");  // every output in place, the checkpoint not yet removed
    job->finish();
    metrics.checkpoints = job->checkpoints_written();
    metrics.checkpoint_seconds = job->checkpoint_seconds();
  }
  metrics.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  add_run_counts(metrics, *classifier, counts, plan);
  fill_gpu_metrics(metrics, gpu_sampling.finish());
  return metrics;
}

}  // namespace infercost::pipeline
