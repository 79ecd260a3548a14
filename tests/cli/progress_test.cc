// The progress line of `run`, `datagen` and `plan`, seen as a user sees it:
// the command runs under a pseudo-terminal (forkpty) and the test reads what
// the terminal received.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "test_utils.h"

namespace infercost {
namespace {

using testing::TempDir;

struct Terminal {
  int exit_code = -1;
  std::string screen;  // every byte the terminal received, stdout and stderr together
};

// How many times a line was drawn and ended with the erase-to-end sequence.
size_t count_erases(const std::string& screen) {
  size_t n = 0;
  for (size_t at = screen.find("\033[K"); at != std::string::npos; at = screen.find("\033[K", at + 1)) ++n;
  return n;
}

// Runs `infercost args...` with its stdin, stdout and stderr on a new
// pseudo-terminal of 120 columns and collects what it writes. With `hold_at`
// (INFERCOST_TEST_HOLD_AT, src/core/test_point.h) the run is
// held at each of those points until the line has been drawn twice more (the
// first may have been made just before the hold), so the lines show the run
// at those moments whatever the machine's speed.
Terminal run_on_terminal(const std::vector<std::string>& args, const std::string& hold_at = "") {
  Terminal t;
  TempDir scratch;
  std::optional<testing::HoldFifo> hold;
  if (!hold_at.empty()) hold.emplace(scratch, hold_at);
  winsize size{};
  size.ws_col = 120;
  size.ws_row = 40;
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, &size);
  if (pid < 0) return t;
  if (pid == 0) {
    static std::vector<std::string> env;  // putenv keeps the pointers
    if (hold) env = hold->env();
    for (const std::string& e : env) ::putenv(const_cast<char*>(e.c_str()));
    const std::string binary = std::string(INFERCOST_BINARY_DIR) + "/infercost";
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(binary.c_str()));
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  size_t lines_at_hold = std::string::npos;  // the lines drawn when the run was held
  char buf[4096];
  for (;;) {
    pollfd p[2] = {{master, POLLIN, 0}, {hold ? hold->fd() : -1, POLLIN, 0}};
    // The FIFO only until the run is held (then its writer has gone: POLLHUP).
    if (::poll(p, hold && lines_at_hold == std::string::npos ? 2 : 1, -1) < 0) break;
    if (p[0].revents & (POLLIN | POLLHUP)) {
      const ssize_t n = ::read(master, buf, sizeof buf);
      if (n <= 0) break;  // EIO: the child closed the terminal
      t.screen.append(buf, static_cast<size_t>(n));
    }
    if (hold && lines_at_hold == std::string::npos && (p[1].revents & POLLIN) &&
        !hold->take_point().empty()) {
      lines_at_hold = count_erases(t.screen);
    }
    if (lines_at_hold != std::string::npos && count_erases(t.screen) >= lines_at_hold + 2) {
      hold->release(pid);
      lines_at_hold = std::string::npos;
    }
  }
  ::close(master);
  int status = 0;
  ::waitpid(pid, &status, 0);
  t.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return t;
}

// The progress lines drawn: each text between a "\r" and the erase-to-end
// sequence that ends it (the terminal turns "\n" into "\r\n": those are not
// lines drawn in place).
std::vector<std::string> drawn_lines(const std::string& screen) {
  std::vector<std::string> lines;
  for (size_t end = screen.find("\033[K"); end != std::string::npos; end = screen.find("\033[K", end + 1)) {
    const size_t start = screen.rfind('\r', end);
    if (start == std::string::npos || end == start + 1) continue;
    const std::string line = screen.substr(start + 1, end - start - 1);
    if (line.find('\n') == std::string::npos) lines.push_back(line);
  }
  return lines;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

class ProgressTest : public ::testing::Test {
 protected:
  // A tiny model and inputs of a few hundred batches; the runs are held at
  // three batches (kHolds), so that the line is drawn at three moments of
  // the run whatever the machine's speed.
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const auto made =
        testing::run_infercost("model synth --preset tiny --seed 3 --out " + dir_->file("tiny"));
    ASSERT_EQ(made.exit_code, 0) << made.output;
    const auto jsonl = testing::run_infercost("datagen --quiet --rows 60000 --out " + dir_->file("in.jsonl"));
    ASSERT_EQ(jsonl.exit_code, 0) << jsonl.output;
    const auto parquet = testing::run_infercost("datagen --quiet --rows 60000 --shape parquet-10 --out " +
                                                dir_->file("parts"));
    ASSERT_EQ(parquet.exit_code, 0) << parquet.output;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::vector<std::string> run_args(const std::string& input, const std::string& output) {
    return {"run", dir_->file(input), "--model", dir_->file("tiny"), "--output", output, "--threads",
            "1",   "--precision",     "fp32",    "--max-length",     "128"};
  }
  static TempDir* dir_;
};
TempDir* ProgressTest::dir_ = nullptr;

constexpr const char* kHolds = "batch-done:2,batch-done:60,batch-done:120";

// Checks the lines a run drew: several updates, rows growing, rates and the
// time left; the last update erased before the summary.
void expect_run_progress(const Terminal& t, const std::string& of_total) {
  ASSERT_EQ(t.exit_code, 0) << t.screen;
  const std::vector<std::string> lines = drawn_lines(t.screen);
  std::vector<std::string> rows_lines;
  for (const std::string& l : lines) {
    if (contains(l, "rows/s")) rows_lines.push_back(l);
  }
  ASSERT_GE(rows_lines.size(), 3u) << "expected the line drawn at each hold:\n" << t.screen;
  for (const std::string& l : rows_lines) {
    EXPECT_TRUE(contains(l, "infercost: ")) << l;
    EXPECT_TRUE(contains(l, "tokens/s")) << l;
    EXPECT_TRUE(contains(l, " left")) << l;
    EXPECT_TRUE(contains(l, of_total)) << l;
    EXPECT_LE(l.size(), 119u) << "longer than the terminal: it would wrap";
  }
  EXPECT_NE(rows_lines.front(), rows_lines.back()) << "the count never moved";
  // The summary starts on a clean line: the progress is erased just before it.
  const size_t erase = t.screen.rfind("\r\033[K");
  ASSERT_NE(erase, std::string::npos);
  const std::string after = t.screen.substr(erase + 4);
  EXPECT_FALSE(contains(after, "left")) << "a progress line is left on the screen:\n" << after;
  EXPECT_TRUE(contains(after, "padding efficiency")) << after;
}

TEST_F(ProgressTest, RunShowsRowsRatesAndTimeLeftOfAnEstimatedTotal) {
  TempDir work;
  const Terminal t = run_on_terminal(run_args("in.jsonl", work.file("out.csv")), kHolds);
  // JSON lines state no row count: the share of the input is estimated.
  expect_run_progress(t, " rows (~");
  // The synthetic-model note is printed whole on its own line, not into the progress line.
  EXPECT_TRUE(contains(t.screen, "its speed is real, its sentiments are not.\r\n")) << t.screen;
}

TEST_F(ProgressTest, RunCountsRowsOfTheTotalParquetFootersGive) {
  TempDir work;
  const Terminal t = run_on_terminal(run_args("parts", work.file("out/")), kHolds);
  expect_run_progress(t, " of 60,000 rows (");
}

TEST_F(ProgressTest, QuietAndNonTerminalRunsDrawNothing) {
  TempDir work;
  std::vector<std::string> quiet = run_args("in.jsonl", work.file("q.csv"));
  quiet.push_back("--quiet");
  const Terminal t = run_on_terminal(quiet);
  ASSERT_EQ(t.exit_code, 0) << t.screen;
  // --quiet: no line and no summary; only the synthetic-model note, which every run on such a model prints.
  EXPECT_FALSE(contains(t.screen, "\033[K")) << t.screen;
  EXPECT_FALSE(contains(t.screen, "rows/s")) << t.screen;
  EXPECT_TRUE(contains(t.screen, "its speed is real")) << t.screen;
  // Not a terminal: the summary only, no line drawn.
  std::string command;
  for (const std::string& a : run_args("in.jsonl", work.file("p.csv"))) command += " '" + a + "'";
  const auto piped = testing::run_infercost(command.substr(1));
  ASSERT_EQ(piped.exit_code, 0) << piped.output;
  EXPECT_FALSE(contains(piped.output, "\r")) << piped.output;
  EXPECT_FALSE(contains(piped.output, "left")) << piped.output;
  EXPECT_TRUE(contains(piped.output, "padding efficiency")) << piped.output;
}

// At least one line starting with `prefix` was drawn, and each holds every part.
void expect_lines_hold(const std::string& screen, const std::string& prefix,
                       const std::vector<std::string>& parts) {
  int seen = 0;
  for (const std::string& l : drawn_lines(screen)) {
    if (!contains(l, prefix)) continue;
    ++seen;
    for (const std::string& part : parts) EXPECT_TRUE(contains(l, part)) << l;
  }
  EXPECT_GE(seen, 1) << "no '" << prefix << "' line drawn:\n" << screen;
}

TEST_F(ProgressTest, DatagenShowsRowsOfItsTotalAndPlanItsScan) {
  TempDir work;
  // Held at its second progress update: the line is drawn there.
  const Terminal t =
      run_on_terminal({"datagen", "--rows", "100000", "--out", work.file("big.jsonl")}, "datagen-progress:2");
  ASSERT_EQ(t.exit_code, 0) << t.screen;
  expect_lines_hold(t.screen, "datagen: ", {" of 100,000 rows (", " left"});
  EXPECT_TRUE(contains(t.screen, "datagen: wrote 100000 rows")) << t.screen;
  const Terminal quiet =
      run_on_terminal({"datagen", "--quiet", "--rows", "10", "--out", work.file("q.jsonl")});
  EXPECT_EQ(quiet.exit_code, 0);
  EXPECT_EQ(quiet.screen, "");

  // plan tokenizes the whole input without classifying it: its line counts
  // the rows scanned, of an estimated total (JSON lines).
  const Terminal plan =
      run_on_terminal({"plan", work.file("big.jsonl"), "--model", dir_->file("tiny")}, "scan-progress:2");
  ASSERT_EQ(plan.exit_code, 0) << plan.screen;
  expect_lines_hold(plan.screen, "scanning: ", {" rows (~", " rows/s"});
  EXPECT_TRUE(contains(plan.screen, "infercost plan: a dry run")) << plan.screen;
}

}  // namespace
}  // namespace infercost
