// Where `infercost run` and `infercost embed` write: one output, or one part
// per input file.
#pragma once

#include <string>
#include <vector>

#include "infercost/core/status.h"
#include "infercost/pipeline/runner.h"
#include "io/prediction_writer.h"
#include "io/row_source.h"

namespace infercost::pipeline {

struct OutputPlan {
  bool per_file = false;
  std::vector<std::string> paths;  // per input (per_file) or one
  std::vector<io::OutputFormat> formats;
};

// For a folder output, creates the folder and names "<folder>/<stem><ext>"
// per input, in --output-format or the input's own format (JSON -> jsonl;
// embeddings of CSV -> parquet); two inputs mapping to one part are
// kInvalidArgument, and so is a CSV output of embeddings.
Result<OutputPlan> plan_outputs(const RunOptions& options, const std::vector<std::string>& inputs,
                                const std::vector<io::InputFormat>& input_formats);

}  // namespace infercost::pipeline
