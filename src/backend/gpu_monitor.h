// Samples GPUs through NVML (nvml.h) beside a run: memory used and
// utilization, summed into one GpuUsage per GPU. The run pipeline samples the
// GPUs of a CUDA run with RunGpuSampling; the bench sums its child runs'
// samples with GpuUsageTotals (sweep/monitor.h).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backend/nvml.h"
#include "infercost/gpu_usage.h"

namespace infercost::backend {

// Sums samples into one GpuUsage per GPU, by NVML index; feed it from one thread.
class GpuUsageTotals {
 public:
  void add(const std::vector<GpuSample>& gpus);
  // By index; means over each GPU's own samples.
  std::vector<GpuUsage> summary() const;

 private:
  struct Totals {
    int64_t memory_total = 0, memory_peak = 0;
    double memory_sum = 0, utilization_sum = 0, utilization_peak = 0;
    int64_t samples = 0;
  };
  std::map<int, Totals> gpus_;
};

// Samples the GPUs `gpus` (NVML indices) every `interval_seconds` on its own
// thread, from construction to stop(). `nvml` must outlive it.
class GpuMonitor {
 public:
  GpuMonitor(const Nvml& nvml, std::vector<int> gpus, double interval_seconds);
  ~GpuMonitor();
  GpuMonitor(const GpuMonitor&) = delete;
  GpuMonitor& operator=(const GpuMonitor&) = delete;

  // Idempotent; the readers below are valid after it.
  void stop();
  int64_t samples() const { return samples_; }
  std::vector<GpuUsage> usage() const { return totals_.summary(); }
  // Why the first sample failed ("NVML sample failed: ..."); empty when none did.
  const std::string& error() const { return error_; }

 private:
  void loop();

  const Nvml& nvml_;
  const std::vector<int> gpus_;
  const double interval_;
  GpuUsageTotals totals_;
  int64_t samples_ = 0;
  std::string error_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

// What a run's GPU sampling found, as RunMetrics reports it.
struct GpuSampling {
  double interval_seconds = 0;  // 0: never sampled
  int64_t samples = 0;
  std::vector<GpuUsage> gpus;
  std::string why_not;  // why the GPUs were not sampled (e.g. "NVML not available: ..."); empty otherwise
};

// The GPU sampling of one run on `device`: for a CUDA device, NVML is loaded
// from `nvml_library` (empty: libnvidia-ml.so.1) at construction, and the
// device's GPUs are sampled from start() to finish(); any other device
// samples nothing and says nothing.
class RunGpuSampling {
 public:
  RunGpuSampling(const DeviceSpec& device, const std::string& nvml_library, double interval_seconds);
  ~RunGpuSampling();
  RunGpuSampling(const RunGpuSampling&) = delete;
  RunGpuSampling& operator=(const RunGpuSampling&) = delete;

  void start();
  GpuSampling finish();

 private:
  DeviceSpec device_;
  double interval_;
  std::unique_ptr<Nvml> nvml_;
  std::string why_not_;
  std::unique_ptr<GpuMonitor> monitor_;  // destroyed (joined) before nvml_
};

}  // namespace infercost::backend
