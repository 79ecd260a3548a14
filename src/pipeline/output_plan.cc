#include "pipeline/output_plan.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>

namespace infercost::pipeline {

namespace {

bool is_folder_output(const std::string& output) {
  if (output.empty() || output == "-") return false;
  if (output.back() == '/') return true;
  std::error_code ec;
  return std::filesystem::is_directory(output, ec);
}

std::string extension_for(io::OutputFormat format) {
  switch (format) {
    case io::OutputFormat::kJsonl: return ".jsonl";
    case io::OutputFormat::kCsv: return ".csv";
    case io::OutputFormat::kParquet: return ".parquet";
  }
  return ".jsonl";
}

// Vectors have no CSV form: kInvalidArgument for a CSV output of embeddings.
Status check_format(const RunOptions& options, io::OutputFormat format, const std::string& path) {
  if (options.task != Task::kEmbed || format != io::OutputFormat::kCsv) return Status();
  return invalid_argument(fmt::format(
      "{}: CSV cannot hold a vector per row; write embeddings to Parquet (.parquet: a fixed-size list of "
      "float32 that pyarrow, DuckDB and Spark read as a vector column) or JSON lines (.jsonl: an array)",
      path));
}

}  // namespace

Result<OutputPlan> plan_outputs(const RunOptions& options, const std::vector<std::string>& inputs,
                                const std::vector<io::InputFormat>& input_formats) {
  OutputPlan plan;
  if (!is_folder_output(options.output)) {
    INFERCOST_ASSIGN_OR_RETURN(io::OutputFormat format,
                               io::output_format_for(options.output, options.output_format));
    INFERCOST_RETURN_IF_ERROR(check_format(options, format, options.output));
    plan.paths.push_back(options.output);
    plan.formats.push_back(format);
    return plan;
  }
  plan.per_file = true;
  std::map<std::string, std::string> taken;  // part path -> input
  for (size_t i = 0; i < inputs.size(); ++i) {
    // Each input's own format; embeddings of a CSV input go to Parquet.
    io::OutputFormat format = io::OutputFormat::kJsonl;
    if (!options.output_format.empty()) {
      INFERCOST_ASSIGN_OR_RETURN(format, io::output_format_for("", options.output_format));
      INFERCOST_RETURN_IF_ERROR(check_format(options, format, "--output-format " + options.output_format));
    } else if (input_formats[i] == io::InputFormat::kParquet) {
      format = io::OutputFormat::kParquet;
    } else if (input_formats[i] == io::InputFormat::kCsv) {
      format = options.task == Task::kEmbed ? io::OutputFormat::kParquet : io::OutputFormat::kCsv;
    }
    const std::string part =
        (std::filesystem::path(options.output) / std::filesystem::path(inputs[i]).stem()).string() +
        extension_for(format);
    auto [it, inserted] = taken.emplace(part, inputs[i]);
    if (!inserted) {
      return invalid_argument("inputs " + it->second + " and " + inputs[i] + " would both write " + part +
                              "; give them different names or use one output file");
    }
    plan.paths.push_back(part);
    plan.formats.push_back(format);
  }
  std::error_code ec;
  std::filesystem::create_directories(options.output, ec);
  if (ec) return io_error(options.output + ": cannot create the output folder: " + ec.message());
  return plan;
}

}  // namespace infercost::pipeline
