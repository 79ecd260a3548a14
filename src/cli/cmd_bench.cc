// `infercost bench`: sweeps run configurations and writes one benchmark
// record per point (docs/bench.md, docs/bench-records.md).
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "infercost/core/file.h"
#include "sweep/bench.h"
#include "sweep/spec.h"

namespace infercost::cli {

namespace {

struct BenchFlags {
  std::vector<std::string> inputs;
  std::string sweep_file;
  sweep::SweepSpec flags;  // the flags' values; applied over the sweep file where given
  std::string shape, device, precision, batching, batch_size, threads, max_batch_tokens;
  bool dry_run = false;
  // Which options were given on the command line.
  std::vector<std::pair<CLI::Option*, std::function<void(sweep::SweepSpec&)>>> overrides;
  std::vector<std::pair<CLI::Option*, std::pair<const char*, std::string*>>> axes;
  CLI::Option* inputs_option = nullptr;
};

// argv of this process, for the records (Linux: NUL-separated in /proc/self/cmdline).
std::vector<std::string> own_command_line() {
  Result<std::string> text = read_file("/proc/self/cmdline");
  const std::string all = text.ok() ? *text : std::string();
  std::vector<std::string> argv;
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find('\0', start);
    if (end == std::string::npos) end = all.size();
    argv.push_back(all.substr(start, end - start));
    start = end + 1;
  }
  return argv;
}

void execute(BenchFlags& f) {
  sweep::SweepSpec spec;
  if (!f.sweep_file.empty()) {
    Result<sweep::SweepSpec> loaded = sweep::load_sweep_file(f.sweep_file);
    if (!loaded.ok()) fail(loaded.status());
    spec = std::move(*loaded);
  }
  if (f.inputs_option->count() > 0) spec.inputs = f.inputs;
  for (auto& [option, apply] : f.overrides) {
    if (option->count() > 0) apply(spec);
  }
  for (auto& [option, axis] : f.axes) {
    if (option->count() == 0) continue;
    Status s = sweep::set_axis(spec.axes, axis.first, {*axis.second});
    if (!s.ok()) fail(s);
  }
  sweep::fill_defaults(spec);
  Status valid = sweep::validate(spec);
  if (!valid.ok()) fail(valid);
  const std::vector<sweep::Point> points = sweep::expand_points(spec);
  if (f.dry_run) {
    // The instance is looked up even so: a typo shows before the real run.
    std::vector<cost::PriceList> lists;
    Result<std::optional<cost::PricedInstance>> priced = sweep::find_spec_instance(spec, lists);
    if (!priced.ok()) fail(priced.status());
    std::fputs(sweep::describe_points(spec, points).c_str(), stdout);
    if (*priced) {
      std::printf("priced as %s (%s list, $%.4f/h on demand)\n", (*priced)->instance->name.c_str(),
                  (*priced)->list->name.c_str(), (*priced)->instance->usd_per_hour);
    }
    return;
  }
  if (spec.out.empty()) fail(invalid_argument("--out is required (the JSON lines file for the records)"));
  sweep::BenchOptions options;
  options.spec = spec;
  options.command = own_command_line();
  options.terminal = ::isatty(STDERR_FILENO) == 1;
  Result<sweep::BenchSummary> summary = sweep::run_bench(options);
  if (!summary.ok()) fail(summary.status());
  if (summary->failed > 0) {
    std::fprintf(stderr,
                 "infercost: error: %d of %d points failed (their reasons are in the records in %s)\n",
                 summary->failed, summary->points, spec.out.c_str());
    throw CliExit{1};
  }
}

}  // namespace

void register_bench(CLI::App& app) {
  auto f = std::make_shared<BenchFlags>();
  sweep::SweepSpec& v = f->flags;
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Benchmark a sweep of configurations (data shape x device x precision x batching x batch size x "
      "threads): "
      "each point runs a warm-up then repeated `infercost run`s in child processes, and gets one JSON record "
      "(docs/bench-records.md) with timings, throughput, memory, hardware, software and cost");
  cmd->footer(
      "List-valued flags take comma-separated values and sweep them: --batch-size 8,32,100xvcpus --batching "
      "seed,tokens. Points are the cartesian product, in this order (first varies slowest): shape, device, "
      "precision, batching, batch size, threads, max batch tokens. A --sweep JSON file takes the same keys "
      "(flags with '_' for '-', e.g. \"batch_size\": [8, \"100xvcpus\"]); flags override it. A failed point "
      "(error, out of memory, timeout) is recorded as failed and the sweep goes on; the exit status is then "
      "1. "
      "See docs/bench.md.");
  f->inputs_option =
      cmd->add_option("inputs", f->inputs,
                      "Your input files, folders or globs (measured as shape 'files'); without "
                      "them the sweep generates synthetic data (--shape)");
  cmd->add_option("--sweep", f->sweep_file, "A JSON sweep file (keys as in docs/bench.md); flags override it")
      ->check(CLI::ExistingFile);

  auto over = [&](CLI::Option* option, std::function<void(sweep::SweepSpec&)> apply) {
    f->overrides.emplace_back(option, std::move(apply));
    return option;
  };
  auto axis = [&](const char* flag, const char* key, std::string* target, const std::string& help) {
    CLI::Option* option = cmd->add_option(flag, *target, help);
    f->axes.emplace_back(option, std::make_pair(key, target));
    return option;
  };
  BenchFlags* raw = f.get();
  over(cmd->add_option("--model", v.model, "Model directory (config.json, model.safetensors, vocab.txt)"),
       [raw](sweep::SweepSpec& s) { s.model = raw->flags.model; });
  over(cmd->add_option(
           "--out", v.out,
           "Records file (JSON lines), replaced unless --append; each point's record is written as it "
           "finishes"),
       [raw](sweep::SweepSpec& s) { s.out = raw->flags.out; });
  over(cmd->add_flag("--append", v.append, "Add the records to --out instead of replacing it"),
       [raw](sweep::SweepSpec& s) { s.append = raw->flags.append; });
  cmd->add_flag("--dry-run", f->dry_run, "Print the points and their run commands, run nothing");

  axis("--shape", "shape", &f->shape,
       "Data shapes: json-3 (3 JSON lines files), parquet (one file), parquet-10 (10 files), jsonl, or files "
       "(your "
       "INPUTs); default: files with INPUTs, else json-3");
  over(cmd->add_option("--rows", v.rows, "Rows of generated data per shape")->capture_default_str(),
       [raw](sweep::SweepSpec& s) { s.rows = raw->flags.rows; });
  over(cmd->add_option("--data-seed", v.data_seed, "Seed of the generated data (same seed, same rows)")
           ->capture_default_str(),
       [raw](sweep::SweepSpec& s) { s.data_seed = raw->flags.data_seed; });
  over(cmd->add_option("--data-dir", v.data_dir,
                       "Where generated data is kept and reused (default: $INFERCOST_CACHE/bench-data, "
                       "$XDG_CACHE_HOME/infercost/bench-data or ~/.cache/infercost/bench-data)"),
       [raw](sweep::SweepSpec& s) { s.data_dir = raw->flags.data_dir; });
  axis("--device", "device", &f->device,
       "Devices: cpu, cuda, cuda:all, cuda:N, cuda:N,M (those GPUs, one point); points separated by ';' or "
       "',', e.g. 'cpu;cuda:0,1' (default cpu)");
  axis("--precision", "precision", &f->precision, "Precisions: auto, fp32, bf16, int8 (default auto)");
  axis("--batching", "batching", &f->batching, "Batching policies: tokens, seed (default tokens)");
  axis("--batch-size", "batch_size", &f->batch_size,
       "Batch sizes: N rows, 'default' (the run's own), 'auto' (the run's --batch-size auto: what the "
       "device's memory holds), or NxRULE: 100xvcpus (N x the point's threads), 40xgpus (N x the device's "
       "GPUs; GPU devices only), as the study chose them");
  axis("--threads", "threads", &f->threads, "Inference threads (0: every CPU; default 0)");
  axis("--max-batch-tokens", "max_batch_tokens", &f->max_batch_tokens,
       "Token budgets of 'tokens' batching (0: the run's default; 'auto': the run's --max-batch-tokens "
       "auto)");

  over(cmd->add_option("--column", v.column, "Name of the text field")->capture_default_str(),
       [raw](sweep::SweepSpec& s) { s.column = raw->flags.column; });
  over(cmd->add_option("--max-length", v.max_length, "Truncate texts to this many tokens")
           ->capture_default_str(),
       [raw](sweep::SweepSpec& s) { s.max_length = raw->flags.max_length; });
  over(cmd->add_option("--tokenizer-threads", v.tokenizer_threads, "Tokenizer threads (0: the run's default)")
           ->capture_default_str(),
       [raw](sweep::SweepSpec& s) { s.tokenizer_threads = raw->flags.tokenizer_threads; });

  over(cmd->add_option(
           "--instance", v.instance,
           "The instance this machine stands for (e.g. c5.12xlarge): each point gets its cost; looked "
           "up before anything runs"),
       [raw](sweep::SweepSpec& s) { s.instance = raw->flags.instance; });
  over(cmd->add_option("--price-list", v.price_list, "Look --instance up in this list only (e.g. seed-2021)"),
       [raw](sweep::SweepSpec& s) { s.price_list = raw->flags.price_list; });
  over(cmd->add_option("--prices", v.prices, "A JSON price list of your own (docs/cost.md); repeatable")
           ->expected(1)
           ->allow_extra_args(false)
           ->check(CLI::ExistingFile),
       [raw](sweep::SweepSpec& s) { s.prices = raw->flags.prices; });
  over(
      cmd->add_option("--spot-discount", v.pricing.spot_discount, "Fraction off the on-demand price, 0 to <1")
          ->capture_default_str(),
      [raw](sweep::SweepSpec& s) { s.pricing.spot_discount = raw->flags.pricing.spot_discount; });
  over(cmd->add_option("--platform-usd-per-hour", v.pricing.platform_usd_per_hour,
                       "Surcharge per machine-hour (e.g. Databricks DBUs in USD)")
           ->capture_default_str(),
       [raw](sweep::SweepSpec& s) {
         s.pricing.platform_usd_per_hour = raw->flags.pricing.platform_usd_per_hour;
       });
  over(cmd->add_option("--machines", v.pricing.machines, "Machines in the cluster a point stands for")
           ->capture_default_str(),
       [raw](sweep::SweepSpec& s) { s.pricing.machines = raw->flags.pricing.machines; });
  over(cmd->add_option("--corpus-rows", v.corpus_rows, "Project time and cost to this many rows"),
       [raw](sweep::SweepSpec& s) { s.corpus_rows = raw->flags.corpus_rows; });

  over(cmd->add_option("--label", v.label, "A label for this machine or run in the records (e.g. laptop)"),
       [raw](sweep::SweepSpec& s) { s.label = raw->flags.label; });
  over(cmd->add_option("--warmup", v.warmup, "Untimed runs before each point's timed ones")
           ->capture_default_str(),
       [raw](sweep::SweepSpec& s) { s.warmup = raw->flags.warmup; });
  over(cmd->add_option("--repetitions", v.repetitions, "At least this many timed runs per point")
           ->capture_default_str(),
       [raw](sweep::SweepSpec& s) { s.repetitions = raw->flags.repetitions; });
  over(cmd->add_option("--min-seconds", v.min_seconds,
                       "Repeat until the timed runs add up to this many seconds too (at most 100 runs, or "
                       "--repetitions if more)")
           ->capture_default_str(),
       [raw](sweep::SweepSpec& s) { s.min_seconds = raw->flags.min_seconds; });
  over(cmd->add_option("--timeout-seconds", v.timeout_seconds,
                       "Kill a run after this long and fail its point (0: none)")
           ->capture_default_str(),
       [raw](sweep::SweepSpec& s) { s.timeout_seconds = raw->flags.timeout_seconds; });
  over(cmd->add_option("--monitor-interval", v.monitor_interval,
                       "Seconds between samples of a run's CPU, memory and GPUs")
           ->capture_default_str(),
       [raw](sweep::SweepSpec& s) { s.monitor_interval = raw->flags.monitor_interval; });
  cmd->callback([f]() { execute(*f); });
}

}  // namespace infercost::cli
