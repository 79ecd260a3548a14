#include "infercost/model/weights.h"

#include <string>

#include "checkpoint_names.h"
#include "infercost/model/model_dir.h"
#include "infercost/model/safetensors.h"

namespace infercost::model {

namespace {

// Looks tensors up by their HF name, trying legacy aliases (TF-era BERT
// checkpoints say LayerNorm.gamma/beta) and, for base-model checkpoints, the
// name without the "distilbert."/"bert." prefix. Errors name the canonical name.
class TensorSource {
 public:
  TensorSource(const SafeTensorsFile& file, std::string prefix) : file_(file), prefix_(std::move(prefix)) {}

  Result<std::vector<float>> read(const std::string& name, std::vector<int64_t> shape) const {
    for (const std::string& candidate : candidates(name)) {
      if (file_.find(candidate)) return file_.read_f32(candidate, shape);
    }
    return not_found(file_.path() + ": tensor '" + name + "' not found");
  }

  Status linear(const std::string& name, int out, int in, Linear& l) const {
    l.out = out;
    l.in = in;
    INFERCOST_ASSIGN_OR_RETURN(l.weight, read(name + ".weight", {out, in}));
    INFERCOST_ASSIGN_OR_RETURN(l.bias, read(name + ".bias", {out}));
    return Status();
  }

  Status layer_norm(const std::string& name, int hidden, LayerNormWeights& ln) const {
    INFERCOST_ASSIGN_OR_RETURN(ln.gamma, read(name + ".weight", {hidden}));
    INFERCOST_ASSIGN_OR_RETURN(ln.beta, read(name + ".bias", {hidden}));
    return Status();
  }

 private:
  std::vector<std::string> candidates(const std::string& name) const {
    std::vector<std::string> out{name};
    auto ends_with = [&](const std::string& s, const std::string& suffix) {
      return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (ends_with(name, ".weight")) out.push_back(name.substr(0, name.size() - 7) + ".gamma");
    if (ends_with(name, ".bias")) out.push_back(name.substr(0, name.size() - 5) + ".beta");
    if (!prefix_.empty() && name.rfind(prefix_, 0) == 0) {
      size_t n = out.size();
      for (size_t i = 0; i < n; ++i) out.push_back(out[i].substr(prefix_.size()));
    }
    return out;
  }

  const SafeTensorsFile& file_;
  std::string prefix_;
};

Result<EncoderWeights> read_weights(const SafeTensorsFile& file, const ModelConfig& c,
                                    const CheckpointNames& n) {
  const TensorSource src(file, n.prefix);
  const int h = c.hidden_size, f = c.intermediate_size;
  EncoderWeights w;
  const std::string e = n.embeddings;
  INFERCOST_ASSIGN_OR_RETURN(w.word_embeddings, src.read(e + "word_embeddings.weight", {c.vocab_size, h}));
  INFERCOST_ASSIGN_OR_RETURN(w.position_embeddings,
                             src.read(e + "position_embeddings.weight", {c.max_position_embeddings, h}));
  if (n.token_types) {
    INFERCOST_ASSIGN_OR_RETURN(w.token_type_embeddings,
                               src.read(e + "token_type_embeddings.weight", {c.type_vocab_size, h}));
  }
  w.embedding_bias = embedding_bias_of(c, w.token_type_embeddings);
  INFERCOST_RETURN_IF_ERROR(src.layer_norm(e + "LayerNorm", h, w.embeddings_ln));
  w.layers.resize(static_cast<size_t>(c.num_layers));
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = n.layer + std::to_string(i) + ".";
    EncoderLayerWeights& l = w.layers[static_cast<size_t>(i)];
    INFERCOST_RETURN_IF_ERROR(src.linear(p + n.q, h, h, l.q));
    INFERCOST_RETURN_IF_ERROR(src.linear(p + n.k, h, h, l.k));
    INFERCOST_RETURN_IF_ERROR(src.linear(p + n.v, h, h, l.v));
    INFERCOST_RETURN_IF_ERROR(src.linear(p + n.attn_out, h, h, l.attn_out));
    INFERCOST_RETURN_IF_ERROR(src.layer_norm(p + n.attn_ln, h, l.attn_ln));
    INFERCOST_RETURN_IF_ERROR(src.linear(p + n.ffn_in, f, h, l.ffn_in));
    INFERCOST_RETURN_IF_ERROR(src.linear(p + n.ffn_out, h, f, l.ffn_out));
    INFERCOST_RETURN_IF_ERROR(src.layer_norm(p + n.ffn_ln, h, l.ffn_ln));
  }
  INFERCOST_RETURN_IF_ERROR(src.linear(n.head_pre, h, h, w.head.pre));
  INFERCOST_RETURN_IF_ERROR(src.linear(n.classifier, c.num_labels(), h, w.head.classifier));
  return w;
}

size_t linear_count(const Linear& l) {
  return l.weight.size() + l.bias.size();
}
size_t ln_count(const LayerNormWeights& ln) {
  return ln.gamma.size() + ln.beta.size();
}

}  // namespace

size_t EncoderWeights::parameter_count() const {
  size_t n = word_embeddings.size() + position_embeddings.size() + token_type_embeddings.size() +
             ln_count(embeddings_ln) + linear_count(head.pre) + linear_count(head.classifier);
  for (const auto& l : layers) {
    n += linear_count(l.q) + linear_count(l.k) + linear_count(l.v) + linear_count(l.attn_out) +
         ln_count(l.attn_ln) + linear_count(l.ffn_in) + linear_count(l.ffn_out) + ln_count(l.ffn_ln);
  }
  return n;
}

std::vector<float> embedding_bias_of(const ModelConfig& config, const std::vector<float>& token_types) {
  const size_t hidden = static_cast<size_t>(config.hidden_size);
  if (token_types.size() < hidden) return std::vector<float>(hidden, 0.0f);
  return std::vector<float>(token_types.begin(), token_types.begin() + static_cast<std::ptrdiff_t>(hidden));
}

Result<EncoderWeights> read_encoder_weights(const SafeTensorsFile& file, const ModelConfig& config) {
  if (config.num_labels() < 1) return invalid_argument(file.path() + ": the config has no labels");
  return read_weights(file, config, checkpoint_names(config.architecture));
}

}  // namespace infercost::model
