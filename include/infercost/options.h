// What a user sets for the engine: a model's options (the model, device and
// batching of `infercost run`, the task) and a file run's (inputs, outputs,
// checkpoints, cost). Each member a user sets is described once, with its
// checks, default and help, in src/engine/settings.cc; a Classifier or
// Embedder (classifier.h) and the file run (runner.h) take them.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace infercost {

struct RunProgress;  // progress.h

inline constexpr int kMaxStreamsPerDevice = 16;
// The most inference or tokenizer threads a run takes: more than the largest
// machines' cores, few enough that each gets its stack and scratch.
inline constexpr int kMaxThreads = 1024;

// What the engine computes for each row: the classifier head's outputs
// (scores per label), or the encoder's token vectors pooled into one vector
// (an embedding).
enum class Task { kClassify, kEmbed };
const char* task_name(Task task);  // "classify", "embed"

// How rows become batches.
//   kTokens: sort rows by token length and pack batches of up to
//            max_batch_tokens tokens (rows x longest row) and batch_size
//            rows; the backend computes real tokens only.
//   kSeed:   the study's method: fixed batch_size rows in input order, every row
//            padded to the longest row of its file (at most max_length), and the
//            padding computed, as PyTorch did.
enum class Batching { kTokens, kSeed };

// Defaults a 0 resolves to (docs/cpu.md); `infercost plan` simulates the same rules.
inline constexpr int kDefaultTokensBatchSize = 256;  // rows, a cap under kTokens
inline constexpr int kDefaultMaxBatchTokens = 4096;
inline constexpr int kSeedRowsPerThread = 100;  // kSeed: the study's 100 x vCPUs
inline constexpr int kDefaultWindowRows = 8192;

// How an embedding is made of a row's token vectors: the first token's
// ([CLS]), the mean or the max over the real tokens, or the last real token's.
enum class Pooling { kCls, kMean, kMax, kLastToken };

// What a reader does with a bad row (malformed JSON, missing or non-string
// column, invalid UTF-8; null is not bad): stop with an error, or skip it and count it.
enum class OnBadRow { kFail, kSkip };

// The text column a run reads by default: the study's tweets' field (the
// one `infercost datagen` writes).
inline constexpr char kDefaultTextColumn[] = "full_text";

// How a model is opened: what it runs on and how it batches (the model,
// device and batching flags of `infercost run`), the task and its head or
// pooling. Each member a user sets is described once, with its checks,
// default and help, in src/engine/settings.cc.
struct ModelOptions {
  // "cpu", "cuda" / "cuda:all" (every GPU), "cuda:N" or "cuda:N,M,..."
  // (backend::parse_device). One worker per stream of each device.
  std::string device = "cpu";
  // Backends per device, each with its own stream and scratch memory, so a
  // device has several batches in flight; 0: 2 where the backend can fork()
  // (GPUs), else 1; at most kMaxStreamsPerDevice. A backend that cannot fork
  // runs 1 whatever is asked.
  int streams_per_device = 0;
  // "auto", "fp32", "bf16", "fp16", "int8" (backend::resolve_precision).
  std::string precision = "auto";
  int threads = 0;  // 0: all hardware threads; the inference thread pool
  // Threads that tokenize; 0 -> 1 for the CPU backend (tokenizing costs about
  // 1% of CPU inference and would steal its cores), `threads` otherwise.
  int tokenizer_threads = 0;
  // Tokens per row, longer rows truncated; 0: the model's limit (the smaller
  // of its positions and its tokenizer_config.json's model_max_length; to
  // embed, sentence-transformers' max_seq_length where the model has one,
  // sentence_bert_config.json).
  int max_length = 0;
  Batching batching = Batching::kTokens;
  // Rows per batch; 0 picks the policy's default: tokens ->
  // kDefaultTokensBatchSize (a cap, the token budget usually binds first),
  // seed -> kSeedRowsPerThread x threads (the study's CPU rule, "batch 100 x
  // vCPUs").
  int batch_size = 0;
  // kTokens: most tokens per batch (rows x longest row), at least 1.
  int max_batch_tokens = kDefaultMaxBatchTokens;
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
  // The head's output function (head.h): "softmax", "sigmoid", "none", or
  // "default" for the model's (default_head_function).
  std::string function = "default";
  // Sigmoid over several labels: the value at or above which a label is in a
  // row's label set, in [0, 1]; unset: kDefaultThreshold. Set with any other
  // output it is kInvalidArgument (there is no label set for it to decide).
  std::optional<double> threshold;
  // classify(): a row the tokenizer refuses (invalid UTF-8, say) fails the
  // call (kFail) or comes back null and flagged as skipped (kSkip). The file
  // runner applies it to unreadable rows too.
  OnBadRow on_bad_row = OnBadRow::kFail;
  // Called by open() once the model is loaded on every device, with the
  // notice a synthetic model's outputs carry (empty for a real model).
  std::function<void(const std::string& synthetic_notice)> on_model_loaded;

  Task task = Task::kClassify;
  // Embeddings (Task::kEmbed) only; each unset takes the model's
  // sentence-transformers description (its modules.json), and a
  // setting of them under kClassify is kInvalidArgument.
  //   pooling:   cls, mean, max or lasttoken (the setting's text parsed
  //              once, where it is set);
  //              required for a plain Hugging Face encoder directory.
  //   normalize: unit-length vectors (the model's Normalize module).
  //   prefix:    text put before every row's text (the model's default
  //              prompt; "" for none).
  std::optional<Pooling> pooling;
  std::optional<bool> normalize;
  std::optional<std::string> prefix;
};

// A run (runner.h): the model's options (above: device, streams,
// batching, precision, threads, max_length, function, threshold, on_bad_row,
// on_model_loaded) and the files'. on_bad_row covers unreadable rows
// (malformed JSON, a missing column) as well as rows the tokenizer refuses.
struct RunOptions : ModelOptions {
  // Files, folders and globs (folders: their files of a known format, sorted), read in the order given.
  std::vector<std::string> inputs;
  std::string input_format;  // empty: each file's extension (.jsonl, .json, .csv, .parquet)
  std::string model_dir;
  std::string column = kDefaultTextColumn;
  // "-" = JSON lines on stdout; a file; or a folder (an existing directory,
  // or a path ending in '/'), which gets one part per input file named after
  // it, in --output-format or else the input's own format (JSON -> jsonl).
  std::string output = "-";
  std::string output_format;           // empty: from the extension
  std::string compression = "snappy";  // Parquet outputs
  // kTokens: rows sorted by length together; bounds reordering and memory.
  // No row waits for the next window, so a window also bounds a batch's rows.
  // Workers need no larger windows: batches of successive windows queue
  // together, 4 items (batches and window markers) per worker.
  int window_rows = kDefaultWindowRows;
  bool keep_text = true;
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
  // Called once, from the run's own thread, when it first sees `stop` set
  // (before it has stopped): the CLI says what happens next.
  std::function<void(int signal)> on_stop_seen;
  // A CUDA run samples the memory and utilization of its GPUs through NVML
  // (dlopened from nvml_library; empty: libnvidia-ml.so.1) every
  // gpu_sample_seconds, from the end of the model's load to the end of the
  // run, into RunMetrics::gpus; where it cannot, RunMetrics::gpu_monitor says
  // why. Other devices sample nothing.
  std::string nvml_library;
  double gpu_sample_seconds = 0.2;
  // Prices the run (docs/cost.md): `instance` (e.g. "p3.8xlarge"), looked up
  // in the built-in price lists and price_files (JSON lists of one's own),
  // in price_list only when given; the metrics then carry its cost
  // (RunMetrics::cost). Empty: not priced. Checked before anything is read.
  std::string instance;
  std::string price_list;
  std::vector<std::string> price_files;
  double spot_discount = 0;          // fraction off the on-demand price, in [0, 1)
  double platform_usd_per_hour = 0;  // surcharge per machine-hour (e.g. Databricks DBUs)
  int machines = 1;                  // machines in the cluster the run stands for
  int64_t corpus_rows = 0;           // project time and cost to this many rows (0: the run's)
  // Where the run writes its metrics (RunMetrics::to_json) once it has
  // ended well, the "nothing to do" of a finished job included; empty: not
  // written. Checked with the outputs before anything runs: never an input,
  // a file of the model, or the output (kInvalidArgument naming both).
  std::string metrics_path;
};

}  // namespace infercost
