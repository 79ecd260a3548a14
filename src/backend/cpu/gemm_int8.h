// A linear layer y = act(x W^T + b) [+ y] with dynamic int8 quantization:
// weights int8 per output column (symmetric, fixed at init), inputs uint8 per
// row (asymmetric, computed at each run), oneDNN's u8 x s8 matmul with int32
// accumulation, then one fused fp32 epilogue (kernels.h int8_epilogue).
#pragma once

#include <cstdint>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <vector>

#include "backend/cpu/gemm_onednn.h"
#include "infercost/status.h"
#include "model/weights.h"

namespace infercost::backend::cpu {

// Weights quantized per output column: w[k][n] ~= scale[n] * q[k][n].
struct ColumnQuantized {
  int in = 0, out = 0;
  std::vector<int8_t> q;             // [in, out] row-major
  std::vector<float> scale;          // [out]
  std::vector<float> colsum_scaled;  // [out]: scale[n] * sum_k q[k][n]
  std::vector<float> bias;           // [out]
};

// The largest weight code: 127 (8 bits) where the CPU multiplies u8 x s8
// with dot-product instructions (VNNI, AMX-INT8), which add into int32; 63
// (7 bits) elsewhere: without them oneDNN's kernels multiply with vpmaddubsw,
// which adds two adjacent u8 * s8 products into a saturating int16, and with
// |q| <= 63, 255 * 63 * 2 = 32130 fits, so the sums are exact; with 8 bits
// they could clip silently.
int int8_weight_max();

// Stacks `parts` (PyTorch [out, in] each, same `in`) along out and quantizes
// each output column to codes in [-weight_max, weight_max]; an all-zero
// column gets scale 1. Shapes must already be checked.
ColumnQuantized quantize_columns(const std::vector<const model::Linear*>& parts,
                                 int weight_max = int8_weight_max());

// Grown on demand and reused across calls, so the steady state allocates
// nothing. One per backend; not shared between threads.
struct Int8Scratch {
  std::vector<uint8_t> xq;
  std::vector<float> row_scale, row_zero, acc;
};

class Int8Linear {
 public:
  // As OnednnLinear::init; act must be kNone, kGelu or kRelu.
  Status init(const dnnl::engine& engine, const std::vector<const model::Linear*>& parts, Activation act,
              bool accumulate, const std::string& name);

  // x: [rows, in], y: [rows, out], row-major, not overlapping. Throws
  // dnnl::error on a oneDNN failure.
  void run(dnnl::stream& stream, const float* x, int64_t rows, float* y, Int8Scratch& scratch) const;

  int in() const { return in_; }
  int out() const { return out_; }

 private:
  dnnl::engine engine_;
  dnnl::matmul primitive_;
  dnnl::memory weights_;
  std::vector<float> colsum_scaled_, bias_;
  Activation act_ = Activation::kNone;
  bool accumulate_ = false;
  int in_ = 0, out_ = 0;
};

}  // namespace infercost::backend::cpu
