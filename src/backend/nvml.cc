#include "backend/nvml.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <optional>

#include "backend/backend.h"

namespace infercost::backend {

// The few NVML entry points used, declared from NVML's public C API
// (nvml.h): every call returns an nvmlReturn_t, 0 on success. A named
// namespace: Nvml::Api, which has external linkage, holds these types.
namespace nvml_c {
using NvmlReturn = int;
using NvmlDevice = void*;
constexpr NvmlReturn kNvmlSuccess = 0;
struct NvmlMemory {
  unsigned long long total, free, used;
};
struct NvmlUtilization {
  unsigned int gpu, memory;
};
}  // namespace nvml_c
using nvml_c::kNvmlSuccess;
using nvml_c::NvmlDevice;
using nvml_c::NvmlMemory;
using nvml_c::NvmlReturn;
using nvml_c::NvmlUtilization;

struct Nvml::Api {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  const char* (*error_string)(NvmlReturn) = nullptr;
  NvmlReturn (*device_count)(unsigned int*) = nullptr;
  NvmlReturn (*device_by_index)(unsigned int, NvmlDevice*) = nullptr;
  NvmlReturn (*device_name)(NvmlDevice, char*, unsigned int) = nullptr;
  NvmlReturn (*memory_info)(NvmlDevice, NvmlMemory*) = nullptr;
  NvmlReturn (*utilization)(NvmlDevice, NvmlUtilization*) = nullptr;
  NvmlReturn (*driver_version)(char*, unsigned int) = nullptr;
  NvmlReturn (*compute_capability)(NvmlDevice, int*, int*) = nullptr;
  std::vector<NvmlDevice> devices;

  std::string describe(NvmlReturn code) const {
    const char* text = error_string ? error_string(code) : nullptr;
    return text ? fmt::format("{} (NVML error {})", text, code) : fmt::format("NVML error {}", code);
  }
};

namespace {

Status nvml_not_available(const std::string& why) {
  return unsupported("NVML not available: " + why);
}

template <typename F>
bool bind_nvml(void* handle, const char* name, F& out) {
  out = reinterpret_cast<F>(::dlsym(handle, name));
  return out != nullptr;
}

}  // namespace

Result<std::unique_ptr<Nvml>> Nvml::load(const std::string& library) {
  std::unique_ptr<Nvml> nvml(new Nvml());
  INFERCOST_RETURN_IF_ERROR(nvml->open(library));
  return nvml;
}

Status Nvml::open(const std::string& library) {
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return nvml_not_available(why ? why : library + ": cannot be opened");
  }
  handle_ = handle;
  api_ = std::make_unique<Api>();
  Api& a = *api_;
  const char* missing = nullptr;  // the first symbol the library lacks
  auto bind = [&](const char* name, auto& out) {
    if (!bind_nvml(handle, name, out) && missing == nullptr) missing = name;
  };
  bind("nvmlInit_v2", a.init);
  bind("nvmlShutdown", a.shutdown);
  bind("nvmlErrorString", a.error_string);
  bind("nvmlDeviceGetCount_v2", a.device_count);
  bind("nvmlDeviceGetHandleByIndex_v2", a.device_by_index);
  bind("nvmlDeviceGetName", a.device_name);
  bind("nvmlDeviceGetMemoryInfo", a.memory_info);
  bind("nvmlDeviceGetUtilizationRates", a.utilization);
  bind("nvmlSystemGetDriverVersion", a.driver_version);
  bind("nvmlDeviceGetCudaComputeCapability", a.compute_capability);
  if (missing != nullptr) {
    // The destructor must not call nvmlShutdown on a library never initialized.
    a.shutdown = nullptr;
    return nvml_not_available(fmt::format("{} has no {}", library, missing));
  }
  if (NvmlReturn r = a.init(); r != kNvmlSuccess) {
    a.shutdown = nullptr;
    return nvml_not_available("nvmlInit failed: " + a.describe(r));
  }
  unsigned int count = 0;
  if (NvmlReturn r = a.device_count(&count); r != kNvmlSuccess) {
    return nvml_not_available("nvmlDeviceGetCount failed: " + a.describe(r));
  }
  char text[96] = {0};
  if (a.driver_version(text, sizeof text) == kNvmlSuccess) driver_ = text;
  for (unsigned int i = 0; i < count; ++i) {
    NvmlDevice device = nullptr;
    if (NvmlReturn r = a.device_by_index(i, &device); r != kNvmlSuccess) {
      return nvml_not_available(fmt::format("nvmlDeviceGetHandleByIndex({}) failed: {}", i, a.describe(r)));
    }
    a.devices.push_back(device);
    NvmlGpu info;
    info.index = static_cast<int>(i);
    char name[96] = {0};
    if (a.device_name(device, name, sizeof name) == kNvmlSuccess) info.name = name;
    NvmlMemory memory{};
    if (a.memory_info(device, &memory) == kNvmlSuccess)
      info.memory_bytes = static_cast<int64_t>(memory.total);
    int major = 0, minor = 0;
    if (a.compute_capability(device, &major, &minor) == kNvmlSuccess) {
      info.compute_capability = fmt::format("{}.{}", major, minor);
    }
    gpus_.push_back(std::move(info));
  }
  count_ = static_cast<int>(count);
  return Status();
}

Nvml::Nvml() = default;

Nvml::~Nvml() {
  if (api_ && api_->shutdown) api_->shutdown();
  if (handle_) ::dlclose(handle_);
}

Result<std::vector<GpuSample>> Nvml::sample() const {
  std::vector<int> all(api_->devices.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  return sample(all);
}

Result<std::vector<GpuSample>> Nvml::sample(const std::vector<int>& indices) const {
  std::vector<GpuSample> out;
  std::string first_error;
  for (int index : indices) {
    if (index < 0 || static_cast<size_t>(index) >= api_->devices.size()) continue;
    const size_t i = static_cast<size_t>(index);
    GpuSample s;
    s.index = static_cast<int>(i);
    NvmlMemory memory{};
    NvmlReturn r = api_->memory_info(api_->devices[i], &memory);
    if (r != kNvmlSuccess) {
      if (first_error.empty()) first_error = fmt::format("GPU {}: memory: {}", i, api_->describe(r));
      continue;
    }
    s.memory_total_bytes = static_cast<int64_t>(memory.total);
    s.memory_used_bytes = static_cast<int64_t>(memory.used);
    // Utilization is not reported for some devices (e.g. MIG instances): 0 then.
    NvmlUtilization utilization{};
    if (api_->utilization(api_->devices[i], &utilization) == kNvmlSuccess)
      s.utilization = utilization.gpu / 100.0;
    out.push_back(s);
  }
  if (out.empty() && !first_error.empty()) return io_error("NVML sample failed: " + first_error);
  return out;
}

namespace {

// The NVML indices CUDA_VISIBLE_DEVICES makes CUDA's ordinals 0, 1, ...: the
// leading whole numbers below gpu_count (CUDA ignores the rest from the first
// entry it cannot use). nullopt where it is unset or names GPUs by UUID (the
// ordinals are then taken to be NVML's).
std::optional<std::vector<int>> cuda_visible_gpus(const char* cuda_visible_devices, int gpu_count) {
  if (cuda_visible_devices == nullptr) return std::nullopt;
  std::vector<int> out;
  const std::string_view all(cuda_visible_devices);
  size_t at = 0;
  while (at <= all.size() && !all.empty()) {
    size_t end = all.find(',', at);
    if (end == std::string_view::npos) end = all.size();
    std::string_view entry = all.substr(at, end - at);
    while (!entry.empty() && entry.front() == ' ') entry.remove_prefix(1);
    while (!entry.empty() && entry.back() == ' ') entry.remove_suffix(1);
    if (entry.rfind("GPU-", 0) == 0 || entry.rfind("MIG-", 0) == 0) return std::nullopt;
    int n = -1;
    auto [ptr, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), n);
    if (entry.empty() || ec != std::errc() || ptr != entry.data() + entry.size() || n < 0 || n >= gpu_count ||
        std::find(out.begin(), out.end(), n) != out.end()) {
      break;
    }
    out.push_back(n);
    at = end + 1;
  }
  return out;
}

}  // namespace

std::vector<int> device_gpu_indices(const DeviceSpec& device, int gpu_count) {
  return device_gpu_indices(device, gpu_count, std::getenv("CUDA_VISIBLE_DEVICES"));
}

std::vector<int> device_gpu_indices(const DeviceSpec& device, int gpu_count,
                                    const char* cuda_visible_devices) {
  std::vector<int> out;
  if (!device.gpu()) return out;
  std::vector<int> nvml;  // NVML's index of each CUDA ordinal
  if (std::optional<std::vector<int>> visible = cuda_visible_gpus(cuda_visible_devices, gpu_count)) {
    nvml = std::move(*visible);
  } else {
    for (int i = 0; i < gpu_count; ++i) nvml.push_back(i);
  }
  if (device.all) return nvml;
  for (int n : device.indices) {
    if (n < static_cast<int>(nvml.size())) out.push_back(nvml[static_cast<size_t>(n)]);
  }
  return out;
}

}  // namespace infercost::backend
