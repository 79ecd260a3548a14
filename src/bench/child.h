// Runs one benchmark repetition as a child process and watches it: a crash,
// out-of-memory kill or timeout fails this run only, and the parent samples
// the child (its peak RSS always, CPU, memory and GPUs for a monitor) from the
// moment its exec succeeded until it exits.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/monitor.h"
#include "bench/nvml.h"
#include "infercost/status.h"

namespace infercost::bench {

struct ChildRun {
  std::string executable;         // the file executed (e.g. /proc/self/exe)
  std::vector<std::string> argv;  // argv[0] included
  std::string stderr_path;        // the child's stderr goes here; stdin and stdout are /dev/null
  double timeout_seconds = 0;     // 0: none; then SIGKILL
  double monitor_interval = 0.1;
  MonitorAccumulator* monitor = nullptr;  // null: peak RSS only
  const Nvml* nvml = nullptr;             // with `gpus`: those GPUs sampled into the monitor too
  std::vector<int> gpus;                  // NVML indices (device_gpu_indices())
  std::function<void()> tick;             // called about every monitor_interval
};

struct ChildOutcome {
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it
  bool timed_out = false;
  double seconds = 0;  // from start to exit, as the parent saw it
  // The largest VmHWM or VmRSS of /proc/<pid>/status sampled after the exec:
  // the peak of the program run, not of the parent's forked copy that
  // preceded it. 0 when it ended before the first sample.
  int64_t peak_rss_bytes = 0;
  std::string error;  // why it failed; empty when it exited with status 0
  bool ok() const { return error.empty(); }
};

// Starts the child, samples it, waits for it (killing it at the timeout).
// Only a failure to start it is an error; a child that fails is an outcome
// (one whose exec failed exits 127 with "cannot run <executable>: <why>").
// The child is tracked for the signal cleanup of core/file.h while it runs,
// gets SIGTERM when the calling thread dies, and is killed and reaped on
// every error path.
Result<ChildOutcome> run_child(const ChildRun& run);

// Why a run failed, from its stderr and end: the last "infercost: error: "
// line's message; else the exit status or signal with stderr's last line;
// timeouts say so.
std::string failure_reason(const std::string& stderr_text, int exit_code, int signal, bool timed_out,
                           double timeout_seconds);

}  // namespace infercost::bench
