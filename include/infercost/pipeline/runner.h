// `infercost run`: classify every row of the inputs and write predictions in
// input order. Stages: read -> tokenize -> batch -> infer -> softmax -> write.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "infercost/core/status.h"
#include "infercost/io/rows.h"
#include "infercost/model/config.h"
#include "infercost/pipeline/metrics.h"

namespace infercost::pipeline {

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
  std::string device = "cpu";
  int batch_size = 64;
  int threads = 0;  // 0: all hardware threads
  int max_length = 512;
  bool keep_text = true;
  io::OnBadRow on_bad_row = io::OnBadRow::kFail;
  // Called with (rows done, bytes read, bytes total) after each batch.
  std::function<void(int64_t, uint64_t, uint64_t)> progress;
  // Called once the model is loaded, before any row is read.
  std::function<void(const model::ModelConfig&)> on_model_loaded;
};

// On error nothing is left at options.output (the temporary is removed; for a
// folder output, the parts this run completed are removed too). Rows whose
// text is null are kept and written with null probabilities and label.
Result<RunMetrics> run_classification(const RunOptions& options);

// Numerically stable softmax of each row of `logits` ([rows, labels]) in place.
void softmax_rows(float* logits, int rows, int labels);

}  // namespace infercost::pipeline
