#include <fmt/format.h>

#include "backend/cpu/cpu_backend.h"
#include "infercost/backend/backend.h"

namespace infercost::backend {

int64_t TokenBatch::real_tokens() const {
  int64_t total = 0;
  for (int32_t len : lengths) total += len;
  return total;
}

Result<std::unique_ptr<Backend>> create_backend(const std::string& device, const BackendOptions& options) {
  if (device == "cpu") return cpu::make_cpu_backend(options);
  if (device == "cuda" || device.rfind("cuda:", 0) == 0) {
    return unsupported(fmt::format("device '{}': this build has no CUDA backend (only 'cpu')", device));
  }
  return invalid_argument(fmt::format("unknown device '{}' (available: cpu)", device));
}

}  // namespace infercost::backend
