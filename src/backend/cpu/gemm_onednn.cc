#include "backend/cpu/gemm_onednn.h"

#include <fmt/format.h>

#include <cstring>
#include <string>

#include "backend/cpu/kernels.h"

namespace infercost::backend::cpu {

using dnnl::memory;

Status OnednnLinear::init(const dnnl::engine& engine, const std::vector<const model::Linear*>& parts,
                          Activation act, bool accumulate, const std::string& name, GemmType type) {
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
  const bool bf16 = type == GemmType::kBf16;
  const memory::data_type in_type = bf16 ? memory::data_type::bf16 : memory::data_type::f32;
  const memory::desc src_md({DNNL_RUNTIME_DIM_VAL, K}, in_type, memory::dims{K, 1});
  // fp32 weights stay plain [in, out] (what oneDNN picks for fp32 here); bf16
  // ones go to whatever blocked layout the bf16 kernel asks for.
  const memory::desc wei_md({K, N}, in_type, bf16 ? memory::format_tag::any : memory::format_tag::ab);
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
  const memory::desc plain_md({K, N}, memory::data_type::f32, memory::format_tag::ab);
  memory plain(plain_md, engine);
  bias_ = memory(bias_md, engine);
  float* w = static_cast<float*>(plain.get_data_handle());
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
  if (type == GemmType::kBf16Emulated) round_to_bf16(w, w, K * N);
  if (bf16) {
    weights_ = memory(pd.weights_desc(), engine);
    dnnl::stream stream(engine);
    dnnl::reorder(plain, weights_).execute(stream, plain, weights_);  // rounds to nearest even
    stream.wait();
  } else {
    weights_ = plain;
  }
  return Status();
}

void OnednnLinear::execute(dnnl::stream& stream, const void* x, memory::data_type x_type, int64_t rows,
                           float* y) const {
  const memory src(memory::desc({rows, in_}, x_type, memory::format_tag::ab), engine_, const_cast<void*>(x));
  const memory dst(memory::desc({rows, out_}, memory::data_type::f32, memory::format_tag::ab), engine_, y);
  primitive_.execute(
      stream,
      {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights_}, {DNNL_ARG_BIAS, bias_}, {DNNL_ARG_DST, dst}});
}

void OnednnLinear::run(dnnl::stream& stream, const float* x, int64_t rows, float* y) const {
  execute(stream, x, memory::data_type::f32, rows, y);
}

void OnednnLinear::run_bf16(dnnl::stream& stream, const uint16_t* x, int64_t rows, float* y) const {
  execute(stream, x, memory::data_type::bf16, rows, y);
}

}  // namespace infercost::backend::cpu
