// Progress of a sweep on stderr: on a terminal one line rewritten in place
// ("[point 3/12] batch 32 fp32 tokens json-3 | rep 2/3 | elapsed 1m02s |
// ~3m10s left"); elsewhere (CI, a pipe) plain lines, one per finished run.
// The time left is the mean time of the runs finished so far times the runs
// still planned.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace infercost::bench {

// "45s", "1m02s", "2h05m".
std::string format_duration(double seconds);

class Progress {
 public:
  Progress(std::FILE* out, bool terminal, int points, int runs_per_point);

  // A line of its own (the status line is cleared first and redrawn later).
  void message(const std::string& line);
  void start_point(int point, const std::string& description);
  // A run begins: a warm-up (k of n) or a timed repetition (k of at least n).
  void start_run(bool warmup, int k, int n);
  void run_finished(bool warmup, double seconds, const std::string& detail);
  // The point ended; a failed one skips the rest of its planned runs, and
  // the run that failed is not counted (neither done nor still planned).
  void end_point(const std::string& summary);
  // Redraws the status line (at most a few times a second).
  void tick();
  void finish();

 private:
  void draw();
  void clear();
  double elapsed() const;
  std::string left() const;

  std::FILE* out_;
  bool terminal_;
  int points_;
  int runs_per_point_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_{};
  int point_ = 0;
  std::string description_;
  bool warmup_ = false;
  int k_ = 0, n_ = 0;
  int runs_done_ = 0;        // over the sweep
  int runs_planned_ = 0;     // over the sweep, adjusted as points end
  int point_runs_ = 0;       // runs finished in the current point
  double runs_seconds_ = 0;  // of the runs done
  bool line_shown_ = false;
};

}  // namespace infercost::bench
