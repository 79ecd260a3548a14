// Reading a config.json's keys into a ModelConfig, with errors that name the
// file and the key: what config.cc and the families' read_config share.
// Private to src/model.
#pragma once

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "infercost/status.h"
#include "model/config.h"

namespace infercost::model {

// Far above any BERT-family classifier; rejects values that would only make
// us allocate absurd buffers.
inline constexpr int64_t kMaxDim = 1 << 16;
inline constexpr int64_t kMaxVocab = 1 << 24;
inline constexpr int64_t kMaxLayers = 1024;
inline constexpr int64_t kMaxLabels = 1 << 16;

class ConfigKeys {
 public:
  ConfigKeys(const nlohmann::json& doc, const std::string& source) : doc_(doc), source_(source) {}

  const nlohmann::json& doc() const { return doc_; }
  const std::string& source() const { return source_; }

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
  const nlohmann::json& doc_;
  const std::string& source_;
};

// The names a family gives the encoder's sizes and FFN activation.
struct ShapeKeys {
  const char *hidden, *layers, *heads, *intermediate, *activation;
};
inline constexpr ShapeKeys kBertKeys = {"hidden_size", "num_hidden_layers", "num_attention_heads",
                                        "intermediate_size", "hidden_act"};

// The sizes (required) and the FFN activation (default gelu).
Status read_shape(ConfigKeys& keys, const ShapeKeys& k, ModelConfig& c);
// The keys BERT and RoBERTa share (config.cc).
Status read_bert_keys(ConfigKeys& keys, ModelConfig& c);
// doc[key] as a positive number; `fallback` where it is absent or null.
Result<double> positive_number(const nlohmann::json& doc, const char* key, double fallback,
                               const std::string& source);
// An activation of HF's ACT2FN that the engine computes: gelu (exact erf),
// relu, tanh.
Result<Activation> activation_key(ConfigKeys& keys, const char* key);
// "p2c|c2p" as HF splits it: at each '|', trimmed, lower case, empty items dropped.
std::vector<std::string> bar_list(const std::string& text);
// Floats as the shortest decimal that reads back as the same float, so 1e-12f
// is written "1e-12", not "9.999999960041972e-13".
double float_for_json(float v);
// The keys BERT's config.json and DeBERTa's share: the sizes, dropouts,
// labels, eps and pad id.
void bert_shape_keys(const ModelConfig& c, const nlohmann::ordered_json& id2label,
                     const nlohmann::ordered_json& label2id, nlohmann::ordered_json& j);
// BERT's config.json keys under `model_type`, with RoBERTa's bos and eos ids
// where `roberta_ids`.
void bert_json_keys(const ModelConfig& c, std::string_view model_type, bool roberta_ids,
                    const nlohmann::ordered_json& id2label, const nlohmann::ordered_json& label2id,
                    nlohmann::ordered_json& j);

}  // namespace infercost::model
