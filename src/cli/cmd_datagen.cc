#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/progress_line.h"
#include "core/test_point.h"
#include "corpus/tweets.h"
#include "io/row_source.h"

namespace infercost::cli {

namespace {

// Rows between two updates of the progress counters.
constexpr int64_t kProgressEveryRows = 4096;

struct DatagenOptions {
  int64_t rows = 0;
  std::string out;
  uint64_t seed = 1;
  std::string shape = "jsonl";
  std::string compression = "snappy";
  bool quiet = false;
  int64_t row_group_rows = 1'000'000;
  std::vector<std::string> lengths_from;
  std::string lengths_column = kDefaultTextColumn;
  std::string lengths_format;
};

// Rows read at a time from --lengths-from.
constexpr size_t kBatchRows = 4096;

// Words per row (corpus::count_words) of the text column of --lengths-from, read as
// `infercost run` reads them. Null rows and rows without a word are left out
// (counted in *left_out). Errors name the file; a source without a counted
// row is kInvalidArgument naming the inputs.
Result<corpus::WordCounts> measure_lengths(const DatagenOptions& options, int64_t* left_out) {
  io::SourceOptions source_options;
  source_options.column = options.lengths_column;
  corpus::WordCounts lengths;
  *left_out = 0;
  const auto count = [&](const std::string&, const io::RowSource&, io::RowBatch& batch) -> size_t {
    for (size_t i = 0; i < batch.size(); ++i) {
      const int64_t words = batch.is_null[i] ? 0 : corpus::count_words(batch.texts[i]);
      if (words == 0) {
        ++*left_out;
      } else {
        lengths.add(words);
      }
    }
    return kBatchRows;
  };
  INFERCOST_RETURN_IF_ERROR(
      io::read_inputs(options.lengths_from, options.lengths_format, source_options, kBatchRows, count)
          .status());
  if (lengths.empty()) {
    std::string names;
    for (const std::string& input : options.lengths_from) names += (names.empty() ? "" : ", ") + input;
    return invalid_argument(names + ": no row with text in column '" + options.lengths_column +
                            "' to measure lengths from");
  }
  return lengths;
}

void print_lengths_row(const char* what, const corpus::WordCounts& c) {
  std::fprintf(stderr, "  %-8s %9lld %7.2f", what, static_cast<long long>(c.rows()), c.mean());
  for (double q : {0.01, 0.10, 0.25, 0.50, 0.75, 0.90, 0.99, 1.0}) {
    std::fprintf(stderr, " %5lld", static_cast<long long>(c.quantile(q)));
  }
  std::fprintf(stderr, "\n");
}

void run_datagen(const DatagenOptions& options) {
  if (options.rows < 0) fail(invalid_argument("--rows must be >= 0, got " + std::to_string(options.rows)));
  if (options.out.empty()) fail(invalid_argument("--out must name a file or folder"));
  Result<corpus::DatasetShape> shape = corpus::dataset_shape_from_name(options.shape);
  if (!shape.ok()) fail(shape.status());
  if (options.row_group_rows < 1) fail(invalid_argument("--row-group-rows must be at least 1"));
  corpus::WordCounts source_lengths;
  int64_t left_out = 0;
  if (!options.lengths_from.empty()) {
    Result<corpus::WordCounts> measured = measure_lengths(options, &left_out);
    if (!measured.ok()) fail(measured.status().with_context("datagen --lengths-from"));
    source_lengths = std::move(*measured);
  }
  auto start = std::chrono::steady_clock::now();
  auto seconds_since_start = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  // Written by the generator, read by the progress line's thread.
  std::atomic<int64_t> rows_done{0};
  ProgressLine line(
      ProgressLine::wanted(options.quiet),
      [&] {
        return "datagen: " + progress_text("rows", rows_done.load(), static_cast<double>(options.rows), true,
                                           seconds_since_start(), 0);
      },
      1.0);
  const corpus::TweetsProgressFn progress = [&](int64_t rows, int64_t) {
    rows_done.store(rows);
    test_point("datagen-progress");
  };
  corpus::DatasetOptions dataset;
  dataset.shape = *shape;
  dataset.rows = options.rows;
  dataset.seed = options.seed;
  dataset.compression = options.compression;
  dataset.row_group_rows = options.row_group_rows;
  dataset.lengths = source_lengths;
  auto result = corpus::write_tweets_dataset(options.out, dataset, progress, kProgressEveryRows);
  line.stop();
  if (!result.ok()) fail(result.status().with_context("datagen"));
  double seconds = seconds_since_start();
  if (options.quiet) return;
  std::fprintf(
      stderr,
      "datagen: wrote %lld rows, %lld bytes in %zu file%s (%s) to %s in %.2f s (%.0f rows/s, seed %llu)\n",
      static_cast<long long>(result->rows), static_cast<long long>(result->bytes), result->files.size(),
      result->files.size() == 1 ? "" : "s", options.shape.c_str(), options.out.c_str(), seconds,
      seconds > 0 ? static_cast<double>(result->rows) / seconds : 0.0,
      static_cast<unsigned long long>(options.seed));
  if (source_lengths.empty()) return;
  std::fprintf(stderr,
               "datagen: words per row matched to --lengths-from (%lld row%s without a word left out):\n",
               static_cast<long long>(left_out), left_out == 1 ? "" : "s");
  std::fprintf(stderr, "  %-8s %9s %7s %5s %5s %5s %5s %5s %5s %5s %5s\n", "", "rows", "mean", "p1", "p10",
               "p25", "p50", "p75", "p90", "p99", "max");
  print_lengths_row("source", source_lengths);
  print_lengths_row("written", result->lengths_written);
}

}  // namespace

void define_datagen(CLI::App* cmd) {
  auto options = bind_flags<DatagenOptions>(*cmd, run_datagen);
  cmd->add_option("--rows", options->rows, "Number of rows to write (all files together)")->required();
  cmd->add_option(
         "--out", options->out,
         "Output file (jsonl, parquet) or folder (json-3, parquet-10); each file is written atomically")
      ->required();
  cmd->add_option(
         "--shape", options->shape,
         "jsonl (one JSON lines file), json-3 (3 JSON files), parquet (one file), parquet-10 (10 files)")
      ->capture_default_str();
  cmd->add_option("--compression", options->compression,
                  "Parquet codec: snappy, zstd, gzip, brotli, lz4_raw, none")
      ->capture_default_str();
  cmd->add_option("--row-group-rows", options->row_group_rows, "Parquet rows per row group (bounds memory)")
      ->capture_default_str();
  cmd->add_option("--seed", options->seed, "Generator seed; the same seed gives the same texts")
      ->capture_default_str();
  cmd->add_option(
         "--lengths-from", options->lengths_from,
         "Real corpus (files, folders, globs; JSON lines, JSON arrays, CSV, Parquet, read as `run` "
         "reads inputs) whose words per row (runs between ASCII whitespace) the texts follow: each row's "
         "word count is drawn from the corpus's rows (null and wordless rows left out)")
      ->expected(1, -1);
  cmd->add_option("--lengths-column", options->lengths_column, "Text column of the --lengths-from corpus")
      ->capture_default_str();
  cmd->add_option("--lengths-format", options->lengths_format,
                  "Format of the --lengths-from files: jsonl, json, csv, parquet (default: by extension)");
  cmd->add_flag("-q,--quiet", options->quiet, "No progress and no summary on stderr");
}

}  // namespace infercost::cli
