// A model family described in one place: the model_type names it answers
// to, how its config.json keys map onto ModelConfig (and back), where its
// tensors live in a checkpoint and how they become EncoderWeights, its HF
// class names and its synthetic presets. Each family is one file of
// src/model/families/; family.cc lists them (the registry by model_type).
// Private to src/model (and the CLI, which lists presets and types).
//
// Adding a family: write src/model/families/NAME.cc defining a `Family`
// (copy the closest one), add its `extern` declaration, its row to
// family.cc's list and its case to family_of, its enumerator to
// `Architecture` (config.h) and the file to src/model/CMakeLists.txt. What
// the family computes is ModelConfig data (config.h), which the backends
// read; a step with new math is a backend change of its own.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "infercost/status.h"
#include "model/config.h"
#include "model/synth_parts.h"
#include "model/weights.h"

namespace infercost::model {

class ConfigKeys;        // config_keys.h
class TensorSource;      // tensor_source.h
struct CheckpointNames;  // checkpoint_names.h

// A config.json model_type the family answers to and the HF class of its
// sequence classifier ("xlm-roberta", "XLMRobertaForSequenceClassification").
// `tokenizer_files`: the files that may stand for a tokenizer.json in `model
// synth --tokenizer FOLDER` (RoBERTa's vocab.json and merges.txt), if any.
struct FamilyModelType {
  std::string_view model_type;
  std::string_view classifier_class;
  std::span<const std::string_view> tokenizer_files = {};
};

// A model_type a family knows and does not run (DeBERTa v1's "deberta"):
// config.json's error says `message` after "SOURCE: ".
struct RefusedModelType {
  std::string_view model_type;
  std::string_view message;
};

// A preset of `infercost model synth`: its name and what it sets beyond
// synth_config's defaults (sizes, labels, the family's data). `small`: a
// test-size preset, listed after the full-size ones.
struct SynthPreset {
  std::string_view name;
  void (*configure)(ModelConfig& config);
  bool small = false;
};

// Random weights under the family's tensor names (SynthTensor); `keep` holds
// the tensors written that EncoderWeights has no place for.
using MakeWeights = EncoderWeights (*)(const ModelConfig& config, uint64_t seed,
                                       std::vector<SynthTensor>& tensors,
                                       std::vector<std::vector<float>>& keep);

// config.json -> ModelConfig (the keys all families share are read before),
// and back: the family's keys between _name_or_path and problem_type, in the
// order HF writes them.
struct FamilyConfig {
  Status (*read)(ConfigKeys& keys, ModelConfig& config);
  void (*write)(const ModelConfig& config, const nlohmann::ordered_json& id2label,
                const nlohmann::ordered_json& label2id, nlohmann::ordered_json& out);
};

// Where its tensors live; reading them (with what it folds into tables),
// nullptr: BERT's layout under `names` (read_bert_layout_weights).
struct FamilyWeights {
  const CheckpointNames* names;
  Result<EncoderWeights> (*read)(TensorSource& source, const ModelConfig& config, bool classifier) = nullptr;
};

// `model synth`: presets, the project's tokenizer and weights (nullptr:
// BERT's layout under FamilyWeights::names, make_bert_layout_weights).
struct FamilySynth {
  std::span<const SynthPreset> presets;
  Result<SynthTokenizer> (*make_tokenizer)(const ModelConfig& config);
  MakeWeights make_weights = nullptr;
};

struct Family {
  Architecture architecture;
  // The first is the family's own; error messages list them all.
  std::span<const FamilyModelType> model_types;
  // The head's activation where the family fixes it (DistilBERT relu, BERT
  // and RoBERTa tanh); none: config.read reads it from config.json
  // (ModelConfig::classifier_activation).
  std::optional<Activation> head_activation = std::nullopt;
  // Position ids count from pad_token_id + 1, pads on the pad row (RoBERTa):
  // ModelConfig::padding_positions.
  bool padding_positions = false;
  // A token classifier runs the head's dense layer, activation and norm on
  // each token first (ModernBERT's ForTokenClassification):
  // ModelConfig::token_head_pre.
  bool token_head_pre = false;
  // Token types worth showing in `model info` (BERT's segments).
  bool shows_token_types = false;
  // The model_types it refuses with a message of its own (DeBERTa v1).
  std::span<const RefusedModelType> refused_model_types = {};
  FamilyConfig config;
  FamilyWeights weights;
  FamilySynth synth;
};

// The family of a config.json model_type, or nullptr.
const Family* find_family(std::string_view model_type);
// Why no family runs `model_type` (which find_family does not find), for
// `source`'s error: a family's own refusal, else the model_types supported.
Status unsupported_model_type(const std::string& model_type, const std::string& source);
// The family a config was read as (by its architecture); every Architecture
// has one (family.cc's switch, which the compiler checks is complete).
const Family& family_of(const ModelConfig& config);
// Every family, in the registry's order.
std::span<const Family* const> families();
// "distilbert, bert, roberta, ...": every model_type, for error messages.
std::string supported_model_types();
// Sets what the family fixes in `config`: its architecture, the head's
// activation where the family fixes it, the position numbering.
void apply_family(const Family& family, ModelConfig& config);

}  // namespace infercost::model
