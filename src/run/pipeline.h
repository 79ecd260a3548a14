// The file runner's pipeline (runner.h: run_files): the state its
// threads share, and one group of members per thread role, each defined in
// its own file:
//   runner.cc        the core: threads started and joined, the first error,
//                    the final checkpoint; run_files
//   run_reader.cc    the reader: inputs -> windows of rows, in input order
//   run_tokenize.cc  the tokenizers: each window's rows -> token ids
//   run_batch.cc     the batcher: windows, in order -> batches (bad rows sorted out)
//   run_infer.cc     the inference workers: batches -> scores
//   run_writer.cc    the writer: windows, in order -> outputs and checkpoints
// A Window travels from the reader to the writer; batches refer to their
// window's rows. Errors travel in-band with the rows and cancel every queue.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/encoder.h"
#include "engine/encoder_workers.h"
#include "infercost/progress.h"
#include "infercost/status.h"
#include "io/prediction_writer.h"
#include "run/batcher.h"
#include "run/bounded_queue.h"
#include "run/engine.h"
#include "run/job.h"
#include "run/output_plan.h"
#include "run/run_input.h"
#include "run/runner.h"

namespace infercost::run {

// Queue capacities. Windows in flight stay at about ordered + 1 (batcher) +
// those referenced by queued batches + to-write + 1 (writer): a few windows.
// The inference queue holds batches of successive windows and their window
// markers: kBatchesPerWorker items per worker keep two batches queued for
// each even when every window makes a single batch (a marker per batch).
inline constexpr size_t kWindowsAhead = 2;
inline constexpr size_t kTasksAhead = 64;
inline constexpr size_t kBatchesAhead = 8;
inline constexpr size_t kBatchesPerWorker = 4;
inline constexpr size_t kWindowsToWrite = 2;

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
  // one function that classifies a batch (EncoderWorkers::infer_batch).
  Encoder* classifier = nullptr;
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
  explicit Pipeline(const PipelineConfig& config);

  // Runs every stage to the end or to the first error; all threads joined.
  Status run();

  // After a failed run() that can be resumed from: a last checkpoint of the
  // rows written (whole windows only), where the writer was left clean.
  Status save_final_checkpoint();
  // The rows the job has accounted for (the checkpoint's, the last one saved).
  const JobProgress& progress() const { return progress_; }
  // The part of a folder output still open (a failed run), to discard.
  io::PredictionWriter* open_part() { return part_.get(); }

  const StageCounts& counts() const { return counts_; }

 private:
  // Where the writer stands (run_writer.cc): in the current input file, and
  // the rows it wrote over all files.
  struct WriterFile {
    int index = -1;
    io::SourcePosition position;  // after the last window written
    int64_t source_skipped = 0;   // the file's source had skipped this many so far
    int64_t rows_written = 0;
  };

  // runner.cc: the first error wins and cancels every queue.
  void fail(Status status);
  void watch_stop(const std::atomic<bool>& finished);

  // run_reader.cc
  void read_stage();
  void read_files();
  // False when the stream ended (an error window, or cancelled).
  bool read_file(io::RowSource& source, size_t file, bool scan, uint64_t& bytes_done);
  bool submit_error(size_t file, Status status);
  // Hands a window to the batcher (in order) and its rows to the tokenizers.
  bool submit(const std::shared_ptr<Window>& window);

  // run_tokenize.cc
  void tokenize_stage(double& busy);

  // run_batch.cc
  void batch_stage();
  bool batch_windows();  // false when cancelled
  // Sorts a window's rows out (null, bad, to classify) and counts them; false on a bad row under kFail.
  bool sort_out(Window& w, std::vector<int32_t>& classify);
  void count_source_skips(const Window& w);

  // run_infer.cc
  void infer_stage(size_t w);
  bool infer_batches(size_t w);
  bool release_done();
  Status infer_batch(size_t w, Batch& batch);
  Status drop_non_finite(size_t w, const Batch& batch, const std::vector<int32_t>& bad);

  // run_writer.cc
  void write_stage();
  // False (the run failed) when the window could not be written.
  bool write_window(Window& w, WriterFile& file, bool& saved);
  Result<io::PredictionWriter*> writer_for(size_t file);
  bool end_part(size_t file, bool& saved);
  Status save_checkpoint();

  const PipelineConfig& c_;
  Encoder& classifier_;
  EncoderWorkers workers_;
  const BatchPolicy policy_;
  std::vector<std::vector<float>> scratch_;  // per worker
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

}  // namespace infercost::run
