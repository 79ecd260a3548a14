// The parts of a Hugging Face config.json that the engine uses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "infercost/core/status.h"

namespace infercost::model {

enum class Architecture { kDistilBert, kBert };

// The nonlinearities an encoder applies: in its FFN, and in its classifier
// head (on the first token, before the output layer).
enum class Activation { kGelu, kRelu, kTanh };
// "gelu" (exact erf), "relu", "tanh": the names config.json uses. Inline, as
// the CUDA module reads configs without linking this library.
constexpr const char* activation_name(Activation activation) {
  switch (activation) {
    case Activation::kGelu: return "gelu";
    case Activation::kRelu: return "relu";
    case Activation::kTanh: return "tanh";
  }
  return "?";
}

struct ModelConfig {
  Architecture architecture = Architecture::kDistilBert;
  std::string model_type;  // "distilbert" or "bert", as in config.json
  std::string name;        // _name_or_path, or the directory name
  int vocab_size = 30522;
  int hidden_size = 768;         // DistilBERT "dim"
  int num_layers = 6;            // DistilBERT "n_layers"
  int num_heads = 12;            // DistilBERT "n_heads"
  int intermediate_size = 3072;  // DistilBERT "hidden_dim"
  int max_position_embeddings = 512;
  int type_vocab_size = 0;  // BERT: 2; DistilBERT has no token types
  // What the backends apply (with head_activation() below), decided here so
  // that none reads `architecture`.
  Activation ffn_activation = Activation::kGelu;  // gelu or relu (activation / hidden_act)
  float layer_norm_eps = 1e-12f;
  int pad_token_id = 0;
  // Labels by id, from id2label; defaults to LABEL_0..LABEL_{n-1}.
  std::vector<std::string> labels;
  // config.json's problem_type: "single_label_classification",
  // "multi_label_classification", "regression", or empty when absent. It
  // decides the head's output function (pipeline::default_head_function).
  std::string problem_type;
  // True for models made by `infercost model synth`: speed real, sentiment not.
  bool synthetic = false;
  std::string synthetic_preset;
  uint64_t synthetic_seed = 0;

  int num_labels() const { return static_cast<int>(labels.size()); }
  int head_dim() const { return hidden_size / num_heads; }
  // The head's activation, the family's: DistilBERT's pre_classifier ReLU,
  // BERT's pooler tanh.
  Activation head_activation() const {
    return architecture == Architecture::kBert ? Activation::kTanh : Activation::kRelu;
  }
};

// Parses config.json text; `source` names it in errors. Checks that sizes are
// positive and hidden_size divides by num_heads. Size keys (vocab_size, dim /
// hidden_size, n_layers / num_hidden_layers, n_heads / num_attention_heads,
// hidden_dim / intermediate_size) are required; other keys default as in HF
// transformers. Errors: kCorruption for malformed JSON or values, kNotFound
// for a missing key, kUnsupported for another model_type or activation.
Result<ModelConfig> parse_config(const std::string& json_text, const std::string& source);
Result<ModelConfig> load_config(const std::string& path);
// Writes a config.json that HF transformers loads as the same model.
std::string config_to_json(const ModelConfig& config);

}  // namespace infercost::model
