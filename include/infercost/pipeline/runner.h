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
  std::vector<std::string> inputs;  // JSON lines files, read in the order given
  std::string model_dir;
  std::string column = "full_text";
  std::string output = "-";   // "-" = JSON lines on stdout
  std::string output_format;  // empty: from the extension
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

// On error nothing is left at options.output (the temporary is removed).
Result<RunMetrics> run_classification(const RunOptions& options);

// Numerically stable softmax of each row of `logits` ([rows, labels]) in place.
void softmax_rows(float* logits, int rows, int labels);

}  // namespace infercost::pipeline
