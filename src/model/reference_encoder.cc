#include "model/reference_encoder.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "model/program.h"

namespace infercost::model {

namespace {

std::vector<float> linear(const Linear& l, const std::vector<float>& x, int rows) {
  std::vector<float> y(static_cast<size_t>(rows) * l.out);
  reference_linear(l, x.data(), rows, y.data());
  return y;
}

// Rotary embedding of one head's vector `x` (head size d) at `position`:
// each pair (x_i, x_{i+d/2}) turned by position * theta^(-2i/d), the angle
// in fp32 as HF computes it.
void rotate(float* x, int d, int position, double theta) {
  for (int i = 0; i < d / 2; ++i) {
    const float inv =
        1.0f / std::pow(static_cast<float>(theta), static_cast<float>(2 * i) / static_cast<float>(d));
    const double angle = static_cast<double>(static_cast<float>(position) * inv);
    const float c = static_cast<float>(std::cos(angle)), s = static_cast<float>(std::sin(angle));
    const float a = x[i], b = x[i + d / 2];
    x[i] = a * c - b * s;
    x[i + d / 2] = b * c + a * s;
  }
}

// Softmax attention of every token over the tokens within `window` of it
// (0: all) into ctx; q and k rotated already.
void attend(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v, int n,
            int h, int nh, int window, float scale, std::vector<float>& ctx) {
  const int dh = h / nh;
  std::vector<float> scores(static_cast<size_t>(n));
  for (int hd = 0; hd < nh; ++hd) {
    for (int t = 0; t < n; ++t) {
      const int lo = window > 0 ? std::max(0, t - window) : 0,
                hi = window > 0 ? std::min(n, t + window + 1) : n;
      float mx = -INFINITY;
      for (int s = lo; s < hi; ++s) {
        float d = 0;
        for (int i = 0; i < dh; ++i) {
          d += q[static_cast<size_t>(t) * h + hd * dh + i] * k[static_cast<size_t>(s) * h + hd * dh + i];
        }
        scores[static_cast<size_t>(s)] = d * scale;
        mx = std::max(mx, d * scale);
      }
      float sum = 0;
      for (int s = lo; s < hi; ++s)
        sum += (scores[static_cast<size_t>(s)] = std::exp(scores[static_cast<size_t>(s)] - mx));
      for (int i = 0; i < dh; ++i) {
        float acc = 0;
        for (int s = lo; s < hi; ++s)
          acc += scores[static_cast<size_t>(s)] * v[static_cast<size_t>(s) * h + hd * dh + i];
        ctx[static_cast<size_t>(t) * h + hd * dh + i] = acc / sum;
      }
    }
  }
}

// DeBERTa's disentangled attention of every token over all: the score of
// query t and key s is (q_t . k_s + q_t . pos_key[r] + k_s . pos_query[r]) x
// scale, r = relative_position_index(t - s), each term where the layer has
// its table.
void attend_disentangled(const ModelConfig& c, const EncoderLayerWeights& l, const std::vector<float>& q,
                         const std::vector<float>& k, const std::vector<float>& v, int n, float scale,
                         std::vector<float>& ctx) {
  const int h = c.hidden_size, nh = c.num_heads, dh = h / nh;
  std::vector<float> scores(static_cast<size_t>(n));
  const auto dot = [dh](const float* a, const float* b) {
    float d = 0;
    for (int i = 0; i < dh; ++i) d += a[i] * b[i];
    return d;
  };
  for (int hd = 0; hd < nh; ++hd) {
    for (int t = 0; t < n; ++t) {
      const float* qt = q.data() + static_cast<size_t>(t) * h + hd * dh;
      float mx = -INFINITY;
      for (int s = 0; s < n; ++s) {
        const float* ks = k.data() + static_cast<size_t>(s) * h + hd * dh;
        const size_t r = static_cast<size_t>(relative_position_index(c, t - s));
        float d = dot(qt, ks);
        if (!l.pos_key.empty()) d += dot(qt, l.pos_key.data() + r * h + hd * dh);
        if (!l.pos_query.empty()) d += dot(ks, l.pos_query.data() + r * h + hd * dh);
        scores[static_cast<size_t>(s)] = d * scale;
        mx = std::max(mx, d * scale);
      }
      float sum = 0;
      for (int s = 0; s < n; ++s)
        sum += (scores[static_cast<size_t>(s)] = std::exp(scores[static_cast<size_t>(s)] - mx));
      for (int i = 0; i < dh; ++i) {
        float acc = 0;
        for (int s = 0; s < n; ++s)
          acc += scores[static_cast<size_t>(s)] * v[static_cast<size_t>(s) * h + hd * dh + i];
        ctx[static_cast<size_t>(t) * h + hd * dh + i] = acc / sum;
      }
    }
  }
}

// The program's steps on one unpadded sequence, in the fixed arithmetic the
// header describes.
class ReferenceExecutor final : public StepExecutor {
 public:
  ReferenceExecutor(const ModelConfig& c, const EncoderWeights& w, std::span<const int32_t> ids,
                    std::span<const int32_t> types)
      : c_(c), w_(w), ids_(ids), types_(types), n_(static_cast<int>(ids.size())) {}

  void run(const EmbedStep& step) override {
    const int h = c_.hidden_size;
    states_.assign(static_cast<size_t>(n_) * h, 0.0f);
    std::vector<int32_t> positions(static_cast<size_t>(n_));
    fill_position_ids(c_.position_scheme(), ids_.data(), n_, positions.data());
    const bool types = step.token_types && !types_.empty();
    for (int t = 0; t < n_; ++t) {
      const size_t position = static_cast<size_t>(positions[static_cast<size_t>(t)]);
      // The token's type row, or type 0's (the embedding bias).
      const float* type =
          types ? w_.token_type_embeddings.data() + static_cast<size_t>(types_[static_cast<size_t>(t)]) * h
                : w_.embedding_bias.data();
      for (int i = 0; i < h; ++i) {
        states_[static_cast<size_t>(t) * h + i] =
            w_.word_embeddings[static_cast<size_t>(ids_[static_cast<size_t>(t)]) * h + i] +
            (step.position_table ? w_.position_embeddings[position * h + i] : 0.0f) + type[i];
      }
    }
    reference_layer_norm(states_.data(), n_, h, w_.embeddings_ln, c_.layer_norm_eps);
  }

  void run(const NormStep& step) override {
    std::vector<float>& out = slot(step.out);
    out = states_;
    reference_layer_norm(out.data(), n_, c_.hidden_size, norm_weights(w_, step.norm), c_.layer_norm_eps);
  }

  void run(const AttentionStep& step) override {
    const int h = c_.hidden_size, nh = c_.num_heads, dh = c_.head_dim();
    const EncoderLayerWeights& l = w_.layers[static_cast<size_t>(step.layer)];
    const std::vector<float>& x = slot(step.in);
    std::vector<float> q = linear(l.q, x, n_), k = linear(l.k, x, n_);
    const std::vector<float> v = linear(l.v, x, n_);
    if (step.rotary_theta > 0) {
      for (int t = 0; t < n_; ++t) {
        for (int hd = 0; hd < nh; ++hd) {
          rotate(q.data() + static_cast<size_t>(t) * h + hd * dh, dh, t, step.rotary_theta);
          rotate(k.data() + static_cast<size_t>(t) * h + hd * dh, dh, t, step.rotary_theta);
        }
      }
    }
    context_.resize(states_.size());
    if (step.scores == Scores::kDisentangled) {
      attend_disentangled(c_, l, q, k, v, n_, step.scale, context_);
    } else {
      attend(q, k, v, n_, h, nh, step.window, step.scale, context_);
    }
  }

  void run(const FeedForwardStep& step) override {
    const EncoderLayerWeights& l = w_.layers[static_cast<size_t>(step.layer)];
    const std::vector<float> wide = linear(l.ffn_in, slot(step.in), n_);
    const int f = c_.intermediate_size, in = step.glu ? 2 * f : f;
    inner_.resize(static_cast<size_t>(n_) * f);
    for (int t = 0; t < n_; ++t) {
      for (int i = 0; i < f; ++i) {
        const float a = reference_activation(step.activation, wide[static_cast<size_t>(t) * in + i]);
        inner_[static_cast<size_t>(t) * f + i] = step.glu ? a * wide[static_cast<size_t>(t) * in + f + i] : a;
      }
    }
  }

  void run(const ResidualStep& step) override {
    const EncoderLayerWeights& l = w_.layers[static_cast<size_t>(step.layer)];
    const bool attention = step.projection == ResidualStep::Projection::kAttentionOutput;
    const std::vector<float> tmp =
        attention ? linear(l.attn_out, context_, n_) : linear(l.ffn_out, inner_, n_);
    for (size_t i = 0; i < states_.size(); ++i) states_[i] += tmp[i];
    run(NormStep{step.norm, step.out});
  }

  void run(const PoolStep& step) override { output_ = pool(step.pooling); }

  void run(const HeadStep& step) override {
    const std::vector<float> first =
        step.pooling == Pooling::kCls ? std::vector<float>(states_.begin(), states_.begin() + c_.hidden_size)
                                      : pool(step.pooling);
    features_ = head_features(first, 1, step.activation, step.norm);
    output_ = linear(w_.head.classifier, features_, 1);
  }

  void run(const TokenStep& step) override {
    if (!step.classifier) {
      output_ = states_;
      return;
    }
    output_ = step.pre
                  ? linear(w_.head.classifier, head_features(states_, n_, step.activation, step.norm), n_)
                  : linear(w_.head.classifier, states_, n_);
  }

  // The head's dense layer, its activation and (with `norm`) its LayerNorm on
  // `rows` rows of `x`: what the classifier reads.
  std::vector<float> head_features(const std::vector<float>& x, int rows, Activation activation,
                                   bool norm) const {
    std::vector<float> f = linear(w_.head.pre, x, rows);
    for (float& v : f) v = reference_activation(activation, v);
    if (norm) reference_layer_norm(f.data(), rows, c_.hidden_size, w_.head.norm, c_.layer_norm_eps);
    return f;
  }

  std::vector<float>& states() { return states_; }
  std::vector<float>& features() { return features_; }
  std::vector<float>& output() { return output_; }

 private:
  std::vector<float>& slot(Slot s) {
    switch (s) {
      case Slot::kStates: return states_;
      case Slot::kNormed: return normed_;
      case Slot::kContext: return context_;
      case Slot::kInner: return inner_;
    }
    return states_;
  }

  // The sequence's states pooled as sentence-transformers pools them, in double.
  std::vector<float> pool(Pooling pooling) const {
    const size_t n = ids_.size(), h = static_cast<size_t>(c_.hidden_size);
    const std::vector<float>& x = states_;
    std::vector<float> out(h);
    for (size_t i = 0; i < h; ++i) {
      double v = 0;
      switch (pooling) {
        case Pooling::kCls: v = x[i]; break;
        case Pooling::kLastToken: v = x[(n - 1) * h + i]; break;
        case Pooling::kMean:
          for (size_t t = 0; t < n; ++t) v += x[t * h + i];
          v /= static_cast<double>(n);
          break;
        case Pooling::kMax:
          v = x[i];
          for (size_t t = 1; t < n; ++t) v = std::max(v, static_cast<double>(x[t * h + i]));
          break;
      }
      out[i] = static_cast<float>(v);
    }
    return out;
  }

  const ModelConfig& c_;
  const EncoderWeights& w_;
  std::span<const int32_t> ids_, types_;
  int n_;
  std::vector<float> states_, normed_, context_, inner_, features_, output_;
};
}  // namespace

void reference_linear(const Linear& l, const float* x, int rows, float* y) {
  for (int o = 0; o < l.out; ++o) {
    const float* w = l.weight.data() + static_cast<size_t>(o) * l.in;
    for (int t = 0; t < rows; ++t) {
      const float* a = x + static_cast<size_t>(t) * l.in;
      float acc[8] = {};
      int i = 0;
      for (; i + 8 <= l.in; i += 8) {
        for (int j = 0; j < 8; ++j) acc[j] += w[i + j] * a[i + j];
      }
      float s = 0;
      for (; i < l.in; ++i) s += w[i] * a[i];
      for (float v : acc) s += v;
      y[static_cast<size_t>(t) * l.out + o] = s + l.bias[static_cast<size_t>(o)];
    }
  }
}

void reference_layer_norm(float* x, int rows, int h, const LayerNormWeights& ln, float eps) {
  for (int t = 0; t < rows; ++t) {
    float* r = x + static_cast<size_t>(t) * h;
    double mean = 0, var = 0;
    for (int i = 0; i < h; ++i) mean += r[i];
    mean /= h;
    for (int i = 0; i < h; ++i) var += (r[i] - mean) * (r[i] - mean);
    var /= h;
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int i = 0; i < h; ++i) {
      r[i] = static_cast<float>((r[i] - mean) * inv) * ln.gamma[static_cast<size_t>(i)] +
             ln.beta[static_cast<size_t>(i)];
    }
  }
}

float reference_gelu(float x) {
  return static_cast<float>(0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2)));
}

float reference_activation(Activation activation, float x) {
  switch (activation) {
    case Activation::kGelu: return reference_gelu(x);
    case Activation::kRelu: return std::max(x, 0.0f);
    case Activation::kTanh: return std::tanh(x);
  }
  return x;
}

std::vector<float> reference_token_states(const ModelConfig& c, const EncoderWeights& w,
                                          std::span<const int32_t> ids, std::span<const int32_t> type_ids) {
  const ForwardProgram program = forward_program(c, Pooling::kCls);
  ReferenceExecutor executor(c, w, ids, type_ids);
  run_program(program, executor, encoder_steps(program));
  return std::move(executor.states());
}

std::vector<float> reference_pooled(const ModelConfig& c, const EncoderWeights& w,
                                    std::span<const int32_t> ids, Pooling pooling,
                                    std::span<const int32_t> type_ids) {
  ReferenceExecutor executor(c, w, ids, type_ids);
  run_program(forward_program(c, pooling), executor);
  return std::move(executor.output());
}

std::vector<float> reference_token_outputs(const ModelConfig& c, const EncoderWeights& w,
                                           std::span<const int32_t> ids, TokenOutput tokens,
                                           std::span<const int32_t> type_ids) {
  ReferenceExecutor executor(c, w, ids, type_ids);
  run_program(forward_program(c, std::nullopt, tokens), executor);
  return std::move(executor.output());
}

std::vector<float> reference_head_features(const ModelConfig& c, const EncoderWeights& w,
                                           std::span<const int32_t> ids) {
  ReferenceExecutor executor(c, w, ids, {});
  run_program(forward_program(c), executor);
  return std::move(executor.features());
}

std::vector<float> reference_logits(const ModelConfig& c, const EncoderWeights& w,
                                    std::span<const int32_t> ids, std::span<const int32_t> type_ids) {
  ReferenceExecutor executor(c, w, ids, type_ids);
  run_program(forward_program(c), executor);
  return std::move(executor.output());
}

}  // namespace infercost::model
