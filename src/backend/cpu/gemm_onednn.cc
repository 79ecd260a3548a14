#include "backend/cpu/gemm_onednn.h"

#include <fmt/format.h>

#include <cstring>
#include <string>

namespace infercost::backend::cpu {

using dnnl::memory;

Status OnednnLinear::init(const dnnl::engine& engine, const std::vector<const model::Linear*>& parts,
                          Activation act, bool accumulate, const std::string& name) {
  if (parts.empty()) return internal_error(name + ": no weights");
  engine_ = engine;
  in_ = parts[0]->in;
  out_ = 0;
  for (const model::Linear* p : parts) {
    if (p->in != in_) {
      return invalid_argument(fmt::format("{}: input size {} differs from {}", name, p->in, in_));
    }
    if (p->in <= 0 || p->out <= 0 || p->weight.size() != size_t(p->out) * p->in ||
        p->bias.size() != size_t(p->out)) {
      return invalid_argument(fmt::format("{}: weight has {} values and bias {}, expected [{}, {}] and [{}]",
                                          name, p->weight.size(), p->bias.size(), p->out, p->in, p->out));
    }
    out_ += p->out;
  }
  const memory::dim K = in_, N = out_;
  const memory::desc src_md({DNNL_RUNTIME_DIM_VAL, K}, memory::data_type::f32, memory::dims{K, 1});
  const memory::desc wei_md({K, N}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc bias_md({1, N}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc dst_md({DNNL_RUNTIME_DIM_VAL, N}, memory::data_type::f32, memory::dims{N, 1});

  dnnl::post_ops ops;
  // The sum comes first so the activation never sees the residual; we only
  // accumulate into linear layers without an activation anyway.
  if (accumulate) ops.append_sum(1.0f);
  switch (act) {
    case Activation::kNone: break;
    case Activation::kGelu: ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f); break;
    case Activation::kRelu: ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f); break;
    case Activation::kTanh: ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_tanh, 0.0f, 0.0f); break;
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, wei_md, bias_md, dst_md), attr, engine);
  primitive_ = dnnl::matmul(pd);

  // Transpose PyTorch's [out, in] into [in, out] once, here at load.
  weights_ = memory(wei_md, engine);
  bias_ = memory(bias_md, engine);
  float* w = static_cast<float*>(weights_.get_data_handle());
  float* b = static_cast<float*>(bias_.get_data_handle());
  int64_t col0 = 0;
  for (const model::Linear* p : parts) {
    for (int o = 0; o < p->out; ++o) {
      const float* row = p->weight.data() + int64_t(o) * in_;
      for (int i = 0; i < in_; ++i) w[int64_t(i) * N + col0 + o] = row[i];
    }
    std::memcpy(b + col0, p->bias.data(), sizeof(float) * p->out);
    col0 += p->out;
  }
  return Status();
}

void OnednnLinear::run(dnnl::stream& stream, const float* x, int64_t rows, float* y) const {
  const memory src(memory::desc({rows, in_}, memory::data_type::f32, memory::format_tag::ab), engine_,
                   const_cast<float*>(x));
  const memory dst(memory::desc({rows, out_}, memory::data_type::f32, memory::format_tag::ab), engine_, y);
  primitive_.execute(
      stream,
      {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights_}, {DNNL_ARG_BIAS, bias_}, {DNNL_ARG_DST, dst}});
}

}  // namespace infercost::backend::cpu
