#include "run/output_plan.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <optional>

#include "core/file.h"
#include "engine/settings.h"

namespace infercost::run {

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

// A file or folder as the OS knows it, to tell two names of one apart; a
// path that does not exist yet by its canonical form.
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  std::string canonical;  // when nothing is there yet
  bool operator==(const FileId& o) const {
    return canonical.empty() && o.canonical.empty() ? dev == o.dev && ino == o.ino : canonical == o.canonical;
  }
};

std::optional<FileId> file_id(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return FileId{st.st_dev, st.st_ino, {}};
  return std::nullopt;
}

// As file_id, and for a path with nothing there yet its canonical form.
FileId any_file_id(const std::string& path) {
  if (std::optional<FileId> id = file_id(path)) return *id;
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(path, ec);
  return FileId{0, 0, ec ? path : canonical.string()};
}

// What a path the run writes must not be: (what, its path, its id).
struct Protected {
  std::string what;
  std::string path;
  FileId id;
};

std::vector<Protected> protected_paths(const RunOptions& options, const std::vector<std::string>& inputs) {
  std::vector<Protected> out;
  for (const std::string& input : inputs) {
    if (std::optional<FileId> id = file_id(input)) out.push_back({"input", input, *id});
  }
  if (std::optional<FileId> id = file_id(options.model_dir)) {
    out.push_back({"the model's folder", options.model_dir, *id});
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(options.model_dir, ec)) {
      const std::string path = entry.path().string();
      if (std::optional<FileId> file = file_id(path)) out.push_back({"a file of the model", path, *file});
    }
  }
  return out;
}

// kInvalidArgument when `path` (which `flag` names) is one of `guarded`.
Status check_apart(const std::string& path, std::string_view flag, const std::vector<Protected>& guarded) {
  const FileId id = any_file_id(path);
  for (const Protected& p : guarded) {
    if (p.id == id) {
      return invalid_argument(
          fmt::format("{} {} is {} {}: infercost never writes over its inputs or its "
                      "model, nor two outputs into one file; name another path",
                      flag, path, p.what, p.path));
    }
  }
  return Status();
}

// A folder output must not be a folder the inputs are in, nor the model's.
Status check_folder_apart(const std::string& folder, std::string_view flag,
                          const std::vector<std::string>& inputs, const std::vector<Protected>& guarded) {
  const std::optional<FileId> id = file_id(folder);
  if (!id) return Status();
  for (const std::string& input : inputs) {
    const std::filesystem::path parent = std::filesystem::path(input).parent_path();
    if (file_id(parent.empty() ? "." : parent.string()) == id) {
      return invalid_argument(fmt::format(
          "{} {} is the folder of input {}: its parts would be written among the inputs (and read as "
          "inputs by the next run of the folder); name another folder",
          flag, folder, input));
    }
  }
  return check_apart(folder, flag, guarded);
}

}  // namespace

Status check_output_apart(const std::string& path, std::string_view flag, const RunOptions& options,
                          const std::vector<std::string>& inputs, const OutputPlan& plan) {
  std::vector<Protected> guarded = protected_paths(options, inputs);
  for (const std::string& output : plan.paths) {
    if (output != "-") guarded.push_back({"the output", output, any_file_id(output)});
  }
  if (plan.per_file) guarded.push_back({"the output folder", options.output, any_file_id(options.output)});
  return check_apart(path, flag, guarded);
}

Result<OutputPlan> plan_outputs(const RunOptions& options, const std::vector<std::string>& inputs,
                                const std::vector<io::InputFormat>& input_formats) {
  OutputPlan plan;
  const std::vector<Protected> guarded = protected_paths(options, inputs);
  const std::string flag = setting_ref("output");
  if (!is_folder_output(options.output)) {
    INFERCOST_ASSIGN_OR_RETURN(io::OutputFormat format,
                               io::output_format_for(options.output, options.output_format));
    INFERCOST_RETURN_IF_ERROR(check_format(options, format, options.output));
    std::string path = options.output;
    if (options.output == "-") {
      plan.stream = true;
      plan.stream_what = "standard output";
    } else {
      INFERCOST_ASSIGN_OR_RETURN(OutputTarget target, resolve_output_target(options.output));
      if (target.kind == OutputTarget::Kind::kStream) {
        plan.stream = true;
        plan.stream_what = target.what;
      } else {
        path = target.path;
        INFERCOST_RETURN_IF_ERROR(check_apart(path, flag, guarded));
      }
    }
    plan.paths.push_back(path);
    plan.formats.push_back(format);
    return plan;
  }
  INFERCOST_RETURN_IF_ERROR(check_folder_apart(options.output, flag, inputs, guarded));
  plan.per_file = true;
  std::map<std::string, std::string> taken;  // part path -> input
  for (size_t i = 0; i < inputs.size(); ++i) {
    // Each input's own format; embeddings of a CSV input go to Parquet.
    io::OutputFormat format = io::OutputFormat::kJsonl;
    if (!options.output_format.empty()) {
      INFERCOST_ASSIGN_OR_RETURN(format, io::output_format_for("", options.output_format));
      INFERCOST_RETURN_IF_ERROR(
          check_format(options, format, setting_ref("output_format", options.output_format)));
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
    std::string path = part;
    if (path_exists(part)) {  // a part that is a link is written where it leads; a protected one is refused
      INFERCOST_ASSIGN_OR_RETURN(OutputTarget target, resolve_output_target(part));
      if (target.kind == OutputTarget::Kind::kStream) {
        return invalid_argument(
            fmt::format("{}: the part of input {} is {}; remove it or name another folder", part, inputs[i],
                        target.what));
      }
      path = target.path;
    }
    INFERCOST_RETURN_IF_ERROR(check_apart(path, flag, guarded));
    plan.paths.push_back(path);
    plan.formats.push_back(format);
  }
  std::error_code ec;
  std::filesystem::create_directories(options.output, ec);
  if (ec) return io_error(options.output + ": cannot create the output folder: " + ec.message());
  return plan;
}

}  // namespace infercost::run
