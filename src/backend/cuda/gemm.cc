#include "backend/cuda/gemm.h"

namespace infercost::backend::cuda {

namespace {

cublasLtMatmulDesc_t make_desc(const DeviceLinear& w, cublasLtEpilogue_t epilogue) {
  cublasLtMatmulDesc_t desc = nullptr;
  // fp32 accumulation in every precision; for fp32 this is true fp32 (not
  // CUBLAS_COMPUTE_32F_FAST_TF32), the parity target being 1e-3 of the CPU.
  INFERCOST_CUBLASLT_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const auto set = [&](cublasLtMatmulDescAttributes_t attr, const void* value, size_t size) {
    const cublasStatus_t s = cublasLtMatmulDescSetAttribute(desc, attr, value, size);
    if (s != CUBLAS_STATUS_SUCCESS) {
      cublasLtMatmulDescDestroy(desc);
      throw_cublas(s, "cublasLtMatmulDescSetAttribute");
    }
  };
  const cublasOperation_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
  set(CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof trans_a);
  set(CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof trans_b);
  set(CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue);
  if (epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
    // The bias is stored in the output's type, cuBLASLt's default
    // (CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE left unset).
    set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &w.bias, sizeof w.bias);
  }
  return desc;
}

}  // namespace

// Encoder linear ops: bias always in the epilogue; GELU fused for fp16/bf16
// only (cuBLASLt's GELU is the tanh approximation, within ~5e-4 of the exact
// erf GELU: below those types' rounding, not below the fp32 parity target),
// ReLU fused in every type.
std::unique_ptr<LinearOp> make_linear_op(const DeviceLinear& w, Act act, std::string name) {
  auto op = std::make_unique<LinearOp>();
  op->w = w;
  op->act = act;
  op->name = std::move(name);
  cublasLtEpilogue_t fused = CUBLASLT_EPILOGUE_BIAS;
  if (act == Act::kRelu) fused = CUBLASLT_EPILOGUE_RELU_BIAS;
  if (act == Act::kGelu && w.type != DType::kF32) fused = CUBLASLT_EPILOGUE_GELU_BIAS;
  op->fused_act = fused != CUBLASLT_EPILOGUE_BIAS;
  op->epilogue = fused;
  op->desc = make_desc(w, fused);
  if (op->fused_act) op->fallback_desc = make_desc(w, CUBLASLT_EPILOGUE_BIAS);
  return op;
}

// The head's ops: a plain product; the caller adds the bias and applies the
// activation with bias_act_f32 (cuBLASLt has no tanh epilogue).
std::unique_ptr<LinearOp> make_head_op(const DeviceLinear& w, std::string name) {
  auto op = std::make_unique<LinearOp>();
  op->w = w;
  op->name = std::move(name);
  op->epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  op->desc = make_desc(w, CUBLASLT_EPILOGUE_DEFAULT);
  return op;
}

}  // namespace infercost::backend::cuda
