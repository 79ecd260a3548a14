// `infercost cat` and `infercost inspect`: what a user reaches for when a run
// fails on their data.
#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/json_text.h"
#include "io/prediction_writer.h"
#include "io/row_source.h"
#include "parquet/reader.h"

namespace infercost::cli {

namespace {

struct CatOptions {
  std::vector<std::string> inputs;
  std::string column;  // empty: whole rows
  std::string input_format;
  int64_t limit = -1;
};

// The sources `cat` reads a file through, and the names of their columns:
// one source (a column, or the whole row) for every format but a Parquet
// file's whole rows, which are its flat columns read side by side.
struct CatSources {
  std::vector<std::unique_ptr<io::RowSource>> sources;
  std::vector<std::string> names;  // empty: the one source gives the values as they are
  // Parquet columns cat cannot print (nested or repeated: an embedding's
  // vector, a list), each as "'name' (what)": said, not dropped silently.
  std::vector<std::string> not_shown;
};

Result<CatSources> open_cat_sources(const std::string& path, io::InputFormat format,
                                    const io::SourceOptions& options) {
  CatSources cat;
  if (format != io::InputFormat::kParquet || !options.column.empty()) {
    INFERCOST_ASSIGN_OR_RETURN(std::unique_ptr<io::RowSource> source,
                               io::open_row_source(path, format, options));
    cat.sources.push_back(std::move(source));
    return cat;
  }
  INFERCOST_ASSIGN_OR_RETURN(std::shared_ptr<parquet::ParquetFile> file, parquet::ParquetFile::open(path));
  for (const parquet::ColumnDescriptor& column : file->columns()) {
    if (!column.flat) {
      const std::string top = column.path.substr(0, column.path.find('.'));
      const std::string what = column.max_repetition_level > 0
                                   ? fmt::format("a list of {}", parquet::type_name(*column.element->type))
                                   : std::string("a nested field");
      cat.not_shown.push_back(
          fmt::format("'{}' ({}{})", top, what, top == io::kEmbeddingColumn ? ": the rows' vectors" : ""));
      continue;
    }
    io::SourceOptions one = options;
    one.column = column.path;
    INFERCOST_ASSIGN_OR_RETURN(std::unique_ptr<io::RowSource> source, io::open_row_source(path, format, one));
    cat.sources.push_back(std::move(source));
    cat.names.push_back(column.path);
  }
  if (cat.sources.empty()) return unsupported(path + ": no flat column to print");
  return cat;
}

// Reads up to `want` rows of every source; the lines to print.
Result<size_t> next_lines(CatSources& cat, size_t want, std::vector<io::RowBatch>& rows, std::string& out) {
  size_t got = 0;
  for (size_t c = 0; c < cat.sources.size(); ++c) {
    rows[c].clear();
    INFERCOST_ASSIGN_OR_RETURN(size_t n, cat.sources[c]->next(want, rows[c]));
    if (c == 0) got = n;
    if (n != got) return internal_error("the file's columns hold different numbers of rows");
  }
  for (size_t i = 0; i < got; ++i) {
    if (cat.names.empty()) {
      const io::RowBatch& r = rows[0];
      out += (!r.is_null.empty() && r.is_null[i]) ? std::string_view("null") : std::string_view(r.texts[i]);
      out += '\n';
      continue;
    }
    out += '{';
    for (size_t c = 0; c < cat.names.size(); ++c) {
      if (c > 0) out += ',';
      append_json_string(out, cat.names[c]);
      out += ':';
      const io::RowBatch& r = rows[c];
      out += (!r.is_null.empty() && r.is_null[i]) ? std::string_view("null") : std::string_view(r.texts[i]);
    }
    out += "}\n";
  }
  return got;
}

void run_cat(const CatOptions& options) {
  Result<std::vector<std::string>> files = io::expand_inputs(options.inputs);
  if (!files.ok()) fail(files.status());
  io::SourceOptions source_options;
  source_options.column = options.column;
  source_options.values_as_json = true;
  int64_t printed = 0;
  std::string out;
  for (const std::string& path : *files) {
    if (options.limit >= 0 && printed >= options.limit) break;
    Result<io::InputFormat> format = io::input_format_for(path, options.input_format);
    if (!format.ok()) fail(format.status());
    Result<CatSources> cat = open_cat_sources(path, *format, source_options);
    if (!cat.ok()) fail(cat.status());
    for (const std::string& column : cat->not_shown) {
      std::fprintf(
          stderr,
          "infercost cat: %s: column %s is not shown: cat prints flat columns only (pyarrow, pandas, "
          "DuckDB and Spark read it)\n",
          path.c_str(), column.c_str());
    }
    std::vector<io::RowBatch> rows(cat->sources.size());
    for (;;) {
      size_t want = 4096;
      if (options.limit >= 0) want = static_cast<size_t>(std::min<int64_t>(4096, options.limit - printed));
      if (want == 0) break;
      out.clear();
      Result<size_t> got = next_lines(*cat, want, rows, out);
      if (!got.ok()) {
        std::fflush(stdout);
        fail(got.status());
      }
      if (*got == 0) break;
      printed += static_cast<int64_t>(*got);
      if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size()) return;  // reader went away (| head)
    }
  }
  std::fflush(stdout);
}

void run_inspect(const std::string& path) {
  Result<io::InputFormat> format = io::input_format_for(path, "");
  if (format.ok() && *format != io::InputFormat::kParquet) {
    fail(invalid_argument(path + ": inspect describes Parquet files; this is " +
                          io::input_format_name(*format) + " (use `infercost cat " + path +
                          "` to see its rows)"));
  }
  Result<std::shared_ptr<parquet::ParquetFile>> file = parquet::ParquetFile::open(path);
  if (!file.ok()) fail(file.status());
  std::string text = parquet::describe_file(**file);
  std::fwrite(text.data(), 1, text.size(), stdout);
}

}  // namespace

void define_cat(CLI::App* cmd) {
  auto options = bind_flags<CatOptions>(*cmd, run_cat);
  cmd->add_option("inputs", options->inputs, "Files, folders or globs, read in order")->required();
  cmd->add_option("--column", options->column, "Print this column's values only (default: whole rows)");
  cmd->add_option("--input-format", options->input_format,
                  "jsonl, json, csv or parquet (default: by extension)");
  cmd->add_option("--limit", options->limit, "Print at most this many values (all when not given)")
      ->check(CLI::NonNegativeNumber);
}

void define_inspect(CLI::App* cmd) {
  auto path = std::make_shared<std::string>();
  cmd->add_option("file", *path, "Parquet file")->required();
  cmd->callback([path] { run_inspect(*path); });
}

}  // namespace infercost::cli
