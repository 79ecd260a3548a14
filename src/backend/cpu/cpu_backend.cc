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
#include <vector>

#include "backend/cpu/gemm_int8.h"
#include "backend/cpu/gemm_onednn.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu_info.h"
#include "backend/rotary.h"
#include "backend/validate.h"
#include "core/threads.h"

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

struct PreparedLayer {
  Linear qkv, attn_out, ffn_in, ffn_out;
  std::vector<float> attn_ln_gamma, attn_ln_beta, ffn_ln_gamma, ffn_ln_beta;  // attn_ln empty: none
  const std::vector<float>* rotary = nullptr;  // rotary_table() of the layer's theta; null: none
  int window = 0;                              // tokens seen on each side; 0: all
  std::vector<float> pos_key, pos_query;       // DeBERTa's c2p / p2c tables; empty: none
};

class CpuBackend final : public Backend {
 public:
  CpuBackend(int threads, Precision precision, bool emulate_bf16, std::optional<model::Pooling> pooling)
      : threads_(threads),
        precision_(precision),
        emulate_bf16_(emulate_bf16),
        pooling_(pooling),
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

  Result<Logits> forward(const TokenBatch& batch) override {
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
    INFERCOST_RETURN_IF_ERROR(validate_model(config, w, /*head=*/!pooling_));
    config_ = config;
    word_ = w.word_embeddings;
    position_ = w.position_embeddings;
    embedding_bias_ = w.embedding_bias;
    emb_gamma_ = w.embeddings_ln.gamma;
    emb_beta_ = w.embeddings_ln.beta;
    final_gamma_ = w.final_ln.gamma;
    final_beta_ = w.final_ln.beta;
    head_gamma_ = w.head.norm.gamma;
    head_beta_ = w.head.norm.beta;
    // The GLU's activation is applied by gelu_glu() after the GEMM.
    const Activation ffn_act =
        config.glu ? Activation::kNone : activation_as<Activation>(config.ffn_activation);
    rotary_.clear();
    for (double theta : config.rope_theta) {
      if (rotary_.count(theta)) continue;
      rotary_table(theta, config.head_dim(), config.max_positions(), rotary_[theta]);
    }
    relative_index_ = model::relative_position_table(config);
    layers_.clear();
    layers_.resize(w.layers.size());
    for (size_t i = 0; i < w.layers.size(); ++i) {
      const model::EncoderLayerWeights& src = w.layers[i];
      PreparedLayer& dst = layers_[i];
      const std::string at = fmt::format("layer {}: ", i);
      const Precision p = precision_;
      const Precision after_norm = layer_norm_fed_precision();
      const bool emu = emulate_bf16_;
      INFERCOST_RETURN_IF_ERROR(dst.qkv.init(engine_, after_norm, emu, {&src.q, &src.k, &src.v},
                                             Activation::kNone, false, at + "qkv"));
      INFERCOST_RETURN_IF_ERROR(dst.attn_out.init(engine_, p, emu, {&src.attn_out}, Activation::kNone, true,
                                                  at + "attention output"));
      INFERCOST_RETURN_IF_ERROR(
          dst.ffn_in.init(engine_, after_norm, emu, {&src.ffn_in}, ffn_act, false, at + "ffn in"));
      INFERCOST_RETURN_IF_ERROR(
          dst.ffn_out.init(engine_, p, emu, {&src.ffn_out}, Activation::kNone, true, at + "ffn out"));
      dst.attn_ln_gamma = src.attn_ln.gamma;
      dst.attn_ln_beta = src.attn_ln.beta;
      dst.ffn_ln_gamma = src.ffn_ln.gamma;
      dst.ffn_ln_beta = src.ffn_ln.beta;
      if (!config.rope_theta.empty()) dst.rotary = &rotary_.at(config.rope_theta[i]);
      dst.pos_key = src.pos_key;
      dst.pos_query = src.pos_query;
      if (!config.attention_window.empty()) dst.window = config.attention_window[i];
    }
    if (pooling_) {
      labels_ = config.hidden_size;
      return Status();
    }
    // The head runs on one row per sequence: it stays fp32 in every precision.
    INFERCOST_RETURN_IF_ERROR(pre_.init(
        engine_, {&w.head.pre}, activation_as<Activation>(config.head_activation()), false, "head pre"));
    INFERCOST_RETURN_IF_ERROR(
        classifier_.init(engine_, {&w.head.classifier}, Activation::kNone, false, "classifier"));
    labels_ = w.head.classifier.out;
    return Status();
  }

  Result<Logits> run_encoder(const TokenBatch& b) {
    Logits logits;
    logits.rows = b.batch;
    logits.labels = labels_;
    if (b.batch == 0) return logits;
    const int hidden = config_.hidden_size;
    const int inter = config_.intermediate_size;
    const int heads = config_.num_heads;

    // Pack the rows' tokens: every linear layer then runs on
    // [total_tokens, *]. Normally only real tokens are packed and padding
    // costs nothing; with compute_padding every row keeps all seq_len
    // positions (padding ids included) and attention masks the padded keys.
    const bool padded = b.compute_padding;
    int64_t total = 0;
    int32_t max_len = 0;
    int64_t* offsets = ensure(offsets_, b.batch);
    int32_t* row_len = ensure(row_len_, b.batch);
    for (int r = 0; r < b.batch; ++r) {
      offsets[r] = total;
      row_len[r] = padded ? b.seq_len : b.lengths[size_t(r)];
      total += row_len[r];
      max_len = std::max(max_len, row_len[r]);
    }
    int32_t* ids = ensure(ids_, total);
    int32_t* positions = ensure(positions_, total);
    const model::PositionScheme scheme = config_.position_scheme();
    for (int r = 0; r < b.batch; ++r) {
      const int32_t* row = b.ids.data() + int64_t(r) * b.seq_len;
      std::memcpy(ids + offsets[r], row, sizeof(int32_t) * size_t(row_len[r]));
      model::fill_position_ids(scheme, row, row_len[r], positions + offsets[r]);
    }
    float* h = ensure(h_, total * hidden);
    float* qkv = ensure(qkv_, total * 3 * hidden);
    float* ctx = ensure(ctx_, total * hidden);
    float* ffn = ensure(ffn_, total * inter);
    int64_t per_thread = 0;
    for (const PreparedLayer& layer : layers_)
      per_thread = std::max(per_thread, attention_scratch_floats(max_len, layer.window));
    if (config_.relative_attention)
      per_thread = std::max(per_thread, disentangled_scratch_floats(max_len, config_.relative_span()));
    float* scratch = ensure(scratch_, per_thread * omp_get_max_threads());
    const int32_t* key_lengths = padded ? b.lengths.data() : nullptr;

    const float eps = config_.layer_norm_eps;
    embed_layer_norm(ids, positions, total, hidden, word_.data(),
                     position_.empty() ? nullptr : position_.data(), embedding_bias_.data(),
                     emb_gamma_.data(), emb_beta_.data(), eps, h);
    auto attend = [&](const PreparedLayer& layer, const float* x) {
      layer.qkv.run(stream_, x, total, qkv, linear_scratch_);
      if (layer.rotary != nullptr) {
        stream_.wait();
        apply_rotary(qkv, total, positions, heads, hidden / heads, layer.rotary->data());
      }
      if (config_.relative_attention) {
        RelativeAttention rel;
        rel.pos_key = layer.pos_key.empty() ? nullptr : layer.pos_key.data();
        rel.pos_query = layer.pos_query.empty() ? nullptr : layer.pos_query.data();
        rel.index = relative_index_.data();
        rel.max_delta = config_.max_positions() - 1;
        const int terms = 1 + int(config_.c2p) + int(config_.p2c);
        rel.scale = 1.0f / std::sqrt(float(hidden / heads) * float(terms));
        disentangled_attention(qkv, ctx, offsets, row_len, key_lengths, b.batch, heads, hidden / heads, rel,
                               scratch, per_thread);
      } else {
        attention(qkv, ctx, offsets, row_len, key_lengths, b.batch, heads, hidden / heads, scratch,
                  per_thread, layer.window);
      }
      layer.attn_out.run(stream_, ctx, total, h, linear_scratch_);  // h += ctx W^T + b
    };
    if (config_.norm_placement == model::NormPlacement::kPre) {
      // x = h; h += attention(norm(x)); h += mlp(norm(h)); after the layers, norm(h).
      float* normed = ensure(normed_, total * hidden);
      float* glu = config_.glu ? ensure(glu_, total * 2 * inter) : ffn;
      for (const PreparedLayer& layer : layers_) {
        const float* x = h;
        if (!layer.attn_ln_gamma.empty()) {
          layer_norm(h, normed, total, hidden, layer.attn_ln_gamma.data(), layer.attn_ln_beta.data(), eps);
          x = normed;
        }
        attend(layer, x);
        layer_norm(h, normed, total, hidden, layer.ffn_ln_gamma.data(), layer.ffn_ln_beta.data(), eps);
        layer.ffn_in.run(stream_, normed, total, glu, linear_scratch_);
        if (config_.glu) {
          stream_.wait();
          gelu_glu(glu, ffn, total, inter);
        }
        layer.ffn_out.run(stream_, ffn, total, h, linear_scratch_);  // h += ffn W^T + b
      }
      stream_.wait();
      layer_norm(h, h, total, hidden, final_gamma_.data(), final_beta_.data(), eps);
    } else {
      for (const PreparedLayer& layer : layers_) {
        attend(layer, h);
        layer_norm(h, h, total, hidden, layer.attn_ln_gamma.data(), layer.attn_ln_beta.data(), eps);
        layer.ffn_in.run(stream_, h, total, ffn, linear_scratch_);
        layer.ffn_out.run(stream_, ffn, total, h, linear_scratch_);  // h += ffn W^T + b
        layer_norm(h, h, total, hidden, layer.ffn_ln_gamma.data(), layer.ffn_ln_beta.data(), eps);
      }
    }

    if (pooling_) {
      stream_.wait();
      logits.values.resize(size_t(b.batch) * hidden);
      for (int r = 0; r < b.batch; ++r) {
        pool_row(*pooling_, h + offsets[r] * hidden, b.lengths[size_t(r)], hidden,
                 logits.values.data() + int64_t(r) * hidden);
      }
      return logits;
    }
    // Head on the [CLS] (first) token of each row, or the mean of its real tokens.
    float* cls = ensure(cls_, int64_t(b.batch) * hidden);
    float* pooled = ensure(pooled_, int64_t(b.batch) * hidden);
    stream_.wait();
    for (int r = 0; r < b.batch; ++r) {
      pool_row(config_.head_mean_pooling ? model::Pooling::kMean : model::Pooling::kCls,
               h + offsets[r] * hidden, b.lengths[size_t(r)], hidden, cls + int64_t(r) * hidden);
    }
    pre_.run(stream_, cls, b.batch, pooled);
    if (config_.head_norm) {
      stream_.wait();
      layer_norm(pooled, pooled, b.batch, hidden, head_gamma_.data(), head_beta_.data(), eps);
    }
    logits.values.resize(size_t(b.batch) * labels_);
    classifier_.run(stream_, pooled, b.batch, logits.values.data());
    stream_.wait();
    return logits;
  }

  // One row's vector from its `length` real tokens' states (`states`:
  // [length, hidden]), as sentence-transformers pools them; sums in double.
  static void pool_row(model::Pooling pooling, const float* states, int length, int hidden, float* out) {
    switch (pooling) {
      case model::Pooling::kCls: std::memcpy(out, states, sizeof(float) * size_t(hidden)); return;
      case model::Pooling::kLastToken:
        std::memcpy(out, states + int64_t(length - 1) * hidden, sizeof(float) * size_t(hidden));
        return;
      case model::Pooling::kMean:
        for (int i = 0; i < hidden; ++i) {
          double sum = 0;
          for (int t = 0; t < length; ++t) sum += states[int64_t(t) * hidden + i];
          out[i] = float(sum / length);
        }
        return;
      case model::Pooling::kMax:
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
  std::optional<model::Pooling> pooling_;  // set: forward() pools instead of running the head

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
  int labels_ = 0;
  std::vector<float> word_, position_, embedding_bias_, emb_gamma_, emb_beta_;
  std::vector<float> final_gamma_, final_beta_, head_gamma_, head_beta_;  // pre-norm encoders, head norm
  std::map<double, std::vector<float>> rotary_;                           // rotary_table() by theta
  std::vector<int32_t>
      relative_index_;  // DeBERTa: relative_position_index() of each delta from -(positions - 1)
  std::vector<PreparedLayer> layers_;
  OnednnLinear pre_, classifier_;
  // Scratch, reused across calls.
  std::vector<int64_t> offsets_;
  std::vector<int32_t> ids_, positions_, row_len_;
  std::vector<float> h_, qkv_, ctx_, ffn_, scratch_, cls_, pooled_, normed_, glu_;
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
  const int threads = resolve_threads(options.threads);
  try {
    // Where bf16 is native, emulate_bf16 changes nothing: the real kernels run.
    const bool emulate = options.emulate_bf16 && !cpu.native_bf16();
    return std::unique_ptr<Backend>(new CpuBackend(threads, options.precision, emulate, options.pooling));
  } catch (const dnnl::error& e) {
    return internal_error(fmt::format("cpu backend: oneDNN engine: {}", e.what()));
  }
}

}  // namespace infercost::backend::cpu
