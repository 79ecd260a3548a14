// The CUDA runtime calls the kernel tests make, for the emulated build: memory
// is host memory, a stream is a name, and launches (cuda_emu.h) have finished
// when they return. Linked instead of the real runtime, never beside it.
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>

#include "cuda_emu.h"

namespace cuda_emu {
namespace {
thread_local cudaError_t last_error = cudaSuccess;
}  // namespace

void set_launch_error(cudaError_t error) {
  last_error = error;
}

bool accepts_launch(cudaStream_t) {
  return true;  // one device
}
}  // namespace cuda_emu

extern "C" {

cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaGetLastError() {
  const cudaError_t e = cuda_emu::last_error;
  cuda_emu::last_error = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError() {
  return cuda_emu::last_error;
}

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    default: return "emulated CUDA error";
  }
}

cudaError_t cudaMalloc(void** ptr, size_t size) {
  // 256-byte aligned, as cudaMalloc's allocations are.
  *ptr = std::aligned_alloc(256, (size + 255) / 256 * 256 + 256);
  return *ptr ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaFree(void* ptr) {
  std::free(ptr);
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind) {
  if (count) std::memcpy(dst, src, count);
  return cudaSuccess;
}

cudaError_t cudaMemset(void* ptr, int value, size_t count) {
  std::memset(ptr, value, count);
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int) {
  static char streams;
  *stream = reinterpret_cast<cudaStream_t>(&streams);
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t) {
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t) {
  return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize() {
  return cudaSuccess;
}

}  // extern "C"
