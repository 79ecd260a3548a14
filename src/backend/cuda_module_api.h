// The one symbol the CUDA module (libinfercost_cuda.so, src/backend/cuda/)
// exports, and what the loader (src/backend/cuda_loader.cc) finds through it.
// The module is built from this same source tree by the same compiler, so C++
// objects (Backend, BackendOptions) may cross; abi and version guard against
// a module left over from another build.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend/backend.h"

// Bump when this struct or the classes passed through it change.
#define INFERCOST_CUDA_MODULE_ABI 1
#define INFERCOST_CUDA_MODULE_SYMBOL "infercost_cuda_module_v1"
#define INFERCOST_CUDA_MODULE_FILE "libinfercost_cuda.so"

extern "C" {

struct InfercostCudaModule {
  uint32_t abi;         // INFERCOST_CUDA_MODULE_ABI of the module's build
  const char* version;  // infercost::kVersion of the module's build
  // GPUs the CUDA runtime sees (>= 0), or -1 with why in err (NUL-terminated).
  int (*device_count)(char* err, size_t err_size);
  // Facts about GPU `index`: 0, or -1 with why in err. `name` gets at most
  // name_size bytes, NUL-terminated.
  int (*device_info)(int index, char* name, size_t name_size, int64_t* memory_total_bytes, int* compute_major,
                     int* compute_minor, char* err, size_t err_size);
  // A new backend on options->device_index, owned by the caller (delete it
  // through Backend's virtual destructor). Null on failure, with
  // *status_code an infercost::StatusCode value and why in err.
  infercost::backend::Backend* (*create)(const infercost::backend::BackendOptions* options, int* status_code,
                                         char* err, size_t err_size);
};

// Defined by the module; looked up with dlsym.
typedef const InfercostCudaModule* (*InfercostCudaModuleEntry)();
}
