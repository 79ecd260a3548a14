// What the CPU this process runs on can do: model name, logical CPUs and the
// instruction-set extensions the CPU backend's precision choices depend on.
#pragma once

#include <string>

namespace infercost::backend {

struct CpuInfo {
  std::string model;     // e.g. "AMD EPYC 7B13"; "unknown" when not reported
  int logical_cpus = 1;  // threads this process may run on
  bool avx2 = false, fma = false;
  bool avx512f = false, avx512bw = false, avx512_vnni = false, avx512_bf16 = false;
  bool avx_vnni = false;
  bool amx_bf16 = false, amx_int8 = false;

  // True when bf16 matmuls run natively (AVX512_BF16 or AMX-BF16).
  bool native_bf16() const { return avx512_bf16 || amx_bf16; }
  // True when int8 matmuls have dot-product instructions (VNNI or AMX-INT8);
  // without them int8 still works on AVX2, at about 1.8x fp32 GEMM speed.
  bool int8_dot_product() const { return avx512_vnni || avx_vnni || amx_int8; }
  // The best of "amx", "avx512_bf16", "avx512_vnni", "avx512", "avx2", "sse".
  std::string isa() const;
};

// Detected once (cpuid, the OS's saved-state support, sched_getaffinity and
// /proc/cpuinfo) and cached.
const CpuInfo& cpu_info();

}  // namespace infercost::backend
