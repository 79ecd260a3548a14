#include "infercost/model/weights.h"

#include <cmath>
#include <map>
#include <string>

#include "checkpoint_names.h"
#include "infercost/model/model_dir.h"
#include "infercost/model/safetensors.h"
#include "model/relative_tables.h"

namespace infercost::model {

namespace {

// Looks tensors up by their HF name, trying legacy aliases (TF-era BERT
// checkpoints say LayerNorm.gamma/beta) and, for base-model checkpoints, the
// name without the "distilbert."/"bert." prefix. Errors name the canonical name.
// Without a file (a header alone), each tensor is found and checked as reading
// would check it, and only counted: read() then gives an empty vector.
class TensorSource {
 public:
  TensorSource(const SafeTensorsFile& file, std::string prefix)
      : tensors_(file.tensors()), path_(file.path()), file_(&file), prefix_(std::move(prefix)) {}
  TensorSource(const SafeTensorsHeader& header, std::string path, std::string prefix)
      : tensors_(header.tensors), path_(std::move(path)), prefix_(std::move(prefix)) {}

  Result<std::vector<float>> read(const std::string& name, std::vector<int64_t> shape) {
    for (const std::string& candidate : candidates(name)) {
      auto it = tensors_.find(candidate);
      if (it == tensors_.end()) continue;
      if (file_) return file_->read_f32(candidate, shape);
      INFERCOST_RETURN_IF_ERROR(check_f32_tensor(path_, it->second, shape));
      counted_ += it->second.numel();
      return std::vector<float>();
    }
    return not_found(path_ + ": tensor '" + name + "' not found");
  }

  Status linear(const std::string& name, int out, int in, Linear& l) {
    l.out = out;
    l.in = in;
    INFERCOST_ASSIGN_OR_RETURN(l.weight, read(name + ".weight", {out, in}));
    INFERCOST_ASSIGN_OR_RETURN(l.bias, read(name + ".bias", {out}));
    return Status();
  }

  Status layer_norm(const std::string& name, int hidden, LayerNormWeights& ln) {
    INFERCOST_ASSIGN_OR_RETURN(ln.gamma, read(name + ".weight", {hidden}));
    INFERCOST_ASSIGN_OR_RETURN(ln.beta, read(name + ".bias", {hidden}));
    return Status();
  }

  // A bias the config says the checkpoint has (read), or has not (zeros,
  // counted in `zero_filled`).
  Result<std::vector<float>> bias(const std::string& name, bool present, int size, size_t& zero_filled) {
    if (present) return read(name, {size});
    zero_filled += static_cast<size_t>(size);
    return file_ ? std::vector<float>(static_cast<size_t>(size), 0.0f) : std::vector<float>();
  }

  bool has(const std::string& name) const {
    for (const std::string& candidate : candidates(name)) {
      if (tensors_.count(candidate)) return true;
    }
    return false;
  }

  // The elements of the tensors read() found and checked without a file.
  int64_t counted() const { return counted_; }

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

  const std::map<std::string, TensorInfo>& tensors_;
  std::string path_;
  const SafeTensorsFile* file_ = nullptr;
  std::string prefix_;
  int64_t counted_ = 0;
};

// ModernBERT's encoder and head (checkpoint_names.h): Wqkv split into q, k
// and v; the biases and norm biases the config says are absent as zeros.
Result<EncoderWeights> read_modernbert_weights(TensorSource& src, const ModelConfig& c,
                                               const CheckpointNames& n, bool classifier) {
  const int h = c.hidden_size, f = c.intermediate_size;
  EncoderWeights w;
  size_t& zeros = w.zero_filled;
  auto norm = [&](const std::string& name, LayerNormWeights& ln) -> Status {
    INFERCOST_ASSIGN_OR_RETURN(ln.gamma, src.read(name + ".weight", {h}));
    INFERCOST_ASSIGN_OR_RETURN(ln.beta, src.bias(name + ".bias", c.norm_bias, h, zeros));
    return Status();
  };
  auto linear = [&](const std::string& name, int out, int in, bool bias, Linear& l) -> Status {
    l.out = out;
    l.in = in;
    INFERCOST_ASSIGN_OR_RETURN(l.weight, src.read(name + ".weight", {out, in}));
    INFERCOST_ASSIGN_OR_RETURN(l.bias, src.bias(name + ".bias", bias, out, zeros));
    return Status();
  };
  const std::string e = n.embeddings;
  const ModernBertNames& x = kModernBertExtraNames;
  INFERCOST_ASSIGN_OR_RETURN(w.word_embeddings,
                             src.read(e + x.tok_embeddings + ".weight", {c.vocab_size, h}));
  w.embedding_bias = embedding_bias_of(c, w.token_type_embeddings);
  INFERCOST_RETURN_IF_ERROR(norm(e + x.embeddings_norm, w.embeddings_ln));
  w.layers.resize(static_cast<size_t>(c.num_layers));
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = n.layer + std::to_string(i) + ".";
    EncoderLayerWeights& l = w.layers[static_cast<size_t>(i)];
    if (i > 0) INFERCOST_RETURN_IF_ERROR(norm(p + n.attn_ln, l.attn_ln));
    Linear qkv;
    INFERCOST_RETURN_IF_ERROR(linear(p + n.q, 3 * h, h, c.attention_bias, qkv));
    Linear* parts[] = {&l.q, &l.k, &l.v};
    for (int part = 0; part < 3; ++part) {  // rows [q | k | v], as HF views Wqkv's output
      Linear& out = *parts[part];
      out.out = h;
      out.in = h;
      if (qkv.weight.empty()) continue;  // counting only
      const auto row0 = static_cast<std::ptrdiff_t>(part) * h;
      out.weight.assign(qkv.weight.begin() + row0 * h, qkv.weight.begin() + (row0 + h) * h);
      out.bias.assign(qkv.bias.begin() + row0, qkv.bias.begin() + row0 + h);
    }
    INFERCOST_RETURN_IF_ERROR(linear(p + n.attn_out, h, h, c.attention_bias, l.attn_out));
    INFERCOST_RETURN_IF_ERROR(norm(p + n.ffn_ln, l.ffn_ln));
    INFERCOST_RETURN_IF_ERROR(linear(p + n.ffn_in, 2 * f, h, c.mlp_bias, l.ffn_in));
    INFERCOST_RETURN_IF_ERROR(linear(p + n.ffn_out, h, f, c.mlp_bias, l.ffn_out));
  }
  INFERCOST_RETURN_IF_ERROR(norm(x.final_norm, w.final_ln));
  if (!classifier) {
    if (src.has(std::string(n.head_pre) + ".weight")) {
      INFERCOST_RETURN_IF_ERROR(linear(n.head_pre, h, h, c.head_bias, w.head.pre));
      INFERCOST_RETURN_IF_ERROR(norm(x.head_norm, w.head.norm));
    }
    return w;
  }
  INFERCOST_RETURN_IF_ERROR(linear(n.head_pre, h, h, c.head_bias, w.head.pre));
  INFERCOST_RETURN_IF_ERROR(norm(x.head_norm, w.head.norm));
  INFERCOST_RETURN_IF_ERROR(src.linear(n.classifier, c.num_labels(), h, w.head.classifier));
  return w;
}

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

// The head's first layer and the classifier; without `classifier` (an
// encoder without a head), the first layer where the checkpoint has it
// (BERT's pooler) and no output layer.
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

// DeBERTa-v2/v3's encoder and ContextPooler head (checkpoint_names.h), with
// what the checkpoint stores in other forms folded into the tables the
// backends read: the word (and position, token type) embeddings through
// embed_proj where embedding_size differs from the hidden size (a linear map
// without bias, so projecting each table is projecting their sum), and per
// layer the relative embeddings (LayerNorm'd where norm_rel_ebd says) through
// the position key and query projections (the layer's own key_proj /
// query_proj with share_att_key, else pos_key_proj / pos_query_proj).
Result<EncoderWeights> read_deberta_weights(TensorSource& src, const ModelConfig& c, const CheckpointNames& n,
                                            bool classifier) {
  const int h = c.hidden_size, f = c.intermediate_size;
  const int width = c.embedding_size > 0 ? c.embedding_size : h;
  const DebertaNames& x = kDebertaExtraNames;
  EncoderWeights w;
  int64_t checkpoint = 0, tables = 0;  // the elements folded, and the tables' that stand for them
  const std::string e = n.embeddings;
  INFERCOST_ASSIGN_OR_RETURN(w.word_embeddings,
                             src.read(e + "word_embeddings.weight", {c.vocab_size, width}));
  if (c.position_table) {
    INFERCOST_ASSIGN_OR_RETURN(w.position_embeddings, src.read(e + "position_embeddings.weight",
                                                               {c.max_position_embeddings, width}));
  }
  if (c.type_vocab_size > 0) {
    INFERCOST_ASSIGN_OR_RETURN(w.token_type_embeddings,
                               src.read(e + "token_type_embeddings.weight", {c.type_vocab_size, width}));
  }
  if (width != h) {
    INFERCOST_ASSIGN_OR_RETURN(std::vector<float> proj, src.read(e + x.embed_proj + ".weight", {h, width}));
    if (!proj.empty()) {
      for (std::vector<float>* table :
           {&w.word_embeddings, &w.position_embeddings, &w.token_type_embeddings}) {
        if (table->empty()) continue;
        const int rows = static_cast<int>(table->size() / static_cast<size_t>(width));
        checkpoint += static_cast<int64_t>(table->size());
        *table = project_rows(*table, rows, width, proj, h);
        tables += static_cast<int64_t>(table->size());
      }
      checkpoint += static_cast<int64_t>(proj.size());
    }
  }
  w.embedding_bias = embedding_bias_of(c, w.token_type_embeddings);
  INFERCOST_RETURN_IF_ERROR(src.layer_norm(e + "LayerNorm", h, w.embeddings_ln));
  std::vector<float> rel;  // [2 span, hidden], normed
  const int rel_rows = 2 * c.relative_span();
  if (c.relative_attention) {
    INFERCOST_ASSIGN_OR_RETURN(rel, src.read(std::string(x.rel_embeddings) + ".weight", {rel_rows, h}));
    checkpoint += static_cast<int64_t>(rel.size());
    if (c.norm_relative_embeddings) {
      LayerNormWeights ln;
      INFERCOST_RETURN_IF_ERROR(src.layer_norm(x.rel_norm, h, ln));
      checkpoint += static_cast<int64_t>(ln.gamma.size() + ln.beta.size());
      if (!rel.empty()) normalize_relative_embeddings(c, ln, rel);
    }
  }
  w.layers.resize(static_cast<size_t>(c.num_layers));
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = n.layer + std::to_string(i) + ".";
    EncoderLayerWeights& l = w.layers[static_cast<size_t>(i)];
    INFERCOST_RETURN_IF_ERROR(read_bert_layer(src, n, p, h, f, l));
    if (!c.relative_attention) continue;
    const auto positions = [&](bool wanted, const Linear& shared, const char* own,
                               std::vector<float>& out) -> Status {
      if (!wanted) return Status();
      Linear separate;
      const Linear* proj = &shared;
      if (!c.share_att_key) {
        INFERCOST_RETURN_IF_ERROR(src.linear(p + own, h, h, separate));
        checkpoint += static_cast<int64_t>(separate.weight.size() + separate.bias.size());
        proj = &separate;
      }
      if (!rel.empty() && !proj->weight.empty()) {
        out = project_rows(rel, rel_rows, h, proj->weight, h, &proj->bias);
        tables += static_cast<int64_t>(out.size());
      }
      return Status();
    };
    INFERCOST_RETURN_IF_ERROR(positions(c.c2p, l.k, x.pos_key_proj, l.pos_key));
    INFERCOST_RETURN_IF_ERROR(positions(c.p2c, l.q, x.pos_query_proj, l.pos_query));
  }
  w.derived_delta = checkpoint - tables;
  INFERCOST_RETURN_IF_ERROR(read_head(src, c, n, classifier, w.head));
  return w;
}

// Every tensor of the encoder and its head, in one walk for reading and
// counting (read_head says what `classifier` changes).
Result<EncoderWeights> read_weights(TensorSource& src, const ModelConfig& c, const CheckpointNames& n,
                                    bool classifier = true) {
  if (c.architecture == Architecture::kModernBert) return read_modernbert_weights(src, c, n, classifier);
  if (c.architecture == Architecture::kDebertaV2) return read_deberta_weights(src, c, n, classifier);
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
    INFERCOST_RETURN_IF_ERROR(read_bert_layer(src, n, p, h, f, l));
  }
  INFERCOST_RETURN_IF_ERROR(read_head(src, c, n, classifier, w.head));
  return w;
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
  const CheckpointNames& names = checkpoint_names(config.architecture);
  TensorSource src(file, names.prefix);
  return read_weights(src, config, names, classifier);
}

Result<int64_t> count_encoder_parameters(const SafeTensorsHeader& header, const std::string& path,
                                         const ModelConfig& config, bool classifier) {
  if (classifier && config.num_labels() < 1) return invalid_argument(path + ": the config has no labels");
  const CheckpointNames& names = checkpoint_names(config.architecture);
  TensorSource src(header, path, names.prefix);
  INFERCOST_RETURN_IF_ERROR(read_weights(src, config, names, classifier).status());
  return src.counted();
}

bool has_classification_head(const std::map<std::string, TensorInfo>& tensors, const ModelConfig& config) {
  // The output layer decides: BERT's pooler is in bare BertModel checkpoints too.
  return tensors.count(std::string(checkpoint_names(config.architecture).classifier) + ".weight") > 0;
}

}  // namespace infercost::model
