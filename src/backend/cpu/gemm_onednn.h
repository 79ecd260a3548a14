// A linear layer y = act(x W^T + b) [+ y] on oneDNN's fp32 or bf16 matmul,
// with the number of rows given at run time so one primitive serves every
// batch.
#pragma once

#include <cstdint>
#include <oneapi/dnnl/dnnl.hpp>
#include <vector>

#include "infercost/status.h"
#include "model/weights.h"

namespace infercost::backend::cpu {

enum class Activation { kNone, kGelu, kRelu, kTanh };

// kF32: fp32 weights and inputs. kBf16: bf16 weights (in the layout oneDNN
// picks) and inputs, fp32 accumulation and output; primitive creation throws
// dnnl::error where the CPU has no bf16 matmul. kBf16Emulated: an fp32 matmul
// on bf16-rounded weights; the caller rounds the inputs (round_to_bf16).
enum class GemmType { kF32, kBf16, kBf16Emulated };

class OnednnLinear {
 public:
  // Takes `parts` (all with the same `in`) stacked along `out`, so Q, K and V
  // become one [in, 3*out] GEMM. Copies the weights into the layout the
  // primitive reads ([in, out] row-major, what oneDNN picks for fp32 here).
  // accumulate: y += x W^T + b (the residual add rides on the GEMM's beta).
  Status init(const dnnl::engine& engine, const std::vector<const model::Linear*>& parts, Activation act,
              bool accumulate, const std::string& name, GemmType type = GemmType::kF32);

  // x: [rows, in], y: [rows, out], row-major, not overlapping. Throws
  // dnnl::error on a oneDNN failure (caught at the Backend boundary).
  // kF32 and kBf16Emulated only.
  void run(dnnl::stream& stream, const float* x, int64_t rows, float* y) const;
  // The same with bf16 inputs (bit patterns, convert_to_bf16); kBf16 only.
  void run_bf16(dnnl::stream& stream, const uint16_t* x, int64_t rows, float* y) const;

  int in() const { return in_; }
  int out() const { return out_; }

 private:
  void execute(dnnl::stream& stream, const void* x, dnnl::memory::data_type x_type, int64_t rows,
               float* y) const;

  dnnl::engine engine_;
  dnnl::matmul primitive_;
  dnnl::memory weights_, bias_;
  int in_ = 0, out_ = 0;
};

}  // namespace infercost::backend::cpu
