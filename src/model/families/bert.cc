// BERT (model_type bert): the post-norm encoder with token types; a pooler
// (dense + tanh on [CLS]) before the classifier.
#include <nlohmann/json.hpp>

#include "model/checkpoint_names.h"
#include "model/config_keys.h"
#include "model/family.h"
#include "model/synth_parts.h"

namespace infercost::model {

namespace {

void bert_write_config(const ModelConfig& c, const nlohmann::ordered_json& id2label,
                       const nlohmann::ordered_json& label2id, nlohmann::ordered_json& j) {
  bert_json_keys(c, "bert", /*roberta_ids=*/false, id2label, label2id, j);
}

void bert_base(ModelConfig& c) {
  c.model_type = "bert";
  c.num_layers = 12;
  c.type_vocab_size = 2;
}

Result<SynthTokenizer> bert_tokenizer(const ModelConfig& c) {
  return wordpiece_tokenizer(c, "BertTokenizer");
}

constexpr std::string_view kBertTokenizerFiles[] = {"vocab.txt"};
constexpr FamilyModelType kBertTypes[] = {{"bert", "BertForSequenceClassification", kBertTokenizerFiles}};
constexpr SynthPreset kBertPresets[] = {{"bert-base", bert_base}};

}  // namespace

extern const Family kBertFamily = {
    .architecture = Architecture::kBert,
    .model_types = kBertTypes,
    .head_activation = Activation::kTanh,
    .shows_token_types = true,
    .config = {read_bert_keys, bert_write_config},
    .weights = {&kBertNames},
    .synth = {kBertPresets, bert_tokenizer},
};

}  // namespace infercost::model
