#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "cli/commands.h"
#include "cli/progress_line.h"
#include "core/file.h"
#include "corpus/tweets.h"
#include "io/whole_file.h"
#include "model/synth.h"
#include "run/runner.h"

namespace infercost::cli {

namespace {

struct DemoFlags {
  std::string cache_dir;
  int64_t rows = 2000;
  int threads = 0;
  int batch_size = 64;
};

std::string default_cache_dir() {
  if (const char* dir = std::getenv("INFERCOST_CACHE")) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/infercost";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/infercost";
  return ".infercost-cache";
}

// A cached artifact is complete only when its marker exists: an interrupted
// synthesis is redone rather than trusted.
bool complete(const std::string& path) {
  return path_exists(path + ".complete");
}

void mark_complete(const std::string& path) {
  Result<AtomicOutputFile> f = AtomicOutputFile::create(path + ".complete");
  if (!f.ok()) fail(f.status());
  Status s = f->commit();
  if (!s.ok()) fail(s);
}

void execute_demo(const DemoFlags& flags) {
  namespace fs = std::filesystem;
  const std::string cache = flags.cache_dir.empty() ? default_cache_dir() : flags.cache_dir;
  std::error_code ec;
  fs::create_directories(cache, ec);
  if (ec) fail(io_error(cache + ": cannot create the cache folder: " + ec.message()));

  const std::string model_dir = cache + "/distilbert-base-synthetic-seed1";
  if (!complete(model_dir)) {
    std::fprintf(stderr, "demo: synthesizing a DistilBERT-base model (random weights) into %s\n",
                 model_dir.c_str());
    model::SynthOptions synth;
    synth.out_dir = model_dir;
    synth.preset = "distilbert-base";
    synth.seed = 1;
    Status s = model::synthesize_model(synth);
    if (!s.ok()) fail(s);
    mark_complete(model_dir);
  } else {
    std::fprintf(stderr, "demo: using the cached model %s\n", model_dir.c_str());
  }

  const std::string data = fmt::format("{}/tweets-{}-seed1.jsonl", cache, flags.rows);
  if (!complete(data)) {
    std::fprintf(stderr, "demo: writing %lld synthetic tweets to %s\n", static_cast<long long>(flags.rows),
                 data.c_str());
    Status s = corpus::write_tweets_jsonl(data, flags.rows, 1);
    if (!s.ok()) fail(s);
    mark_complete(data);
  } else {
    std::fprintf(stderr, "demo: using the cached corpus %s\n", data.c_str());
  }

  RunOptions run;
  run.inputs = {data};
  run.model_dir = model_dir;
  run.output = cache + "/demo-predictions.jsonl";
  run.threads = flags.threads;
  run.batch_size = flags.batch_size;
  run.force = true;  // the demo always starts over (an interrupted demo leaves a checkpoint)
  std::fprintf(stderr, "demo: classifying %lld rows on the CPU\n", static_cast<long long>(flags.rows));
  RunProgress progress;
  ProgressLine line(ProgressLine::wanted(false), [&progress] { return run_progress_text(progress); });
  run.progress = &progress;
  run.on_model_loaded = [&line](const std::string& synthetic_notice) {
    if (!synthetic_notice.empty())
      line.print("demo: note: the model is synthetic: its speed is real, its sentiments are not.\n");
  };
  Result<RunMetrics> metrics = run::run_files(run);
  line.stop();
  if (!metrics.ok()) fail(metrics.status());
  std::fputs(metrics->to_summary().c_str(), stdout);
  std::printf("predictions     %s\n", run.output.c_str());
  if (io::write_whole_file(cache + "/demo-metrics.json", metrics->to_json()).ok()) {
    std::printf("metrics         %s/demo-metrics.json\n", cache.c_str());
  }
}

}  // namespace

void define_demo(CLI::App* cmd) {
  auto flags = bind_flags<DemoFlags>(*cmd, execute_demo);
  cmd->add_option(
      "--cache", flags->cache_dir,
      "Cache folder (default: $INFERCOST_CACHE, $XDG_CACHE_HOME/infercost or ~/.cache/infercost)");
  cmd->add_option("--rows", flags->rows, "Synthetic tweets to classify")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--threads", flags->threads, "Threads (0: all cores)")->capture_default_str();
  cmd->add_option("--batch-size", flags->batch_size, "Rows per batch")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
}

}  // namespace infercost::cli
