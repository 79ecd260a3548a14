// `infercost bench`: sweeps run configurations and writes one benchmark
// record per point (docs/bench.md, docs/bench-records.md).
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench.h"
#include "bench/spec.h"
#include "cli/commands.h"
#include "core/file.h"

namespace infercost::cli {

namespace {

struct BenchFlags {
  std::vector<std::string> inputs;
  std::string sweep_file;
  bench::SweepSpec flags;  // the flags' values; applied over the sweep file where given
  std::string shape, device, precision, batching, batch_size, threads, max_batch_tokens;
  bool embed = false;
  std::string pooling;  // parsed into the spec's run settings where given
  bool dry_run = false;
  // Which options were given on the command line.
  std::vector<std::pair<CLI::Option*, std::function<Status(bench::SweepSpec&)>>> overrides;
  std::vector<std::pair<CLI::Option*, std::pair<const char*, std::string*>>> axes;
  CLI::Option* inputs_option = nullptr;
};

// The member of `object` that the member pointers `path` lead to:
// member_at(spec, &SweepSpec::run, &RunOptions::machines) is spec.run.machines.
template <typename T, typename Member>
auto& member_at(T& object, Member member) {
  return object.*member;
}
template <typename T, typename Member, typename... Rest>
auto& member_at(T& object, Member member, Rest... rest) {
  return member_at(object.*member, rest...);
}

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

void execute_bench(BenchFlags& f) {
  bench::SweepSpec spec;
  if (!f.sweep_file.empty()) {
    Result<bench::SweepSpec> loaded = bench::load_sweep_file(f.sweep_file);
    if (!loaded.ok()) fail(loaded.status());
    spec = std::move(*loaded);
  }
  if (f.inputs_option->count() > 0) spec.inputs = f.inputs;
  for (auto& [option, apply] : f.overrides) {
    if (option->count() == 0) continue;
    if (Status s = apply(spec); !s.ok()) fail(s);
  }
  for (auto& [option, axis] : f.axes) {
    if (option->count() == 0) continue;
    Status s = bench::set_axis(spec.axes, axis.first, {*axis.second});
    if (!s.ok()) fail(s);
  }
  bench::fill_defaults(spec);
  Status valid = bench::validate(spec);
  if (!valid.ok()) fail(valid);
  const std::vector<bench::Point> points = bench::expand_points(spec);
  if (f.dry_run) {
    // The instance is looked up even so: a typo shows before the real run.
    std::vector<cost::PriceList> lists;
    Result<std::optional<cost::PricedInstance>> priced = bench::find_spec_instance(spec, lists);
    if (!priced.ok()) fail(priced.status());
    std::fputs(bench::describe_points(spec, points).c_str(), stdout);
    if (*priced) {
      std::printf("priced as %s (%s list, $%.4f/h on demand)\n", (*priced)->instance->name.c_str(),
                  (*priced)->list->name.c_str(), (*priced)->instance->usd_per_hour);
    }
    return;
  }
  if (spec.out.empty()) fail(invalid_argument("--out is required (the JSON lines file for the records)"));
  bench::BenchOptions options;
  options.spec = spec;
  options.command = own_command_line();
  options.terminal = ::isatty(STDERR_FILENO) == 1;
  Result<bench::BenchSummary> summary = bench::run_bench(options);
  if (!summary.ok()) fail(summary.status());
  if (summary->failed > 0) {
    std::fprintf(stderr,
                 "infercost: error: %d of %d points failed (their reasons are in the records in %s)\n",
                 summary->failed, summary->points, spec.out.c_str());
    throw CliExit{1};
  }
}

// Adds bench's options to its command: those that override the sweep file
// (where given, the member of SweepSpec that `path` names: e.g.
// &SweepSpec::run, &RunOptions::machines) and the sweep's axes.
struct BenchOptions {
  CLI::App* cmd;
  BenchFlags* flags;

  template <typename... Path>
  CLI::Option* add(const std::string& name, const std::string& help, Path... path) {
    return given(cmd->add_option(name, member_at(flags->flags, path...), help), path...);
  }
  template <typename... Path>
  CLI::Option* add_flag(const std::string& name, const std::string& help, Path... path) {
    return given(cmd->add_flag(name, member_at(flags->flags, path...), help), path...);
  }
  CLI::Option* axis(const char* name, const char* key, std::string* target, const std::string& help) {
    CLI::Option* option = cmd->add_option(name, *target, help);
    flags->axes.emplace_back(option, std::make_pair(key, target));
    return option;
  }

 private:
  template <typename... Path>
  CLI::Option* given(CLI::Option* option, Path... path) {
    const bench::SweepSpec* values = &flags->flags;
    flags->overrides.emplace_back(option, [values, path...](bench::SweepSpec& s) {
      member_at(s, path...) = member_at(*values, path...);
      return Status();
    });
    return option;
  }
};

// Where the model, the records and the data come from.
void add_bench_io_options(BenchOptions& o) {
  o.add("--model", "Model directory (config.json, model.safetensors, vocab.txt)", &bench::SweepSpec::model);
  o.add("--out",
        "Records file (JSON lines), replaced unless --append; each point's record is written as it "
        "finishes",
        &bench::SweepSpec::out);
  o.add_flag("--append", "Add the records to --out instead of replacing it", &bench::SweepSpec::append);
  o.cmd->add_flag("--dry-run", o.flags->dry_run, "Print the points and their run commands, run nothing");
  o.axis(
      "--shape", "shape", &o.flags->shape,
      "Data shapes: json-3 (3 JSON lines files), parquet (one file), parquet-10 (10 files), jsonl, or files "
      "(your "
      "INPUTs); default: files with INPUTs, else json-3");
  o.add("--rows", "Rows of generated data per shape", &bench::SweepSpec::rows)->capture_default_str();
  o.add("--data-seed", "Seed of the generated data (same seed, same rows)", &bench::SweepSpec::data_seed)
      ->capture_default_str();
  o.add("--data-dir",
        "Where generated data is kept and reused (default: $INFERCOST_CACHE/bench-data, "
        "$XDG_CACHE_HOME/infercost/bench-data or ~/.cache/infercost/bench-data)",
        &bench::SweepSpec::data_dir);
}

// The sweep's axes and the options every run of it shares.
void add_bench_run_options(BenchOptions& o) {
  o.axis("--device", "device", &o.flags->device,
         "Devices: cpu, cuda, cuda:all, cuda:N, cuda:N,M (those GPUs, one point); points separated by ';' or "
         "',', e.g. 'cpu;cuda:0,1' (default cpu)");
  o.axis("--precision", "precision", &o.flags->precision,
         "Precisions: auto, fp32, bf16, int8 (default auto)");
  o.axis("--batching", "batching", &o.flags->batching, "Batching policies: tokens, seed (default tokens)");
  o.axis("--batch-size", "batch_size", &o.flags->batch_size,
         "Batch sizes: N rows, 'default' (the run's own), 'auto' (the run's --batch-size auto: what the "
         "device's memory holds), or NxRULE: 100xvcpus (N x the point's threads), 40xgpus (N x the device's "
         "GPUs; GPU devices only), as the study chose them");
  o.axis("--threads", "threads", &o.flags->threads, "Inference threads (0: every CPU; default 0)");
  o.axis("--max-batch-tokens", "max_batch_tokens", &o.flags->max_batch_tokens,
         "Token budgets of 'tokens' batching (0: the run's default; 'auto': the run's --max-batch-tokens "
         "auto)");

  BenchFlags& f = *o.flags;
  CLI::Option* embed = o.cmd->add_flag(
      "--embed", f.embed,
      "Time `infercost embed` (a vector per row: a sentence-transformers model, or --pooling) instead of "
      "`infercost run`; the records say config.task \"embed\"");
  f.overrides.emplace_back(embed, [&f](bench::SweepSpec& s) {
    s.run.task = f.embed ? Task::kEmbed : Task::kClassify;
    return Status();
  });
  CLI::Option* pooling =
      o.cmd->add_option("--pooling", f.pooling,
                        "With --embed: the runs' --pooling (cls, mean, max, lasttoken; default the model's)");
  f.overrides.emplace_back(pooling, [&f](bench::SweepSpec& s) { return bench::set_pooling(s, f.pooling); });
  using Run = RunOptions;
  o.add("--column", "Name of the text field", &bench::SweepSpec::run, &Run::column)->capture_default_str();
  o.add("--max-length", "Truncate texts to this many tokens (0: the model's limit)", &bench::SweepSpec::run,
        &Run::max_length)
      ->capture_default_str();
  o.add("--tokenizer-threads", "Tokenizer threads (0: the run's default)", &bench::SweepSpec::run,
        &Run::tokenizer_threads)
      ->capture_default_str();
}

// The instance the records are priced for, and how.
void add_bench_cost_options(BenchOptions& o) {
  o.add("--instance",
        "The instance this machine stands for (e.g. c5.12xlarge): each point gets its cost; looked "
        "up before anything runs",
        &bench::SweepSpec::run, &RunOptions::instance);
  o.add("--price-list", "Look --instance up in this list only (e.g. seed-2021)", &bench::SweepSpec::run,
        &RunOptions::price_list);
  o.add("--prices", "A JSON price list of your own (docs/cost.md); repeatable", &bench::SweepSpec::run,
        &RunOptions::price_files)
      ->expected(1)
      ->allow_extra_args(false)
      ->check(CLI::ExistingFile);
  o.add("--spot-discount", "Fraction off the on-demand price, 0 to <1", &bench::SweepSpec::run,
        &RunOptions::spot_discount)
      ->capture_default_str();
  o.add("--platform-usd-per-hour", "Surcharge per machine-hour (e.g. Databricks DBUs in USD)",
        &bench::SweepSpec::run, &RunOptions::platform_usd_per_hour)
      ->capture_default_str();
  o.add("--machines", "Machines in the cluster a point stands for", &bench::SweepSpec::run,
        &RunOptions::machines)
      ->capture_default_str();
  o.add("--corpus-rows", "Project time and cost to this many rows", &bench::SweepSpec::run,
        &RunOptions::corpus_rows);
}

// How each point is repeated, timed and watched.
void add_bench_repetition_options(BenchOptions& o) {
  o.add("--label", "A label for this machine or run in the records (e.g. laptop)", &bench::SweepSpec::label);
  o.add("--warmup", "Untimed runs before each point's timed ones", &bench::SweepSpec::warmup)
      ->capture_default_str();
  o.add("--repetitions", "At least this many timed runs per point", &bench::SweepSpec::repetitions)
      ->capture_default_str();
  o.add("--min-seconds",
        "Repeat until the timed runs add up to this many seconds too (at most 100 runs, or "
        "--repetitions if more)",
        &bench::SweepSpec::min_seconds)
      ->capture_default_str();
  o.add("--timeout-seconds", "Kill a run after this long and fail its point (0: none)",
        &bench::SweepSpec::timeout_seconds)
      ->capture_default_str();
  o.add("--monitor-interval", "Seconds between samples of a run's CPU, memory and GPUs",
        &bench::SweepSpec::monitor_interval)
      ->capture_default_str();
}

}  // namespace

void define_bench(CLI::App* cmd) {
  auto f = bind_flags<BenchFlags>(*cmd, execute_bench);
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

  BenchOptions o{cmd, f.get()};
  add_bench_io_options(o);
  add_bench_run_options(o);
  add_bench_cost_options(o);
  add_bench_repetition_options(o);
}

}  // namespace infercost::cli
