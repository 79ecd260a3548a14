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
// Graph capture records the kernels, matmuls and copies enqueued on the
// capturing stream and a graph launch replays them. As on a GPU, a call that
// CUDA forbids while the calling thread captures (allocating or freeing
// memory, asking for free memory, synchronizing) invalidates the capture and
// fails; the emulator counts those, and heuristic queries made during a
// capture, so tests can require none. A stream belongs to the device that
// was current on the thread that made it, and work on it while another
// device is current fails (a thread's current device starts at 0, as in
// CUDA). It also checks cuBLASLt's alignment assumption (operands and bias
// 256-byte aligned, the preference's default) and counts live handles,
// descriptors, streams, graphs and pinned buffers for leak checks.
//
// Not emulated: concurrency (threads may take turns, never overlap), timing.
#pragma once

#include <cublasLt.h>
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
  // The state the heuristic writes into its result for a fused epilogue
  // while the call itself succeeds: anything but success means the
  // algorithm must not be used (its matmul fails).
  cublasStatus_t fused_result_state = CUBLAS_STATUS_SUCCESS;
  // Returned by every cudaStreamSynchronize from now on (a sticky error).
  cudaError_t sticky_error = cudaSuccess;
  // >= 0: sticky_error becomes cudaErrorIllegalAddress after this many
  // successful cudaStreamSynchronize calls (a GPU that fails mid-run).
  int64_t sticky_after_syncs = -1;
  // cudaStreamBeginCapture fails (cudaErrorNotSupported), as it may on a GPU.
  bool graph_capture_fails = false;
};

// The emulated device's settings; tests change them between cases.
Device& device();
// Back to the defaults and the counters to zero (between tests; what is
// allocated stays counted).
void reset();
// Device bytes allocated now, and matmuls run since reset() (by epilogue).
int64_t allocated_bytes();
int matmuls();
int fused_matmuls();
// Graph captures begun (or refused, with graph_capture_fails), graphs
// launched, calls CUDA forbids during a capture that were made during one,
// and heuristic queries made during a capture (the backend chooses its
// algorithms before it captures).
int graph_captures_tried();
int graph_launches();
int unsafe_calls_during_capture();
int heuristics_during_capture();

// What is alive now, for leak checks.
struct Live {
  int handles = 0, descs = 0, layouts = 0, preferences = 0;
  int streams = 0, graphs = 0, graph_execs = 0, pinned = 0;
  bool none() const {
    return handles + descs + layouts + preferences + streams + graphs + graph_execs + pinned == 0;
  }
};
Live live();

}  // namespace infercost::backend::cuda_backend_emu
