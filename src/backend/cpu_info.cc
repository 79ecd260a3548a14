#include "backend/cpu_info.h"

#include <cpuid.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "core/threads.h"

namespace infercost::backend {
namespace {

bool bit(uint32_t reg, int n) {
  return (reg >> n) & 1u;
}

// XCR0: which register states the OS saves on context switch. An extension is
// usable only when the CPU has it and the OS enables its state.
uint64_t xgetbv0() {
  uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (uint64_t(edx) << 32) | eax;
}

std::string model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "unknown" : line.substr(start);
  }
  return "unknown";
}

CpuInfo detect() {
  CpuInfo info;
  info.model = model_name();
  info.logical_cpus = available_cpus();
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return info;
  const bool osxsave = bit(ecx, 27);
  const bool has_fma = bit(ecx, 12);
  const uint64_t xcr0 = osxsave ? xgetbv0() : 0;
  const bool ymm_state = (xcr0 & 0x6) == 0x6;           // SSE + AVX state
  const bool zmm_state = (xcr0 & 0xe6) == 0xe6;         // + opmask, ZMM hi
  const bool tile_state = (xcr0 & 0x60000) == 0x60000;  // AMX tile config + data
  if (__get_cpuid_max(0, nullptr) < 7) return info;
  uint32_t b7 = 0, c7 = 0, d7 = 0, a7 = 0;
  __cpuid_count(7, 0, a7, b7, c7, d7);
  info.avx2 = ymm_state && bit(b7, 5);
  info.fma = ymm_state && has_fma;
  info.avx512f = zmm_state && bit(b7, 16);
  info.avx512bw = info.avx512f && bit(b7, 30);
  info.avx512_vnni = info.avx512f && bit(c7, 11);
  info.amx_bf16 = tile_state && bit(d7, 22);
  info.amx_int8 = tile_state && bit(d7, 25);
  uint32_t a71 = 0, b71 = 0, c71 = 0, d71 = 0;
  __cpuid_count(7, 1, a71, b71, c71, d71);
  info.avx_vnni = ymm_state && bit(a71, 4);
  info.avx512_bf16 = info.avx512f && bit(a71, 5);
  return info;
}

}  // namespace

std::string CpuInfo::isa() const {
  if (amx_bf16 || amx_int8) return "amx";
  if (avx512_bf16) return "avx512_bf16";
  if (avx512_vnni) return "avx512_vnni";
  if (avx512f) return "avx512";
  if (avx2) return "avx2";
  return "sse";
}

const CpuInfo& cpu_info() {
  static const CpuInfo info = detect();
  return info;
}

}  // namespace infercost::backend
