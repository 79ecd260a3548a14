#include "backend/cpu/cpu_backend.h"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <new>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "backend/cpu/gemm_int8.h"
#include "backend/cpu/gemm_onednn.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu_info.h"
#include "backend/rotary.h"
#include "backend/token_outputs.h"
#include "backend/validate.h"
#include "core/threads.h"
#include "model/program.h"

namespace infercost::backend::cpu {
namespace {

struct LinearScratch {
  Int8Scratch int8;
  std::vector<uint16_t> bf16;
  std::vector<float> rounded;
};

// One encoder linear layer in the backend's precision.
class Linear {
 public:
  Status init(const dnnl::engine& engine, Precision precision, bool emulate_bf16,
              const std::vector<const model::Linear*>& parts, Activation act, bool accumulate,
              const std::string& name) {
    precision_ = precision;
    emulate_ = emulate_bf16;
    switch (precision) {
      case Precision::kFp32: return fp_.init(engine, parts, act, accumulate, name);
      case Precision::kInt8: return int8_.init(engine, parts, act, accumulate, name);
      case Precision::kBf16:
        return fp_.init(engine, parts, act, accumulate, name,
                        emulate_bf16 ? GemmType::kBf16Emulated : GemmType::kBf16);
      case Precision::kFp16: break;  // refused by make_cpu_backend
    }
    return internal_error(name + ": unknown precision");
  }

  void run(dnnl::stream& stream, const float* x, int64_t rows, float* y, LinearScratch& s) const {
    switch (precision_) {
      case Precision::kFp32: fp_.run(stream, x, rows, y); return;
      case Precision::kInt8: int8_.run(stream, x, rows, y, s.int8); return;
      case Precision::kFp16: return;  // refused by make_cpu_backend
      case Precision::kBf16: {
        const int64_t n = rows * fp_.in();
        if (emulate_) {
          // x may be the residual stream, which stays fp32: round a copy.
          float* r = ensure(s.rounded, n);
          round_to_bf16(x, r, n);
          fp_.run(stream, r, rows, y);
        } else {
          uint16_t* b = ensure(s.bf16, n);
          convert_to_bf16(x, b, n);
          fp_.run_bf16(stream, b, rows, y);
        }
        return;
      }
    }
  }

 private:
  Precision precision_ = Precision::kFp32;
  bool emulate_ = false;
  OnednnLinear fp_;
  Int8Linear int8_;
};

// One layer's linear layers in the backend's precision.
struct PreparedLayer {
  Linear qkv, attn_out, ffn_in, ffn_out;
};

// What the backend reads of the loaded weights as they are: all but the
// linear layers, which it holds converted (PreparedLayer, the head's).
model::EncoderWeights without_linears(const model::EncoderWeights& w) {
  model::EncoderWeights kept;
  kept.word_embeddings = w.word_embeddings;
  kept.position_embeddings = w.position_embeddings;
  kept.token_type_embeddings = w.token_type_embeddings;
  kept.embedding_bias = w.embedding_bias;
  kept.embeddings_ln = w.embeddings_ln;
  kept.final_ln = w.final_ln;
  kept.head.norm = w.head.norm;
  kept.layers.resize(w.layers.size());
  for (size_t i = 0; i < w.layers.size(); ++i) {
    kept.layers[i].attn_ln = w.layers[i].attn_ln;
    kept.layers[i].ffn_ln = w.layers[i].ffn_ln;
    kept.layers[i].pos_key = w.layers[i].pos_key;
    kept.layers[i].pos_query = w.layers[i].pos_query;
  }
  return kept;
}

class CpuBackend final : public Backend, private model::StepExecutor {
 public:
  CpuBackend(int threads, Precision precision, bool emulate_bf16, std::optional<Pooling> pooling,
             std::optional<model::TokenOutput> tokens)
      : threads_(threads),
        precision_(precision),
        emulate_bf16_(emulate_bf16),
        pooling_(pooling),
        tokens_(tokens),
        engine_(dnnl::engine::kind::cpu, 0),
        stream_(engine_) {}

  std::string name() const override { return "cpu"; }
  Precision precision() const override { return precision_; }
  bool skips_padding() const override { return true; }

  Status prepare(const model::ModelConfig& config, const model::EncoderWeights& weights) override {
    prepared_ = false;
    try {
      omp_set_num_threads(threads_);
      Status st = prepare_impl(config, weights);
      if (!st.ok()) return st.with_context(fmt::format("cpu backend: prepare {}", config.name));
      prepared_ = true;
      return Status();
    } catch (const dnnl::error& e) {
      return internal_error(fmt::format("cpu backend: prepare {}: oneDNN: {} (status {})", config.name,
                                        e.what(), int(e.status)));
    } catch (const std::bad_alloc&) {
      return resource_exhausted(fmt::format("cpu backend: prepare {}: out of host memory", config.name));
    }
  }

  Result<ForwardOutput> forward(const TokenBatch& batch) override {
    if (!prepared_) return invalid_argument("cpu backend: forward() called before a successful prepare()");
    INFERCOST_RETURN_IF_ERROR(validate_batch(config_, batch));
    try {
      omp_set_num_threads(threads_);
      return run_encoder(batch);
    } catch (const dnnl::error& e) {
      return internal_error(
          fmt::format("cpu backend: classify: oneDNN: {} (status {})", e.what(), int(e.status)));
    } catch (const std::bad_alloc&) {
      return resource_exhausted(fmt::format(
          "cpu backend: classify: out of host memory for a batch of {} x {}", batch.batch, batch.seq_len));
    }
  }

 private:
  Status prepare_impl(const model::ModelConfig& config, const model::EncoderWeights& w) {
    INFERCOST_RETURN_IF_ERROR(validate_model(config, w, pooling_, tokens_));
    config_ = config;
    program_ = model::forward_program(config, pooling_, tokens_);
    kept_ = without_linears(w);
    rotary_.clear();
    relative_index_ = model::relative_position_table(config);
    layers_.clear();
    layers_.resize(w.layers.size());
    glu_ = false;
    // Each step's linear layers in the backend's precision, with the
    // activation the step fuses into them.
    for (const model::Step& step : program_.steps) {
      if (const auto* a = std::get_if<model::AttentionStep>(&step)) {
        const model::EncoderLayerWeights& src = w.layers[size_t(a->layer)];
        if (a->rotary_theta > 0 && !rotary_.count(a->rotary_theta))
          rotary_table(a->rotary_theta, config.head_dim(), config.max_positions(), rotary_[a->rotary_theta]);
        INFERCOST_RETURN_IF_ERROR(layers_[size_t(a->layer)].qkv.init(
            engine_, layer_norm_fed_precision(), emulate_bf16_, {&src.q, &src.k, &src.v}, Activation::kNone,
            false, fmt::format("layer {}: qkv", a->layer)));
      } else if (const auto* f = std::get_if<model::FeedForwardStep>(&step)) {
        // A GLU's activation is applied by gelu_glu() after the GEMM.
        const Activation act = f->glu ? Activation::kNone : activation_as<Activation>(f->activation);
        INFERCOST_RETURN_IF_ERROR(layers_[size_t(f->layer)].ffn_in.init(
            engine_, layer_norm_fed_precision(), emulate_bf16_, {&w.layers[size_t(f->layer)].ffn_in}, act,
            false, fmt::format("layer {}: ffn in", f->layer)));
        glu_ = glu_ || f->glu;
      } else if (const auto* r = std::get_if<model::ResidualStep>(&step)) {
        const bool attention = r->projection == model::ResidualStep::Projection::kAttentionOutput;
        const model::EncoderLayerWeights& src = w.layers[size_t(r->layer)];
        INFERCOST_RETURN_IF_ERROR(
            (attention ? layers_[size_t(r->layer)].attn_out : layers_[size_t(r->layer)].ffn_out)
                .init(engine_, precision_, emulate_bf16_, {attention ? &src.attn_out : &src.ffn_out},
                      Activation::kNone, true,
                      fmt::format("layer {}: {}", r->layer, attention ? "attention output" : "ffn out")));
      } else if (const auto* head = std::get_if<model::HeadStep>(&step)) {
        INFERCOST_RETURN_IF_ERROR(init_head(w.head, true, head->activation));
      } else if (const auto* t = std::get_if<model::TokenStep>(&step); t != nullptr && t->classifier) {
        INFERCOST_RETURN_IF_ERROR(init_head(w.head, t->pre, t->activation));
      }
    }
    labels_ = program_.reads_head() ? w.head.classifier.out : config.hidden_size;
    return Status();
  }

  // The head's classifier, and its dense layer with `activation` fused where
  // `pre`: fp32 in every precision (the sequence head runs on one row per
  // sequence).
  Status init_head(const model::ClassifierHeadWeights& head, bool pre, model::Activation activation) {
    if (pre) {
      INFERCOST_RETURN_IF_ERROR(
          pre_.init(engine_, {&head.pre}, activation_as<Activation>(activation), false, "head pre"));
    }
    return classifier_.init(engine_, {&head.classifier}, Activation::kNone, false, "classifier");
  }

  // Packs the rows' tokens (every linear layer then runs on [total tokens,
  // *]) and runs the program on them. Normally only real tokens are packed
  // and padding costs nothing; with compute_padding every row keeps all
  // seq_len positions (padding ids included) and attention masks the padded
  // keys.
  Result<ForwardOutput> run_encoder(const TokenBatch& b) {
    ForwardOutput logits;
    logits.rows = b.batch;
    logits.tokens = program_.per_token() ? b.seq_len : 0;
    logits.width = labels_;
    if (b.batch == 0) return logits;
    Pass& p = pass_;
    p = Pass{};
    p.batch = &b;
    p.out = &logits;
    int32_t max_len = 0;
    p.offsets = ensure(offsets_, b.batch);
    p.row_len = ensure(row_len_, b.batch);
    for (int r = 0; r < b.batch; ++r) {
      p.offsets[r] = p.total;
      p.row_len[r] = b.compute_padding ? b.seq_len : b.lengths[size_t(r)];
      p.total += p.row_len[r];
      max_len = std::max(max_len, p.row_len[r]);
    }
    p.ids = ensure(ids_, p.total);
    p.positions = ensure(positions_, p.total);
    if (!b.type_ids.empty()) p.types = ensure(types_, p.total);
    const model::PositionScheme scheme = config_.position_scheme();
    for (int r = 0; r < b.batch; ++r) {
      const int32_t* row = b.ids.data() + int64_t(r) * b.seq_len;
      std::memcpy(p.ids + p.offsets[r], row, sizeof(int32_t) * size_t(p.row_len[r]));
      model::fill_position_ids(scheme, row, p.row_len[r], p.positions + p.offsets[r]);
      if (p.types != nullptr) {
        std::memcpy(p.types + p.offsets[r], b.type_ids.data() + int64_t(r) * b.seq_len,
                    sizeof(int32_t) * size_t(p.row_len[r]));
      }
    }
    const int64_t hidden = config_.hidden_size;
    p.h = ensure(h_, p.total * hidden);
    p.normed = ensure(normed_, p.total * hidden);
    p.qkv = ensure(qkv_, p.total * 3 * hidden);
    p.ctx = ensure(ctx_, p.total * hidden);
    p.ffn = ensure(ffn_, p.total * config_.intermediate_size);
    if (glu_) p.glu = ensure(glu_buffer_, p.total * 2 * config_.intermediate_size);
    for (const model::Step& step : program_.steps) {
      const auto* a = std::get_if<model::AttentionStep>(&step);
      if (a == nullptr) continue;
      p.per_thread =
          std::max(p.per_thread, a->scores == model::Scores::kDisentangled
                                     ? disentangled_scratch_floats(max_len, config_.relative_span())
                                     : attention_scratch_floats(max_len, a->window));
    }
    p.scratch = ensure(scratch_, p.per_thread * omp_get_max_threads());
    p.key_lengths = b.compute_padding ? b.lengths.data() : nullptr;
    model::run_program(program_, *this);
    return logits;
  }

  // ---- model::StepExecutor: the program's steps on pass_'s packed tokens ----

  void run(const model::EmbedStep& step) override {
    const Pass& p = pass_;
    // The batch's token types pick rows of the type table; without them
    // every token adds type 0's row (the embedding bias).
    const bool types = step.token_types && p.types != nullptr;
    const model::EncoderWeights& w = kept_;
    embed_layer_norm(p.ids, p.positions, p.total, config_.hidden_size, w.word_embeddings.data(),
                     step.position_table ? w.position_embeddings.data() : nullptr,
                     types ? w.token_type_embeddings.data() : w.embedding_bias.data(),
                     w.embeddings_ln.gamma.data(), w.embeddings_ln.beta.data(), config_.layer_norm_eps, p.h,
                     types ? p.types : nullptr);
  }

  void run(const model::NormStep& step) override {
    stream_.wait();
    const model::LayerNormWeights& n = model::norm_weights(kept_, step.norm);
    layer_norm(pass_.h, slot(step.out), pass_.total, config_.hidden_size, n.gamma.data(), n.beta.data(),
               config_.layer_norm_eps);
  }

  void run(const model::AttentionStep& step) override {
    const Pass& p = pass_;
    const PreparedLayer& layer = layers_[size_t(step.layer)];
    const model::EncoderLayerWeights& tables = kept_.layers[size_t(step.layer)];
    const int heads = config_.num_heads, head_dim = config_.head_dim();
    layer.qkv.run(stream_, slot(step.in), p.total, p.qkv, linear_scratch_);
    if (step.rotary_theta > 0) {
      stream_.wait();
      apply_rotary(p.qkv, p.total, p.positions, heads, head_dim, rotary_.at(step.rotary_theta).data());
    }
    if (step.scores == model::Scores::kDisentangled) {
      RelativeAttention rel;
      rel.pos_key = tables.pos_key.empty() ? nullptr : tables.pos_key.data();
      rel.pos_query = tables.pos_query.empty() ? nullptr : tables.pos_query.data();
      rel.index = relative_index_.data();
      rel.max_delta = config_.max_positions() - 1;
      rel.scale = step.scale;
      disentangled_attention(p.qkv, p.ctx, p.offsets, p.row_len, p.key_lengths, p.batch->batch, heads,
                             head_dim, rel, p.scratch, p.per_thread);
    } else {
      attention(p.qkv, p.ctx, p.offsets, p.row_len, p.key_lengths, p.batch->batch, heads, head_dim,
                step.scale, p.scratch, p.per_thread, step.window);
    }
  }

  void run(const model::FeedForwardStep& step) override {
    const Pass& p = pass_;
    layers_[size_t(step.layer)].ffn_in.run(stream_, slot(step.in), p.total, step.glu ? p.glu : p.ffn,
                                           linear_scratch_);
    if (step.glu) {
      stream_.wait();
      gelu_glu(p.glu, p.ffn, p.total, config_.intermediate_size);
    }
  }

  void run(const model::ResidualStep& step) override {
    const Pass& p = pass_;
    const PreparedLayer& layer = layers_[size_t(step.layer)];
    if (step.projection == model::ResidualStep::Projection::kAttentionOutput) {
      layer.attn_out.run(stream_, p.ctx, p.total, p.h, linear_scratch_);  // h += ctx W^T + b
    } else {
      layer.ffn_out.run(stream_, p.ffn, p.total, p.h, linear_scratch_);  // h += ffn W^T + b
    }
    run(model::NormStep{step.norm, step.out});
  }

  void run(const model::PoolStep& step) override {
    const Pass& p = pass_;
    const int hidden = config_.hidden_size;
    stream_.wait();
    std::vector<float>& out = p.out->values;
    out.resize(size_t(p.batch->batch) * hidden);
    for (int r = 0; r < p.batch->batch; ++r) {
      pool_row(step.pooling, p.h + p.offsets[r] * hidden, p.batch->lengths[size_t(r)], hidden,
               out.data() + int64_t(r) * hidden);
    }
  }

  // The head on each row's first token or the mean of its real tokens.
  void run(const model::HeadStep& step) override {
    const Pass& p = pass_;
    const int hidden = config_.hidden_size, rows = p.batch->batch;
    float* first = ensure(cls_, int64_t(rows) * hidden);
    float* pooled = ensure(pooled_, int64_t(rows) * hidden);
    stream_.wait();
    for (int r = 0; r < rows; ++r) {
      pool_row(step.pooling, p.h + p.offsets[r] * hidden, p.batch->lengths[size_t(r)], hidden,
               first + int64_t(r) * hidden);
    }
    head_features(first, rows, step.norm, pooled);
    p.out->values.resize(size_t(rows) * labels_);
    classifier_.run(stream_, pooled, rows, p.out->values.data());
    stream_.wait();
  }

  // The head's dense layer (its activation fused) on `rows` rows of `x`, then
  // with `norm` its LayerNorm, into `out`: what the classifier reads.
  void head_features(const float* x, int64_t rows, bool norm, float* out) {
    pre_.run(stream_, x, rows, out);
    if (!norm) return;
    stream_.wait();
    layer_norm(out, out, rows, config_.hidden_size, kept_.head.norm.gamma.data(), kept_.head.norm.beta.data(),
               config_.layer_norm_eps);
  }

  // Every computed token's state, or the token classifier's logits on it,
  // spread over [rows, seq_len, width].
  void run(const model::TokenStep& step) override {
    const Pass& p = pass_;
    const int hidden = config_.hidden_size;
    stream_.wait();
    const float* out = p.h;
    if (step.classifier) {
      const float* x = p.h;
      if (step.pre) {
        float* dense = ensure(pooled_, p.total * hidden);
        head_features(p.h, p.total, step.norm, dense);
        x = dense;
      }
      float* logits = ensure(token_logits_, p.total * labels_);
      classifier_.run(stream_, x, p.total, logits);
      stream_.wait();
      out = logits;
    }
    unpack_token_outputs(*p.batch, out, labels_, *p.out);
  }

  float* slot(model::Slot s) const {
    switch (s) {
      case model::Slot::kStates: return pass_.h;
      case model::Slot::kNormed: return pass_.normed;
      case model::Slot::kContext: return pass_.ctx;
      case model::Slot::kInner: return pass_.ffn;
    }
    return pass_.h;
  }

  // One row's vector from its `length` real tokens' states (`states`:
  // [length, hidden]), as sentence-transformers pools them; sums in double.
  static void pool_row(Pooling pooling, const float* states, int length, int hidden, float* out) {
    switch (pooling) {
      case Pooling::kCls: std::memcpy(out, states, sizeof(float) * size_t(hidden)); return;
      case Pooling::kLastToken:
        std::memcpy(out, states + int64_t(length - 1) * hidden, sizeof(float) * size_t(hidden));
        return;
      case Pooling::kMean:
        for (int i = 0; i < hidden; ++i) {
          double sum = 0;
          for (int t = 0; t < length; ++t) sum += states[int64_t(t) * hidden + i];
          out[i] = float(sum / length);
        }
        return;
      case Pooling::kMax:
        for (int i = 0; i < hidden; ++i) {
          float best = states[i];
          for (int t = 1; t < length; ++t) best = std::max(best, states[int64_t(t) * hidden + i]);
          out[i] = best;
        }
        return;
    }
  }

  int threads_;
  Precision precision_;
  bool emulate_bf16_;
  std::optional<Pooling> pooling_;            // set: forward() pools instead of running the head
  std::optional<model::TokenOutput> tokens_;  // set: forward() gives outputs per token

  // The precision of the GEMMs fed by a LayerNorm (QKV, FFN input). int8
  // runs them in bf16 where the CPU has native bf16: their inputs carry the
  // outlier channels that per-row quantization serves worst, and they move
  // the labels most (docs/cpu.md: on the real-encoder classifier, 98.90 %
  // label agreement with every GEMM int8, 99.60 % so). The attention and FFN
  // outputs stay int8. Elsewhere every GEMM is int8.
  Precision layer_norm_fed_precision() const {
    if (precision_ != Precision::kInt8 || !cpu_info().native_bf16()) return precision_;
    return Precision::kBf16;
  }
  dnnl::engine engine_;
  dnnl::stream stream_;
  bool prepared_ = false;
  model::ModelConfig config_;
  model::ForwardProgram program_;
  int labels_ = 0;              // values per row (or token) of forward(): the labels, or hidden_size
  bool glu_ = false;            // a feed-forward step is gated (its first GEMM gives 2 x intermediate)
  model::EncoderWeights kept_;  // without_linears() of the loaded weights
  std::map<double, std::vector<float>> rotary_;  // rotary_table() by theta
  std::vector<int32_t>
      relative_index_;  // DeBERTa: relative_position_index() of each delta from -(positions - 1)
  std::vector<PreparedLayer> layers_;
  OnednnLinear pre_, classifier_;
  // One forward() call: the batch, its packed tokens and where each slot is.
  struct Pass {
    const TokenBatch* batch = nullptr;
    ForwardOutput* out = nullptr;
    int64_t total = 0;  // tokens computed
    int64_t* offsets = nullptr;
    int32_t *row_len = nullptr, *ids = nullptr, *positions = nullptr;
    int32_t* types = nullptr;              // token type ids, where the batch has them
    const int32_t* key_lengths = nullptr;  // with compute_padding: each row's real tokens
    float *h = nullptr, *normed = nullptr, *qkv = nullptr, *ctx = nullptr, *ffn = nullptr, *glu = nullptr;
    float* scratch = nullptr;
    int64_t per_thread = 0;  // scratch floats per thread
  };
  Pass pass_;
  // Scratch, reused across calls.
  std::vector<int64_t> offsets_;
  std::vector<int32_t> ids_, positions_, types_, row_len_;
  std::vector<float> h_, qkv_, ctx_, ffn_, scratch_, cls_, pooled_, normed_, glu_buffer_, token_logits_;
  LinearScratch linear_scratch_;
};

}  // namespace

Result<std::unique_ptr<Backend>> make_cpu_backend(const BackendOptions& options) {
  if (options.threads < 0) {
    return invalid_argument(
        fmt::format("cpu backend: threads must be >= 0 (0: all), got {}", options.threads));
  }
  if (options.precision == Precision::kFp16) {
    return unsupported(
        "cpu backend: precision fp16 runs on GPUs only; on the CPU use bf16 (where the CPU has it), int8 or "
        "fp32");
  }
  const CpuInfo& cpu = cpu_info();
  if (options.precision == Precision::kBf16 && !cpu.native_bf16() && !options.emulate_bf16) {
    return unsupported(fmt::format(
        "cpu backend: precision bf16 needs a CPU with AVX512_BF16 or AMX; this one ({}, best ISA {}) has "
        "neither. Use --precision fp32, or int8 for speed",
        cpu.model, cpu.isa()));
  }
  INFERCOST_RETURN_IF_ERROR(check_output_options(options).with_context("cpu backend"));
  const int threads = resolve_threads(options.threads);
  try {
    // Where bf16 is native, emulate_bf16 changes nothing: the real kernels run.
    const bool emulate = options.emulate_bf16 && !cpu.native_bf16();
    return std::unique_ptr<Backend>(
        new CpuBackend(threads, options.precision, emulate, options.pooling, options.tokens));
  } catch (const dnnl::error& e) {
    return internal_error(fmt::format("cpu backend: oneDNN engine: {}", e.what()));
  }
}

}  // namespace infercost::backend::cpu
