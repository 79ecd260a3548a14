// GPU facts and samples from NVML, the NVIDIA driver's management library.
// libnvidia-ml.so.1 is opened at run time with dlopen, never linked: one
// build of infercost runs on machines with and without an NVIDIA driver.
// Where it is absent, load() says "NVML not available: <why>". The run
// pipeline samples its GPUs through it (gpu_monitor.h); the bench samples its
// child runs' (sweep/monitor.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/device.h"
#include "infercost/status.h"

namespace infercost::backend {

inline constexpr const char* kNvmlLibrary = "libnvidia-ml.so.1";

// One GPU at one instant. Memory is device-wide (every process), as
// nvidia-smi shows it.
struct GpuSample {
  int index = 0;
  int64_t memory_total_bytes = 0;
  int64_t memory_used_bytes = 0;
  double utilization = 0;  // 0..1: the share of the last sample period a kernel ran
};

// What NVML says of one GPU.
struct NvmlGpu {
  int index = 0;
  std::string name;
  int64_t memory_bytes = 0;
  std::string compute_capability;  // e.g. "9.0"
};

class Nvml {
 public:
  // Opens `library` and initializes NVML. kUnsupported "NVML not available:
  // <why>" when the library is missing, lacks a symbol, or the driver refuses
  // to initialize.
  static Result<std::unique_ptr<Nvml>> load(const std::string& library = kNvmlLibrary);
  virtual ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  int device_count() const { return count_; }
  const std::string& driver() const { return driver_; }
  // Name, total memory and compute capability of each GPU, by index.
  const std::vector<NvmlGpu>& gpus() const { return gpus_; }
  // Memory used and utilization of every GPU now. Thread-compatible.
  Result<std::vector<GpuSample>> sample() const;
  // The same for the GPUs of these indices only (others are skipped).
  Result<std::vector<GpuSample>> sample(const std::vector<int>& indices) const;

 protected:
  Nvml();
  // What load() does, on a fresh object (for a class that adds to this one).
  Status open(const std::string& library);

 private:
  struct Api;
  void* handle_ = nullptr;
  std::unique_ptr<Api> api_;
  int count_ = 0;
  std::string driver_;
  std::vector<NvmlGpu> gpus_;
};

// The NVML indices of the GPUs a run on `device` uses, out of `gpu_count`
// that NVML lists: none for "cpu" (or any non-GPU device); the GPUs of CUDA
// ordinals N, M for "cuda:N,M" (leaving out ordinals CUDA does not have);
// every GPU CUDA sees for "cuda" and "cuda:all". CUDA numbers the GPUs that
// CUDA_VISIBLE_DEVICES lists: where it lists NVML indices ("2,3"), cuda:N is
// its N-th entry; where it is unset (or names GPUs by UUID), cuda:N is taken
// to be NVML's GPU N (both count in PCI bus order on machines of one GPU
// model).
std::vector<int> device_gpu_indices(const DeviceSpec& device, int gpu_count);
// The same with CUDA_VISIBLE_DEVICES given (nullptr: unset).
std::vector<int> device_gpu_indices(const DeviceSpec& device, int gpu_count,
                                    const char* cuda_visible_devices);

}  // namespace infercost::backend
