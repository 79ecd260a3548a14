// The CPU encoder (fp32, bf16 and int8): oneDNN GEMMs plus the fused loops in kernels.h.
#pragma once

#include <memory>

#include "backend/backend.h"

namespace infercost::backend::cpu {

// A CpuBackend with options.threads OpenMP threads (0: all hardware
// threads). Fails for precisions the CPU backend does not run.
Result<std::unique_ptr<Backend>> make_cpu_backend(const BackendOptions& options);

}  // namespace infercost::backend::cpu
