// One line of progress on a terminal (stderr), redrawn a few times a second
// from a thread of its own while long work runs, and erased when it ends, so
// the summary that follows starts on a clean line. Nothing at all when stderr
// is not a terminal or the user asked for quiet.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace infercost::run {
struct RunProgress;
}

namespace infercost::cli {

class ProgressLine {
 public:
  // The line's text, made on the drawing thread: read only what is safe to
  // read from another thread (atomics).
  using Render = std::function<std::string()>;

  // Draws nothing for the first `delay_s` seconds (short work stays silent),
  // then every `interval_s`. `enabled` false: draws nothing, starts no thread.
  ProgressLine(bool enabled, Render render, double delay_s = 0.5, double interval_s = 0.25);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Stops drawing and erases the line if one was drawn; safe to call twice.
  void stop();

  // Writes `text` (whole lines) to stderr above the progress line, which is
  // drawn again at the next tick; from any thread.
  void print(const std::string& text);

  // stderr is a terminal and `quiet` is off.
  static bool wanted(bool quiet);

 private:
  void loop(double delay_s, double interval_s);

  Render render_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool drawn_ = false;
  std::thread thread_;
};

// Rates and durations for progress lines: "171", "2,345", "9.5"; "1h 36m", "42s".
std::string progress_rate(double per_second);
std::string progress_duration(double seconds);

// "<done> of <total> rows (p%)" when the total is known, "<done> rows (~p%)"
// when it is estimated (expected > 0), else "<done> rows"; then the time left
// at the rate so far, rows/s and (tokens_done > 0) tokens/s.
// `done_before`: of `done`, those an earlier run did (not in the rates).
std::string progress_text(const std::string& what, int64_t done, double expected, bool expected_is_exact,
                          double seconds, int64_t tokens_done, int64_t done_before = 0);

// The line of `infercost run` and `demo`: "infercost: loading the model..."
// until rows flow, then the rows done (classified, or null / skipped) of the
// rows the inputs hold (Parquet footers) or are estimated to hold (from the
// bytes a row has taken so far), rows/s and tokens/s since the rows started
// to flow, and the time left at that rate.
std::string run_progress_text(const RunProgress& p);

}  // namespace infercost::cli
