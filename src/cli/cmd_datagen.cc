#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/progress_line.h"
#include "core/test_point.h"
#include "corpus/tweets.h"

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
};

void run_datagen(const DatagenOptions& options) {
  if (options.rows < 0) fail(invalid_argument("--rows must be >= 0, got " + std::to_string(options.rows)));
  if (options.out.empty()) fail(invalid_argument("--out must name a file or folder"));
  Result<corpus::DatasetShape> shape = corpus::dataset_shape_from_name(options.shape);
  if (!shape.ok()) fail(shape.status());
  if (options.row_group_rows < 1) fail(invalid_argument("--row-group-rows must be at least 1"));
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
}

}  // namespace

void register_datagen(CLI::App& app) {
  auto [cmd, options] =
      add_command<DatagenOptions>(app, "datagen",
                                  "Write synthetic tweet-like texts (columns id, full_text) in the "
                                  "study's shapes: jsonl, json-3, parquet, "
                                  "parquet-10",
                                  run_datagen);
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
  cmd->add_flag("-q,--quiet", options->quiet, "No progress and no summary on stderr");
}

}  // namespace infercost::cli
