#include "bench/nvml.h"

namespace infercost::bench {

Result<std::unique_ptr<Nvml>> Nvml::load(const std::string& library) {
  std::unique_ptr<Nvml> nvml(new Nvml());
  INFERCOST_RETURN_IF_ERROR(nvml->open(library));
  for (const backend::NvmlGpu& gpu : nvml->gpus()) {
    record::GpuInfo info;
    info.index = gpu.index;
    info.name = gpu.name;
    info.memory_bytes = gpu.memory_bytes;
    info.compute_capability = gpu.compute_capability;
    info.driver = nvml->driver();
    nvml->devices_.push_back(std::move(info));
  }
  return nvml;
}

}  // namespace infercost::bench
