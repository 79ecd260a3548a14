// What one GPU did while a run ran, summed from NVML samples: the figures an
// `infercost run` reports in its metrics and `infercost bench` in a record's
// monitor. Memory is device-wide (every process, as nvidia-smi shows it).
#pragma once

#include <cstdint>

namespace infercost {

struct GpuUsage {
  int index = 0;  // NVML index
  int64_t memory_total_bytes = 0;
  int64_t memory_used_peak_bytes = 0;
  double memory_used_mean_bytes = 0;
  double utilization_mean = 0;  // 0..1, NVML GPU utilization
  double utilization_peak = 0;

  bool operator==(const GpuUsage&) const = default;
};

// Calls f(name, member) for each figure of `u` (a GpuUsage, const or not), in
// the order the JSON lists them: the one list of their JSON names, for the
// writers and readers of the run metrics and of the benchmark records.
template <typename Usage, typename F>
void for_each_gpu_usage_field(Usage& u, F&& f) {
  f("index", u.index);
  f("memory_total_bytes", u.memory_total_bytes);
  f("memory_used_peak_bytes", u.memory_used_peak_bytes);
  f("memory_used_mean_bytes", u.memory_used_mean_bytes);
  f("utilization_mean", u.utilization_mean);
  f("utilization_peak", u.utilization_peak);
}

}  // namespace infercost
