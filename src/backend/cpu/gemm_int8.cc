#include "backend/cpu/gemm_int8.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/kernels.h"
#include "backend/cpu_info.h"

namespace infercost::backend::cpu {

using dnnl::memory;

int int8_weight_max() {
  return cpu_info().int8_dot_product() ? 127 : 63;
}

ColumnQuantized quantize_columns(const std::vector<const model::Linear*>& parts, int weight_max) {
  ColumnQuantized c;
  c.in = parts.empty() ? 0 : parts[0]->in;
  for (const model::Linear* p : parts) c.out += p->out;
  const int64_t N = c.out;
  c.q.resize(size_t(c.in) * size_t(N));
  c.scale.resize(size_t(N));
  c.colsum_scaled.resize(size_t(N));
  c.bias.resize(size_t(N));
  int64_t col = 0;
  for (const model::Linear* p : parts) {
    for (int o = 0; o < p->out; ++o, ++col) {
      const float* row = p->weight.data() + int64_t(o) * c.in;
      float amax = 0.0f;
      for (int k = 0; k < c.in; ++k) amax = std::max(amax, std::fabs(row[k]));
      const float s = amax > 0.0f ? amax / float(weight_max) : 1.0f;
      int32_t sum = 0;
      for (int k = 0; k < c.in; ++k) {
        const float v = std::nearbyint(row[k] / s);
        const int32_t q = int32_t(std::clamp(v, float(-weight_max), float(weight_max)));
        c.q[size_t(k * N + col)] = int8_t(q);
        sum += q;
      }
      c.scale[size_t(col)] = s;
      c.colsum_scaled[size_t(col)] = s * float(sum);
      c.bias[size_t(col)] = p->bias[size_t(o)];
    }
  }
  return c;
}

Status Int8Linear::init(const dnnl::engine& engine, const std::vector<const model::Linear*>& parts,
                        Activation act, bool accumulate, const std::string& name) {
  if (parts.empty()) return internal_error(name + ": no weights");
  if (act == Activation::kTanh) return internal_error(name + ": tanh has no int8 epilogue");
  if (accumulate && act != Activation::kNone) {
    return internal_error(name + ": an accumulating layer takes no activation");
  }
  in_ = parts[0]->in;
  for (const model::Linear* p : parts) {
    if (p->in != in_)
      return invalid_argument(fmt::format("{}: input size {} differs from {}", name, p->in, in_));
    if (p->in <= 0 || p->out <= 0 || p->weight.size() != size_t(p->out) * p->in ||
        p->bias.size() != size_t(p->out)) {
      return invalid_argument(fmt::format("{}: weight has {} values and bias {}, expected [{}, {}] and [{}]",
                                          name, p->weight.size(), p->bias.size(), p->out, p->in, p->out));
    }
  }
  engine_ = engine;
  act_ = act;
  accumulate_ = accumulate;
  ColumnQuantized c = quantize_columns(parts);
  out_ = c.out;
  colsum_scaled_ = std::move(c.colsum_scaled);
  bias_ = std::move(c.bias);

  const memory::dim K = in_, N = out_;
  const memory::desc src_md({DNNL_RUNTIME_DIM_VAL, K}, memory::data_type::u8, memory::dims{K, 1});
  const memory::desc wei_md({K, N}, memory::data_type::s8, memory::format_tag::any);
  const memory::desc dst_md({DNNL_RUNTIME_DIM_VAL, N}, memory::data_type::f32, memory::dims{N, 1});
  dnnl::primitive_attr attr;
  // Per-column weight scales ride on the matmul; the per-row input scale and
  // zero point cannot (oneDNN 2.6 takes one src zero point per tensor), so
  // they go in our epilogue.
  attr.set_output_scales(1 << 1, c.scale);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, wei_md, dst_md), attr, engine);
  primitive_ = dnnl::matmul(pd);

  dnnl::stream stream(engine);
  memory user({{K, N}, memory::data_type::s8, memory::format_tag::ab}, engine, c.q.data());
  weights_ = memory(pd.weights_desc(), engine);
  dnnl::reorder(user, weights_).execute(stream, user, weights_);
  stream.wait();
  return Status();
}

void Int8Linear::run(dnnl::stream& stream, const float* x, int64_t rows, float* y, Int8Scratch& s) const {
  uint8_t* xq = ensure(s.xq, rows * in_);
  float* row_scale = ensure(s.row_scale, rows);
  float* row_zero = ensure(s.row_zero, rows);
  quantize_rows_u8(x, rows, in_, xq, row_scale, row_zero);
  // Without a residual the matmul writes into y and the epilogue rewrites it
  // in place; with one, the products need their own buffer.
  float* acc = accumulate_ ? ensure(s.acc, rows * out_) : y;
  const memory src(memory::desc({rows, in_}, memory::data_type::u8, memory::format_tag::ab), engine_, xq);
  const memory dst(memory::desc({rows, out_}, memory::data_type::f32, memory::format_tag::ab), engine_, acc);
  primitive_.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights_}, {DNNL_ARG_DST, dst}});
  stream.wait();
  EpilogueOp op = EpilogueOp::kStore;
  if (accumulate_) op = EpilogueOp::kAccumulate;
  if (act_ == Activation::kGelu) op = EpilogueOp::kGelu;
  if (act_ == Activation::kRelu) op = EpilogueOp::kRelu;
  int8_epilogue(acc, y, rows, out_, row_scale, row_zero, colsum_scaled_.data(), bias_.data(), op);
}

}  // namespace infercost::backend::cpu
