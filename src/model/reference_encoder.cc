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
  const int n = static_cast<int>(ids.size()), h = c.hidden_size, nh = c.num_heads, dh = c.head_dim();
  std::vector<float> x(static_cast<size_t>(n) * h);
  std::vector<int32_t> positions(static_cast<size_t>(n));
  fill_position_ids(c.position_scheme(), ids.data(), n, positions.data());
  for (int t = 0; t < n; ++t) {
    const size_t position = static_cast<size_t>(positions[static_cast<size_t>(t)]);
    for (int i = 0; i < h; ++i) {
      x[static_cast<size_t>(t) * h + i] =
          w.word_embeddings[static_cast<size_t>(ids[static_cast<size_t>(t)]) * h + i] +
          w.position_embeddings[position * h + i] + w.embedding_bias[static_cast<size_t>(i)];
    }
  }
  reference_layer_norm(x.data(), n, h, w.embeddings_ln, c.layer_norm_eps);
  std::vector<float> ctx(x.size());
  std::vector<float> scores(static_cast<size_t>(n));
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  for (const auto& l : w.layers) {
    const std::vector<float> q = linear(l.q, x, n), k = linear(l.k, x, n), v = linear(l.v, x, n);
    for (int hd = 0; hd < nh; ++hd) {
      for (int t = 0; t < n; ++t) {
        float mx = -INFINITY;
        for (int s = 0; s < n; ++s) {
          float d = 0;
          for (int i = 0; i < dh; ++i) {
            d += q[static_cast<size_t>(t) * h + hd * dh + i] * k[static_cast<size_t>(s) * h + hd * dh + i];
          }
          scores[static_cast<size_t>(s)] = d * scale;
          mx = std::max(mx, d * scale);
        }
        float sum = 0;
        for (auto& sc : scores) sum += (sc = std::exp(sc - mx));
        for (int i = 0; i < dh; ++i) {
          float acc = 0;
          for (int s = 0; s < n; ++s)
            acc += scores[static_cast<size_t>(s)] * v[static_cast<size_t>(s) * h + hd * dh + i];
          ctx[static_cast<size_t>(t) * h + hd * dh + i] = acc / sum;
        }
      }
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
  const std::vector<float> x = reference_token_states(c, w, ids);
  const std::vector<float> cls(x.begin(), x.begin() + c.hidden_size);
  std::vector<float> g = linear(w.head.pre, cls, 1);
  for (auto& f : g) f = reference_activation(c.head_activation(), f);
  return g;
}

std::vector<float> reference_logits(const ModelConfig& c, const EncoderWeights& w,
                                    std::span<const int32_t> ids) {
  return linear(w.head.classifier, reference_head_features(c, w, ids), 1);
}

}  // namespace infercost::model
