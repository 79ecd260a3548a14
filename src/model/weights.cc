#include "model/weights.h"

#include <cmath>
#include <map>
#include <string>

#include "checkpoint_names.h"
#include "family.h"
#include "model/model_dir.h"
#include "model/relative_tables.h"
#include "model/safetensors.h"
#include "tensor_source.h"

namespace infercost::model {

namespace {

// A post-norm layer in BERT's layout under the names `n` gives, at `p` (the
// layer's prefix).
Status read_bert_layer(TensorSource& src, const CheckpointNames& n, const std::string& p, int h, int f,
                       EncoderLayerWeights& l) {
  INFERCOST_RETURN_IF_ERROR(src.linear(p + n.q, h, h, l.q));
  INFERCOST_RETURN_IF_ERROR(src.linear(p + n.k, h, h, l.k));
  INFERCOST_RETURN_IF_ERROR(src.linear(p + n.v, h, h, l.v));
  INFERCOST_RETURN_IF_ERROR(src.linear(p + n.attn_out, h, h, l.attn_out));
  INFERCOST_RETURN_IF_ERROR(src.layer_norm(p + n.attn_ln, h, l.attn_ln));
  INFERCOST_RETURN_IF_ERROR(src.linear(p + n.ffn_in, f, h, l.ffn_in));
  INFERCOST_RETURN_IF_ERROR(src.linear(p + n.ffn_out, h, f, l.ffn_out));
  return src.layer_norm(p + n.ffn_ln, h, l.ffn_ln);
}

}  // namespace

Status read_bert_layers(TensorSource& src, const ModelConfig& c, const CheckpointNames& n, EncoderWeights& w,
                        const ReadLayerExtra& extra) {
  w.layers.resize(static_cast<size_t>(c.num_layers));
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = n.layer_prefix(i);
    EncoderLayerWeights& l = w.layers[static_cast<size_t>(i)];
    INFERCOST_RETURN_IF_ERROR(read_bert_layer(src, n, p, c.hidden_size, c.intermediate_size, l));
    if (extra) INFERCOST_RETURN_IF_ERROR(extra(p, l));
  }
  return Status();
}

Status read_head(TensorSource& src, const ModelConfig& c, const CheckpointNames& n, bool classifier,
                 ClassifierHeadWeights& head) {
  const int h = c.hidden_size;
  if (!classifier) {
    if (src.has(std::string(n.head_pre) + ".weight")) return src.linear(n.head_pre, h, h, head.pre);
    return Status();
  }
  INFERCOST_RETURN_IF_ERROR(src.linear(n.head_pre, h, h, head.pre));
  return src.linear(n.classifier, c.num_labels(), h, head.classifier);
}

Result<EncoderWeights> read_bert_layout_weights(TensorSource& src, const ModelConfig& c,
                                                const CheckpointNames& n, bool classifier) {
  const int h = c.hidden_size;
  EncoderWeights w;
  const std::string e = n.embeddings_prefix();
  INFERCOST_ASSIGN_OR_RETURN(w.word_embeddings, src.read(e + "word_embeddings.weight", {c.vocab_size, h}));
  INFERCOST_ASSIGN_OR_RETURN(w.position_embeddings,
                             src.read(e + "position_embeddings.weight", {c.max_position_embeddings, h}));
  if (c.type_vocab_size > 0) {
    INFERCOST_ASSIGN_OR_RETURN(w.token_type_embeddings,
                               src.read(e + "token_type_embeddings.weight", {c.type_vocab_size, h}));
  }
  w.embedding_bias = embedding_bias_of(c, w.token_type_embeddings);
  INFERCOST_RETURN_IF_ERROR(src.layer_norm(e + "LayerNorm", h, w.embeddings_ln));
  INFERCOST_RETURN_IF_ERROR(read_bert_layers(src, c, n, w));
  INFERCOST_RETURN_IF_ERROR(read_head(src, c, n, classifier, w.head));
  return w;
}

namespace {

// Every tensor of the encoder and its head, in one walk for reading and
// counting (read_head says what `classifier` changes).
Result<EncoderWeights> read_family_weights(const Family& family, TensorSource& src, const ModelConfig& c,
                                           bool classifier) {
  if (family.weights.read != nullptr) return family.weights.read(src, c, classifier);
  return read_bert_layout_weights(src, c, *family.weights.names, classifier);
}

size_t linear_count(const Linear& l) {
  return l.weight.size() + l.bias.size();
}
size_t ln_count(const LayerNormWeights& ln) {
  return ln.gamma.size() + ln.beta.size();
}

}  // namespace

void normalize_relative_embeddings(const ModelConfig& c, const LayerNormWeights& ln,
                                   std::vector<float>& rel) {
  const int h = c.hidden_size;
  const size_t rows = rel.size() / static_cast<size_t>(h);
  for (size_t r = 0; r < rows; ++r) {
    float* row = rel.data() + r * static_cast<size_t>(h);
    double mean = 0, var = 0;
    for (int i = 0; i < h; ++i) mean += row[i];
    mean /= h;
    for (int i = 0; i < h; ++i) var += (row[i] - mean) * (row[i] - mean);
    var /= h;
    const double inv = 1.0 / std::sqrt(var + static_cast<double>(c.layer_norm_eps));
    for (int i = 0; i < h; ++i) row[i] = static_cast<float>((row[i] - mean) * inv * ln.gamma[i] + ln.beta[i]);
  }
}

std::vector<float> project_rows(const std::vector<float>& x, int rows, int in, const std::vector<float>& w,
                                int out, const std::vector<float>* bias) {
  std::vector<float> y(static_cast<size_t>(rows) * static_cast<size_t>(out));
  for (int r = 0; r < rows; ++r) {
    const float* xr = x.data() + static_cast<size_t>(r) * static_cast<size_t>(in);
    for (int o = 0; o < out; ++o) {
      const float* wo = w.data() + static_cast<size_t>(o) * static_cast<size_t>(in);
      // Eight partial sums the compiler keeps in vector registers.
      float acc[8] = {};
      int i = 0;
      for (; i + 8 <= in; i += 8) {
        for (int j = 0; j < 8; ++j) acc[j] += xr[i + j] * wo[i + j];
      }
      double sum = bias != nullptr ? (*bias)[static_cast<size_t>(o)] : 0.0;
      for (; i < in; ++i) sum += static_cast<double>(xr[i]) * wo[i];
      for (float a : acc) sum += a;
      y[static_cast<size_t>(r) * static_cast<size_t>(out) + static_cast<size_t>(o)] = static_cast<float>(sum);
    }
  }
  return y;
}

size_t EncoderWeights::parameter_count() const {
  size_t n = word_embeddings.size() + position_embeddings.size() + token_type_embeddings.size() +
             ln_count(embeddings_ln) + linear_count(head.pre) + ln_count(head.norm) +
             linear_count(head.classifier) + ln_count(final_ln);
  for (const auto& l : layers) {
    n += linear_count(l.q) + linear_count(l.k) + linear_count(l.v) + linear_count(l.attn_out) +
         ln_count(l.attn_ln) + linear_count(l.ffn_in) + linear_count(l.ffn_out) + ln_count(l.ffn_ln) +
         l.pos_key.size() + l.pos_query.size();
  }
  return static_cast<size_t>(static_cast<int64_t>(n - zero_filled) + derived_delta);
}

std::vector<float> embedding_bias_of(const ModelConfig& config, const std::vector<float>& token_types) {
  const size_t hidden = static_cast<size_t>(config.hidden_size);
  if (token_types.size() < hidden) return std::vector<float>(hidden, 0.0f);
  return std::vector<float>(token_types.begin(), token_types.begin() + static_cast<std::ptrdiff_t>(hidden));
}

Result<EncoderWeights> read_encoder_weights(const SafeTensorsFile& file, const ModelConfig& config,
                                            bool classifier) {
  if (classifier && config.num_labels() < 1)
    return invalid_argument(file.path() + ": the config has no labels");
  const Family& family = family_of(config);
  TensorSource src(file, family.weights.names->prefix);
  return read_family_weights(family, src, config, classifier);
}

Result<int64_t> count_encoder_parameters(const SafeTensorsHeader& header, const std::string& path,
                                         const ModelConfig& config, bool classifier) {
  if (classifier && config.num_labels() < 1) return invalid_argument(path + ": the config has no labels");
  const Family& family = family_of(config);
  TensorSource src(header, path, family.weights.names->prefix);
  INFERCOST_RETURN_IF_ERROR(read_family_weights(family, src, config, classifier).status());
  return src.counted();
}

bool has_classification_head(const std::map<std::string, TensorInfo>& tensors, const ModelConfig& config) {
  // The output layer decides: BERT's pooler is in bare BertModel checkpoints too.
  return tensors.count(std::string(family_of(config).weights.names->classifier) + ".weight") > 0;
}

}  // namespace infercost::model
