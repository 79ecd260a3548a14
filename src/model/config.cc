#include "infercost/model/config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "infercost/core/file.h"
#include "json_keys.h"

namespace infercost::model {

namespace {

using nlohmann::json;
using ordered_json = nlohmann::ordered_json;

// Far above any BERT-family classifier; rejects values that would only make
// us allocate absurd buffers.
constexpr int64_t kMaxDim = 1 << 16;
constexpr int64_t kMaxVocab = 1 << 24;
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxLabels = 1 << 16;

constexpr const char* kSupportedFamilies =
    "distilbert, bert, roberta, xlm-roberta, camembert, modernbert, deberta-v2";

class Reader {
 public:
  Reader(const json& doc, const std::string& source) : doc_(doc), source_(source) {}

  Status int_key(const char* key, bool required, int64_t lo, int64_t hi, int& out) const {
    auto it = doc_.find(key);
    if (it == doc_.end() || it->is_null()) {
      if (required) return not_found(source_ + ": required key '" + key + "' is missing");
      return Status();
    }
    if (!it->is_number_integer())
      return corruption(source_ + ": '" + key + "' must be an integer, got " + it->dump());
    int64_t v = it->get<int64_t>();
    if (v < lo || v > hi) {
      return corruption(fmt::format("{}: '{}' is {}, expected {}..{}", source_, key, v, lo, hi));
    }
    out = static_cast<int>(v);
    return Status();
  }

  Status string_key(const char* key, std::string& out) const {
    auto it = doc_.find(key);
    if (it == doc_.end() || it->is_null()) return Status();
    if (!it->is_string()) return corruption(source_ + ": '" + key + "' must be a string, got " + it->dump());
    out = it->get<std::string>();
    return Status();
  }

 private:
  const json& doc_;
  const std::string& source_;
};

Status parse_labels(const json& doc, const std::string& source, ModelConfig& c) {
  auto it = doc.find("id2label");
  if (it == doc.end() || it->is_null()) {
    // HF's PretrainedConfig default is num_labels=2 with generic names.
    int n = 2;
    if (auto nl = doc.find("num_labels"); nl != doc.end() && nl->is_number_integer()) {
      int64_t v = nl->get<int64_t>();
      if (v < 1 || v > kMaxLabels) return corruption(source + ": 'num_labels' is " + std::to_string(v));
      n = static_cast<int>(v);
    }
    c.labels.clear();
    for (int i = 0; i < n; ++i) c.labels.push_back("LABEL_" + std::to_string(i));
    return Status();
  }
  if (!it->is_object() || it->empty()) return corruption(source + ": 'id2label' must be a non-empty object");
  if (it->size() > static_cast<size_t>(kMaxLabels))
    return corruption(source + ": 'id2label' has too many labels");
  std::vector<std::string> labels(it->size());
  std::vector<bool> seen(it->size(), false);
  for (const auto& [key, value] : it->items()) {
    size_t pos = 0;
    long long id = -1;
    bool numeric =
        !key.empty() && key.size() <= 9 && key.find_first_not_of("0123456789") == std::string::npos;
    if (numeric) id = std::stoll(key, &pos);
    if (!numeric || id < 0 || static_cast<size_t>(id) >= labels.size()) {
      return corruption(
          fmt::format("{}: id2label key '{}' is not an id in 0..{}", source, key, labels.size() - 1));
    }
    if (!value.is_string()) return corruption(source + ": id2label[" + key + "] must be a string");
    if (seen[static_cast<size_t>(id)]) return corruption(source + ": id2label repeats id " + key);
    seen[static_cast<size_t>(id)] = true;
    labels[static_cast<size_t>(id)] = value.get<std::string>();
  }
  c.labels = std::move(labels);
  return Status();
}

// The FFN activation named by `key` (default gelu): gelu or relu.
Status read_ffn_activation(Reader& r, const char* key, const std::string& source, Activation* out) {
  std::string act = "gelu";
  INFERCOST_RETURN_IF_ERROR(r.string_key(key, act));
  if (act == "gelu" || act == "relu") {
    *out = act == "relu" ? Activation::kRelu : Activation::kGelu;
    return Status();
  }
  return unsupported(source + ": '" + key + "' is '" + act +
                     "'; supported activations are gelu (exact erf) and relu");
}

// problem_type: one of HF's three, or absent. HF refuses single-label
// classification with one label; so do we.
Status read_problem_type(Reader& r, const std::string& source, ModelConfig& c) {
  INFERCOST_RETURN_IF_ERROR(r.string_key("problem_type", c.problem_type));
  if (c.problem_type.empty()) return Status();
  if (c.problem_type != "single_label_classification" && c.problem_type != "multi_label_classification" &&
      c.problem_type != "regression") {
    return corruption(source + ": 'problem_type' is '" + c.problem_type +
                      "'; expected single_label_classification, multi_label_classification or regression");
  }
  if (c.problem_type == "single_label_classification" && c.num_labels() == 1) {
    return corruption(
        source + ": 'problem_type' single_label_classification needs at least 2 labels; the config has 1");
  }
  return Status();
}

// The names a family gives the encoder's sizes and FFN activation.
struct ShapeKeys {
  const char *hidden, *layers, *heads, *intermediate, *activation;
};
constexpr ShapeKeys kDistilBertKeys = {"dim", "n_layers", "n_heads", "hidden_dim", "activation"};
constexpr ShapeKeys kBertKeys = {"hidden_size", "num_hidden_layers", "num_attention_heads",
                                 "intermediate_size", "hidden_act"};

// The sizes (required) and the FFN activation (default gelu).
Status read_shape(Reader& r, const ShapeKeys& k, const std::string& source, ModelConfig& c) {
  INFERCOST_RETURN_IF_ERROR(r.int_key(k.hidden, true, 1, kMaxDim, c.hidden_size));
  INFERCOST_RETURN_IF_ERROR(r.int_key(k.layers, true, 1, kMaxLayers, c.num_layers));
  INFERCOST_RETURN_IF_ERROR(r.int_key(k.heads, true, 1, kMaxDim, c.num_heads));
  INFERCOST_RETURN_IF_ERROR(r.int_key(k.intermediate, true, 1, kMaxDim * 8, c.intermediate_size));
  return read_ffn_activation(r, k.activation, source, &c.ffn_activation);
}

// The keys BERT and RoBERTa share. Defaults are those of HF's BertConfig and
// RobertaConfig, which agree (type_vocab_size 2, layer_norm_eps 1e-12); real
// RoBERTa files say 1 and 1e-05.
Status read_bert_keys(const json& doc, Reader& r, const std::string& source, ModelConfig& c) {
  INFERCOST_RETURN_IF_ERROR(read_shape(r, kBertKeys, source, c));
  c.type_vocab_size = 2;
  INFERCOST_RETURN_IF_ERROR(r.int_key("type_vocab_size", false, 1, kMaxVocab, c.type_vocab_size));
  c.layer_norm_eps = 1e-12f;
  if (auto it = doc.find("layer_norm_eps"); it != doc.end() && !it->is_null()) {
    if (!it->is_number() || it->get<double>() <= 0 || it->get<double>() > 1) {
      return corruption(source + ": 'layer_norm_eps' must be a number in (0, 1], got " + it->dump());
    }
    c.layer_norm_eps = static_cast<float>(it->get<double>());
  }
  std::string pos_type = "absolute";
  INFERCOST_RETURN_IF_ERROR(r.string_key("position_embedding_type", pos_type));
  if (pos_type != "absolute") {
    return unsupported(source + ": position_embedding_type '" + pos_type + "' (only absolute is supported)");
  }
  return Status();
}

Result<double> positive_number(const json& doc, const char* key, double fallback, const std::string& source) {
  auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) return fallback;
  if (!it->is_number() || !(it->get<double>() > 0)) {
    return corruption(source + ": '" + key + "' must be a positive number, got " + it->dump());
  }
  return it->get<double>();
}

// ModernBERT's rotary base for one kind of layer: rope_parameters[kind]
// (transformers 5), else the older `legacy_key`, else HF's default. Only the
// plain ("default") rotary embedding is computed; a scaled one is refused.
Result<double> rope_theta_of(const json& doc, const char* kind, const char* legacy_key, double fallback,
                             const std::string& source) {
  if (auto scaling = doc.find("rope_scaling"); scaling != doc.end() && !scaling->is_null()) {
    return unsupported(source + ": rope_scaling " + scaling->dump() + " (only the plain rotary embedding)");
  }
  auto params = doc.find("rope_parameters");
  if (params != doc.end() && !params->is_null()) {
    if (!params->is_object()) return corruption(source + ": 'rope_parameters' must be an object");
    auto p = params->find(kind);
    if (p != params->end() && !p->is_null()) {
      if (!p->is_object()) return corruption(source + ": rope_parameters." + kind + " must be an object");
      for (const auto& [key, value] : p->items()) {
        if (key == "rope_theta") continue;
        if (key == "rope_type" && value == "default") continue;
        return unsupported(source + ": rope_parameters." + kind + "." + key + " " + value.dump() +
                           " (only the plain rotary embedding: rope_type default)");
      }
      if (p->contains("rope_theta")) {
        const std::string where = std::string("rope_parameters.") + kind;
        const json& theta = p->at("rope_theta");
        if (!theta.is_number() || !(theta.get<double>() > 0))
          return corruption(source + ": " + where + ".rope_theta must be a positive number");
        return theta.get<double>();
      }
    }
  }
  return positive_number(doc, legacy_key, fallback, source);
}

// An activation of HF's ACT2FN that the engine computes: gelu (exact erf),
// relu, tanh.
Result<Activation> activation_key(Reader& r, const char* key, const std::string& source) {
  std::string act = "gelu";
  INFERCOST_RETURN_IF_ERROR(r.string_key(key, act));
  for (Activation a : {Activation::kGelu, Activation::kRelu, Activation::kTanh}) {
    if (act == activation_name(a)) return a;
  }
  return unsupported(source + ": '" + key + "' is '" + act + "'; supported: gelu (exact erf), relu, tanh");
}

// ModernBERT (transformers' ModernBertConfig, the keys of transformers 4 and
// 5 alike): pre-norm layers, rotary positions with a base per kind of layer,
// local attention on most layers, a GELU GLU, optional biases, and its own
// head (pooling, dense, activation, norm).
Status read_modernbert_keys(const json& doc, Reader& r, const std::string& source, ModelConfig& c) {
  c.max_position_embeddings = 8192;
  c.pad_token_id = 50283;
  INFERCOST_RETURN_IF_ERROR(
      r.int_key("max_position_embeddings", false, 1, kMaxDim, c.max_position_embeddings));
  INFERCOST_RETURN_IF_ERROR(r.int_key("pad_token_id", false, 0, kMaxVocab, c.pad_token_id));
  INFERCOST_RETURN_IF_ERROR(r.int_key("hidden_size", true, 1, kMaxDim, c.hidden_size));
  INFERCOST_RETURN_IF_ERROR(r.int_key("num_hidden_layers", true, 1, kMaxLayers, c.num_layers));
  INFERCOST_RETURN_IF_ERROR(r.int_key("num_attention_heads", true, 1, kMaxDim, c.num_heads));
  INFERCOST_RETURN_IF_ERROR(r.int_key("intermediate_size", true, 1, kMaxDim * 8, c.intermediate_size));
  if (auto hd = doc.find("head_dim");
      hd != doc.end() && !hd->is_null() && c.num_heads > 0 && *hd != c.hidden_size / c.num_heads) {
    return unsupported(source + ": head_dim " + hd->dump() + " other than hidden_size / num_attention_heads");
  }
  std::string act = "gelu";
  INFERCOST_RETURN_IF_ERROR(r.string_key("hidden_activation", act));
  if (act != "gelu") {
    return unsupported(source + ": 'hidden_activation' is '" + act + "'; supported: gelu (exact erf)");
  }
  c.ffn_activation = Activation::kGelu;
  INFERCOST_ASSIGN_OR_RETURN(c.classifier_activation, activation_key(r, "classifier_activation", source));
  INFERCOST_ASSIGN_OR_RETURN(const double eps, positive_number(doc, "norm_eps", 1e-5, source));
  if (eps > 1) return corruption(source + ": 'norm_eps' must be in (0, 1]");
  c.layer_norm_eps = static_cast<float>(eps);
  INFERCOST_ASSIGN_OR_RETURN(c.norm_bias, bool_key(doc, "norm_bias", false, source));
  INFERCOST_ASSIGN_OR_RETURN(c.attention_bias, bool_key(doc, "attention_bias", false, source));
  INFERCOST_ASSIGN_OR_RETURN(c.mlp_bias, bool_key(doc, "mlp_bias", false, source));
  INFERCOST_ASSIGN_OR_RETURN(c.head_bias, bool_key(doc, "classifier_bias", false, source));
  std::string pooling = "cls";
  INFERCOST_RETURN_IF_ERROR(r.string_key("classifier_pooling", pooling));
  if (pooling != "cls" && pooling != "mean") {
    return unsupported(source + ": classifier_pooling '" + pooling + "' (cls or mean)");
  }
  c.head_mean_pooling = pooling == "mean";
  c.type_vocab_size = 0;
  c.norm_placement = NormPlacement::kPre;
  c.position_table = false;
  c.glu = true;
  c.head_norm = true;

  int local_attention = 128;
  INFERCOST_RETURN_IF_ERROR(r.int_key("local_attention", false, 2, kMaxDim, local_attention));
  std::vector<bool> global(static_cast<size_t>(c.num_layers));
  if (auto types = doc.find("layer_types"); types != doc.end() && !types->is_null()) {
    if (!types->is_array() || types->size() != global.size()) {
      return corruption(
          fmt::format("{}: 'layer_types' must list one type per layer ({})", source, c.num_layers));
    }
    for (size_t i = 0; i < global.size(); ++i) {
      const json& t = (*types)[i];
      if (t != "full_attention" && t != "sliding_attention") {
        return unsupported(fmt::format("{}: layer_types[{}] is {} (full_attention or sliding_attention)",
                                       source, i, t.dump()));
      }
      global[i] = t == "full_attention";
    }
  } else {
    int every = 3;
    INFERCOST_RETURN_IF_ERROR(r.int_key("global_attn_every_n_layers", false, 1, kMaxLayers, every));
    for (size_t i = 0; i < global.size(); ++i) global[i] = i % static_cast<size_t>(every) == 0;
  }
  INFERCOST_ASSIGN_OR_RETURN(const double global_theta,
                             rope_theta_of(doc, "full_attention", "global_rope_theta", 160000.0, source));
  INFERCOST_ASSIGN_OR_RETURN(const double local_theta,
                             rope_theta_of(doc, "sliding_attention", "local_rope_theta", 10000.0, source));
  for (bool g : global) {
    c.attention_window.push_back(g ? 0 : local_attention / 2);
    c.rope_theta.push_back(g ? global_theta : local_theta);
  }
  return Status();
}

// "p2c|c2p" as HF splits it: at each '|', trimmed, lower case, empty items dropped.
std::vector<std::string> bar_list(const std::string& text) {
  std::vector<std::string> out;
  for (size_t at = 0; at <= text.size();) {
    const size_t bar = std::min(text.find('|', at), text.size());
    std::string t = text.substr(at, bar - at);
    t.erase(0, t.find_first_not_of(' '));
    t.erase(t.find_last_not_of(' ') + 1);
    for (char& ch : t) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (!t.empty()) out.push_back(t);
    at = bar + 1;
  }
  return out;
}

// DeBERTa-v2 and -v3 (transformers' DebertaV2Config and the keys its model
// reads from the config: position_buckets, norm_rel_ebd, share_att_key).
// What the encoder computes is described here; the weights reader folds the
// embedding projection and the relative embeddings' norm and projections
// into tables (weights.cc), so the backends see only relative_attention,
// c2p / p2c and the span.
Status read_deberta_keys(const json& doc, Reader& r, const std::string& source, ModelConfig& c) {
  INFERCOST_RETURN_IF_ERROR(read_shape(r, kBertKeys, source, c));
  c.type_vocab_size = 0;
  INFERCOST_RETURN_IF_ERROR(r.int_key("type_vocab_size", false, 0, kMaxVocab, c.type_vocab_size));
  INFERCOST_ASSIGN_OR_RETURN(const double eps, positive_number(doc, "layer_norm_eps", 1e-7, source));
  if (eps > 1) return corruption(source + ": 'layer_norm_eps' must be in (0, 1]");
  c.layer_norm_eps = static_cast<float>(eps);
  for (const char* key : {"attention_head_size", "pooler_hidden_size", "embedding_size"}) {
    auto it = doc.find(key);
    if (it == doc.end() || it->is_null()) continue;
    if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > kMaxDim) {
      return corruption(source + ": '" + key + "' must be a positive integer, got " + it->dump());
    }
    const int v = it->get<int>();
    if (std::string(key) == "embedding_size" && v != c.hidden_size) c.embedding_size = v;
    if (std::string(key) == "attention_head_size" && v != c.hidden_size / c.num_heads) {
      return unsupported(source + ": attention_head_size " + it->dump() +
                         " other than hidden_size / num_attention_heads");
    }
    if (std::string(key) == "pooler_hidden_size" && v != c.hidden_size) {
      return unsupported(source + ": pooler_hidden_size " + it->dump() + " other than hidden_size");
    }
  }
  if (auto it = doc.find("conv_kernel_size"); it != doc.end() && !it->is_null() && *it != 0) {
    return unsupported(source + ": conv_kernel_size " + it->dump() +
                       " (DeBERTa-v2's convolution after the first layer; DeBERTa-v3 has none)");
  }
  INFERCOST_ASSIGN_OR_RETURN(c.classifier_activation, activation_key(r, "pooler_hidden_act", source));
  INFERCOST_ASSIGN_OR_RETURN(c.position_table, bool_key(doc, "position_biased_input", true, source));
  INFERCOST_ASSIGN_OR_RETURN(c.relative_attention, bool_key(doc, "relative_attention", false, source));
  if (c.relative_attention) {
    std::vector<std::string> terms;
    if (auto it = doc.find("pos_att_type"); it != doc.end() && !it->is_null()) {
      if (it->is_string()) {
        terms = bar_list(it->get<std::string>());
      } else if (it->is_array()) {
        for (const json& t : *it) {
          if (!t.is_string()) return corruption(source + ": 'pos_att_type' must list strings");
          terms.push_back(t.get<std::string>());
        }
      } else {
        return corruption(source + ": 'pos_att_type' must be a string or a list, got " + it->dump());
      }
    }
    for (const std::string& t : terms) {
      if (t == "c2p") {
        c.c2p = true;
      } else if (t == "p2c") {
        c.p2c = true;
      } else {
        return unsupported(source + ": pos_att_type '" + t + "' (c2p and p2c are supported)");
      }
    }
    c.max_relative_positions = -1;
    INFERCOST_RETURN_IF_ERROR(
        r.int_key("max_relative_positions", false, -(int64_t(1) << 30), kMaxDim, c.max_relative_positions));
    if (c.max_relative_positions < 1) c.max_relative_positions = c.max_position_embeddings;
    c.position_buckets = -1;
    INFERCOST_RETURN_IF_ERROR(
        r.int_key("position_buckets", false, -(int64_t(1) << 30), kMaxDim, c.position_buckets));
    if (c.position_buckets <= 0) c.position_buckets = 0;
    if (c.position_buckets == 1) {
      return unsupported(source + ": position_buckets 1 (log buckets need at least 2)");
    }
    INFERCOST_ASSIGN_OR_RETURN(c.share_att_key, bool_key(doc, "share_att_key", false, source));
    std::string norm = "none";
    INFERCOST_RETURN_IF_ERROR(r.string_key("norm_rel_ebd", norm));
    for (const std::string& t : bar_list(norm)) {
      if (t == "layer_norm") {
        c.norm_relative_embeddings = true;
      } else if (t != "none") {
        return unsupported(source + ": norm_rel_ebd '" + t + "' (layer_norm or none)");
      }
    }
  }
  return Status();
}

// Floats as the shortest decimal that reads back as the same float, so 1e-12f
// is written "1e-12", not "9.999999960041972e-13".
double float_for_json(float v) {
  return std::stod(fmt::format("{}", v));
}

}  // namespace

Result<ModelConfig> parse_config(const std::string& json_text, const std::string& source) {
  INFERCOST_RETURN_IF_ERROR(check_json_nesting(json_text, source));
  json doc = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return corruption(source + ": not valid JSON");
  if (!doc.is_object()) return corruption(source + ": top level is not a JSON object");
  ModelConfig c;
  Reader r(doc, source);
  INFERCOST_RETURN_IF_ERROR(r.string_key("model_type", c.model_type));
  if (c.model_type.empty()) return not_found(source + ": required key 'model_type' is missing");
  INFERCOST_RETURN_IF_ERROR(r.string_key("_name_or_path", c.name));
  INFERCOST_RETURN_IF_ERROR(r.int_key("vocab_size", true, 1, kMaxVocab, c.vocab_size));
  INFERCOST_RETURN_IF_ERROR(
      r.int_key("max_position_embeddings", false, 1, kMaxDim, c.max_position_embeddings));
  INFERCOST_RETURN_IF_ERROR(r.int_key("pad_token_id", false, 0, kMaxVocab, c.pad_token_id));
  if (c.model_type == "distilbert") {
    c.architecture = Architecture::kDistilBert;
    INFERCOST_RETURN_IF_ERROR(read_shape(r, kDistilBertKeys, source, c));
    c.type_vocab_size = 0;
    c.layer_norm_eps = 1e-12f;  // hard-coded in HF's DistilBERT modules, not read from the config
  } else if (c.model_type == "bert") {
    c.architecture = Architecture::kBert;
    INFERCOST_RETURN_IF_ERROR(read_bert_keys(doc, r, source, c));
  } else if (c.model_type == "roberta" || c.model_type == "xlm-roberta" || c.model_type == "camembert") {
    // XLM-RoBERTa and CamemBERT are RoBERTa's modules under other names.
    c.architecture = Architecture::kRoberta;
    INFERCOST_RETURN_IF_ERROR(read_bert_keys(doc, r, source, c));
    if (c.max_positions() < 1) {
      return corruption(fmt::format(
          "{}: max_position_embeddings {} leaves no position after the padding rows (positions start at "
          "pad_token_id + 1 = {})",
          source, c.max_position_embeddings, c.position_offset()));
    }
  } else if (c.model_type == "modernbert") {
    c.architecture = Architecture::kModernBert;
    INFERCOST_RETURN_IF_ERROR(read_modernbert_keys(doc, r, source, c));
  } else if (c.model_type == "deberta-v2") {
    c.architecture = Architecture::kDebertaV2;
    INFERCOST_RETURN_IF_ERROR(read_deberta_keys(doc, r, source, c));
  } else if (c.model_type == "deberta") {
    return unsupported(source +
                       ": model_type 'deberta' (DeBERTa v1) is not supported; DeBERTa-v2 and -v3 "
                       "(model_type deberta-v2) are");
  } else {
    return unsupported(source + ": model_type '" + c.model_type +
                       "' is not supported (supported families: " + kSupportedFamilies + ")");
  }
  if (c.hidden_size % c.num_heads != 0) {
    return corruption(fmt::format("{}: hidden size {} is not divisible by the number of heads {}", source,
                                  c.hidden_size, c.num_heads));
  }
  if (c.pad_token_id >= c.vocab_size) {
    return corruption(fmt::format("{}: pad_token_id {} is outside the vocabulary ({})", source,
                                  c.pad_token_id, c.vocab_size));
  }
  if (auto it = doc.find("architectures"); it != doc.end() && !it->is_null()) {
    if (!it->is_array()) return corruption(source + ": 'architectures' must be a list of class names");
    for (const json& a : *it) {
      if (!a.is_string()) return corruption(source + ": 'architectures' must be a list of class names");
      c.architectures.push_back(a.get<std::string>());
    }
  }
  INFERCOST_RETURN_IF_ERROR(parse_labels(doc, source, c));
  INFERCOST_RETURN_IF_ERROR(read_problem_type(r, source, c));
  if (auto it = doc.find("infercost_synthetic"); it != doc.end() && !it->is_null()) {
    if (!it->is_object()) return corruption(source + ": 'infercost_synthetic' must be an object");
    c.synthetic = true;
    if (auto p = it->find("preset"); p != it->end() && p->is_string())
      c.synthetic_preset = p->get<std::string>();
    if (auto s = it->find("seed"); s != it->end() && s->is_number_unsigned())
      c.synthetic_seed = s->get<uint64_t>();
  }
  return c;
}

const char* hf_classifier_class(const ModelConfig& c) {
  switch (c.architecture) {
    case Architecture::kDistilBert: return "DistilBertForSequenceClassification";
    case Architecture::kBert: return "BertForSequenceClassification";
    case Architecture::kModernBert: return "ModernBertForSequenceClassification";
    case Architecture::kDebertaV2: return "DebertaV2ForSequenceClassification";
    case Architecture::kRoberta: break;
  }
  if (c.model_type == "xlm-roberta") return "XLMRobertaForSequenceClassification";
  if (c.model_type == "camembert") return "CamembertForSequenceClassification";
  return "RobertaForSequenceClassification";
}

std::string architecture_name(const ModelConfig& c) {
  return c.architectures.empty() ? std::string(hf_classifier_class(c)) : c.architectures.front();
}

bool is_classifier_class(std::string_view architecture) {
  constexpr std::string_view kSuffix = "ForSequenceClassification";
  return architecture.size() >= kSuffix.size() &&
         architecture.compare(architecture.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0;
}

std::string synthetic_model_notice(const ModelConfig& config) {
  return "'" + config.name +
         "' is a synthetic model (random weights): its speed is real, its sentiments are not.";
}

Result<ModelConfig> load_config(const std::string& path) {
  INFERCOST_ASSIGN_OR_RETURN(std::string text, read_file(path));
  return parse_config(text, path);
}

namespace {

// The keys BERT's config.json and DeBERTa's share: the sizes, dropouts,
// labels, eps and pad id.
void bert_shape_keys(const ModelConfig& c, const ordered_json& id2label, const ordered_json& label2id,
                     ordered_json& j) {
  j["attention_probs_dropout_prob"] = 0.1;
  j["hidden_act"] = activation_name(c.ffn_activation);
  j["hidden_dropout_prob"] = 0.1;
  j["hidden_size"] = c.hidden_size;
  j["id2label"] = id2label;
  j["initializer_range"] = 0.02;
  j["intermediate_size"] = c.intermediate_size;
  j["label2id"] = label2id;
  j["layer_norm_eps"] = float_for_json(c.layer_norm_eps);
  j["max_position_embeddings"] = c.max_position_embeddings;
  j["num_attention_heads"] = c.num_heads;
  j["num_hidden_layers"] = c.num_layers;
  j["pad_token_id"] = c.pad_token_id;
}

// Each family's config.json keys, in the order HF writes them, between
// _name_or_path and problem_type (config_to_json).
void distilbert_json_keys(const ModelConfig& c, const ordered_json& id2label, const ordered_json& label2id,
                          ordered_json& j) {
  j["activation"] = activation_name(c.ffn_activation);
  j["architectures"] = {"DistilBertForSequenceClassification"};
  j["attention_dropout"] = 0.1;
  j["dim"] = c.hidden_size;
  j["dropout"] = 0.1;
  j["hidden_dim"] = c.intermediate_size;
  j["id2label"] = id2label;
  j["initializer_range"] = 0.02;
  j["label2id"] = label2id;
  j["max_position_embeddings"] = c.max_position_embeddings;
  j["model_type"] = "distilbert";
  j["n_heads"] = c.num_heads;
  j["n_layers"] = c.num_layers;
  j["pad_token_id"] = c.pad_token_id;
  j["qa_dropout"] = 0.1;
  j["seq_classif_dropout"] = 0.2;
  j["sinusoidal_pos_embds"] = false;
  j["tie_weights_"] = true;
}

void modernbert_json_keys(const ModelConfig& c, const ordered_json& id2label, const ordered_json& label2id,
                          ordered_json& j) {
  j["architectures"] = {"ModernBertForSequenceClassification"};
  j["attention_bias"] = c.attention_bias;
  j["classifier_activation"] = activation_name(c.classifier_activation);
  j["classifier_bias"] = c.head_bias;
  j["classifier_pooling"] = c.head_mean_pooling ? "mean" : "cls";
  j["hidden_activation"] = activation_name(c.ffn_activation);
  j["hidden_size"] = c.hidden_size;
  j["id2label"] = id2label;
  j["intermediate_size"] = c.intermediate_size;
  j["label2id"] = label2id;
  ordered_json types = ordered_json::array();
  int local_attention = 128;
  double global_theta = 160000.0, local_theta = 10000.0;
  for (int i = 0; i < c.num_layers; ++i) {
    const bool global = c.global_layer(i);
    types.push_back(global ? "full_attention" : "sliding_attention");
    if (!global) local_attention = 2 * c.attention_window[static_cast<size_t>(i)];
    if (!c.rope_theta.empty()) (global ? global_theta : local_theta) = c.rope_theta[static_cast<size_t>(i)];
  }
  j["layer_types"] = types;
  j["local_attention"] = local_attention;
  j["max_position_embeddings"] = c.max_position_embeddings;
  j["mlp_bias"] = c.mlp_bias;
  j["model_type"] = "modernbert";
  j["norm_bias"] = c.norm_bias;
  j["norm_eps"] = float_for_json(c.layer_norm_eps);
  j["num_attention_heads"] = c.num_heads;
  j["num_hidden_layers"] = c.num_layers;
  j["pad_token_id"] = c.pad_token_id;
  j["rope_parameters"] = {{"full_attention", {{"rope_theta", global_theta}, {"rope_type", "default"}}},
                          {"sliding_attention", {{"rope_theta", local_theta}, {"rope_type", "default"}}}};
}

void deberta_json_keys(const ModelConfig& c, const ordered_json& id2label, const ordered_json& label2id,
                       ordered_json& j) {
  // What model synth writes (share_att_key, norm_rel_ebd layer_norm, no
  // embedding projection), as microsoft/deberta-v3-base's config.json says it.
  j["architectures"] = {"DebertaV2ForSequenceClassification"};
  bert_shape_keys(c, id2label, label2id, j);
  j["max_relative_positions"] = c.max_relative_positions;
  j["model_type"] = "deberta-v2";
  j["norm_rel_ebd"] = c.norm_relative_embeddings ? "layer_norm" : "none";
  j["pooler_dropout"] = 0;
  j["pooler_hidden_act"] = activation_name(c.classifier_activation);
  j["pooler_hidden_size"] = c.hidden_size;
  std::string terms;
  if (c.p2c) terms = "p2c";
  if (c.c2p) terms += terms.empty() ? "c2p" : "|c2p";
  j["pos_att_type"] = terms;
  j["position_biased_input"] = c.position_table;
  j["position_buckets"] = c.position_buckets > 0 ? c.position_buckets : -1;
  j["relative_attention"] = c.relative_attention;
  j["share_att_key"] = c.share_att_key;
  j["type_vocab_size"] = c.type_vocab_size;
}

// BERT and the RoBERTa family.
void bert_json_keys(const ModelConfig& c, const ordered_json& id2label, const ordered_json& label2id,
                    ordered_json& j) {
  const bool roberta = c.architecture == Architecture::kRoberta;
  const std::string model_type = roberta ? (c.model_type.empty() ? "roberta" : c.model_type) : "bert";
  j["architectures"] = {hf_classifier_class(c)};
  if (roberta) j["bos_token_id"] = 0;
  j["classifier_dropout"] = nullptr;
  if (roberta) j["eos_token_id"] = 2;
  bert_shape_keys(c, id2label, label2id, j);
  j["model_type"] = model_type;
  j["position_embedding_type"] = "absolute";
  j["type_vocab_size"] = c.type_vocab_size;
  j["use_cache"] = true;
}

}  // namespace

std::string config_to_json(const ModelConfig& c) {
  // ordered_json keeps HF's key order readable; HF itself does not care.
  ordered_json j;
  if (!c.name.empty()) j["_name_or_path"] = c.name;
  ordered_json id2label = ordered_json::object(), label2id = ordered_json::object();
  for (size_t i = 0; i < c.labels.size(); ++i) {
    id2label[std::to_string(i)] = c.labels[i];
    label2id[c.labels[i]] = static_cast<int>(i);
  }
  switch (c.architecture) {
    case Architecture::kDistilBert: distilbert_json_keys(c, id2label, label2id, j); break;
    case Architecture::kModernBert: modernbert_json_keys(c, id2label, label2id, j); break;
    case Architecture::kDebertaV2: deberta_json_keys(c, id2label, label2id, j); break;
    case Architecture::kBert:
    case Architecture::kRoberta: bert_json_keys(c, id2label, label2id, j); break;
  }
  if (!c.problem_type.empty()) j["problem_type"] = c.problem_type;
  j["torch_dtype"] = "float32";
  j["transformers_version"] = "4.46.3";
  j["vocab_size"] = c.vocab_size;
  if (c.synthetic) {
    j["infercost_synthetic"] = {
        {"preset", c.synthetic_preset},
        {"seed", c.synthetic_seed},
        {"note", "random weights made by `infercost model synth`: speed real, sentiment not"}};
  }
  return j.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace infercost::model
