#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "infercost/data/tweets.h"

namespace infercost::cli {

namespace {

struct DatagenOptions {
  int64_t rows = 0;
  std::string out;
  uint64_t seed = 1;
};

// Below this many rows a run takes well under a second: no progress line.
constexpr int64_t kProgressMinRows = 200000;

void run_datagen(const DatagenOptions& options) {
  if (options.rows < 0) fail(invalid_argument("--rows must be >= 0, got " + std::to_string(options.rows)));
  if (options.out.empty()) fail(invalid_argument("--out must name a file"));
  bool show_progress = options.rows >= kProgressMinRows && ::isatty(STDERR_FILENO) == 1;
  int64_t every = std::max<int64_t>(options.rows / 100, 1);
  auto start = std::chrono::steady_clock::now();
  auto seconds_since_start = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  data::TweetsProgressFn progress;
  if (show_progress) {
    progress = [&](int64_t rows_done, int64_t bytes_done) {
      // \r rewrites one terminal line; the summary below ends it.
      std::fprintf(stderr, "\rdatagen: %lld/%lld rows (%.0f%%), %.1f MB, %.1f s",
                   static_cast<long long>(rows_done), static_cast<long long>(options.rows),
                   100.0 * static_cast<double>(rows_done) / static_cast<double>(options.rows),
                   static_cast<double>(bytes_done) / 1e6, seconds_since_start());
      std::fflush(stderr);
    };
  }
  auto result = data::write_tweets_jsonl(options.out, options.rows, options.seed, progress, every);
  if (show_progress) std::fputc('\n', stderr);
  if (!result.ok()) fail(result.status().with_context("datagen"));
  double seconds = seconds_since_start();
  std::fprintf(stderr, "datagen: wrote %lld rows, %lld bytes to %s in %.2f s (%.0f rows/s, seed %llu)\n",
               static_cast<long long>(result->rows), static_cast<long long>(result->bytes),
               options.out.c_str(), seconds, seconds > 0 ? static_cast<double>(result->rows) / seconds : 0.0,
               static_cast<unsigned long long>(options.seed));
}

}  // namespace

void register_datagen(CLI::App& app) {
  auto options = std::make_shared<DatagenOptions>();
  CLI::App* cmd = app.add_subcommand(
      "datagen", "Write synthetic tweet-like texts as JSON lines {\"id\": i, \"full_text\": \"...\"}");
  cmd->add_option("--rows", options->rows, "Number of rows to write")->required();
  cmd->add_option("--out", options->out, "Output .jsonl path (written atomically)")->required();
  cmd->add_option("--seed", options->seed, "Generator seed; the same seed gives the same texts")
      ->capture_default_str();
  cmd->callback([options] { run_datagen(*options); });
}

}  // namespace infercost::cli
