// The GEMM ceiling the CUDA backend's model FLOP rate is measured against:
// cuBLASLt matmuls with bf16 (or fp16) inputs, fp32 compute and bf16/fp16 or
// fp32 output, in the layout the backend uses (Y[M,N] = X[M,K] W[N,K]^T, both
// row-major: cuBLASLt "TN"), on random data. For each shape it tries the
// heuristic's first algorithms, keeps the fastest, and times `--reps` runs
// with CUDA events after `--warmup` runs, rotating among enough input sets
// that they do not sit in L2. A few outputs are checked against fp64 dot
// products of the same inputs (the output is poisoned first).
//
//   cuda_gemm_peak [--device N] [--dtype bf16|fp16] [--out half|fp32|both]
//                  [--tokens T] [--square S] [--reps N] [--warmup N]
//
// Shapes: S x S x S (default 8192) and the encoder's at T tokens (default
// 32768 = 256 rows x 128): QKV T x 2304 x 768, attention output and FFN out
// T x 768 x {768, 3072}, FFN in T x 3072 x 768. One JSON line per shape and
// output type on stdout; exit 1 with the reason on stderr when a CUDA or
// cuBLASLt call fails (also when there is no GPU).
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_util.h"

namespace {

using infercost::bench::arg_int;
using infercost::bench::arg_str;
using infercost::bench::median;

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw Failure(fmt::format("{}: {} ({})", what, cudaGetErrorString(e), cudaGetErrorName(e)));
}

void lt_check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw Failure(fmt::format("{}: cuBLASLt status {}", what, int(s)));
}

#define GEMM_CUDA(expr) cuda_check((expr), #expr)
#define GEMM_LT(expr) lt_check((expr), #expr)

// splitmix64: fast, and different for every element (never zeros, see
// METHOD.md on timing zeros).
struct Rng {
  uint64_t s;
  float uniform() {  // [-1, 1)
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return float(z >> 40) / float(1 << 23) - 1.0f;
  }
};

// Host copy of a random matrix in the input type, and its values as float.
struct HostMatrix {
  std::vector<uint16_t> bits;
  std::vector<float> values;
};

HostMatrix random_matrix(size_t n, bool bf16, uint64_t seed) {
  HostMatrix m;
  m.bits.resize(n);
  m.values.resize(n);
  Rng rng{seed};
  for (size_t i = 0; i < n; ++i) {
    const float x = rng.uniform();
    if (bf16) {
      const __nv_bfloat16 h = __float2bfloat16_rn(x);
      m.bits[i] = __nv_bfloat16_raw(h).x;
      m.values[i] = __bfloat162float(h);
    } else {
      const __half h = __float2half_rn(x);
      m.bits[i] = __half_raw(h).x;
      m.values[i] = __half2float(h);
    }
  }
  return m;
}

float half_to_float(uint16_t bits, bool bf16) {
  if (bf16) {
    __nv_bfloat16_raw raw;
    raw.x = bits;
    return __bfloat162float(__nv_bfloat16(raw));
  }
  __half_raw raw;
  raw.x = bits;
  return __half2float(__half(raw));
}

struct Shape {
  std::string name;
  int64_t m, n, k;  // Y[m,n] = X[m,k] W[n,k]^T
};

struct Result {
  double median_ms = 0, best_ms = 0;
  int algos_tried = 0;
  double max_rel_err = 0;
};

Result run_shape(cublasLtHandle_t lt, const Shape& s, bool bf16, bool out_fp32, int reps, int warmup,
                 int64_t l2_bytes) {
  const cudaDataType_t in_type = bf16 ? CUDA_R_16BF : CUDA_R_16F;
  const cudaDataType_t out_type = out_fp32 ? CUDA_R_32F : in_type;
  const size_t out_size = out_fp32 ? 4 : 2;
  const size_t x_elems = size_t(s.m) * s.k, w_elems = size_t(s.n) * s.k, y_elems = size_t(s.m) * s.n;
  const size_t set_bytes = 2 * (x_elems + w_elems) + out_size * y_elems;
  // Enough sets that one pass over them is at least 3x the L2.
  const int sets =
      int(std::clamp<int64_t>((3 * l2_bytes + int64_t(set_bytes) - 1) / int64_t(set_bytes), 1, 8));

  const HostMatrix x = random_matrix(x_elems, bf16, 1 + uint64_t(s.m) * 31 + s.k);
  const HostMatrix w = random_matrix(w_elems, bf16, 7 + uint64_t(s.n) * 17 + s.k);
  std::vector<void*> dx(sets), dw(sets), dy(sets);
  for (int i = 0; i < sets; ++i) {
    GEMM_CUDA(cudaMalloc(&dx[i], 2 * x_elems));
    GEMM_CUDA(cudaMalloc(&dw[i], 2 * w_elems));
    GEMM_CUDA(cudaMalloc(&dy[i], out_size * y_elems));
    GEMM_CUDA(cudaMemcpy(dx[i], x.bits.data(), 2 * x_elems, cudaMemcpyHostToDevice));
    GEMM_CUDA(cudaMemcpy(dw[i], w.bits.data(), 2 * w_elems, cudaMemcpyHostToDevice));
    GEMM_CUDA(cudaMemset(dy[i], 0xff, out_size * y_elems));  // NaN in every output type
  }
  const size_t workspace_bytes = size_t(32) << 20;
  void* workspace = nullptr;
  GEMM_CUDA(cudaMalloc(&workspace, workspace_bytes));

  cublasLtMatmulDesc_t desc = nullptr;
  GEMM_LT(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  GEMM_LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  GEMM_LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  // Column-major views: A = W as k x n (op T), B = X as k x m, D = Y as n x m.
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  GEMM_LT(cublasLtMatrixLayoutCreate(&la, in_type, uint64_t(s.k), uint64_t(s.n), s.k));
  GEMM_LT(cublasLtMatrixLayoutCreate(&lb, in_type, uint64_t(s.k), uint64_t(s.m), s.k));
  GEMM_LT(cublasLtMatrixLayoutCreate(&ld, out_type, uint64_t(s.n), uint64_t(s.m), s.n));
  cublasLtMatmulPreference_t pref = nullptr;
  GEMM_LT(cublasLtMatmulPreferenceCreate(&pref));
  GEMM_LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                               &workspace_bytes, sizeof workspace_bytes));
  cublasLtMatmulHeuristicResult_t heur[8];
  int found = 0;
  GEMM_LT(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, ld, ld, pref, 8, heur, &found));
  if (found == 0) throw Failure(fmt::format("{}: cuBLASLt has no algorithm for this shape", s.name));

  const float alpha = 1.0f, beta = 0.0f;
  cudaStream_t stream = nullptr;
  GEMM_CUDA(cudaStreamCreate(&stream));
  cudaEvent_t e0, e1;
  GEMM_CUDA(cudaEventCreate(&e0));
  GEMM_CUDA(cudaEventCreate(&e1));
  auto gemm = [&](const cublasLtMatmulAlgo_t& algo, int set) {
    GEMM_LT(cublasLtMatmul(lt, desc, &alpha, dw[set], la, dx[set], lb, &beta, dy[set], ld, dy[set], ld, &algo,
                           workspace, workspace_bytes, stream));
  };
  auto time_one = [&](const cublasLtMatmulAlgo_t& algo, int set) {
    GEMM_CUDA(cudaEventRecord(e0, stream));
    gemm(algo, set);
    GEMM_CUDA(cudaEventRecord(e1, stream));
    GEMM_CUDA(cudaEventSynchronize(e1));
    float ms = 0;
    GEMM_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    return double(ms);
  };

  // Pick the fastest of the heuristic's candidates on a few runs each.
  Result r;
  int best = -1;
  double best_ms = 0;
  for (int a = 0; a < found; ++a) {
    if (heur[a].state != CUBLAS_STATUS_SUCCESS) continue;
    std::vector<double> t;
    for (int i = 0; i < 2 + 5; ++i) {
      const double ms = time_one(heur[a].algo, i % sets);
      if (i >= 2) t.push_back(ms);
    }
    ++r.algos_tried;
    const double m = median(t);
    if (best < 0 || m < best_ms) {
      best = a;
      best_ms = m;
    }
  }
  if (best < 0) throw Failure(fmt::format("{}: no usable cuBLASLt algorithm", s.name));

  for (int i = 0; i < warmup; ++i) gemm(heur[best].algo, i % sets);
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) times.push_back(time_one(heur[best].algo, i % sets));
  GEMM_CUDA(cudaGetLastError());
  r.median_ms = median(times);
  r.best_ms = *std::min_element(times.begin(), times.end());

  // Every set was written (no NaN left) and sampled outputs match fp64.
  std::vector<unsigned char> y(out_size * y_elems);
  Rng pick{12345};
  for (int set = 0; set < sets; ++set) {
    GEMM_CUDA(cudaMemcpy(y.data(), dy[set], y.size(), cudaMemcpyDeviceToHost));
    for (int sample = 0; sample < 64; ++sample) {
      const size_t i = size_t((pick.uniform() + 1.0f) * 0.5f * float(s.m)) % size_t(s.m);
      const size_t j = size_t((pick.uniform() + 1.0f) * 0.5f * float(s.n)) % size_t(s.n);
      double ref = 0, mag = 0;
      for (int64_t k = 0; k < s.k; ++k) {
        const double p = double(x.values[i * s.k + k]) * double(w.values[j * s.k + k]);
        ref += p;
        mag += std::fabs(p);
      }
      float got;
      if (out_fp32) {
        std::memcpy(&got, &y[4 * (i * s.n + j)], 4);
      } else {
        uint16_t bits;
        std::memcpy(&bits, &y[2 * (i * s.n + j)], 2);
        got = half_to_float(bits, bf16);
      }
      if (!std::isfinite(got)) {
        throw Failure(
            fmt::format("{}: output ({}, {}) of set {} not written or not finite", s.name, i, j, set));
      }
      // Relative to the sum of magnitudes: the scale rounding works at.
      r.max_rel_err = std::max(r.max_rel_err, std::fabs(double(got) - ref) / std::max(mag, 1e-30));
    }
  }
  if (r.max_rel_err > 1e-2) {
    throw Failure(
        fmt::format("{}: wrong results: max error {:.3g} of the magnitude sum", s.name, r.max_rel_err));
  }

  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaStreamDestroy(stream);
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(desc);
  cudaFree(workspace);
  for (int i = 0; i < sets; ++i) {
    cudaFree(dx[i]);
    cudaFree(dw[i]);
    cudaFree(dy[i]);
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      fmt::print(
          "cuda_gemm_peak [--device N] [--dtype bf16|fp16] [--out half|fp32|both] [--tokens T] [--square S]\n"
          "               [--reps N] [--warmup N]\n"
          "cuBLASLt GEMM ceiling (fp32 compute) on random data; one JSON line per shape on stdout.\n");
      return 0;
    }
  }
  const int device = arg_int(argc, argv, "--device", 0);
  const std::string dtype = arg_str(argc, argv, "--dtype", "bf16");
  const std::string out = arg_str(argc, argv, "--out", "both");
  const int64_t tokens = arg_int(argc, argv, "--tokens", 32768);
  const int64_t square = arg_int(argc, argv, "--square", 8192);
  const int reps = std::max(1, arg_int(argc, argv, "--reps", 20));
  const int warmup = std::max(0, arg_int(argc, argv, "--warmup", 3));
  if (dtype != "bf16" && dtype != "fp16") {
    fmt::print(stderr, "--dtype: '{}' is not bf16 or fp16\n", dtype);
    return 2;
  }
  if (out != "half" && out != "fp32" && out != "both") {
    fmt::print(stderr, "--out: '{}' is not half, fp32 or both\n", out);
    return 2;
  }
  if (tokens <= 0 || square <= 0) {
    fmt::print(stderr, "--tokens and --square must be positive\n");
    return 2;
  }
  const bool bf16 = dtype == "bf16";
  std::vector<Shape> shapes;
  shapes.push_back({"square", square, square, square});
  shapes.push_back({"qkv", tokens, 2304, 768});
  shapes.push_back({"attn_out", tokens, 768, 768});
  shapes.push_back({"ffn_in", tokens, 3072, 768});
  shapes.push_back({"ffn_out", tokens, 768, 3072});
  std::vector<bool> outs;
  if (out != "fp32") outs.push_back(false);
  if (out != "half") outs.push_back(true);

  try {
    int count = 0;
    GEMM_CUDA(cudaGetDeviceCount(&count));
    if (device < 0 || device >= count) {
      throw Failure(fmt::format("--device {}: the CUDA runtime sees {} GPU(s)", device, count));
    }
    GEMM_CUDA(cudaSetDevice(device));
    cudaDeviceProp prop{};
    GEMM_CUDA(cudaGetDeviceProperties(&prop, device));
    int lt_version = int(cublasLtGetVersion());
    cublasLtHandle_t lt = nullptr;
    GEMM_LT(cublasLtCreate(&lt));
    for (const Shape& s : shapes) {
      for (bool out_fp32 : outs) {
        const Result r = run_shape(lt, s, bf16, out_fp32, reps, warmup, prop.l2CacheSize);
        const double flop = 2.0 * double(s.m) * double(s.n) * double(s.k);
        fmt::print(
            "{{\"bench\": \"cuda_gemm_peak\", \"device\": \"{}\", \"cc\": \"{}.{}\", \"cublaslt\": {}, "
            "\"shape\": \"{}\", \"M\": {}, \"N\": {}, \"K\": {}, \"in\": \"{}\", \"out\": \"{}\", "
            "\"compute\": \"fp32\", \"reps\": {}, \"median_ms\": {:.4f}, \"best_ms\": {:.4f}, "
            "\"tflops\": {:.1f}, \"tflops_best\": {:.1f}, \"algos_tried\": {}, \"max_rel_err\": {:.3g}}}\n",
            prop.name, prop.major, prop.minor, lt_version, s.name, s.m, s.n, s.k, dtype,
            out_fp32 ? "fp32" : dtype, reps, r.median_ms, r.best_ms, flop / (r.median_ms * 1e-3) / 1e12,
            flop / (r.best_ms * 1e-3) / 1e12, r.algos_tried, r.max_rel_err);
        std::fflush(stdout);
      }
    }
    cublasLtDestroy(lt);
  } catch (const Failure& e) {
    fmt::print(stderr, "cuda_gemm_peak: {}\n", e.what());
    return 1;
  }
  return 0;
}
