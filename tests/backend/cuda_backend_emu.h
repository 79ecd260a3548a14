// A stand-in GPU for running the CUDA backend (src/backend/cuda/cuda_backend.cc)
// on the CPU in CI: the CUDA runtime calls it makes and the cuBLASLt subset it
// uses, defined by cuda_backend_emu.cc and linked instead of the real
// libraries, with the kernels compiled for the kernel emulator
// (cuda_emu/cuda_emu.h). Device memory is host memory within a budget; a
// stream runs everything when it is called; cuBLASLt's matmul is a plain
// loop written from its documented semantics (column-major layouts,
// op(A) op(B), bias per row of D, then the epilogue's activation), so the
// backend's row-major mapping is checked against the contract, not against
// itself.
//
// Not emulated: graph capture (it fails, which exercises the eager
// fallback), concurrency (one thread at a time), timing.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace infercost::backend::cuda_backend_emu {

struct Device {
  std::string name = "Emulated GPU";
  int major = 8, minor = 0;
  int64_t memory_total_bytes = int64_t(1) << 30;
  // What cudaGetDeviceCount answers; with an error, the driver version
  // cudaDriverGetVersion reports (0: no driver).
  cudaError_t count_error = cudaSuccess;
  int driver_version = 13000;
  int device_count = 1;
  // The heuristic offers algorithms for the fused RELU_BIAS / GELU_BIAS
  // epilogues (false: only BIAS and DEFAULT, as if cuBLASLt had none).
  bool fused_epilogues = true;
  // Returned by every cudaStreamSynchronize from now on (a sticky error).
  cudaError_t sticky_error = cudaSuccess;
};

// The emulated device's settings; tests change them between cases.
Device& device();
// Back to the defaults, with nothing allocated (between tests).
void reset();
// Device bytes allocated now, and matmuls run since reset() (by epilogue).
int64_t allocated_bytes();
int matmuls();
int fused_matmuls();
int graph_captures_tried();

}  // namespace infercost::backend::cuda_backend_emu
