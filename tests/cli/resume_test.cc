// Resumable runs, end to end: `infercost run` killed (SIGKILL) at many
// points (crash points and after random batches), resumed until done, and compared with an uninterrupted run;
// a graceful SIGTERM; refused resumes (another job, a broken checkpoint, a live run); a full disk
// (RLIMIT_FSIZE). The tiny synthetic model keeps each run short; --window-rows 64 and --checkpoint-seconds 0
// give a checkpoint after every 64 rows, so kills land between many durable steps.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "test_utils.h"

namespace infercost {
namespace {

namespace fs = std::filesystem;
using testing::slurp;
using testing::TempDir;

constexpr int kRows = 3000;
// Batches of a whole run at --window-rows 64 (one or more per window).
constexpr unsigned kBatchesPerRun = kRows / 64;

struct Exit {
  bool killed = false;  // by SIGKILL (a crash point's)
  int signal = 0;       // the signal that ended it, if one did
  int code = -1;        // exit status otherwise
  std::string output;   // stdout and stderr
};

// What a test does while the run is held at one of its INFERCOST_TEST_HOLD_AT
// points (src/core/test_point.h): called with the point's name,
// the run's pid and the path of its log (stdout and stderr); the run goes on
// when it returns.
using OnHold = std::function<void(const std::string& point, pid_t pid, const std::string& log)>;

// Waits until the file at `path` holds `text` (or the minutes of a hang have
// passed, which the caller's assertion then reports).
bool wait_for_text(const std::string& path, const std::string& text) {
  for (int i = 0; i < 600000; ++i) {
    if (slurp(path).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  return false;
}

// Runs infercost with `args`; `env` entries are added to its environment;
// `file_size_limit` > 0 sets RLIMIT_FSIZE (SIGXFSZ ignored, so writes past it
// fail with EFBIG, as on a full disk); `hold_at` (INFERCOST_TEST_HOLD_AT)
// holds the run at those points, where `on_hold` is called.
Exit run_infercost(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
                   rlim_t file_size_limit = 0, const std::string& hold_at = "", const OnHold& on_hold = {}) {
  TempDir scratch;
  const std::string log = scratch.file("log");
  std::optional<testing::HoldFifo> hold;
  std::vector<std::string> environment = env;
  if (!hold_at.empty()) {
    hold.emplace(scratch, hold_at);
    for (const std::string& e : hold->env()) environment.push_back(e);
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    for (const std::string& e : environment) ::putenv(const_cast<char*>(e.c_str()));
    if (file_size_limit > 0) {
      ::signal(SIGXFSZ, SIG_IGN);
      rlimit limit{file_size_limit, file_size_limit};
      ::setrlimit(RLIMIT_FSIZE, &limit);
    }
    const std::string binary = std::string(INFERCOST_BINARY_DIR) + "/infercost";
    std::vector<char*> argv{const_cast<char*>(binary.c_str())};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  Exit e;
  int status = 0;
  for (;;) {
    if (::waitpid(pid, &status, hold ? WNOHANG : 0) == pid) break;
    // The poll's timeout only lets the loop see the run end without a hold.
    pollfd p{hold->fd(), POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    if (const std::string point = hold->take_point(); !point.empty()) {
      if (on_hold) on_hold(point, pid, log);
      hold->release(pid);
    }
  }
  e.killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  e.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  e.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  e.output = slurp(log);
  return e;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Every file below `path` (or `path` itself) that a reader of the output
// sees: not hidden, not a job file.
std::vector<std::string> output_files(const std::string& path) {
  std::vector<std::string> out;
  if (fs::is_directory(path)) {
    for (const auto& e : fs::directory_iterator(path)) {
      const std::string name = e.path().filename().string();
      if (name[0] != '.') out.push_back(e.path().string());
    }
    std::sort(out.begin(), out.end());
  } else if (fs::exists(path)) {
    out.push_back(path);
  }
  return out;
}

// The rows of an output: JSON lines and CSV files as they are (the writers
// are deterministic), Parquet column by column as JSON lines (`infercost
// cat`), each file under its name.
std::string rows_of(const std::string& path) {
  std::string all;
  for (const std::string& f : output_files(path)) {
    all += fs::path(f).filename().string() + "\n";
    if (f.size() < 8 || f.compare(f.size() - 8, 8, ".parquet") != 0) {
      all += slurp(f);
      continue;
    }
    for (const char* column : {"text", "negative", "positive", "label"}) {
      auto o = testing::run_infercost(std::string("cat --column ") + column + " '" + f + "'");
      all += o.exit_code == 0 ? o.output : "cat failed: " + o.output;
    }
  }
  return all;
}

// "" when equal, else where they first differ (outputs are too long to print whole).
std::string first_difference(const std::string& got, const std::string& want) {
  if (got == want) return "";
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  const size_t from = i > 80 ? i - 80 : 0;
  return "they differ at byte " + std::to_string(i) + " (of " + std::to_string(got.size()) + " and " +
         std::to_string(want.size()) + "): got ..." + got.substr(from, 160) + "... want ..." +
         want.substr(from, 160) + "...";
}

// The record a finished job leaves (docs/checkpoint.md): ".infercost-job" in
// an output folder, ".<name>.infercost-job" beside an output file.
std::string record_of(const std::string& output, bool folder) {
  if (folder) return (fs::path(output) / ".infercost-job").string();
  const fs::path p(output);
  return (p.parent_path() / ("." + p.filename().string() + ".infercost-job")).string();
}

bool python_available() {
  return std::ifstream(INFERCOST_PYTHON).good();
}

// pyarrow reads every Parquet file of each of `gots` and finds the same table
// as in the same-named file of `want` (values, not bytes), all in one Python
// process; "" or what differs.
std::string pyarrow_compare(const std::string& want, const std::vector<std::string>& gots) {
  const std::string script =
      "import sys, os, pyarrow.parquet as pq, pandas\n"
      "w = sys.argv[1]\n"
      "for g in sys.argv[2:]:\n"
      "  files = sorted(f for f in os.listdir(g) if f.endswith('.parquet') and not f.startswith('.')) "
      "if os.path.isdir(g) else ['']\n"
      "  for f in files:\n"
      "    a = pq.read_table(os.path.join(w, f) if f else w)\n"
      "    b = pq.read_table(os.path.join(g, f) if f else g)\n"
      "    if not a.equals(b): print('differs:', f or g, a.num_rows, b.num_rows); sys.exit(1)\n"
      "    assert len(b.to_pandas()) == a.num_rows\n";
  TempDir scratch;
  const std::string py = scratch.write("compare.py", script);
  std::string command = std::string("\"") + INFERCOST_PYTHON + "\" " + py + " '" + want + "'";
  for (const std::string& got : gots) command += " '" + got + "'";
  auto o = testing::run_shell(command);
  return o.exit_code == 0 ? "" : o.output;
}

class ResumeTest : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    auto m = testing::run_infercost("model synth --preset tiny --seed 5 --out " + dir_->file("tiny"));
    ASSERT_EQ(m.exit_code, 0) << m.output;
    auto j = testing::run_infercost("datagen --quiet --rows " + std::to_string(kRows) + " --out " +
                                    dir_->file("in.jsonl"));
    ASSERT_EQ(j.exit_code, 0) << j.output;
    // Row groups of 400 rows: a resume skips whole groups by the footer, then rows.
    auto p =
        testing::run_infercost("datagen --quiet --rows " + std::to_string(kRows) +
                               " --shape parquet --row-group-rows 400 --out " + dir_->file("in.parquet"));
    ASSERT_EQ(p.exit_code, 0) << p.output;
    // Three JSON-lines inputs for the folder output: one part each.
    auto f = testing::run_infercost("datagen --quiet --rows " + std::to_string(kRows) +
                                    " --shape json-3 --out " + dir_->file("three"));
    ASSERT_EQ(f.exit_code, 0) << f.output;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::vector<std::string> args(const std::string& input, const std::string& output,
                                       std::vector<std::string> more = {},
                                       const std::string& window_rows = "64") {
    std::vector<std::string> a = {
        "run",     dir_->file(input), "--model",   dir_->file("tiny"),     "--output",
        output,    "--threads",       "1",         "--precision",          "fp32",
        "--quiet", "--window-rows",   window_rows, "--checkpoint-seconds", "0"};
    a.insert(a.end(), more.begin(), more.end());
    return a;
  }
  static TempDir* dir_;
};
TempDir* ResumeTest::dir_ = nullptr;

// The places a run can die, beyond random moments, with how many times each
// comes in one run at most that a kill aims at: once per window, or once per
// output file (three in a folder of parts). Aiming past what comes lets the
// run finish, and costs a round.
struct CrashPoint {
  const char* name;
  unsigned most;
};
const CrashPoint kCrashPoints[] = {
    {"output-synced", 12},      {"checkpoint-write", 12}, {"checkpoint-saved", 12}, {"parquet-footer", 3},
    {"parquet-footer-half", 3}, {"output-rename", 3},     {"part-done", 3},         {"job-finish", 1}};

struct Harness {
  int kills = 0, resumes = 0, rows_compared = 0;
  bool pyarrow_unchecked = false;  // no build/pyenv: the Parquet outputs were not read by pyarrow
};

// One output format and input: 20 kills at random moments and crash points,
// resumed until done each time, compared with an uninterrupted run.
void crash_and_resume(ResumeTest& t, const std::string& input, const std::string& output_name,
                      Harness& total) {
  TempDir work;
  const bool folder = output_name.back() == '/';
  fs::create_directories(work.file("want"));
  fs::create_directories(work.file("got"));
  const std::string want = work.file("want/" + output_name);
  Exit clean = run_infercost(ResumeTest::args(input, want));
  ASSERT_EQ(clean.code, 0) << clean.output;
  const std::string want_rows = rows_of(want);
  ASSERT_FALSE(want_rows.empty());
  ASSERT_EQ(output_files(want).size(), folder ? 3u : 1u);
  EXPECT_FALSE(fs::exists(want + ".infercost-checkpoint")) << "a finished job keeps no checkpoint";

  std::mt19937 rng(std::hash<std::string>{}(input + output_name));
  const std::string got = work.file("got/" + output_name);
  int kills = 0, rounds = 0;
  std::vector<std::string> finished;  // each round's resumed output
  while (kills < 20) {
    ++rounds;
    ASSERT_LT(rounds, 60) << "the runs keep finishing before they are killed";
    fs::remove_all(got);
    if (!folder) {
      for (const char* suffix : {".infercost-checkpoint", ".infercost-partial", ".infercost-lock"}) {
        fs::remove(got + suffix);
      }
      fs::remove(record_of(got, false));
    }
    // A few kills per round, each resumed, then a resume to the end.
    for (int k = 0; k < 6 && kills < 20; ++k) {
      std::string at;
      if (k == 0 && rounds == 1) {
        at = "batch-done:1";  // before the first checkpoint
      } else if (rng() % 2 == 0) {
        // After a batch, while the writer of this window may be anywhere
        // (within the first half of a whole run: a resumed run has less to do).
        at = "batch-done:" + std::to_string(1 + rng() % (kBatchesPerRun / 2));
      } else {
        const CrashPoint& point = kCrashPoints[rng() % std::size(kCrashPoints)];
        at = std::string(point.name) + ":" + std::to_string(1 + rng() % point.most);
      }
      Exit e = run_infercost(ResumeTest::args(input, got, {"--resume"}), {"INFERCOST_TEST_CRASH_AT=" + at});
      if (e.killed) {
        ++kills;
      } else {
        ASSERT_EQ(e.code, 0) << e.output;  // finished before the moment came
      }
    }
    Exit done = run_infercost(ResumeTest::args(input, got, {"--resume"}));
    ++total.resumes;
    ASSERT_EQ(done.code, 0) << done.output;
    ASSERT_EQ(first_difference(rows_of(got), want_rows), "")
        << "round " << rounds << ": the resumed output differs";
    // What a finished job leaves beside its output: the output and its record, nothing else.
    const std::string record = fs::path(record_of(got, folder)).filename();
    for (const auto& e : fs::directory_iterator(folder ? got : work.file("got"))) {
      const std::string name = e.path().filename().string();
      if (name == record) continue;
      EXPECT_FALSE(contains(name, ".infercost-") || contains(name, ".tmp-")) << "left behind: " << name;
    }
    EXPECT_TRUE(fs::exists(record_of(got, folder))) << "no job record";
    // Each round's output kept for pyarrow, which reads them all at the end.
    const fs::path round = work.file("round-" + std::to_string(rounds));
    const fs::path kept = round / output_name.substr(0, output_name.find('/'));  // "parts/" -> parts
    fs::create_directories(round);
    fs::rename(got, kept);
    finished.push_back(kept.string());
  }
  if (contains(output_name, "parquet")) {
    if (python_available()) {
      EXPECT_EQ(pyarrow_compare(want, finished), "");
    } else {
      total.pyarrow_unchecked = true;
    }
  }
  total.kills += kills;
  total.rows_compared += rounds * kRows;
}

// Each input and output format its own test, so that ctest -j runs them side by side.
struct KilledCase {
  const char* input;
  const char* output;
};

class KilledRunsTest : public ResumeTest, public ::testing::WithParamInterface<KilledCase> {};

TEST_P(KilledRunsTest, ResumeToTheSameOutput) {
  Harness total;
  crash_and_resume(*this, GetParam().input, GetParam().output, total);
  if (HasFatalFailure()) return;
  std::printf("crash harness: %d kills, %d resumes to the end, %d rows compared\n", total.kills,
              total.resumes, total.rows_compared);
  EXPECT_GE(total.kills, 20);
  if (total.pyarrow_unchecked) {
    GTEST_SKIP()
        << "no Python at " << INFERCOST_PYTHON
        << " (make pyenv): the resumed Parquet outputs were compared row by row, not read by pyarrow";
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryFormat, KilledRunsTest,
    ::testing::Values(KilledCase{"in.jsonl", "out.jsonl"}, KilledCase{"in.jsonl", "out.csv"},
                      KilledCase{"in.jsonl", "out.parquet"}, KilledCase{"in.parquet", "out.jsonl"},
                      KilledCase{"in.parquet", "out.csv"}, KilledCase{"in.parquet", "out.parquet"},
                      KilledCase{"three", "parts/"}),  // three JSON files -> a folder of parts
    [](const auto& info) {
      std::string name = std::string(info.param.input) + "_to_" + info.param.output;
      for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return name;
    });

TEST_F(ResumeTest, SigtermStopsAtADurableStepAndSaysHowToGoOn) {
  TempDir work;
  const std::string want = work.file("want.jsonl"), got = work.file("got.jsonl");  // (compared as bytes)
  ASSERT_EQ(run_infercost(args("in.jsonl", want, {}, "4")).code, 0);
  // SIGTERM while the run is held just after its first checkpoint: it has
  // rows left to do, and goes on only once the signal has been seen.
  bool noticed = false;
  Exit stopped = run_infercost(args("in.jsonl", got, {}, "4"), {}, 0, "checkpoint-saved:1",
                               [&](const std::string&, pid_t pid, const std::string& log) {
                                 ::kill(pid, SIGTERM);
                                 noticed = wait_for_text(log, "SIGTERM: stopping at the next durable step");
                               });
  EXPECT_TRUE(noticed) << stopped.output;
  ASSERT_FALSE(stopped.killed);
  ASSERT_EQ(stopped.code, 128 + SIGTERM) << stopped.output;
  EXPECT_TRUE(contains(stopped.output, "stopped by signal 15 (SIGTERM)")) << stopped.output;
  EXPECT_TRUE(contains(stopped.output, "rerun with --resume")) << stopped.output;
  EXPECT_TRUE(fs::exists(got + ".infercost-checkpoint"));
  EXPECT_FALSE(fs::exists(got)) << "the output appears only when complete";
  // Without --resume the run refuses to start over silently.
  Exit fresh = run_infercost(args("in.jsonl", got, {}, "4"));
  EXPECT_EQ(fresh.code, 2) << fresh.output;
  EXPECT_TRUE(contains(fresh.output, "a previous run stopped after")) << fresh.output;
  EXPECT_TRUE(contains(fresh.output, "add --resume to continue it, or --force to start over"))
      << fresh.output;
  Exit resumed = run_infercost(args("in.jsonl", got, {"--resume", "--metrics", work.file("m.json")}, "4"));
  ASSERT_EQ(resumed.code, 0) << resumed.output;
  EXPECT_EQ(slurp(got), slurp(want));
  const std::string metrics = slurp(work.file("m.json"));
  EXPECT_TRUE(contains(metrics, "\"resumed\": true")) << metrics;
  // Resuming a finished job does nothing and says so.
  Exit again = run_infercost({"run", dir_->file("in.jsonl"), "--model", dir_->file("tiny"), "--output", got,
                              "--threads", "1", "--precision", "fp32", "--resume"});
  EXPECT_EQ(again.code, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "nothing to do")) << again.output;
}

// A second Ctrl-C does not wait for the durable step: the run dies of it at
// once, and the job still resumes (from the last checkpoint saved).
TEST_F(ResumeTest, ASecondInterruptEndsTheRunAtOnce) {
  TempDir work;
  const std::string got = work.file("got.csv");
  // Held after its first checkpoint, so that it cannot reach its stop before
  // the second signal: the first is seen (the run says so), then the second.
  bool noticed = false;
  Exit e = run_infercost(args("in.jsonl", got, {}, "4"), {}, 0, "checkpoint-saved:1",
                         [&](const std::string&, pid_t pid, const std::string& log) {
                           ::kill(pid, SIGINT);
                           noticed = wait_for_text(log, "SIGINT: stopping at the next durable step");
                           ::kill(pid, SIGINT);
                         });
  EXPECT_TRUE(noticed) << e.output;
  ASSERT_EQ(e.signal, SIGINT) << "exit status " << e.code << ": " << e.output;
  EXPECT_TRUE(fs::exists(got + ".infercost-checkpoint"));
  Exit resumed = run_infercost(args("in.jsonl", got, {"--resume"}, "4"));
  EXPECT_EQ(resumed.code, 0) << resumed.output;
  EXPECT_TRUE(fs::exists(got));
}

// A checkpoint left by a run killed half-way, and the bytes of every job file.
struct Stopped {
  std::string output;
  std::map<std::string, std::string> files;
};

Stopped stop_half_way(const std::vector<std::string>& args_for_output, const std::string& output) {
  Stopped s;
  s.output = output;
  Exit e = run_infercost(args_for_output, {"INFERCOST_TEST_CRASH_AT=checkpoint-saved:10"});
  EXPECT_TRUE(e.killed) << e.output;
  for (const char* suffix : {".infercost-checkpoint", ".infercost-partial"}) {
    s.files[suffix] = slurp(output + suffix);
  }
  EXPECT_FALSE(s.files[".infercost-checkpoint"].empty());
  return s;
}

void expect_untouched(const Stopped& s) {
  for (const auto& [suffix, bytes] : s.files)
    EXPECT_EQ(slurp(s.output + suffix), bytes) << suffix << " was changed";
  EXPECT_FALSE(fs::exists(s.output));
}

TEST_F(ResumeTest, AResumeOfAnotherJobOrABrokenCheckpointIsRefusedAndTouchesNothing) {
  TempDir work;
  const std::string input = work.file("in.jsonl");
  fs::copy_file(dir_->file("in.jsonl"), input);
  const std::string out = work.file("out.csv");
  auto run_args = [&](std::vector<std::string> more) {
    std::vector<std::string> a = {"run",     input,           "--model", dir_->file("tiny"),     "--output",
                                  out,       "--threads",     "1",       "--precision",          "fp32",
                                  "--quiet", "--window-rows", "64",      "--checkpoint-seconds", "0"};
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  Stopped stopped = stop_half_way(run_args({}), out);

  Exit flag = run_infercost(run_args({"--resume", "--max-length", "128"}));
  EXPECT_EQ(flag.code, 2) << flag.output;
  EXPECT_TRUE(contains(flag.output, "--max-length: '128' now, the checkpoint's run used '512'"))
      << flag.output;
  expect_untouched(stopped);

  Exit text = run_infercost(run_args({"--resume", "--no-text"}));
  EXPECT_EQ(text.code, 2) << text.output;
  EXPECT_TRUE(contains(text.output, "--no-text")) << text.output;
  expect_untouched(stopped);

  // The head's output function and threshold change the values written.
  Exit function = run_infercost(run_args({"--resume", "--function", "sigmoid"}));
  EXPECT_EQ(function.code, 2) << function.output;
  EXPECT_TRUE(contains(function.output, "--function: 'sigmoid' now, the checkpoint's run used 'default'"))
      << function.output;
  expect_untouched(stopped);
  Exit threshold = run_infercost(run_args({"--resume", "--threshold", "0.25"}));
  EXPECT_EQ(threshold.code, 2) << threshold.output;
  EXPECT_TRUE(contains(threshold.output, "--threshold: '0.25' now, the checkpoint's run used '0.5'"))
      << threshold.output;
  expect_untouched(stopped);

  { std::ofstream(input, std::ios::app) << "{\"full_text\": \"one more row\"}\n"; }
  Exit changed = run_infercost(run_args({"--resume"}));
  EXPECT_EQ(changed.code, 2) << changed.output;
  EXPECT_TRUE(contains(changed.output, "input 1 (" + input + "): its size changed")) << changed.output;
  expect_untouched(stopped);

  // Another run holds the lock: refused, naming its PID.
  {
    const int fd = ::open((out + ".infercost-lock").c_str(), O_RDWR | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
    const std::string pid = "424242\n";
    ASSERT_EQ(::write(fd, pid.data(), pid.size()), static_cast<ssize_t>(pid.size()));
    Exit busy = run_infercost(run_args({"--resume"}));
    EXPECT_EQ(busy.code, 2) << busy.output;
    EXPECT_TRUE(contains(busy.output, "another infercost run (PID 424242) is writing this output"))
        << busy.output;
    ::close(fd);
  }

  // A truncated or garbled checkpoint: refused with a clear message, left as it is.
  const std::string checkpoint = out + ".infercost-checkpoint";
  const std::string good = slurp(checkpoint);
  for (const std::string& broken : {good.substr(0, good.size() / 2), std::string("\x01garbage")}) {
    { std::ofstream(checkpoint, std::ios::binary | std::ios::trunc) << broken; }
    Exit e = run_infercost(run_args({"--resume"}));
    EXPECT_EQ(e.code, 2) << e.output;
    EXPECT_TRUE(contains(e.output, "not a valid checkpoint")) << e.output;
    EXPECT_TRUE(contains(e.output, "--force")) << e.output;
    EXPECT_EQ(slurp(checkpoint), broken) << "the checkpoint was overwritten";
  }
  // --force starts over and finishes.
  Exit forced = run_infercost(run_args({"--force"}));
  EXPECT_EQ(forced.code, 0) << forced.output;
  EXPECT_TRUE(fs::exists(out));
  EXPECT_FALSE(fs::exists(checkpoint));
}

TEST_F(ResumeTest, AFullDiskStopsCleanlyAndTheJobResumesOnceThereIsSpace) {
  for (const char* name : {"out.jsonl", "out.parquet"}) {
    SCOPED_TRACE(name);
    TempDir work;
    fs::create_directories(work.file("want"));
    const std::string want = work.file(std::string("want/") + name), got = work.file(name);
    ASSERT_EQ(run_infercost(args("in.jsonl", want)).code, 0);
    const rlim_t limit = static_cast<rlim_t>(fs::file_size(want) / 3);
    Exit full = run_infercost(args("in.jsonl", got), {}, limit);
    ASSERT_FALSE(full.killed) << "SIGXFSZ killed it: " << full.output;
    EXPECT_EQ(full.code, 1) << full.output;
    EXPECT_TRUE(contains(full.output, "File too large")) << full.output;
    EXPECT_TRUE(contains(full.output, "rerun with --resume to continue")) << full.output;
    EXPECT_FALSE(fs::exists(got));
    EXPECT_TRUE(fs::exists(got + ".infercost-checkpoint"));
    Exit resumed = run_infercost(args("in.jsonl", got, {"--resume"}));
    ASSERT_EQ(resumed.code, 0) << resumed.output;
    EXPECT_EQ(first_difference(rows_of(got), rows_of(want)), "");
  }
}

}  // namespace
}  // namespace infercost
