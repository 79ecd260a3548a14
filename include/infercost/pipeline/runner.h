// `infercost run`: classify every row of the inputs and write predictions in
// input order. Stages: read -> tokenize -> batch -> infer -> the head's output
// function (head.h) -> write.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "infercost/backend/backend.h"
#include "infercost/core/status.h"
#include "infercost/io/rows.h"
#include "infercost/model/config.h"
#include "infercost/pipeline/head.h"
#include "infercost/pipeline/metrics.h"
#include "infercost/pipeline/progress.h"

namespace infercost::pipeline {

// How rows become batches.
//   kTokens: within a window of rows, sort by token length and pack batches of
//            up to max_batch_tokens tokens (rows x longest row) and batch_size
//            rows; the backend computes real tokens only.
//   kSeed:   the study's method: fixed batch_size rows in input order, every row
//            padded to the longest row of its file (at most max_length), and the
//            padding computed (TokenBatch::compute_padding), as PyTorch did.
enum class Batching { kTokens, kSeed };
const char* batching_name(Batching batching);
Result<Batching> parse_batching(const std::string& name);  // "tokens", "seed"

// Defaults run_classification resolves a 0 to (docs/cpu.md); `infercost plan`
// simulates the same rules.
inline constexpr int kDefaultTokensBatchSize = backend::kDefaultBatchRows;  // rows, a cap under kTokens
inline constexpr int kDefaultMaxBatchTokens = backend::kDefaultBatchTokens;
inline constexpr int kSeedRowsPerThread = 100;  // kSeed: the study's 100 x vCPUs
inline constexpr int kDefaultWindowRows = 8192;
inline constexpr int kMaxStreamsPerDevice = 16;

struct RunOptions {
  // Files, folders and globs (io::expand_inputs), read in the order given.
  std::vector<std::string> inputs;
  std::string input_format;  // empty: each file's extension (io::input_format_for)
  std::string model_dir;
  std::string column = "full_text";
  // "-" = JSON lines on stdout; a file; or a folder (an existing directory,
  // or a path ending in '/'), which gets one part per input file named after
  // it, in --output-format or else the input's own format (JSON -> jsonl).
  std::string output = "-";
  std::string output_format;           // empty: from the extension
  std::string compression = "snappy";  // Parquet outputs
  // "cpu", "cuda" / "cuda:all" (every GPU), "cuda:N" or "cuda:N,M,..."
  // (backend::parse_device). One worker per stream of each device pulls
  // batches from one shared queue; output stays in input order.
  std::string device = "cpu";
  // Backends per device, each with its own stream and scratch memory, so a
  // device has several batches in flight; 0: 2 where the backend can fork()
  // (GPUs), else 1; at most kMaxStreamsPerDevice. A backend that cannot fork
  // runs 1 whatever is asked.
  int streams_per_device = 0;
  Batching batching = Batching::kTokens;
  // Rows per batch; 0 picks the policy's default: tokens -> 256 (a cap, the
  // token budget usually binds first), seed -> 100 x threads (the study's
  // CPU rule, "batch 100 x vCPUs").
  int batch_size = 0;
  // kTokens: most tokens per batch (rows x longest row); 0 -> 4096.
  int max_batch_tokens = 0;
  // "auto" sizes, from Backend::capacity() of every device once the model is
  // loaded (each device's figures divided by its streams, the smallest
  // taken); the numbers above are then ignored.
  //   kTokens: max_batch_tokens = capacity tokens; batch_size = capacity rows,
  //            with --batch-size auto measured for rows of 2 tokens (the
  //            shortest; the token budget bounds real batches first) while a
  //            row of max_length fits that budget, else for rows of max_length.
  //   kSeed:   batch_size = the least of capacity rows and capacity tokens /
  //            max_length, measured for rows of max_length (a seed batch is
  //            padded to at most max_length).
  bool batch_size_auto = false;
  bool max_batch_tokens_auto = false;
  // kTokens: rows sorted by length together; bounds reordering and memory.
  // No row waits for the next window, so a window also bounds a batch's rows.
  // Workers need no larger windows: batches of successive windows queue
  // together, 4 items (batches and window markers) per worker.
  int window_rows = kDefaultWindowRows;
  // "auto", "fp32", "bf16", "int8" (backend::resolve_precision).
  std::string precision = "auto";
  int threads = 0;  // 0: all hardware threads; the inference thread pool
  // Threads that tokenize while inference runs; 0 -> 1 for the CPU backend
  // (tokenizing costs about 1% of CPU inference and would steal its cores),
  // `threads` otherwise.
  int tokenizer_threads = 0;
  int max_length = 512;
  // The head's output function (head.h): "softmax", "sigmoid", "none", or
  // "default" for the model's (default_head_function).
  std::string function = "default";
  // Sigmoid over several labels: a row's `labels` column lists the labels
  // whose value is at or above this, in [0, 1]; unset: kDefaultThreshold.
  // Set with any other output it is kInvalidArgument (there is no `labels`
  // column for it to decide).
  std::optional<double> threshold;
  bool keep_text = true;
  io::OnBadRow on_bad_row = io::OnBadRow::kFail;
  // Counters the run keeps up to date while it runs (progress.h); may be
  // null. The caller reads them from any thread.
  RunProgress* progress = nullptr;
  // Resumable runs (docs/checkpoint.md). A run with an output file or folder
  // keeps a checkpoint beside it, saved at the end of each window of rows
  // written once checkpoint_seconds have passed since the last (and between
  // two parts of a folder output), and removed when the output is complete.
  //   resume: continue from the checkpoint of `output` (none: start).
  //   force:  start over although a previous run of `output` stopped half-way.
  bool resume = false;
  bool force = false;
  double checkpoint_seconds = 30;
  // Read while the run runs: non-zero (a signal number) stops it at the next
  // durable step, with a checkpoint to resume from (kCancelled).
  const std::atomic<int>* stop = nullptr;
  // Called once the model is loaded on every device, before any row is read.
  std::function<void(const model::ModelConfig&)> on_model_loaded;
  // Tests: stand-ins for backend::resolve_devices and backend::create_backend
  // (called with a resolved device name, e.g. "cuda:1"); unset, the real ones.
  std::function<Result<std::vector<std::string>>(const backend::DeviceSpec&)> device_resolver;
  std::function<Result<std::unique_ptr<backend::Backend>>(const std::string&, const backend::BackendOptions&)>
      backend_factory;
};

// kInvalidArgument naming the flag when a batching option is out of range
// (negative batch size or token budget, window below 1).
Status check_batching_options(int batch_size, int max_batch_tokens, int window_rows);
// kInvalidArgument naming the flag for a --function other than softmax,
// sigmoid, none and default, or a --threshold outside [0, 1]; else the
// function asked for (nullopt: the model's).
Result<std::optional<HeadFunction>> check_head_options(const RunOptions& options);

// On error nothing is left at options.output (the temporary is removed; for a
// folder output, the parts this run completed are removed too). Rows whose
// text is null are kept and written with null probabilities and label.
//
// Out of memory: a batch whose classify() is kResourceExhausted is split in
// two halves by rows (split_batch) and each retried, recursively; the device
// then keeps a limit of computed tokens per batch (one less than the batch
// that failed) and splits larger batches before classifying them, for the
// rest of the run. A single row that does not fit fails the run
// (kResourceExhausted naming the device and the row's tokens).
// Device errors: kInvalidArgument for a malformed --device,
// kUnsupported/kUnavailable when CUDA cannot run here (backend::resolve_devices).
Result<RunMetrics> run_classification(const RunOptions& options);

}  // namespace infercost::pipeline
