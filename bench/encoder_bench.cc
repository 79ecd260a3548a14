// Encoder throughput at batch 32 x 128 tokens with DistilBERT-base shapes
// (random weights made here), beside the oneDNN GEMM ceiling measured in the
// same run on the model's own GEMM shapes, in the same precision: fp32 matmul,
// bf16 matmul (fp32 output), or u8 x s8 -> f32 matmul with per-column output
// scales for int8 (int8 ops count as FLOPs).
//
//   encoder_bench [--precision fp32|bf16|int8] [--threads N] [--reps N]
//                 [--batch N] [--seq N] [--layers N]
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu_info.h"
#include "bench_util.h"
#include "model/config.h"
#include "model/weights.h"

namespace {

using infercost::bench::arg_int;
using infercost::bench::arg_str;
using infercost::bench::median;
using infercost::bench::now_s;
using infercost::model::Linear;

void fill(std::vector<float>& v, std::mt19937& rng, float stddev, float mean = 0.0f) {
  std::normal_distribution<float> d(mean, stddev);
  for (float& x : v) x = d(rng);
}

Linear make_linear(int out, int in, std::mt19937& rng) {
  Linear l;
  l.out = out;
  l.in = in;
  l.weight.resize(size_t(out) * in);
  l.bias.resize(size_t(out));
  fill(l.weight, rng, 0.02f);
  fill(l.bias, rng, 0.02f);
  return l;
}

infercost::model::EncoderWeights make_weights(const infercost::model::ModelConfig& c, uint32_t seed) {
  std::mt19937 rng(seed);
  infercost::model::EncoderWeights w;
  const int H = c.hidden_size;
  w.word_embeddings.resize(size_t(c.vocab_size) * H);
  w.position_embeddings.resize(size_t(c.max_position_embeddings) * H);
  fill(w.word_embeddings, rng, 0.02f);
  fill(w.position_embeddings, rng, 0.02f);
  w.embedding_bias = infercost::model::embedding_bias_of(c, w.token_type_embeddings);
  auto ln = [&] {
    infercost::model::LayerNormWeights l;
    l.gamma.resize(size_t(H));
    l.beta.resize(size_t(H));
    fill(l.gamma, rng, 0.02f, 1.0f);
    fill(l.beta, rng, 0.02f);
    return l;
  };
  w.embeddings_ln = ln();
  for (int i = 0; i < c.num_layers; ++i) {
    infercost::model::EncoderLayerWeights L;
    L.q = make_linear(H, H, rng);
    L.k = make_linear(H, H, rng);
    L.v = make_linear(H, H, rng);
    L.attn_out = make_linear(H, H, rng);
    L.attn_ln = ln();
    L.ffn_in = make_linear(c.intermediate_size, H, rng);
    L.ffn_out = make_linear(H, c.intermediate_size, rng);
    L.ffn_ln = ln();
    w.layers.push_back(std::move(L));
  }
  w.head.pre = make_linear(H, H, rng);
  w.head.classifier = make_linear(c.num_labels(), H, rng);
  return w;
}

// Median seconds of one plain matmul [M,K] x [K,N] -> f32 in the precision's
// types (weights in the layout oneDNN asks for, reordered beforehand as the
// backend does; int8 with per-column output scales as the backend uses).
double time_gemm(const dnnl::engine& engine, dnnl::stream& stream, infercost::backend::Precision precision,
                 int64_t M, int64_t N, int64_t K, int reps) {
  using dnnl::memory;
  using infercost::backend::Precision;
  memory::data_type src_type = memory::data_type::f32, wei_type = memory::data_type::f32;
  if (precision == Precision::kBf16) src_type = wei_type = memory::data_type::bf16;
  if (precision == Precision::kInt8) {
    src_type = memory::data_type::u8;
    wei_type = memory::data_type::s8;
  }
  const memory::desc src_md({M, K}, src_type, memory::format_tag::ab);
  const memory::desc any_md({K, N}, wei_type, memory::format_tag::any);
  const memory::desc dst_md({M, N}, memory::data_type::f32, memory::format_tag::ab);
  dnnl::primitive_attr attr;
  if (precision == Precision::kInt8) attr.set_output_scales(1 << 1, std::vector<float>(size_t(N), 0.01f));
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, any_md, dst_md), attr, engine);
  std::mt19937 rng(1);
  std::vector<float> a(size_t(M * K)), w(size_t(K * N)), c(size_t(M * N));
  fill(a, rng, 1.0f);
  fill(w, rng, 0.02f);
  // Source and weights in the right type through reorders from fp32 (the
  // values do not matter for timing; int8 conversion saturates).
  memory user_a({{M, K}, memory::data_type::f32, memory::format_tag::ab}, engine, a.data());
  memory src(src_md, engine), dst(dst_md, engine, c.data());
  dnnl::reorder(user_a, src).execute(stream, user_a, src);
  memory user_w({{K, N}, memory::data_type::f32, memory::format_tag::ab}, engine, w.data());
  memory wei(pd.weights_desc(), engine);
  dnnl::reorder(user_w, wei).execute(stream, user_w, wei);
  dnnl::matmul mm(pd);
  std::vector<double> times;
  for (int r = 0; r < reps + 1; ++r) {
    const double t0 = now_s();
    mm.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
    stream.wait();
    if (r > 0) times.push_back(now_s() - t0);  // the first run is warm-up
  }
  return median(times);
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = arg_int(argc, argv, "--threads", 0);
  const int reps = std::max(1, arg_int(argc, argv, "--reps", 5));
  const int batch = arg_int(argc, argv, "--batch", 32);
  const int seq = arg_int(argc, argv, "--seq", 128);
  auto parsed = infercost::backend::parse_precision(arg_str(argc, argv, "--precision", "fp32"));
  if (!parsed.ok()) {
    fmt::print(stderr, "--precision: {}\n", parsed.status().to_string());
    return 2;
  }
  const infercost::backend::Precision precision = *parsed;
  const auto& cpu = infercost::backend::cpu_info();
  if (precision == infercost::backend::Precision::kBf16 && !cpu.native_bf16()) {
    fmt::print(stderr,
               "bf16 skipped: this CPU ({}, best ISA {}) has no native bf16 matmul (needs AVX512_BF16 or "
               "AMX); there is neither a bf16 ceiling nor a fast bf16 model to measure\n",
               cpu.model, cpu.isa());
    return 0;
  }

  infercost::model::ModelConfig config;  // defaults are DistilBERT-base
  config.name = "distilbert-base shapes (random weights)";
  config.num_layers = arg_int(argc, argv, "--layers", 6);
  config.labels = {"NEGATIVE", "POSITIVE"};
  const int64_t H = config.hidden_size, I = config.intermediate_size;

  infercost::backend::BackendOptions options;
  options.threads = threads;
  options.precision = precision;
  auto created = infercost::backend::create_backend("cpu", options);
  if (!created.ok()) {
    fmt::print(stderr, "{}\n", created.status().to_string());
    return 1;
  }
  auto backend = std::move(created).value();
  {
    const infercost::model::EncoderWeights weights = make_weights(config, 7);
    const infercost::Status st = backend->prepare(config, weights);
    if (!st.ok()) {
      fmt::print(stderr, "{}\n", st.to_string());
      return 1;
    }
  }
  // prepare() applied the thread count to this thread; the GEMM ceiling runs
  // with the same count.
  const int used_threads = omp_get_max_threads();

  infercost::backend::TokenBatch tb;
  tb.batch = batch;
  tb.seq_len = seq;
  std::mt19937 rng(11);
  for (int i = 0; i < batch * seq; ++i) tb.ids.push_back(int32_t(rng() % uint32_t(config.vocab_size)));
  tb.lengths.assign(size_t(batch), seq);

  const int64_t M = int64_t(batch) * seq;
  struct Shape {
    int64_t n, k;
    int per_layer;  // how many GEMMs of this shape one layer runs
  };
  const std::vector<Shape> shapes = {{H, H, 4}, {I, H, 1}, {H, I, 1}};
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);

  // Alternate ceiling and model measurements so that both see the same
  // background load on a shared machine.
  std::vector<std::vector<double>> gemm_s(shapes.size());
  std::vector<double> model_s;
  auto warm = backend->forward(tb);  // warm-up: primitives, scratch, caches
  if (!warm.ok()) {
    fmt::print(stderr, "{}\n", warm.status().to_string());
    return 1;
  }
  for (int r = 0; r < reps; ++r) {
    for (size_t s = 0; s < shapes.size(); ++s)
      gemm_s[s].push_back(time_gemm(engine, stream, precision, M, shapes[s].n, shapes[s].k, 3));
    const double t0 = now_s();
    auto logits = backend->forward(tb);
    model_s.push_back(now_s() - t0);
    if (!logits.ok()) {
      fmt::print(stderr, "{}\n", logits.status().to_string());
      return 1;
    }
  }

  // FLOPs of one forward pass: every GEMM (2MNK) plus attention's QK^T and
  // PV (2 * 2 * batch * seq^2 * hidden per layer) plus the head.
  double gemm_flop_layer = 0, ceiling_s_layer = 0;
  const char* pname = infercost::backend::precision_name(precision);
  const char* gemm_kind = precision == infercost::backend::Precision::kInt8   ? "u8 x s8 -> f32"
                          : precision == infercost::backend::Precision::kBf16 ? "bf16 x bf16 -> f32"
                                                                              : "fp32";
  fmt::print("precision {}, CPU {} ({}), oneDNN {}.{}.{}, {} threads, M = {} x {} = {}\n\n", pname, cpu.model,
             cpu.isa(), dnnl::version()->major, dnnl::version()->minor, dnnl::version()->patch, used_threads,
             batch, seq, M);
  fmt::print("GEMM ceiling (plain oneDNN {} matmul, median of {} x 3 runs; int8 ops count as FLOPs):\n",
             gemm_kind, reps);
  for (size_t s = 0; s < shapes.size(); ++s) {
    const double flop = 2.0 * M * shapes[s].n * shapes[s].k;
    const double t = median(gemm_s[s]);
    fmt::print("  M={} N={:<5} K={:<5} {:8.2f} ms  {:7.1f} GFLOP/s\n", M, shapes[s].n, shapes[s].k, t * 1e3,
               flop / t / 1e9);
    gemm_flop_layer += shapes[s].per_layer * flop;
    ceiling_s_layer += shapes[s].per_layer * t;
  }
  const double ceiling = gemm_flop_layer / ceiling_s_layer;
  const double attn_flop_layer = 4.0 * batch * double(seq) * seq * H;
  const double head_flop = 2.0 * batch * (H * H + H * config.num_labels());
  const double model_flop = config.num_layers * (gemm_flop_layer + attn_flop_layer) + head_flop;
  const double t = median(model_s);
  const double rate = model_flop / t;
  fmt::print("  layer mix (4x 768x768, 3072x768, 768x3072): {:.1f} GFLOP/s  <- ceiling\n\n", ceiling / 1e9);
  fmt::print("encoder ({}): {} layers, batch {} x {} tokens, median of {} (after 1 warm-up)\n", pname,
             config.num_layers, batch, seq, reps);
  fmt::print("  {:.1f} ms per batch, {:.0f} tokens/s, {:.1f} sequences/s\n", t * 1e3, M / t, batch / t);
  fmt::print("  {:.1f} GFLOP per batch (GEMM {:.1f}, attention {:.1f}) -> {:.1f} GFLOP/s\n", model_flop / 1e9,
             config.num_layers * gemm_flop_layer / 1e9, config.num_layers * attn_flop_layer / 1e9,
             rate / 1e9);
  fmt::print("  ratio to GEMM ceiling: {:.1f}%\n", 100.0 * rate / ceiling);
  fmt::print("  all samples (ms):");
  for (double s : model_s) fmt::print(" {:.1f}", s * 1e3);
  fmt::print("\n");
  return 0;
}
