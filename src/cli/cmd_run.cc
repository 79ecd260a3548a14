#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "backend/backend.h"
#include "cli/commands.h"
#include "cli/progress_line.h"
#include "cli/setting_flags.h"
#include "core/file.h"
#include "engine/settings.h"
#include "io/whole_file.h"
#include "run/runner.h"

namespace infercost::cli {

namespace {

struct RunFlags {
  RunOptions options;
  SettingFlags settings;
  bool quiet = false;
};

void execute_run(RunFlags& flags) {
  RunOptions& options = flags.options;
  flags.settings.apply(options);  // options.task set by the command
  RunProgress progress;
  ProgressLine line(ProgressLine::wanted(flags.quiet), [&progress] { return run_progress_text(progress); });
  options.progress = &progress;
  options.on_model_loaded = [&](const std::string& synthetic_notice) {
    if (!synthetic_notice.empty()) line.print("infercost: note: " + synthetic_notice + "\n");
  };
  // A run with an output file or folder stops at its next durable step on
  // the first SIGINT or SIGTERM, leaving a checkpoint; a second one ends it at once.
  std::atomic<int> signal_seen{0};
  if (!run::output_is_stream(options.output)) {
    options.stop = &signal_seen;
    options.on_stop_seen = [&line](int sig) {
      line.print(
          fmt::format("infercost: {}: stopping at the next durable step, with a checkpoint to resume "
                      "from; {} again to stop at once\n",
                      sig == SIGINT ? "SIGINT" : "SIGTERM", sig == SIGINT ? "Ctrl-C" : "a signal"));
    };
    stop_gracefully_on_signals(&signal_seen);
  }
  Result<RunMetrics> metrics = run::run_files(options);
  stop_gracefully_on_signals(nullptr);
  line.stop();
  options.on_model_loaded = nullptr;  // they refer to this function's locals
  options.progress = nullptr;
  options.stop = nullptr;
  options.on_stop_seen = nullptr;
  if (!metrics.ok() && metrics.status().code() == StatusCode::kCancelled) {
    std::fprintf(stderr, "infercost: %s\n",
                 engine::spell_settings(metrics.status().message(), engine::Spelling::kFlag).c_str());
    throw CliExit{128 + (signal_seen.load() != 0 ? signal_seen.load() : SIGINT)};
  }
  if (!metrics.ok()) fail(metrics.status());
  if (!flags.quiet) std::fputs(metrics->to_summary().c_str(), stderr);
}

// `infercost run` and `infercost embed`: the same engine, flags and outputs
// but for the task's own settings (the head's or the embedding's).
void define_files_command(CLI::App* cmd, Task task) {
  auto flags = bind_flags<RunFlags>(*cmd, execute_run);
  RunOptions& o = flags->options;
  o.task = task;
  const bool embeds = task == Task::kEmbed;
  cmd->add_option(
         "inputs", o.inputs,
         "Input files, folders or globs (JSON lines, JSON arrays, CSV, Parquet), read in the order given; "
         "a folder's files and a glob's matches are sorted by name")
      ->required();
  cmd->add_option("--model", o.model_dir,
                  embeds ? "Model directory: a sentence-transformers model (modules.json, config.json, "
                           "model.safetensors, its tokenizer), or a Hugging Face encoder with --pooling"
                         : "Model directory (config.json, model.safetensors, vocab.txt or tokenizer.json)")
      ->required();
  cmd->add_option("-o,--output", o.output,
                  embeds
                      ? "Output file (.parquet: a fixed-size float32 list column 'embedding'; .jsonl: an "
                        "array); a folder (existing, or ending in '/') for one part per input file; '-' "
                        "for JSON lines on stdout"
                      : "Output file (.jsonl, .csv or .parquet); a folder (existing, or ending in '/') for "
                        "one part per input file; '-' for JSON lines on stdout")
      ->capture_default_str();
  flags->settings.add(cmd, {}, task);
  cmd->add_option("--metrics", o.metrics_path,
                  "Write the run's metrics as JSON to this file once it ends (never onto an input, the model "
                  "or the output)");
  cmd->add_flag("-q,--quiet", flags->quiet, "No progress and no summary on stderr");
}

}  // namespace

void define_run(CLI::App* cmd) {
  define_files_command(cmd, Task::kClassify);
}

void define_embed(CLI::App* cmd) {
  define_files_command(cmd, Task::kEmbed);
}

}  // namespace infercost::cli
