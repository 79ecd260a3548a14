// Samples a running process (a benchmark repetition) the way the study
// watched its machines: CPUs busy and resident memory from /proc, GPU memory
// and utilization from NVML where present, summarized into record::Monitor.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "backend/gpu_monitor.h"
#include "bench/nvml.h"
#include "engine/run_metrics.h"
#include "infercost/status.h"
#include "record/record.h"

namespace infercost::bench {

// utime + stime (fields 14 and 15, in clock ticks) of a /proc/<pid>/stat
// line. The command name in parentheses may hold spaces and ')'.
// kCorruption when the line is not of that form.
Result<int64_t> parse_proc_stat_cpu_ticks(std::string_view stat_line);

// A "<field>:  <n> kB" line of /proc/<pid>/status text (field "VmRSS",
// "VmHWM", ...), in bytes. kNotFound when the line is absent (a process that
// has exited and not been reaped has no Vm lines); kCorruption when it is
// not of that form.
Result<int64_t> parse_status_bytes(std::string_view status_text, std::string_view field);
// VmRSS of /proc/<pid>/status text, in bytes.
Result<int64_t> parse_vm_rss_bytes(std::string_view status_text);

// Sums samples into record::Monitor; feed it from one thread.
class MonitorAccumulator {
 public:
  explicit MonitorAccumulator(double interval_seconds) : interval_(interval_seconds) {}
  // CPUs busy over the last interval (2.0: two CPUs fully).
  void add_cpu(double cpus_busy);
  void add_rss(int64_t bytes);
  void add_gpus(const std::vector<GpuSample>& gpus);
  record::Monitor summary() const;

 private:
  double interval_;
  int64_t samples_ = 0;
  int64_t cpu_samples_ = 0, rss_samples_ = 0;
  double cpu_sum_ = 0, cpu_peak_ = 0;
  double rss_sum_ = 0;
  int64_t rss_peak_ = 0;
  backend::GpuUsageTotals gpus_;
  friend class ProcessSampler;
};

// Samples one process: call sample() every interval while it runs. Its peak
// resident memory (the largest VmHWM and VmRSS seen) is always kept; with an
// accumulator, each sample also adds CPU busy, VmRSS and, with NVML, the
// memory and utilization of the GPUs `gpus` (NVML indices). CPU busy is the
// growth of its utime + stime between two samples over the time between them
// (the first sample measures from the sampler's construction).
class ProcessSampler {
 public:
  // The time of each sample (and of the construction): the steady clock, or a
  // fake one a test moves.
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  ProcessSampler(pid_t pid, MonitorAccumulator* out, const Nvml* nvml = nullptr, std::vector<int> gpus = {},
                 Clock clock = {});
  // False when /proc/<pid> could not be read (the process is gone).
  bool sample();
  // The largest VmHWM or VmRSS sampled, in bytes; 0 before the first sample.
  int64_t peak_rss_bytes() const { return peak_rss_; }

 private:
  pid_t pid_;
  MonitorAccumulator* out_;
  const Nvml* nvml_;
  std::vector<int> gpus_;
  int64_t peak_rss_ = 0;
  int64_t last_ticks_ = 0;
  Clock clock_;
  std::chrono::steady_clock::time_point last_time_;
  double ticks_per_second_;
};

}  // namespace infercost::bench
