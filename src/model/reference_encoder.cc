#include "model/reference_encoder.h"

#include <algorithm>
#include <cmath>
#include <numbers>

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
            int h, int nh, int window, std::vector<float>& ctx) {
  const int dh = h / nh;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
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
// query t and key s is (q_t . k_s + q_t . pos_key[r] + k_s . pos_query[r]) /
// sqrt(head size x the terms), r = relative_position_index(t - s), each term
// where the layer has its table.
void attend_disentangled(const ModelConfig& c, const EncoderLayerWeights& l, const std::vector<float>& q,
                         const std::vector<float>& k, const std::vector<float>& v, int n,
                         std::vector<float>& ctx) {
  const int h = c.hidden_size, nh = c.num_heads, dh = h / nh;
  const int terms = 1 + (l.pos_key.empty() ? 0 : 1) + (l.pos_query.empty() ? 0 : 1);
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh * terms));
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

// A pre-norm encoder (ModernBERT) from its embeddings `x`: per layer x +=
// attention(norm(x)) (no norm in a layer without one), x += mlp(norm(x)),
// then the final norm.
void pre_norm_layers(const ModelConfig& c, const EncoderWeights& w, int n, std::vector<float>& x) {
  const int h = c.hidden_size, nh = c.num_heads, dh = c.head_dim();
  std::vector<float> ctx(x.size());
  for (size_t layer = 0; layer < w.layers.size(); ++layer) {
    const EncoderLayerWeights& l = w.layers[layer];
    std::vector<float> normed = x;
    if (!l.attn_ln.gamma.empty()) reference_layer_norm(normed.data(), n, h, l.attn_ln, c.layer_norm_eps);
    std::vector<float> q = linear(l.q, normed, n), k = linear(l.k, normed, n);
    const std::vector<float> v = linear(l.v, normed, n);
    if (!c.rope_theta.empty()) {
      for (int t = 0; t < n; ++t) {
        for (int hd = 0; hd < nh; ++hd) {
          rotate(q.data() + static_cast<size_t>(t) * h + hd * dh, dh, t, c.rope_theta[layer]);
          rotate(k.data() + static_cast<size_t>(t) * h + hd * dh, dh, t, c.rope_theta[layer]);
        }
      }
    }
    attend(q, k, v, n, h, nh, c.global_layer(static_cast<int>(layer)) ? 0 : c.attention_window[layer], ctx);
    std::vector<float> tmp = linear(l.attn_out, ctx, n);
    for (size_t i = 0; i < x.size(); ++i) x[i] += tmp[i];
    normed = x;
    reference_layer_norm(normed.data(), n, h, l.ffn_ln, c.layer_norm_eps);
    const std::vector<float> wide = linear(l.ffn_in, normed, n);
    const int f = c.intermediate_size, in = c.glu ? 2 * f : f;
    std::vector<float> ffn(static_cast<size_t>(n) * f);
    for (int t = 0; t < n; ++t) {
      for (int i = 0; i < f; ++i) {
        const float a = reference_activation(c.ffn_activation, wide[static_cast<size_t>(t) * in + i]);
        ffn[static_cast<size_t>(t) * f + i] = c.glu ? a * wide[static_cast<size_t>(t) * in + f + i] : a;
      }
    }
    tmp = linear(l.ffn_out, ffn, n);
    for (size_t i = 0; i < x.size(); ++i) x[i] += tmp[i];
  }
  reference_layer_norm(x.data(), n, h, w.final_ln, c.layer_norm_eps);
}

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
                                          std::span<const int32_t> ids) {
  const int n = static_cast<int>(ids.size()), h = c.hidden_size, nh = c.num_heads;
  std::vector<float> x(static_cast<size_t>(n) * h);
  std::vector<int32_t> positions(static_cast<size_t>(n));
  fill_position_ids(c.position_scheme(), ids.data(), n, positions.data());
  for (int t = 0; t < n; ++t) {
    const size_t position = static_cast<size_t>(positions[static_cast<size_t>(t)]);
    for (int i = 0; i < h; ++i) {
      x[static_cast<size_t>(t) * h + i] =
          w.word_embeddings[static_cast<size_t>(ids[static_cast<size_t>(t)]) * h + i] +
          (c.position_table ? w.position_embeddings[position * h + i] : 0.0f) +
          w.embedding_bias[static_cast<size_t>(i)];
    }
  }
  reference_layer_norm(x.data(), n, h, w.embeddings_ln, c.layer_norm_eps);
  if (c.norm_placement == NormPlacement::kPre) {
    pre_norm_layers(c, w, n, x);
    return x;
  }
  std::vector<float> ctx(x.size());
  for (const auto& l : w.layers) {
    const std::vector<float> q = linear(l.q, x, n), k = linear(l.k, x, n), v = linear(l.v, x, n);
    if (c.relative_attention) {
      attend_disentangled(c, l, q, k, v, n, ctx);
    } else {
      attend(q, k, v, n, h, nh, /*window=*/0, ctx);
    }
    std::vector<float> tmp = linear(l.attn_out, ctx, n);
    for (size_t i = 0; i < x.size(); ++i) x[i] += tmp[i];
    reference_layer_norm(x.data(), n, h, l.attn_ln, c.layer_norm_eps);
    std::vector<float> ffn = linear(l.ffn_in, x, n);
    for (auto& f : ffn) f = reference_activation(c.ffn_activation, f);
    tmp = linear(l.ffn_out, ffn, n);
    for (size_t i = 0; i < x.size(); ++i) x[i] += tmp[i];
    reference_layer_norm(x.data(), n, h, l.ffn_ln, c.layer_norm_eps);
  }
  return x;
}

std::vector<float> reference_pooled(const ModelConfig& c, const EncoderWeights& w,
                                    std::span<const int32_t> ids, Pooling pooling) {
  const std::vector<float> x = reference_token_states(c, w, ids);
  const size_t n = ids.size(), h = static_cast<size_t>(c.hidden_size);
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

std::vector<float> reference_head_features(const ModelConfig& c, const EncoderWeights& w,
                                           std::span<const int32_t> ids) {
  const std::vector<float> cls = c.head_mean_pooling ? reference_pooled(c, w, ids, Pooling::kMean) : [&] {
    const std::vector<float> x = reference_token_states(c, w, ids);
    return std::vector<float>(x.begin(), x.begin() + c.hidden_size);
  }();
  std::vector<float> g = linear(w.head.pre, cls, 1);
  for (auto& f : g) f = reference_activation(c.head_activation(), f);
  if (c.head_norm) reference_layer_norm(g.data(), 1, c.hidden_size, w.head.norm, c.layer_norm_eps);
  return g;
}

std::vector<float> reference_logits(const ModelConfig& c, const EncoderWeights& w,
                                    std::span<const int32_t> ids) {
  return linear(w.head.classifier, reference_head_features(c, w, ids), 1);
}

}  // namespace infercost::model
