#include <fmt/format.h>

#include "backend/cpu/cpu_backend.h"
#include "infercost/backend/backend.h"
#include "infercost/backend/cpu_info.h"

namespace infercost::backend {

int64_t TokenBatch::real_tokens() const {
  int64_t total = 0;
  for (int32_t len : lengths) total += len;
  return total;
}

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::kFp32: return "fp32";
    case Precision::kBf16: return "bf16";
    case Precision::kInt8: return "int8";
  }
  return "?";
}

Result<Precision> parse_precision(const std::string& name) {
  for (Precision p : {Precision::kFp32, Precision::kBf16, Precision::kInt8}) {
    if (name == precision_name(p)) return p;
  }
  return invalid_argument(fmt::format("unknown precision '{}' (accepted: fp32, bf16, int8)", name));
}

Result<Precision> resolve_precision(const std::string& device, const std::string& name) {
  if (name != "auto") return parse_precision(name);
  if (device == "cpu") return cpu_info().native_bf16() ? Precision::kBf16 : Precision::kFp32;
  return Precision::kBf16;
}

Result<std::unique_ptr<Backend>> create_backend(const std::string& device, const BackendOptions& options) {
  if (device == "cpu") return cpu::make_cpu_backend(options);
  if (device == "cuda" || device.rfind("cuda:", 0) == 0) {
    return unsupported(fmt::format("device '{}': this build has no CUDA backend (only 'cpu')", device));
  }
  return invalid_argument(fmt::format("unknown device '{}' (available: cpu)", device));
}

}  // namespace infercost::backend
