// DistilBERT (model_type distilbert): BERT's post-norm encoder without token
// types under its own key and tensor names; a pre_classifier + ReLU head.
#include <nlohmann/json.hpp>

#include "model/checkpoint_names.h"
#include "model/config_keys.h"
#include "model/family.h"
#include "model/synth_parts.h"

namespace infercost::model {

namespace {

constexpr ShapeKeys kDistilBertKeys = {"dim", "n_layers", "n_heads", "hidden_dim", "activation"};

Status distilbert_read_config(ConfigKeys& keys, ModelConfig& c) {
  INFERCOST_RETURN_IF_ERROR(read_shape(keys, kDistilBertKeys, c));
  c.type_vocab_size = 0;
  c.layer_norm_eps = 1e-12f;  // hard-coded in HF's DistilBERT modules, not read from the config
  return Status();
}

void distilbert_write_config(const ModelConfig& c, const nlohmann::ordered_json& id2label,
                             const nlohmann::ordered_json& label2id, nlohmann::ordered_json& j) {
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

// Every name its own (none is BERT's but the embeddings' and the classifier's).
constexpr CheckpointNames kDistilBertNames = {
    "distilbert.",       "embeddings.",       "transformer.layer.", "attention.q_lin", "attention.k_lin",
    "attention.v_lin",   "attention.out_lin", "sa_layer_norm",      "ffn.lin1",        "ffn.lin2",
    "output_layer_norm", "pre_classifier",    "classifier"};

void distilbert_base(ModelConfig& c) {
  c.model_type = "distilbert";
  c.type_vocab_size = 0;
}

// distilbert-base's shape, made small for tests.
void distilbert_tiny(ModelConfig& c) {
  distilbert_base(c);
  c.hidden_size = 32;
  c.num_layers = 2;
  c.num_heads = 2;
  c.intermediate_size = 64;
}

Result<SynthTokenizer> distilbert_tokenizer(const ModelConfig& c) {
  return wordpiece_tokenizer(c, "DistilBertTokenizer");
}

constexpr std::string_view kWordPieceFiles[] = {"vocab.txt"};
constexpr FamilyModelType kDistilBertTypes[] = {
    {"distilbert", "DistilBertForSequenceClassification", kWordPieceFiles}};
constexpr SynthPreset kDistilBertPresets[] = {{"distilbert-base", distilbert_base},
                                              {"tiny", distilbert_tiny, /*small=*/true}};

}  // namespace

extern const Family kDistilBertFamily = {
    .architecture = Architecture::kDistilBert,
    .model_types = kDistilBertTypes,
    .head_activation = Activation::kRelu,
    .config = {distilbert_read_config, distilbert_write_config},
    .weights = {&kDistilBertNames},
    .synth = {kDistilBertPresets, distilbert_tokenizer},
};

}  // namespace infercost::model
