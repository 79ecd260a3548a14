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

#include "cli/commands.h"
#include "cli/progress_line.h"
#include "cost/prices.h"
#include "infercost/backend/backend.h"
#include "infercost/core/file.h"
#include "infercost/pipeline/runner.h"
#include "io/whole_file.h"

namespace infercost::cli {

namespace {

struct RunFlags {
  pipeline::RunOptions options;
  std::string metrics_path;
  std::string on_error = "fail";
  std::string batching = "tokens";
  std::string batch_size = "0";
  std::string max_batch_tokens;
  std::string threshold;  // empty: not given
  bool no_text = false;
  bool quiet = false;
  // Cost of the run (optional): the instance it represents and how it is priced.
  std::string instance;
  std::string price_list;
  std::vector<std::string> price_files;
  cost::Pricing pricing;
  int64_t corpus_rows = 0;
};

nlohmann::ordered_json cost_json(const cost::PricedInstance& priced, const RunFlags& flags,
                                 const cost::CostEstimate& c) {
  nlohmann::ordered_json j;
  j["instance"] = priced.instance->name;
  j["price_list"] = priced.list->name;
  j["price_source"] = priced.source();
  j["price_date"] = priced.date();
  j["instance_usd_per_hour"] = priced.instance->usd_per_hour;
  j["spot_discount"] = flags.pricing.spot_discount;
  j["platform_usd_per_hour"] = flags.pricing.platform_usd_per_hour;
  j["machines"] = flags.pricing.machines;
  j["usd_per_hour"] = c.usd_per_hour;
  j["cost_to_solution_usd"] = c.cost_to_solution_usd;
  j["usd_per_million_rows"] = c.usd_per_million_rows;
  j["usd_per_million_tokens"] = c.usd_per_million_tokens;
  j["corpus_rows"] = c.corpus_rows;
  j["corpus_seconds"] = c.corpus_seconds;
  j["corpus_usd"] = c.corpus_usd;
  return j;
}

std::string cost_summary(const cost::PricedInstance& priced, const cost::CostEstimate& c) {
  return fmt::format(
      "cost            {} ({} prices, {}): ${:.4f}/h -> ${:.6f} for this run, ${:.4f} per million rows, "
      "${:.5f} per million tokens; {} rows would take {:.2f} h and cost ${:.2f}\n",
      priced.instance->name, priced.list->name, priced.date(), c.usd_per_hour, c.cost_to_solution_usd,
      c.usd_per_million_rows, c.usd_per_million_tokens, c.corpus_rows, c.corpus_seconds / 3600.0,
      c.corpus_usd);
}

// A --batch-size / --max-batch-tokens value: "auto", or a whole number of at
// least `min` (stored in `value`).
Result<bool> parse_size(const std::string& flag, const std::string& text, int min, const char* what,
                        int& value) {
  if (text == "auto") return true;
  int n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || n < min) {
    return invalid_argument(fmt::format("{} '{}': expected {} or 'auto'", flag, text, what));
  }
  value = n;
  return false;
}

std::string synthetic_notice(const model::ModelConfig& config) {
  if (!config.synthetic) return "";
  return fmt::format(
      "infercost: note: '{}' is a synthetic model (random weights): its speed is real, its sentiments are "
      "not.\n",
      config.name);
}

void execute(RunFlags& flags) {
  pipeline::RunOptions& options = flags.options;
  if (flags.on_error == "skip") {
    options.on_bad_row = io::OnBadRow::kSkip;
  } else if (flags.on_error != "fail") {
    fail(invalid_argument("--on-error must be 'fail' or 'skip', not '" + flags.on_error + "'"));
  }
  Result<pipeline::Batching> batching = pipeline::parse_batching(flags.batching);
  if (!batching.ok()) fail(invalid_argument("--batching: " + batching.status().message()));
  options.batching = *batching;
  Result<bool> size_auto =
      parse_size("--batch-size", flags.batch_size, 0, "a whole number of rows (0: the batching's default)",
                 options.batch_size);
  if (!size_auto.ok()) fail(size_auto.status());
  options.batch_size_auto = *size_auto;
  if (!flags.max_batch_tokens.empty()) {
    Result<bool> tokens_auto = parse_size("--max-batch-tokens", flags.max_batch_tokens, 1,
                                          "a whole number of tokens of at least 1", options.max_batch_tokens);
    if (!tokens_auto.ok()) fail(tokens_auto.status());
    options.max_batch_tokens_auto = *tokens_auto;
  }
  Result<backend::DeviceSpec> device = backend::parse_device(options.device);
  if (!device.ok()) fail(invalid_argument("--device: " + device.status().message()));
  // Checked here too (the runner checks again) so a bad value is a usage
  // error before the model loads.
  Result<backend::Precision> precision = backend::resolve_precision(options.device, options.precision);
  if (!precision.ok()) fail(invalid_argument("--precision: " + precision.status().message()));
  // The price is resolved before the run, so a typo costs nothing.
  std::optional<cost::PricedInstance> priced;
  std::vector<cost::PriceList> lists;
  if (!flags.instance.empty()) {
    Status valid = cost::validate(flags.pricing);
    if (!valid.ok())
      fail(invalid_argument("--spot-discount/--platform-usd-per-hour/--machines: " + valid.message()));
    Result<std::vector<cost::PriceList>> loaded = cost::price_lists_with(flags.price_files);
    if (!loaded.ok()) fail(loaded.status());
    lists = std::move(*loaded);
    Result<cost::PricedInstance> found = cost::find_instance(lists, flags.instance, flags.price_list);
    if (!found.ok()) fail(invalid_argument("--instance: " + found.status().message()));
    priced = *found;
  } else if (!flags.price_list.empty() || !flags.price_files.empty() || flags.corpus_rows > 0) {
    fail(invalid_argument("--price-list, --prices and --corpus-rows price a run: give --instance NAME too"));
  }
  options.keep_text = !flags.no_text;
  if (!flags.threshold.empty()) {
    const char* text = flags.threshold.c_str();
    char* end = nullptr;
    const double t = std::strtod(text, &end);
    if (end == text || *end != '\0') {
      fail(invalid_argument("--threshold '" + flags.threshold + "': expected a number in [0, 1]"));
    }
    options.threshold = t;
  }
  // Here too (the runner checks again) so a bad value is a usage error before the model loads.
  Result<std::optional<pipeline::HeadFunction>> head = pipeline::check_head_options(options);
  if (!head.ok()) fail(head.status());
  pipeline::RunProgress progress;
  ProgressLine line(ProgressLine::wanted(flags.quiet), [&progress] { return run_progress_text(progress); });
  options.progress = &progress;
  options.on_model_loaded = [&](const model::ModelConfig& config) { line.print(synthetic_notice(config)); };
  // A run with an output file or folder stops at its next durable step on
  // the first SIGINT or SIGTERM, leaving a checkpoint; a second one ends it at once.
  std::atomic<int> signal_seen{0};
  if (options.output != "-") {
    options.stop = &signal_seen;
    options.on_stop_seen = [&line](int sig) {
      line.print(
          fmt::format("infercost: {}: stopping at the next durable step, with a checkpoint to resume "
                      "from; {} again to stop at once\n",
                      sig == SIGINT ? "SIGINT" : "SIGTERM", sig == SIGINT ? "Ctrl-C" : "a signal"));
    };
    stop_gracefully_on_signals(&signal_seen);
  }
  Result<pipeline::RunMetrics> metrics = pipeline::run_classification(options);
  stop_gracefully_on_signals(nullptr);
  line.stop();
  options.on_model_loaded = nullptr;  // they refer to this function's locals
  options.progress = nullptr;
  options.stop = nullptr;
  options.on_stop_seen = nullptr;
  if (!metrics.ok() && metrics.status().code() == StatusCode::kCancelled) {
    std::fprintf(stderr, "infercost: %s\n", metrics.status().message().c_str());
    throw CliExit{128 + (signal_seen.load() != 0 ? signal_seen.load() : SIGINT)};
  }
  if (!metrics.ok()) fail(metrics.status());
  std::string summary = metrics->to_summary();
  std::string json = metrics->to_json();
  if (priced) {
    const cost::CostEstimate c = cost::estimate_cost(*priced->instance, flags.pricing, metrics->wall_seconds,
                                                     metrics->rows, metrics->tokens, flags.corpus_rows);
    summary += cost_summary(*priced, c);
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(json);
    j["cost"] = cost_json(*priced, flags, c);
    json = j.dump(2) + "\n";
  }
  if (!flags.quiet) std::fputs(summary.c_str(), stderr);
  if (!flags.metrics_path.empty()) {
    if (Status s = io::write_whole_file(flags.metrics_path, json); !s.ok()) fail(s);
  }
}

}  // namespace

void register_run(CLI::App& app) {
  auto [cmd, flags] = add_command<RunFlags>(
      app, "run", "Classify every row of the inputs and write predictions in input order", execute);
  pipeline::RunOptions& o = flags->options;
  cmd->add_option(
         "inputs", o.inputs,
         "Input files, folders or globs (JSON lines, JSON arrays, CSV, Parquet), read in the order given; "
         "a folder's files and a glob's matches are sorted by name")
      ->required();
  cmd->add_option("--input-format", o.input_format,
                  "jsonl, json, csv or parquet for every input (default: from each file's extension)");
  cmd->add_option("--model", o.model_dir,
                  "Model directory (config.json, model.safetensors, vocab.txt or tokenizer.json)")
      ->required();
  cmd->add_option("--column", o.column, "Name of the text field")->capture_default_str();
  cmd->add_option(
         "-o,--output", o.output,
         "Output file (.jsonl, .csv or .parquet); a folder (existing, or ending in '/') for one part per "
         "input file; '-' for JSON lines on stdout")
      ->capture_default_str();
  cmd->add_option(
      "--output-format", o.output_format,
      "jsonl, csv or parquet (default: from the --output extension; for a folder, each input's own "
      "format)");
  cmd->add_option("--compression", o.compression,
                  "Parquet output codec: snappy, zstd, gzip, brotli, lz4_raw, lz4 or none")
      ->capture_default_str();
  cmd->add_option("--batching", flags->batching,
                  "How rows become batches: 'tokens' (sort each window of rows by length and pack up to "
                  "--max-batch-tokens; no compute spent on padding) or 'seed' (the study's method: fixed "
                  "batches in input order, padded to each file's longest row, padding computed)")
      ->capture_default_str();
  cmd->add_option("--batch-size", flags->batch_size,
                  "Most rows per batch; 0 picks the policy's default: 256 for 'tokens' (a cap; the token "
                  "budget usually binds first), 100 x threads for 'seed'; 'auto': as many as the device's "
                  "memory holds beside the token budget ('seed': rows of --max-length tokens)")
      ->capture_default_str();
  cmd->add_option("--max-batch-tokens", flags->max_batch_tokens,
                  "'tokens' batching: most tokens per batch (rows x longest row; a longer row runs alone); "
                  "default 4096; 'auto': as many as the device's memory holds");
  cmd->add_option("--window-rows", o.window_rows,
                  "Rows read, tokenized and sorted together; bounds reordering and memory ('seed' rounds it "
                  "up to whole batches; under 'tokens' no batch spans two windows)")
      ->capture_default_str();
  cmd->add_option("--precision", o.precision,
                  "Linear-layer arithmetic: auto (CPU: bf16 where the CPU has native bf16, else fp32; GPU: "
                  "bf16, fp16 before compute capability 8.0), fp32, bf16, fp16 (GPU) or int8 (CPU)")
      ->capture_default_str();
  cmd->add_option("--threads", o.threads, "Inference threads (0: all cores)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--tokenizer-threads", o.tokenizer_threads,
                  "Threads tokenizing while inference runs (0: 1 on the CPU, else --threads)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-length", o.max_length,
                  "Truncate each text to this many tokens, [CLS] and [SEP] included")
      ->capture_default_str();
  cmd->add_option("--function", o.function,
                  "The head's output function, as Hugging Face's text-classification pipeline applies it: "
                  "softmax over the labels, sigmoid of each label (multi-label), none (the raw logits), or "
                  "default: the model's (problem_type regression: none; multi_label_classification or a "
                  "single label: sigmoid; else softmax; `infercost model info` says which)")
      ->capture_default_str();
  cmd->add_option("--threshold", flags->threshold,
                  "Multi-label outputs (sigmoid over several labels): the 'labels' column lists the labels "
                  "whose value is at or above this, in [0, 1] (default 0.5); refused for other outputs");
  cmd->add_option("--device", o.device,
                  "Device to run on: cpu; cuda or cuda:all (every GPU); cuda:N or cuda:N,M,... (those GPUs). "
                  "Each GPU runs its own workers, all pulling from one queue of batches")
      ->capture_default_str();
  // Range checked by the runner, whose message names the flag and the range.
  cmd->add_option("--streams-per-device", o.streams_per_device,
                  "Inference workers per device, each with its own stream and memory (0: 2 on a GPU, 1 on "
                  "the CPU; at most 16)")
      ->capture_default_str();
  cmd->add_option("--metrics", flags->metrics_path, "Write the run's metrics as JSON to this file");
  cmd->add_option("--instance", flags->instance,
                  "The instance this run represents (e.g. p3.8xlarge): adds its cost-to-solution, cost per "
                  "million rows/tokens and the corpus projection to the summary and metrics");
  cmd->add_option("--price-list", flags->price_list, "Look --instance up in this list only (e.g. seed-2021)");
  cmd->add_option("--prices", flags->price_files, "A JSON price list of your own (docs/cost.md); repeatable")
      ->check(CLI::ExistingFile)
      ->allow_extra_args(false);  // one file per flag: later words stay inputs
  cmd->add_option("--spot-discount", flags->pricing.spot_discount,
                  "Fraction off the on-demand price, 0 to <1 (e.g. 0.7 for spot at 30% of on-demand)")
      ->capture_default_str();
  cmd->add_option("--platform-usd-per-hour", flags->pricing.platform_usd_per_hour,
                  "Surcharge per machine-hour on top of the instance price (e.g. Databricks DBUs in USD)")
      ->capture_default_str();
  cmd->add_option("--machines", flags->pricing.machines, "Machines in the cluster the run stands for")
      ->capture_default_str();
  cmd->add_option("--corpus-rows", flags->corpus_rows,
                  "Project time and cost to this many rows (default: the rows of this run)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--on-error", flags->on_error,
                  "Bad rows: 'fail' (stop, write nothing) or 'skip' (count and go on)")
      ->capture_default_str();
  cmd->add_flag("--no-text", flags->no_text, "Leave the text column out of the output");
  cmd->add_flag(
      "--resume", o.resume,
      "Continue the job that last wrote --output from its checkpoint (kept beside the output); without "
      "one, start it. The job must be the same: inputs, model and output options");
  cmd->add_flag(
      "--force", o.force,
      "Start over although a previous run of --output stopped half-way (its checkpoint is dropped)");
  cmd->add_option(
         "--checkpoint-seconds", o.checkpoint_seconds,
         "Most seconds between two checkpoints of an output file or folder (each taken at the end of a "
         "window of rows; 0: after every window)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("-q,--quiet", flags->quiet, "No progress and no summary on stderr");
}

}  // namespace infercost::cli
