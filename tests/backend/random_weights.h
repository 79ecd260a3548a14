// Random weights and a small config of either architecture for the backend
// tests; the oracle they compare with is model::reference_logits
// (src/model/reference_encoder.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/family.h"
#include "model/weights.h"

namespace infercost::backend::testing {

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

// "distilbert", "bert", "roberta", "modernbert", "deberta": test names.
inline const char* arch_name(model::Architecture arch) {
  switch (arch) {
    case model::Architecture::kDistilBert: return "distilbert";
    case model::Architecture::kBert: return "bert";
    case model::Architecture::kRoberta: return "roberta";
    case model::Architecture::kModernBert: return "modernbert";
    case model::Architecture::kDebertaV2: return "deberta";
  }
  return "?";
}

// A small config of any architecture and weights with non-trivial biases
// and LayerNorm parameters. RoBERTa's has pad id 1 and 2 more position rows
// (40 usable positions, as the others).
inline model::ModelConfig small_config(model::Architecture arch, std::string_view activation) {
  model::ModelConfig c;
  c.architecture = arch;
  c.model_type = arch_name(arch);
  c.name = "test-" + c.model_type;
  c.vocab_size = 97;
  c.hidden_size = 32;
  c.num_layers = 2;
  c.num_heads = 4;
  c.intermediate_size = 48;
  c.max_position_embeddings = 40;
  c.type_vocab_size = arch == model::Architecture::kBert ? 2 : 0;
  if (arch == model::Architecture::kRoberta) {
    c.pad_token_id = 1;
    c.max_position_embeddings = 42;
    c.type_vocab_size = 1;
    c.layer_norm_eps = 1e-5f;
  }
  c.ffn_activation = activation == "relu" ? model::Activation::kRelu : model::Activation::kGelu;
  c.labels = {"NEGATIVE", "POSITIVE", "NEUTRAL"};
  model::apply_family(model::family_of(c), c);  // the head's activation, the position numbering
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
  w.embedding_bias = model::embedding_bias_of(c, w.token_type_embeddings);
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
