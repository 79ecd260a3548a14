#include "model/config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>

#include "config_keys.h"
#include "core/file.h"
#include "core/json_text.h"
#include "family.h"

namespace infercost::model {

namespace {

using nlohmann::json;
using ordered_json = nlohmann::ordered_json;

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
Status read_ffn_activation(ConfigKeys& r, const char* key, const std::string& source, Activation* out) {
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
Status read_problem_type(ConfigKeys& r, const std::string& source, ModelConfig& c) {
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

}  // namespace

// The sizes (required) and the FFN activation (default gelu).
Status read_shape(ConfigKeys& r, const ShapeKeys& k, ModelConfig& c) {
  const std::string& source = r.source();
  INFERCOST_RETURN_IF_ERROR(r.int_key(k.hidden, true, 1, kMaxDim, c.hidden_size));
  INFERCOST_RETURN_IF_ERROR(r.int_key(k.layers, true, 1, kMaxLayers, c.num_layers));
  INFERCOST_RETURN_IF_ERROR(r.int_key(k.heads, true, 1, kMaxDim, c.num_heads));
  INFERCOST_RETURN_IF_ERROR(r.int_key(k.intermediate, true, 1, kMaxDim * 8, c.intermediate_size));
  return read_ffn_activation(r, k.activation, source, &c.ffn_activation);
}

// The keys BERT and RoBERTa share. Defaults are those of HF's BertConfig and
// RobertaConfig, which agree (type_vocab_size 2, layer_norm_eps 1e-12); real
// RoBERTa files say 1 and 1e-05.
Status read_bert_keys(ConfigKeys& r, ModelConfig& c) {
  const json& doc = r.doc();
  const std::string& source = r.source();
  INFERCOST_RETURN_IF_ERROR(read_shape(r, kBertKeys, c));
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

// An activation of HF's ACT2FN that the engine computes: gelu (exact erf),
// relu, tanh.
Result<Activation> activation_key(ConfigKeys& r, const char* key) {
  const std::string& source = r.source();
  std::string act = "gelu";
  INFERCOST_RETURN_IF_ERROR(r.string_key(key, act));
  for (Activation a : {Activation::kGelu, Activation::kRelu, Activation::kTanh}) {
    if (act == activation_name(a)) return a;
  }
  return unsupported(source + ": '" + key + "' is '" + act + "'; supported: gelu (exact erf), relu, tanh");
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

// Floats as the shortest decimal that reads back as the same float, so 1e-12f
// is written "1e-12", not "9.999999960041972e-13".
double float_for_json(float v) {
  return std::stod(fmt::format("{}", v));
}

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

void bert_json_keys(const ModelConfig& c, std::string_view model_type, bool roberta_ids,
                    const ordered_json& id2label, const ordered_json& label2id, ordered_json& j) {
  j["architectures"] = {hf_classifier_class(c)};
  if (roberta_ids) j["bos_token_id"] = 0;
  j["classifier_dropout"] = nullptr;
  if (roberta_ids) j["eos_token_id"] = 2;
  bert_shape_keys(c, id2label, label2id, j);
  j["model_type"] = model_type;
  j["position_embedding_type"] = "absolute";
  j["type_vocab_size"] = c.type_vocab_size;
  j["use_cache"] = true;
}

Result<ModelConfig> parse_config(const std::string& json_text, const std::string& source) {
  INFERCOST_RETURN_IF_ERROR(check_json_nesting(json_text, source));
  json doc = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return corruption(source + ": not valid JSON");
  if (!doc.is_object()) return corruption(source + ": top level is not a JSON object");
  ModelConfig c;
  ConfigKeys r(doc, source);
  INFERCOST_RETURN_IF_ERROR(r.string_key("model_type", c.model_type));
  if (c.model_type.empty()) return not_found(source + ": required key 'model_type' is missing");
  INFERCOST_RETURN_IF_ERROR(r.string_key("_name_or_path", c.name));
  INFERCOST_RETURN_IF_ERROR(r.int_key("vocab_size", true, 1, kMaxVocab, c.vocab_size));
  INFERCOST_RETURN_IF_ERROR(
      r.int_key("max_position_embeddings", false, 1, kMaxDim, c.max_position_embeddings));
  INFERCOST_RETURN_IF_ERROR(r.int_key("pad_token_id", false, 0, kMaxVocab, c.pad_token_id));
  const Family* family = find_family(c.model_type);
  if (family == nullptr) return unsupported_model_type(c.model_type, source);
  apply_family(*family, c);
  INFERCOST_RETURN_IF_ERROR(family->config.read(r, c));
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
  const Family& family = family_of(c);
  for (const FamilyModelType& t : family.model_types) {
    if (t.model_type == c.model_type) return t.classifier_class.data();
  }
  return family.model_types.front().classifier_class.data();
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
  if (!config.synthetic) return std::string();
  return "'" + config.name +
         "' is a synthetic model (random weights): its speed is real, its sentiments are not.";
}

Result<ModelConfig> load_config(const std::string& path) {
  INFERCOST_ASSIGN_OR_RETURN(std::string text, read_file(path));
  return parse_config(text, path);
}

std::string config_to_json(const ModelConfig& c) {
  // ordered_json keeps HF's key order readable; HF itself does not care.
  ordered_json j;
  if (!c.name.empty()) j["_name_or_path"] = c.name;
  ordered_json id2label = ordered_json::object(), label2id = ordered_json::object();
  for (size_t i = 0; i < c.labels.size(); ++i) {
    id2label[std::to_string(i)] = c.labels[i];
    label2id[c.labels[i]] = static_cast<int>(i);
  }
  family_of(c).config.write(c, id2label, label2id, j);
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
