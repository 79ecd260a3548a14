#include <fmt/format.h>

#include <algorithm>

#include "backend/backend.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu_info.h"
#include "core/enum_names.h"

namespace infercost::backend {

// src/backend/cuda_loader.cc
Result<std::unique_ptr<Backend>> create_cuda_backend(const BackendOptions& options);

int64_t TokenBatch::real_tokens() const {
  int64_t total = 0;
  for (int32_t len : lengths) total += len;
  return total;
}

const char* precision_name(Precision precision) {
  static constexpr const char* kNames[] = {"fp32", "bf16", "int8", "fp16"};  // Precision's order
  return enum_name(precision, kNames);
}

Result<Precision> parse_precision(const std::string& name) {
  for (Precision p : {Precision::kFp32, Precision::kBf16, Precision::kFp16, Precision::kInt8}) {
    if (name == precision_name(p)) return p;
  }
  return invalid_argument(fmt::format("unknown precision '{}' (accepted: fp32, bf16, fp16, int8)", name));
}

Result<Precision> resolve_precision(const DeviceSpec& device, const std::string& name) {
  if (name != "auto") {
    INFERCOST_ASSIGN_OR_RETURN(Precision p, parse_precision(name));
    if (p == Precision::kInt8 && !device.cpu()) {
      return unsupported("--precision int8 runs on the CPU backend only; on GPUs use bf16 or fp16");
    }
    return p;
  }
  if (device.cpu()) return cpu_info().native_bf16() ? Precision::kBf16 : Precision::kFp32;
  return Precision::kBf16;
}

Result<Precision> resolve_precision(const std::string& device, const std::string& name) {
  Result<DeviceSpec> spec = parse_device(device);
  return resolve_precision(spec.ok() ? *spec : DeviceSpec{}, name);  // not the CPU: as a GPU
}

Result<std::vector<std::string>> resolve_devices(const DeviceSpec& spec) {
  if (spec.cpu()) return std::vector<std::string>{"cpu"};
  if (!spec.gpu()) return invalid_argument(fmt::format("unknown device kind '{}'", spec.kind));
  INFERCOST_ASSIGN_OR_RETURN(std::vector<CudaDeviceInfo> gpus, cuda_devices());
  std::vector<std::string> out;
  if (spec.all) {
    for (const CudaDeviceInfo& gpu : gpus) out.push_back(fmt::format("cuda:{}", gpu.index));
    return out;
  }
  for (int index : spec.indices) {
    if (index >= int(gpus.size())) {
      return invalid_argument(fmt::format("there is no GPU cuda:{}: CUDA sees {} GPU{} (cuda:0..cuda:{})",
                                          index, gpus.size(), gpus.size() == 1 ? "" : "s", gpus.size() - 1));
    }
    out.push_back(fmt::format("cuda:{}", index));
  }
  return out;
}

Result<std::unique_ptr<Backend>> create_backend(const std::string& device, const BackendOptions& options) {
  INFERCOST_ASSIGN_OR_RETURN(DeviceSpec spec, parse_device(device));
  if (spec.cpu()) return cpu::make_cpu_backend(options);
  if (spec.gpu()) {
    if (spec.indices.size() > 1) {
      return invalid_argument(
          fmt::format("device '{}': one backend runs on one GPU; name one (cuda:N)", device));
    }
    BackendOptions one = options;
    one.device_index = spec.indices.empty() ? 0 : spec.indices[0];
    return create_cuda_backend(one);
  }
  return invalid_argument(fmt::format("unknown device '{}'", device));
}

}  // namespace infercost::backend
