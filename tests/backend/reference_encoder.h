// A deliberately naive encoder forward pass (double accumulation, padded
// rows with an HF-style additive mask) that the backend tests compare with.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "infercost/model/config.h"
#include "infercost/model/weights.h"

namespace infercost::backend::testing {

inline double gelu_erf(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

// y = x W^T + b for one row; W is [out, in].
inline std::vector<double> naive_linear(const model::Linear& l, const std::vector<double>& x) {
  std::vector<double> y(size_t(l.out));
  for (int o = 0; o < l.out; ++o) {
    double acc = l.bias[size_t(o)];
    for (int i = 0; i < l.in; ++i) acc += double(l.weight[size_t(o) * l.in + i]) * x[size_t(i)];
    y[size_t(o)] = acc;
  }
  return y;
}

inline void naive_layer_norm(std::vector<double>& x, const model::LayerNormWeights& ln, double eps) {
  const size_t n = x.size();
  double mean = 0;
  for (double v : x) mean += v;
  mean /= double(n);
  double var = 0;
  for (double v : x) var += (v - mean) * (v - mean);
  var /= double(n);
  for (size_t i = 0; i < n; ++i) x[i] = (x[i] - mean) / std::sqrt(var + eps) * ln.gamma[i] + ln.beta[i];
}

// Logits for one padded row of `seq_len` ids whose first `len` are real. The
// padded positions are computed too and masked out of attention as HF does.
inline std::vector<double> reference_logits(const model::ModelConfig& c, const model::EncoderWeights& w,
                                            const int32_t* ids, int seq_len, int len) {
  const int H = c.hidden_size, heads = c.num_heads, dh = H / heads;
  const bool bert = c.architecture == model::Architecture::kBert;
  std::vector<std::vector<double>> h(size_t(seq_len), std::vector<double>(size_t(H), 0.0));
  for (int t = 0; t < seq_len; ++t) {
    for (int i = 0; i < H; ++i) {
      double v = w.word_embeddings[size_t(ids[t]) * H + i] + w.position_embeddings[size_t(t) * H + i];
      if (bert) v += w.token_type_embeddings[size_t(i)];
      h[size_t(t)][size_t(i)] = v;
    }
    naive_layer_norm(h[size_t(t)], w.embeddings_ln, c.layer_norm_eps);
  }
  for (const model::EncoderLayerWeights& L : w.layers) {
    std::vector<std::vector<double>> q, k, v;
    for (int t = 0; t < seq_len; ++t) {
      q.push_back(naive_linear(L.q, h[size_t(t)]));
      k.push_back(naive_linear(L.k, h[size_t(t)]));
      v.push_back(naive_linear(L.v, h[size_t(t)]));
    }
    std::vector<std::vector<double>> ctx(size_t(seq_len), std::vector<double>(size_t(H), 0.0));
    for (int hd = 0; hd < heads; ++hd) {
      for (int i = 0; i < seq_len; ++i) {
        std::vector<double> s(size_t(seq_len), 0.0);
        double mx = -1e300;
        for (int j = 0; j < seq_len; ++j) {
          double dot = 0;
          for (int d = 0; d < dh; ++d)
            dot += q[size_t(i)][size_t(hd * dh + d)] * k[size_t(j)][size_t(hd * dh + d)];
          s[size_t(j)] = dot / std::sqrt(double(dh)) + (j < len ? 0.0 : -1e30);
          mx = std::max(mx, s[size_t(j)]);
        }
        double sum = 0;
        for (double& x : s) sum += (x = std::exp(x - mx));
        for (int d = 0; d < dh; ++d) {
          double acc = 0;
          for (int j = 0; j < seq_len; ++j) acc += s[size_t(j)] / sum * v[size_t(j)][size_t(hd * dh + d)];
          ctx[size_t(i)][size_t(hd * dh + d)] = acc;
        }
      }
    }
    for (int t = 0; t < seq_len; ++t) {
      std::vector<double> a = naive_linear(L.attn_out, ctx[size_t(t)]);
      for (int i = 0; i < H; ++i) a[size_t(i)] += h[size_t(t)][size_t(i)];
      naive_layer_norm(a, L.attn_ln, c.layer_norm_eps);
      std::vector<double> f = naive_linear(L.ffn_in, a);
      for (double& x : f) x = c.activation == "relu" ? std::max(x, 0.0) : gelu_erf(x);
      std::vector<double> o = naive_linear(L.ffn_out, f);
      for (int i = 0; i < H; ++i) o[size_t(i)] += a[size_t(i)];
      naive_layer_norm(o, L.ffn_ln, c.layer_norm_eps);
      h[size_t(t)] = o;
    }
  }
  std::vector<double> pooled = naive_linear(w.head.pre, h[0]);
  for (double& x : pooled) x = bert ? std::tanh(x) : std::max(x, 0.0);
  return naive_linear(w.head.classifier, pooled);
}

inline model::Linear random_linear(int out, int in, std::mt19937& rng, float scale) {
  std::normal_distribution<float> n(0.0f, scale);
  model::Linear l;
  l.out = out;
  l.in = in;
  l.weight.resize(size_t(out) * in);
  l.bias.resize(size_t(out));
  for (float& x : l.weight) x = n(rng);
  for (float& x : l.bias) x = n(rng);
  return l;
}

inline model::LayerNormWeights random_ln(int n, std::mt19937& rng) {
  std::normal_distribution<float> d(0.0f, 0.1f);
  model::LayerNormWeights ln;
  for (int i = 0; i < n; ++i) {
    ln.gamma.push_back(1.0f + d(rng));
    ln.beta.push_back(d(rng));
  }
  return ln;
}

// A small config of either architecture and weights with non-trivial biases
// and LayerNorm parameters.
inline model::ModelConfig small_config(model::Architecture arch, std::string activation) {
  model::ModelConfig c;
  c.architecture = arch;
  c.model_type = arch == model::Architecture::kBert ? "bert" : "distilbert";
  c.name = "test-" + c.model_type;
  c.vocab_size = 97;
  c.hidden_size = 32;
  c.num_layers = 2;
  c.num_heads = 4;
  c.intermediate_size = 48;
  c.max_position_embeddings = 40;
  c.type_vocab_size = arch == model::Architecture::kBert ? 2 : 0;
  c.activation = std::move(activation);
  c.labels = {"NEGATIVE", "POSITIVE", "NEUTRAL"};
  return c;
}

inline model::EncoderWeights random_weights(const model::ModelConfig& c, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, 0.5f);
  const int H = c.hidden_size;
  model::EncoderWeights w;
  w.word_embeddings.resize(size_t(c.vocab_size) * H);
  w.position_embeddings.resize(size_t(c.max_position_embeddings) * H);
  w.token_type_embeddings.resize(size_t(c.type_vocab_size) * H);
  for (float& x : w.word_embeddings) x = n(rng);
  for (float& x : w.position_embeddings) x = n(rng);
  for (float& x : w.token_type_embeddings) x = n(rng);
  w.embeddings_ln = random_ln(H, rng);
  const float s = 1.0f / std::sqrt(float(H));
  for (int l = 0; l < c.num_layers; ++l) {
    model::EncoderLayerWeights L;
    L.q = random_linear(H, H, rng, 2 * s);
    L.k = random_linear(H, H, rng, 2 * s);
    L.v = random_linear(H, H, rng, s);
    L.attn_out = random_linear(H, H, rng, s);
    L.attn_ln = random_ln(H, rng);
    L.ffn_in = random_linear(c.intermediate_size, H, rng, s);
    L.ffn_out = random_linear(H, c.intermediate_size, rng, 1.0f / std::sqrt(float(c.intermediate_size)));
    L.ffn_ln = random_ln(H, rng);
    w.layers.push_back(std::move(L));
  }
  w.head.pre = random_linear(H, H, rng, s);
  w.head.classifier = random_linear(c.num_labels(), H, rng, s);
  return w;
}

}  // namespace infercost::backend::testing
