// Runs one benchmark repetition as a child process and watches it: the
// child's peak RSS is exact (wait4), a crash, out-of-memory kill or timeout
// fails this run only, and the parent samples the child while it runs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "infercost/core/status.h"
#include "infercost/sweep/monitor.h"
#include "infercost/sweep/nvml.h"

namespace infercost::sweep {

struct ChildRun {
  std::string executable;         // the file executed (e.g. /proc/self/exe)
  std::vector<std::string> argv;  // argv[0] included
  std::string stderr_path;        // the child's stderr goes here; stdin and stdout are /dev/null
  double timeout_seconds = 0;     // 0: none; then SIGKILL
  double monitor_interval = 0.1;
  MonitorAccumulator* monitor = nullptr;  // null: no sampling
  const Nvml* nvml = nullptr;             // GPUs sampled too when set
  std::function<void()> tick;             // called about every monitor_interval
};

struct ChildOutcome {
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it
  bool timed_out = false;
  double seconds = 0;  // from start to exit, as the parent saw it
  int64_t peak_rss_bytes = 0;
  std::string error;  // why it failed; empty when it exited with status 0
  bool ok() const { return error.empty(); }
};

// Starts the child, samples it, waits for it (killing it at the timeout).
// Only a failure to start it is an error; a child that fails is an outcome.
Result<ChildOutcome> run_child(const ChildRun& run);

// Why a run failed, from its stderr and end: the last "infercost: error: "
// line's message; else the exit status or signal with stderr's last line;
// timeouts say so.
std::string failure_reason(const std::string& stderr_text, int exit_code, int signal, bool timed_out,
                           double timeout_seconds);

}  // namespace infercost::sweep
