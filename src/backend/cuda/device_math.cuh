// The device-side arithmetic the kernels of kernels.cu share: conversions
// of the storage types to and from fp32, vector loads and stores, warp
// reductions, activations, the storage-type dispatch and grid sizing. Only
// kernels.cu includes it (its helpers are internal to that file); it holds
// no kernel launch, so the CPU emulator (tests/backend/cuda_emu) compiles it
// as written.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>

#include "backend/cuda/kernels.h"

namespace infercost::backend::cuda {
namespace {

constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ float to_float(float x) {
  return x;
}
__device__ __forceinline__ float to_float(__half x) {
  return __half2float(x);
}
__device__ __forceinline__ float to_float(__nv_bfloat16 x) {
  return __bfloat162float(x);
}

template <typename T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// N consecutive elements moved as one aligned access (16 bytes for the
// vectorized paths, 2 elements for attention's pairs).
template <typename T, int N>
struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

template <typename T, int N>
__device__ __forceinline__ void load_vec(const T* p, float (&out)[N]) {
  const Vec<T, N> t = *reinterpret_cast<const Vec<T, N>*>(p);
#pragma unroll
  for (int j = 0; j < N; ++j) out[j] = to_float(t.v[j]);
}

template <typename T, int N>
__device__ __forceinline__ void store_vec(T* p, const float (&in)[N]) {
  Vec<T, N> t;
#pragma unroll
  for (int j = 0; j < N; ++j) t.v[j] = from_float<T>(in[j]);
  *reinterpret_cast<Vec<T, N>*>(p) = t;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(kFullMask, v, o));
  return v;
}

__device__ __forceinline__ float apply_act(Act act, float x) {
  switch (act) {
    case Act::kGelu: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case Act::kRelu: return x > 0.0f ? x : 0.0f;
    case Act::kTanh: return tanhf(x);
    case Act::kNone: break;
  }
  return x;
}

template <typename T>
struct Tag {
  using type = T;
};

// Calls f(Tag<T>{}) for the storage type of `t`.
template <typename F>
cudaError_t dispatch(DType t, F&& f) {
  switch (t) {
    case DType::kF32: return f(Tag<float>{});
    case DType::kF16: return f(Tag<__half>{});
    case DType::kBF16: return f(Tag<__nv_bfloat16>{});
  }
  return cudaErrorInvalidValue;
}

bool aligned(const void* p, size_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

// Blocks for a grid-stride loop over n items: enough to fill any current GPU,
// few enough that each thread does several items on large n.
unsigned grid_for(int64_t n, int threads) {
  constexpr int64_t kMaxBlocks = 8192;
  const int64_t blocks = (n + threads - 1) / threads;
  return static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

constexpr int kThreads = 256;

}  // namespace
}  // namespace infercost::backend::cuda
