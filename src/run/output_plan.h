// Where `infercost run` and `infercost embed` write: one output, or one part
// per input file.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "infercost/options.h"
#include "infercost/status.h"
#include "io/prediction_writer.h"
#include "io/row_source.h"
#include "run/engine.h"

namespace infercost::run {

struct OutputPlan {
  bool per_file = false;
  // Per input (per_file) or one. A file output reached through symbolic
  // links is the file they lead to (its partial and checkpoint go beside it).
  std::vector<std::string> paths;
  std::vector<io::OutputFormat> formats;
  // The one output is standard output ("-") or a stream
  // (OutputTarget::Kind::kStream: a character device, a FIFO, /dev/stdout):
  // written in place as rows come, with no lock, checkpoint or resume.
  bool stream = false;
  std::string stream_what;  // "standard output", "a character device", "a FIFO", ...
};

// For a folder output, creates the folder and names "<folder>/<stem><ext>"
// per input, in --output-format or the input's own format (JSON -> jsonl;
// embeddings of CSV -> parquet); two inputs mapping to one part are
// kInvalidArgument, and so is a CSV output of embeddings. A file output is
// resolved (core/file.h resolve_output_target: links followed; a read-only
// file, a folder, a block device refused). An output that would replace
// an input file, a folder output that is an input's folder, and an output
// that is the model's folder or one of its files are kInvalidArgument naming
// both, before anything is created.
Result<OutputPlan> plan_outputs(const RunOptions& options, const std::vector<std::string>& inputs,
                                const std::vector<io::InputFormat>& input_formats);

// kInvalidArgument naming both when `path`, another file the caller writes
// (`flag` names it: "--metrics"), is one of `inputs`, a file of the model
// folder, or one of the plan's outputs.
Status check_output_apart(const std::string& path, std::string_view flag, const RunOptions& options,
                          const std::vector<std::string>& inputs, const OutputPlan& plan);

}  // namespace infercost::run
