#include "backend/gpu_monitor.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "backend/backend.h"

namespace infercost::backend {

void GpuUsageTotals::add(const std::vector<GpuSample>& gpus) {
  for (const GpuSample& g : gpus) {
    Totals& t = gpus_[g.index];
    t.memory_total = g.memory_total_bytes;
    t.memory_peak = std::max(t.memory_peak, g.memory_used_bytes);
    t.memory_sum += static_cast<double>(g.memory_used_bytes);
    t.utilization_sum += g.utilization;
    t.utilization_peak = std::max(t.utilization_peak, g.utilization);
    ++t.samples;
  }
}

std::vector<GpuUsage> GpuUsageTotals::summary() const {
  std::vector<GpuUsage> out;
  for (const auto& [index, t] : gpus_) {
    GpuUsage u;
    u.index = index;
    u.memory_total_bytes = t.memory_total;
    u.memory_used_peak_bytes = t.memory_peak;
    const double n = t.samples > 0 ? static_cast<double>(t.samples) : 1;
    u.memory_used_mean_bytes = t.memory_sum / n;
    u.utilization_mean = t.utilization_sum / n;
    u.utilization_peak = t.utilization_peak;
    out.push_back(u);
  }
  return out;
}

GpuMonitor::GpuMonitor(const Nvml& nvml, std::vector<int> gpus, double interval_seconds)
    : nvml_(nvml), gpus_(std::move(gpus)), interval_(interval_seconds) {
  thread_ = std::thread([this] { loop(); });
}

GpuMonitor::~GpuMonitor() {
  stop();
}

void GpuMonitor::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void GpuMonitor::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    Result<std::vector<GpuSample>> sample = nvml_.sample(gpus_);
    if (sample.ok()) {
      totals_.add(*sample);
      ++samples_;
    } else if (error_.empty()) {
      error_ = "NVML sample failed: " + sample.status().message();
    }
    if (wake_.wait_for(lock, std::chrono::duration<double>(interval_), [this] { return stop_; })) break;
  }
}

RunGpuSampling::RunGpuSampling(const DeviceSpec& device, const std::string& nvml_library,
                               double interval_seconds)
    : device_(device), interval_(interval_seconds) {
  if (!device_.gpu()) return;
  Result<std::unique_ptr<Nvml>> loaded = Nvml::load(nvml_library.empty() ? kNvmlLibrary : nvml_library);
  if (loaded.ok()) {
    nvml_ = std::move(*loaded);
  } else {
    why_not_ = loaded.status().message();
  }
}

RunGpuSampling::~RunGpuSampling() = default;

void RunGpuSampling::start() {
  if (!nvml_ || monitor_) return;
  std::vector<int> gpus = device_gpu_indices(device_, nvml_->device_count());
  if (gpus.empty()) {
    why_not_ =
        fmt::format("NVML lists no GPU of device '{}' ({} GPUs listed)", device_.text, nvml_->device_count());
    return;
  }
  monitor_ = std::make_unique<GpuMonitor>(*nvml_, std::move(gpus), interval_);
}

GpuSampling RunGpuSampling::finish() {
  GpuSampling out;
  if (monitor_) {
    monitor_->stop();
    out.interval_seconds = interval_;
    out.samples = monitor_->samples();
    out.gpus = monitor_->usage();
    if (out.samples == 0) out.why_not = monitor_->error();
  }
  if (!why_not_.empty()) out.why_not = why_not_;
  return out;
}

}  // namespace infercost::backend
