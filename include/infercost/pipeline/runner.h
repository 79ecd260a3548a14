// `infercost run`: classify every row of the inputs and write predictions in
// input order. Stages: read -> tokenize -> batch -> infer -> the head's output
// function (head.h) -> write. `infercost embed` is the same run with
// ClassifierOptions::task kEmbed: pooled (normalized) vectors written instead.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "infercost/backend/backend.h"
#include "infercost/core/status.h"
#include "infercost/io/rows.h"
#include "infercost/model/config.h"
#include "infercost/pipeline/batching.h"
#include "infercost/pipeline/classifier.h"
#include "infercost/pipeline/head.h"
#include "infercost/pipeline/metrics.h"
#include "infercost/pipeline/progress.h"

namespace infercost::pipeline {

// A run: the classifier's options (classifier.h: device, streams,
// batching, precision, threads, max_length, function, threshold, on_bad_row,
// on_model_loaded) and the files'. on_bad_row covers unreadable rows
// (malformed JSON, a missing column) as well as rows the tokenizer refuses.
struct RunOptions : ClassifierOptions {
  // Files, folders and globs (io::expand_inputs), read in the order given.
  std::vector<std::string> inputs;
  std::string input_format;  // empty: each file's extension (io::input_format_for)
  std::string model_dir;
  std::string column = io::kDefaultTextColumn;
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

// On error nothing is left at options.output (the temporary is removed; for a
// folder output, the parts this run completed are removed too). Rows whose
// text is null are kept and written with null probabilities and label.
//
// Out of memory: as in Classifier::classify, a batch is split and retried and
// the device keeps the smaller limit for the rest of the run; a single row
// that does not fit fails the run (kResourceExhausted naming the device and
// the row's tokens).
// Device errors: kInvalidArgument for a malformed --device,
// kUnsupported/kUnavailable when CUDA cannot run here (backend::resolve_devices).
// The run opens a Classifier (classifier.h) on options' devices through
// `factory` (tests: fake backends) and classifies every window of rows with
// its workers, in a pipeline. on_model_loaded is called before any row is read.
Result<RunMetrics> run_classification(const RunOptions& options, const BackendFactory& factory = {});

// Whether `output` is written as a stream, with no checkpoint: "-" (stdout),
// a character device, a FIFO, or a descriptor by name (/dev/stdout).
bool output_is_stream(const std::string& output);

}  // namespace infercost::pipeline
