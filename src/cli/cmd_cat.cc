// `infercost cat` and `infercost inspect`: what a user reaches for when a run
// fails on their data.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "infercost/io/row_source.h"
#include "infercost/parquet/reader.h"

namespace infercost::cli {

namespace {

struct CatOptions {
  std::vector<std::string> inputs;
  std::string column = "full_text";
  std::string input_format;
  int64_t limit = -1;
};

void run_cat(const CatOptions& options) {
  Result<std::vector<std::string>> files = io::expand_inputs(options.inputs);
  if (!files.ok()) fail(files.status());
  io::SourceOptions source_options;
  source_options.column = options.column;
  source_options.values_as_json = true;
  int64_t printed = 0;
  io::RowBatch rows;
  std::string out;
  for (const std::string& path : *files) {
    if (options.limit >= 0 && printed >= options.limit) break;
    Result<io::InputFormat> format = io::input_format_for(path, options.input_format);
    if (!format.ok()) fail(format.status());
    Result<std::unique_ptr<io::RowSource>> source = io::open_row_source(path, *format, source_options);
    if (!source.ok()) fail(source.status());
    for (;;) {
      size_t want = 4096;
      if (options.limit >= 0) want = static_cast<size_t>(std::min<int64_t>(4096, options.limit - printed));
      if (want == 0) break;
      rows.clear();
      Result<size_t> got = (*source)->next(want, rows);
      if (!got.ok()) {
        std::fwrite(out.data(), 1, out.size(), stdout);  // what was read before the error
        std::fflush(stdout);
        fail(got.status());
      }
      if (*got == 0) break;
      out.clear();
      for (size_t i = 0; i < rows.size(); ++i) {
        out += (!rows.is_null.empty() && rows.is_null[i]) ? std::string_view("null")
                                                          : std::string_view(rows.texts[i]);
        out += '\n';
      }
      printed += static_cast<int64_t>(rows.size());
      if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size()) return;  // reader went away (| head)
      out.clear();
    }
  }
  std::fflush(stdout);
}

void run_inspect(const std::string& path) {
  Result<io::InputFormat> format = io::input_format_for(path, "");
  if (format.ok() && *format != io::InputFormat::kParquet) {
    fail(invalid_argument(path + ": inspect describes Parquet files; this is " +
                          io::input_format_name(*format) + " (use `infercost cat " + path +
                          " --column NAME` to see its values)"));
  }
  Result<std::shared_ptr<parquet::ParquetFile>> file = parquet::ParquetFile::open(path);
  if (!file.ok()) fail(file.status());
  std::string text = parquet::describe_file(**file);
  std::fwrite(text.data(), 1, text.size(), stdout);
}

}  // namespace

void register_cat(CLI::App& app) {
  auto options = std::make_shared<CatOptions>();
  CLI::App* cmd = app.add_subcommand(
      "cat", "Print one column's values as JSON lines (null as null), from any input format");
  cmd->add_option("inputs", options->inputs, "Files, folders or globs, read in order")->required();
  cmd->add_option("--column", options->column, "Column (field) to print")->capture_default_str();
  cmd->add_option("--input-format", options->input_format,
                  "jsonl, json, csv or parquet (default: by extension)");
  cmd->add_option("--limit", options->limit, "Print at most this many values (all when not given)")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([options] { run_cat(*options); });
}

void register_inspect(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "inspect", "Describe a Parquet file: schema, row groups, encodings, compression, sizes and statistics");
  cmd->add_option("file", *path, "Parquet file")->required();
  cmd->callback([path] { run_inspect(*path); });
}

}  // namespace infercost::cli
