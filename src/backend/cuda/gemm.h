// The CUDA backend's linear layers: one cuBLASLt operation per layer
// (LinearOp) and the handle, workspace and chosen algorithms that run them
// (Gemm).
#pragma once

#include <cublasLt.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "backend/cuda/device_weights.h"
#include "backend/cuda/runtime.h"

namespace infercost::backend::cuda {

// ---- GEMMs -------------------------------------------------------------------

// One linear layer's cuBLASLt operation on this backend. Row-major
// Y[rows, out] = X[rows, in] W^T + b is, read column-major (a row-major
// [r, c] matrix is a column-major [c, r] one with leading dimension c), the
// column-major product Y^T[out, rows] = W[out, in] X^T[in, rows]. W's
// row-major storage is the column-major [in, out] matrix W^T, so A = that
// storage with TRANSA = T (op(A) = W, m = out, k = in, lda = in); B = X's
// storage, the column-major [in, rows] X^T, with TRANSB = N (n = rows,
// ldb = in); D = Y's storage, column-major [out, rows], ldd = out. The bias
// epilogue adds b[i] to row i of D, i.e. to output feature i of every token.
struct LinearOp {
  DeviceLinear w;
  Act act = Act::kNone;  // after the bias: in the epilogue where fused_act, else activation_inplace
  bool fused_act = false;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;  // of desc
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatmulDesc_t fallback_desc = nullptr;  // bias only, where fused_act (if no fused algorithm)
  std::string name;

  LinearOp() = default;
  LinearOp(const LinearOp&) = delete;
  LinearOp& operator=(const LinearOp&) = delete;
  ~LinearOp() {
    if (desc) cublasLtMatmulDescDestroy(desc);
    if (fallback_desc) cublasLtMatmulDescDestroy(fallback_desc);
  }
};

// Encoder linear ops: bias always in the epilogue; GELU fused for fp16/bf16
// only (cuBLASLt's GELU is the tanh approximation, within ~5e-4 of the exact
// erf GELU: below those types' rounding, not below the fp32 parity target),
// ReLU fused in every type.
std::unique_ptr<LinearOp> make_linear_op(const DeviceLinear& w, Act act, std::string name);

// The head's ops: a plain product; the caller adds the bias and applies the
// activation with bias_act_f32 (cuBLASLt has no tanh epilogue).
std::unique_ptr<LinearOp> make_head_op(const DeviceLinear& w, std::string name);

// How many (operation shape, rows) algorithms a backend keeps before it
// starts over. A macro so that the emulated tests can make it small.
#ifndef INFERCOST_CUDA_MAX_PLANS
#define INFERCOST_CUDA_MAX_PLANS 1024
#endif

// A cuBLASLt handle, a workspace and the algorithm chosen for each
// (operation shape, rows): packed batches vary their row count, so the
// heuristic runs once per new count and the answer is kept.
class Gemm {
 public:
  static constexpr size_t kWorkspaceBytes = size_t(32) << 20;
  static constexpr size_t kMaxPlans = INFERCOST_CUDA_MAX_PLANS;

  Gemm() {
    try {
      INFERCOST_CUBLASLT_CHECK(cublasLtCreate(&handle_));
      INFERCOST_CUDA_CHECK(cudaMalloc(&workspace_, kWorkspaceBytes));
      INFERCOST_CUBLASLT_CHECK(cublasLtMatmulPreferenceCreate(&preference_));
      const uint64_t ws = kWorkspaceBytes;
      INFERCOST_CUBLASLT_CHECK(cublasLtMatmulPreferenceSetAttribute(
          preference_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    } catch (...) {
      release();  // no destructor runs for a constructor that throws
      throw;
    }
  }
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;
  ~Gemm() { release(); }

  // Makes room for `n` new algorithms without dropping any while a graph is
  // captured: the capture may then only find algorithms, never choose one.
  void make_room(size_t n) {
    if (plans_.size() + n > kMaxPlans) clear_plans();
  }
  // Chooses (or finds) the algorithm for `op` on `rows` rows, host-side only.
  void warm(const LinearOp& op, int64_t rows) { (void)plan(op, rows); }

  // y[rows, out] = act(x[rows, in] W^T + b), all in op.w.type; x and y must
  // not overlap. Enqueues only.
  void run(const LinearOp& op, const void* x, int64_t rows, void* y, cudaStream_t stream) {
    const Plan& p = plan(op, rows);
    const float alpha = 1.0f, beta = 0.0f;
    const cublasLtMatmulDesc_t desc = p.primary ? op.desc : op.fallback_desc;
    INFERCOST_CUBLASLT_CHECK(cublasLtMatmul(handle_, desc, &alpha, op.w.weight, p.a, x, p.b, &beta, y, p.d, y,
                                            p.d, &p.algo, workspace_, kWorkspaceBytes, stream));
    if (op.act != Act::kNone && !(p.primary && op.fused_act)) {
      INFERCOST_CUDA_CHECK(activation_inplace(op.w.type, y, rows * op.w.out, op.act, stream));
    }
  }

 private:
  // Layers of one shape share algorithms: the key names an op by its shape
  // and epilogue, not its weights (every bias is equally aligned).
  struct Key {
    DType type;
    int out, in;
    int epilogue;
    int64_t rows;
    bool operator<(const Key& o) const {
      return std::tie(type, out, in, epilogue, rows) < std::tie(o.type, o.out, o.in, o.epilogue, o.rows);
    }
  };
  struct Plan {
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    cublasLtMatmulAlgo_t algo{};
    bool primary = true;  // false: the op's fallback_desc (no fused activation)
  };

  static void destroy(Plan& p) {
    if (p.a) cublasLtMatrixLayoutDestroy(p.a);
    if (p.b) cublasLtMatrixLayoutDestroy(p.b);
    if (p.d) cublasLtMatrixLayoutDestroy(p.d);
  }

  void clear_plans() {
    for (auto& [key, p] : plans_) destroy(p);
    plans_.clear();
  }

  void release() {
    clear_plans();
    if (preference_) cublasLtMatmulPreferenceDestroy(preference_);
    if (workspace_) (void)cudaFree(workspace_);
    if (handle_) cublasLtDestroy(handle_);
    preference_ = nullptr;
    workspace_ = nullptr;
    handle_ = nullptr;
  }

  // Whether cuBLASLt has an algorithm for `desc` on these layouts. A result
  // is usable only where its own state says so (cuBLASLt's contract).
  bool heuristic(cublasLtMatmulDesc_t desc, Plan& p) {
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t s =
        cublasLtMatmulAlgoGetHeuristic(handle_, desc, p.a, p.b, p.d, p.d, preference_, 1, &result, &found);
    if (s == CUBLAS_STATUS_NOT_SUPPORTED) return false;
    if (s != CUBLAS_STATUS_SUCCESS) throw_cublas(s, "cublasLtMatmulAlgoGetHeuristic");
    if (found < 1 || result.state != CUBLAS_STATUS_SUCCESS || result.workspaceSize > kWorkspaceBytes) {
      return false;
    }
    p.algo = result.algo;
    return true;
  }

  const Plan& plan(const LinearOp& op, int64_t rows) {
    const Key key{op.w.type, op.w.out, op.w.in, int(op.epilogue), rows};
    if (auto it = plans_.find(key); it != plans_.end()) return it->second;
    if (plans_.size() >= kMaxPlans) clear_plans();  // many distinct row counts: start over
    Plan p;
    const cudaDataType_t t = cuda_type(op.w.type);
    try {
      INFERCOST_CUBLASLT_CHECK(
          cublasLtMatrixLayoutCreate(&p.a, t, uint64_t(op.w.in), uint64_t(op.w.out), op.w.in));
      INFERCOST_CUBLASLT_CHECK(
          cublasLtMatrixLayoutCreate(&p.b, t, uint64_t(op.w.in), uint64_t(rows), op.w.in));
      INFERCOST_CUBLASLT_CHECK(
          cublasLtMatrixLayoutCreate(&p.d, t, uint64_t(op.w.out), uint64_t(rows), op.w.out));
      if (!heuristic(op.desc, p)) {
        if (op.fallback_desc == nullptr || !heuristic(op.fallback_desc, p)) {
          throw CudaFailure(
              CudaFailure::Kind::kOther,
              fmt::format("cuBLASLt has no algorithm for {}: [{} x {}] x [{} x {}]^T in {}", op.name, rows,
                          op.w.in, op.w.out, op.w.in, cuda_type_name(op.w.type)));
        }
        p.primary = false;
      }
    } catch (...) {
      destroy(p);
      throw;
    }
    return plans_.emplace(key, p).first->second;
  }

  static const char* cuda_type_name(DType t) {
    return t == DType::kF32 ? "fp32" : t == DType::kF16 ? "fp16" : "bf16";
  }

  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  cublasLtMatmulPreference_t preference_ = nullptr;
  std::map<Key, Plan> plans_;
};

}  // namespace infercost::backend::cuda
