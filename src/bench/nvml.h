// The bench's view of NVML (backend/nvml.h, which the run pipeline samples
// through too): the GPUs described as a record's hardware lists them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/nvml.h"
#include "infercost/status.h"
#include "record/record.h"

namespace infercost::bench {

using backend::device_gpu_indices;
using backend::GpuSample;

class Nvml : public backend::Nvml {
 public:
  // As backend::Nvml::load.
  static Result<std::unique_ptr<Nvml>> load(const std::string& library = backend::kNvmlLibrary);
  // Name, total memory, compute capability and driver of each GPU, by index.
  const std::vector<record::GpuInfo>& devices() const { return devices_; }

 private:
  Nvml() = default;
  std::vector<record::GpuInfo> devices_;
};

}  // namespace infercost::bench
