// `infercost bench` end to end, through the built binary, with the tiny
// committed model and a few dozen generated rows.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "bench/bench.h"
#include "bench/child.h"
#include "bench/monitor.h"
#include "bench/nvml.h"
#include "core/file.h"
#include "engine/run_metrics.h"
#include "infercost/metrics.h"
#include "record/record.h"
#include "test_utils.h"

namespace infercost::bench {
namespace {

using testing::slurp;
using testing::TempDir;

using Outcome = infercost::testing::CommandOutcome;
Outcome run_cli(const std::string& args) {
  return infercost::testing::run_infercost(args);
}

// As run_cli, with TMPDIR set to `tmpdir` (where the bench makes its
// temporary folder).
Outcome run_cli_in(const std::string& tmpdir, const std::string& args) {
  return infercost::testing::run_shell("TMPDIR=" + tmpdir + " " + std::string(INFERCOST_BINARY_DIR) +
                                       "/infercost " + args);
}

// Entries of `dir` whose names start with `prefix`.
std::vector<std::string> entries_starting(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0) found.push_back(name);
  }
  return found;
}

// Names in `dir` (recursively) that hold ".tmp-": AtomicOutputFile temporaries.
std::vector<std::string> temporaries_under(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec)) {
    if (e.path().filename().string().find(".tmp-") != std::string::npos) found.push_back(e.path().string());
  }
  return found;
}

std::string tiny_model() {
  return std::string(INFERCOST_TEST_DATA_DIR) + "/model/hf_tiny_distilbert";
}

// The sweep settings every test shares: 40 generated rows, the tiny model
// (32 positions), one thread.
std::string base_args(const TempDir& dir) {
  return "bench --model " + tiny_model() + " --rows 40 --data-seed 3 --data-dir " + dir.file("data") +
         " --max-length 32 --threads 1 --monitor-interval 0.02";
}

std::vector<record::Record> load(const std::string& path) {
  Result<std::vector<record::Record>> records = record::load_records({path});
  EXPECT_TRUE(records.ok()) << records.status().to_string();
  return records.ok() ? *records : std::vector<record::Record>{};
}

TEST(BenchCli, TwoPointSweepWritesValidRecords) {
  TempDir dir;
  const std::string out = dir.file("results.jsonl");
  const std::string tmp = dir.file("tmp");
  std::filesystem::create_directory(tmp);
  Outcome o =
      run_cli_in(tmp, base_args(dir) +
                          " --batching seed,tokens --precision fp32 --repetitions 2 --warmup 1 --label ci "
                          "--instance c5.12xlarge --out " +
                          out);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("writing 40 synthetic rows as json-3"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("point 2/2"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("rows/s median"), std::string::npos) << o.output;
  // The spread as the report prints it: half the min-max range over the median.
  EXPECT_NE(o.output.find(", \u00b1 "), std::string::npos) << o.output;
  EXPECT_EQ(o.output.find("spread"), std::string::npos) << o.output;
  std::vector<record::Record> records = load(out);
  ASSERT_EQ(records.size(), 2u);
  const record::Record& seed = records[0];
  const record::Record& tokens = records[1];
  for (const record::Record& r : records) {
    EXPECT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.schema, record::kSchema);
    EXPECT_EQ(r.points, 2);
    EXPECT_EQ(r.sweep_id, records[0].sweep_id);
    EXPECT_EQ(r.label, "ci");
    EXPECT_EQ(r.repetitions.size(), 2u);
    EXPECT_EQ(r.warmup, 1);
    EXPECT_EQ(r.rows, 40);
    EXPECT_EQ(r.data.rows, 40);
    EXPECT_EQ(r.data.shape, "json-3");
    EXPECT_EQ(r.data.files, 3);
    EXPECT_GT(r.data.bytes, 0);
    EXPECT_EQ(r.data.content_sha256.size(), 64u);
    int64_t histogram_rows = 0;
    for (int64_t c : r.data.length_counts) histogram_rows += c;
    EXPECT_EQ(histogram_rows, 40);
    EXPECT_EQ(r.config.threads, 1);
    EXPECT_EQ(r.config.max_length, 32);
    EXPECT_EQ(r.config.precision, "fp32");
    EXPECT_GT(r.wall_seconds.median, 0);
    EXPECT_GT(r.rows_per_second.median, 0);
    EXPECT_GT(r.peak_rss_bytes, 0);
    for (const record::Repetition& rep : r.repetitions) EXPECT_GT(rep.peak_rss_bytes, 0);
    EXPECT_GT(r.monitor.samples, 0);
    EXPECT_GE(r.peak_rss_bytes, r.monitor.rss_peak_bytes);
    // A CPU point samples no GPU, whatever NVML finds on the machine.
    EXPECT_TRUE(r.monitor.gpus.empty());
    EXPECT_FALSE(r.hardware.hostname.empty());
    EXPECT_EQ(r.software.infercost, "0.1.0");
    EXPECT_EQ(r.model.architecture, "distilbert");
    EXPECT_GT(r.model.parameters, 0);
    ASSERT_TRUE(r.instance.has_value());
    EXPECT_EQ(r.instance->name, "c5.12xlarge");
    ASSERT_TRUE(r.cost.has_value());
    EXPECT_GT(r.cost->cost_to_solution_usd, 0);
    ASSERT_GE(r.run_command.size(), 3u);
    EXPECT_EQ(r.run_command[1], "run");
    EXPECT_EQ(r.command[1], "bench");
  }
  EXPECT_EQ(seed.point, 1);
  EXPECT_EQ(seed.config.batching, "seed");
  EXPECT_EQ(tokens.point, 2);
  EXPECT_EQ(tokens.config.batching, "tokens");
  // The same rows and real tokens whatever the batching; seed computes padding.
  EXPECT_EQ(seed.tokens, tokens.tokens);
  EXPECT_EQ(seed.data.content_sha256, tokens.data.content_sha256);
  EXPECT_EQ(seed.data.length_counts, tokens.data.length_counts);
  EXPECT_LT(seed.padding_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(tokens.padding_efficiency, 1.0);
  // The generated data is kept; the temporary folder of the runs is not.
  EXPECT_TRUE(std::filesystem::exists(dir.file("data/json-3-40rows-seed3-gen1.complete")));
  EXPECT_EQ(testing::count_entries(tmp), 0);
  EXPECT_TRUE(temporaries_under(dir.path()).empty());

  // Rerun with --append: the data is reused and the records are added.
  Outcome again = run_cli(base_args(dir) + " --repetitions 1 --warmup 0 --append --out " + out);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("using the cached json-3 data"), std::string::npos) << again.output;
  std::vector<record::Record> appended = load(out);
  ASSERT_EQ(appended.size(), 3u);
  EXPECT_NE(appended[2].sweep_id, appended[0].sweep_id);
  EXPECT_EQ(appended[2].data.content_sha256, seed.data.content_sha256);
  EXPECT_FALSE(appended[2].instance.has_value());
  // Without --append the file is replaced.
  Outcome replace = run_cli(base_args(dir) + " --repetitions 1 --warmup 0 --out " + out);
  ASSERT_EQ(replace.exit_code, 0) << replace.output;
  EXPECT_EQ(load(out).size(), 1u);
}

TEST(BenchCli, AFailedPointIsRecordedAndTheSweepGoesOn) {
  Result<std::unique_ptr<Nvml>> nvml = Nvml::load();
  if (nvml.ok() && (*nvml)->device_count() > 0)
    GTEST_SKIP() << "a CUDA device is present: the cuda point may succeed";
  TempDir dir;
  const std::string out = dir.file("r.jsonl");
  Outcome o = run_cli(base_args(dir) + " --device cpu,cuda --repetitions 1 --warmup 0 --out " + out);
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_NE(o.output.find("1 of 2 points failed"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("FAILED"), std::string::npos) << o.output;
  std::vector<record::Record> records = load(out);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_TRUE(records[0].ok()) << records[0].error;
  EXPECT_EQ(records[0].config.device, "cpu");
  EXPECT_EQ(records[0].rows, 40);
  EXPECT_FALSE(records[1].ok());
  EXPECT_EQ(records[1].status, "failed");
  EXPECT_EQ(records[1].config.device, "cuda");
  EXPECT_NE(records[1].error.find("cuda"), std::string::npos) << records[1].error;
  EXPECT_EQ(records[1].error.rfind("repetition 1: ", 0), 0u) << records[1].error;
  EXPECT_TRUE(records[1].repetitions.empty());

  // A 'gpus' rule on a device whose GPUs cannot be counted fails that point, saying why.
  Outcome count = run_cli(base_args(dir) + " --device cuda --batch-size 40xgpus --out " + out);
  EXPECT_EQ(count.exit_code, 1) << count.output;
  records = load(out);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].config.batch_size_rule, "40xgpus");
  EXPECT_NE(records[0].error.find(
                "--batch-size 40xgpus: cannot count the GPUs of device 'cuda': NVML not available"),
            std::string::npos)
      << records[0].error;
}

TEST(BenchCli, DryRunListsPointsAndRunsNothing) {
  TempDir dir;
  Outcome o = run_cli(base_args(dir) + " --shape json-3,parquet --batch-size 8,100xvcpus --dry-run --out " +
                      dir.file("r.jsonl"));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("4 points"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("batch 100xvcpus auto tokens parquet cpu 1 thread"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("--batch-size 100"), std::string::npos) << o.output;
  EXPECT_FALSE(std::filesystem::exists(dir.file("r.jsonl")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("data")));
}

// --embed times `infercost embed` (with --pooling), and its records say so.
TEST(BenchCli, EmbedTimesEmbeddingRuns) {
  TempDir dir;
  Outcome dry = run_cli(base_args(dir) + " --embed --pooling mean --dry-run --out " + dir.file("r.jsonl"));
  ASSERT_EQ(dry.exit_code, 0) << dry.output;
  EXPECT_NE(dry.output.find("infercost embed "), std::string::npos) << dry.output;
  EXPECT_NE(dry.output.find("--pooling mean"), std::string::npos) << dry.output;
  Outcome pooling = run_cli(base_args(dir) + " --pooling mean --dry-run --out " + dir.file("r.jsonl"));
  EXPECT_EQ(pooling.exit_code, 2) << pooling.output;
  EXPECT_NE(pooling.output.find("add --embed"), std::string::npos) << pooling.output;
  Outcome o = run_cli(base_args(dir) + " --embed --pooling cls --repetitions 1 --warmup 0 --out " +
                      dir.file("r.jsonl"));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const std::vector<record::Record> records = load(dir.file("r.jsonl"));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].config.task, "embed");
  EXPECT_EQ(records[0].status, "ok") << records[0].error;
  EXPECT_EQ(records[0].run_command.at(1), "embed");
  EXPECT_GT(records[0].rows, 0);
}

// --device takes a multi-GPU device as one point: ';' between points.
TEST(BenchCli, DeviceAxisTakesAGpuListAsOnePoint) {
  TempDir dir;
  Outcome o = run_cli(base_args(dir) + " --device 'cpu;cuda:0,1' --dry-run --out " + dir.file("r.jsonl"));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("2 points"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("--device cuda:0,1 "), std::string::npos) << o.output;
  EXPECT_FALSE(std::filesystem::exists(dir.file("r.jsonl")));
}

TEST(BenchCli, UsageErrorsStopBeforeAnythingRuns) {
  TempDir dir;
  const std::string out = dir.file("r.jsonl");
  Outcome unknown = run_cli(base_args(dir) + " --instance c5.13xlarge --out " + out);
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("c5.13xlarge"), std::string::npos) << unknown.output;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(dir.file("data")));

  Outcome gpu_rule = run_cli(base_args(dir) + " --batch-size 40xgpus --out " + out);
  EXPECT_EQ(gpu_rule.exit_code, 2) << gpu_rule.output;
  EXPECT_NE(gpu_rule.output.find("a 'gpus' rule needs a GPU device"), std::string::npos) << gpu_rule.output;

  const std::string sweep = dir.write("s.json", "{\"batch_sizes\": [8]}");
  Outcome bad_file = run_cli(base_args(dir) + " --sweep " + sweep + " --out " + out);
  EXPECT_EQ(bad_file.exit_code, 2) << bad_file.output;
  EXPECT_NE(bad_file.output.find(sweep + ": unknown key \"batch_sizes\""), std::string::npos)
      << bad_file.output;

  Outcome no_out = run_cli(base_args(dir));
  EXPECT_EQ(no_out.exit_code, 2) << no_out.output;
  EXPECT_NE(no_out.output.find("--out"), std::string::npos) << no_out.output;

  Outcome no_model = run_cli("bench --out " + out + " --model " + dir.file("nope"));
  EXPECT_EQ(no_model.exit_code, 2) << no_model.output;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_EQ(run_cli("bench --help").exit_code, 0);
}

TEST(BenchCli, SweepFileGivesThePointsAndFlagsOverrideIt) {
  TempDir dir;
  const std::string sweep = dir.write("s.json", R"({"model": ")" + tiny_model() + R"(",
    "out": "from-file.jsonl", "rows": 30, "data_dir": "data", "max_length": 32, "threads": [1],
    "batch_size": [4, 8], "repetitions": 1, "warmup": 0})");
  Outcome o = run_cli("bench --sweep " + sweep + " --batch-size 16");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  std::vector<record::Record> records = load(dir.file("from-file.jsonl"));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].config.batch_size, 16);
  EXPECT_EQ(records[0].rows, 30);
  EXPECT_TRUE(std::filesystem::exists(dir.file("data/json-3-30rows-seed1-gen1.complete")));
}

// `infercost <args>` started in the background in a process group of its
// own (a signal can go to the group, as Ctrl-C sends it, and a test that
// gives up can kill the bench with its runs), with TMPDIR set, `env`
// ("NAME=value") added and its output in `log`.
pid_t start_infercost(const std::vector<std::string>& args, const std::string& tmpdir, const std::string& log,
                      const std::vector<std::string>& env) {
  const std::string binary = std::string(INFERCOST_BINARY_DIR) + "/infercost";
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(binary.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    // Nothing of this process's but the standard streams: a FIFO reader
    // (HeldRuns) kept open by the bench and its runs would answer for them.
    for (int fd = 3; fd < 1024; ++fd) ::close(fd);
    ::setenv("TMPDIR", tmpdir.c_str(), 1);
    for (const std::string& e : env) ::putenv(const_cast<char*>(e.c_str()));
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
    }
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}

// True while `pid` (a child of this process) has not ended; it is not reaped.
bool still_running(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == 0;
}

// Kills a bench and its runs (a test that cannot go on) and reaps it.
void stop_bench(pid_t bench) {
  ::kill(-bench, SIGKILL);
  ::waitpid(bench, nullptr, 0);
}

// The runs of a bench held after their first batch
// (INFERCOST_TEST_HOLD_AT=batch-done, src/core/test_point.h):
// each run the bench starts waits there until the test lets it go on, so a
// signal lands in the run the test chose, whatever the machine's speed.
class HeldRuns {
 public:
  explicit HeldRuns(const TempDir& dir) : fifo_(dir, "batch-done") {}
  std::vector<std::string> environment() const { return fifo_.env(); }

  // Waits until a run of `bench` is held: true; false when the bench ended
  // first, or after minutes (a guard against a hang, not a measurement).
  bool wait(pid_t bench) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(5);
    while (std::chrono::steady_clock::now() < give_up) {
      const std::string point = fifo_.take_point();
      if (!point.empty()) return point == "batch-done";
      pollfd p{fifo_.fd(), POLLIN, 0};
      // The poll's timeout only lets the bench's end be seen.
      if (::poll(&p, 1, 100) <= 0 && !still_running(bench)) return false;
    }
    return false;
  }
  // Lets the held run of `bench` go on.
  void release(pid_t bench) { fifo_.release(bench); }

 private:
  testing::HoldFifo fifo_;
};

// The bench's temporary folder under `tmpdir`, "" when there is none.
std::string bench_folder(const std::string& tmpdir) {
  std::vector<std::string> found = entries_starting(tmpdir, "infercost-bench-");
  return found.empty() ? "" : tmpdir + "/" + found.front();
}

std::vector<std::string> split_args(const std::string& args) {
  std::vector<std::string> out;
  std::istringstream in(args);
  std::string a;
  while (in >> a) out.push_back(a);
  return out;
}

struct Interrupt {
  int signal;
  bool to_group;  // as Ctrl-C: the bench and its run both get it
};
void PrintTo(const Interrupt& i, std::ostream* os) {
  *os << ::strsignal(i.signal) << (i.to_group ? " to the process group" : " to the bench");
}

class BenchSignals : public ::testing::TestWithParam<Interrupt> {};

// A signal while point 1 runs: no temporary folder, no partial output, and
// the records file from before is still whole (not yet replaced).
TEST_P(BenchSignals, DuringTheFirstPointLeaveNothingBehind) {
  const Interrupt interrupt = GetParam();
  TempDir dir;
  const std::string tmp = dir.file("tmp");
  std::filesystem::create_directory(tmp);
  const std::string out = dir.write("results.jsonl", "{\"previous\": \"results\"}\n");
  HeldRuns held(dir);
  const pid_t bench =
      start_infercost(split_args(base_args(dir) + " --warmup 0 --repetitions 20 --out " + out), tmp,
                      dir.file("log.txt"), held.environment());
  ASSERT_GT(bench, 0);
  // The first run is held after its first batch.
  if (!held.wait(bench)) {
    stop_bench(bench);
    FAIL() << "no run was held\n" << slurp(dir.file("log.txt"));
  }
  ::kill(interrupt.to_group ? -bench : bench, interrupt.signal);
  held.release(bench);
  int status = 0;
  ASSERT_EQ(::waitpid(bench, &status, 0), bench);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status) << "\n"
                                   << slurp(dir.file("log.txt"));
  EXPECT_EQ(WTERMSIG(status), interrupt.signal);
  EXPECT_EQ(testing::count_entries(tmp), 0) << bench_folder(tmp);
  EXPECT_TRUE(temporaries_under(dir.path()).empty());
  EXPECT_EQ(slurp(out), "{\"previous\": \"results\"}\n");
}

// A signal during point 2: point 1's record is there, whole, and nothing else.
TEST_P(BenchSignals, AfterAPointKeepItsCompleteRecord) {
  const Interrupt interrupt = GetParam();
  TempDir dir;
  const std::string tmp = dir.file("tmp");
  std::filesystem::create_directory(tmp);
  const std::string out = dir.file("results.jsonl");
  HeldRuns held(dir);
  const pid_t bench = start_infercost(
      split_args(base_args(dir) + " --batching seed,tokens --warmup 0 --repetitions 3 --out " + out), tmp,
      dir.file("log.txt"), held.environment());
  ASSERT_GT(bench, 0);
  // Point 1's runs (1 to 3) go on; point 2's first (run 4) is held.
  for (int run = 1; run <= 4; ++run) {
    if (!held.wait(bench)) {
      stop_bench(bench);
      FAIL() << "run " << run << " was not held\n" << slurp(dir.file("log.txt"));
    }
    if (run < 4) held.release(bench);
  }
  EXPECT_TRUE(std::filesystem::exists(out)) << "point 1's record, written before point 2 began";
  ::kill(interrupt.to_group ? -bench : bench, interrupt.signal);
  held.release(bench);
  int status = 0;
  ASSERT_EQ(::waitpid(bench, &status, 0), bench);
  ASSERT_TRUE(WIFSIGNALED(status)) << slurp(dir.file("log.txt"));
  EXPECT_EQ(WTERMSIG(status), interrupt.signal);
  EXPECT_EQ(testing::count_entries(tmp), 0) << bench_folder(tmp);
  EXPECT_TRUE(temporaries_under(dir.path()).empty());
  const std::string text = slurp(out);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  std::vector<record::Record> records = load(out);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_TRUE(records[0].ok()) << records[0].error;
  EXPECT_EQ(records[0].point, 1);
}

INSTANTIATE_TEST_SUITE_P(Signals, BenchSignals,
                         ::testing::Values(Interrupt{SIGTERM, false}, Interrupt{SIGINT, true}),
                         [](const ::testing::TestParamInfo<Interrupt>& info) {
                           return std::string(info.param.signal == SIGTERM ? "Term" : "IntToGroup");
                         });

TEST(BenchCli, TheRecordsFileIsReplacedOnlyByAFirstRecord) {
  TempDir dir;
  const std::string out = dir.write("results.jsonl", "{\"previous\": \"results\"}\n");
  // The temporary folder cannot be made: the sweep fails before any point.
  Outcome failed = run_cli_in(dir.file("missing"), base_args(dir) + " --out " + out);
  EXPECT_NE(failed.exit_code, 0) << failed.output;
  EXPECT_NE(failed.output.find("cannot create a temporary folder"), std::string::npos) << failed.output;
  EXPECT_EQ(slurp(out), "{\"previous\": \"results\"}\n");
  EXPECT_TRUE(temporaries_under(dir.path()).empty());
  // A records file that cannot be written is refused before the data is made.
  Outcome unwritable = run_cli(base_args(dir) + " --out " + dir.file("no/such/folder/r.jsonl"));
  EXPECT_NE(unwritable.exit_code, 0) << unwritable.output;
  // A sweep that runs replaces it.
  Outcome ok = run_cli_in(dir.path(), base_args(dir) + " --warmup 0 --repetitions 1 --out " + out);
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_EQ(load(out).size(), 1u);
  EXPECT_TRUE(entries_starting(dir.path(), "infercost-bench-").empty());
}

// A run's own peak RSS (its --metrics) and the one the bench samples are the
// run's, not those of the large process that started it.
TEST(BenchCli, ARunsPeakRssIsNotItsParents) {
  TempDir dir;
  const std::string input =
      dir.write("in.jsonl", "{\"full_text\": \"good day\"}\n{\"full_text\": \"bad day\"}\n");
  constexpr size_t kBytes = size_t{200} << 20;
  std::vector<char> big(kBytes);
  std::memset(big.data(), 1, big.size());
  Result<std::string> status = read_file("/proc/self/status");
  ASSERT_TRUE(status.ok());
  Result<int64_t> parent_rss = parse_vm_rss_bytes(*status);
  ASSERT_TRUE(parent_rss.ok());
  ASSERT_GT(*parent_rss, static_cast<int64_t>(kBytes));

  ChildRun run;
  run.executable = std::string(INFERCOST_BINARY_DIR) + "/infercost";
  run.argv = {"infercost",
              "run",
              input,
              "--model",
              tiny_model(),
              "--output",
              dir.file("out/"),
              "--metrics",
              dir.file("m.json"),
              "--quiet",
              "--max-length",
              "32",
              "--threads",
              "1"};
  run.stderr_path = dir.file("err.txt");
  run.monitor_interval = 0.01;
  Result<ChildOutcome> outcome = run_child(run);
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  ASSERT_TRUE(outcome->ok()) << outcome->error;
  Result<RunMetrics> report = parse_run_metrics(slurp(dir.file("m.json")), "m.json");
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  EXPECT_GT(report->peak_rss_bytes, 0);
  EXPECT_LT(report->peak_rss_bytes, *parent_rss / 2) << "parent RSS " << *parent_rss;
  EXPECT_LT(outcome->peak_rss_bytes, *parent_rss / 2) << "parent RSS " << *parent_rss;
  EXPECT_EQ(big[kBytes / 3], 1);
}

}  // namespace
}  // namespace infercost::bench
