// RoBERTa and the models built on its modules (XLM-RoBERTa, CamemBERT):
// BERT's encoder and keys, positions counted from pad_token_id + 1, and a
// RobertaClassificationHead (dense + tanh on <s>, then out_proj).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "corpus/tweets.h"
#include "model/checkpoint_names.h"
#include "model/config_keys.h"
#include "model/family.h"
#include "model/synth_parts.h"
#include "model/synth_tokenizers.h"

namespace infercost::model {

namespace {

Status roberta_read_config(ConfigKeys& keys, ModelConfig& c) {
  INFERCOST_RETURN_IF_ERROR(read_bert_keys(keys, c));
  if (c.max_positions() < 1) {
    return corruption(fmt::format(
        "{}: max_position_embeddings {} leaves no position after the padding rows (positions start at "
        "pad_token_id + 1 = {})",
        keys.source(), c.max_position_embeddings, c.position_offset()));
  }
  return Status();
}

void roberta_write_config(const ModelConfig& c, const nlohmann::ordered_json& id2label,
                          const nlohmann::ordered_json& label2id, nlohmann::ordered_json& j) {
  const std::string model_type = c.model_type.empty() ? "roberta" : c.model_type;
  bert_json_keys(c, model_type, /*roberta_ids=*/true, id2label, label2id, j);
}

// RobertaForSequenceClassification's: BERT's encoder under "roberta.", the
// head's dense and out_proj in place of the pooler. A checkpoint may also
// carry roberta.pooler.*, unused.
constexpr CheckpointNames kRobertaNames = {
    .prefix = "roberta.", .head_pre = "classifier.dense", .classifier = "classifier.out_proj"};

// roberta-base's byte-level BPE (vocab.json + merges.txt) or xlm-roberta's
// Unigram (tokenizer.json), learnt from the tweet lexicon.
Result<SynthTokenizer> roberta_tokenizer(const ModelConfig& c) {
  SynthTokenizer t = SynthTokenizer::framed(kRobertaBosId, kRobertaEosId);
  nlohmann::ordered_json tc = {
      {"tokenizer_class", c.model_type == "roberta" ? "RobertaTokenizer" : "XLMRobertaTokenizer"},
      {"model_max_length", c.max_positions()},
      {"bos_token", "<s>"},
      {"eos_token", "</s>"},
      {"sep_token", "</s>"},
      {"cls_token", "<s>"},
      {"unk_token", "<unk>"},
      {"pad_token", "<pad>"},
      {"mask_token", "<mask>"}};
  if (c.model_type == "roberta") {
    INFERCOST_ASSIGN_OR_RETURN(
        ByteLevelBpe bpe, learn_byte_level_bpe(bpe_training_words(corpus::tweet_lexicon()), c.vocab_size));
    t.files.emplace_back("vocab.json", bpe_vocab_json(bpe));
    t.files.emplace_back("merges.txt", bpe_merges_txt(bpe));
    tc["add_prefix_space"] = false;
    tc["errors"] = "replace";
    tc["trim_offsets"] = true;
    t.calibration.set_words(bpe.first_merged, bpe.end_merged, bpe.word_ids);
  } else {
    INFERCOST_ASSIGN_OR_RETURN(UnigramVocab unigram,
                               build_unigram_vocab(corpus::tweet_lexicon(), c.vocab_size));
    t.files.emplace_back("tokenizer.json", unigram_tokenizer_json(unigram));
    tc["add_prefix_space"] = true;
    t.calibration.set_words(unigram.first_word, unigram.end_word, unigram.word_ids);
  }
  t.add_config(tc);
  return t;
}

// As roberta-base's and xlm-roberta-base's config.json say.
void roberta_shape(ModelConfig& c) {
  c.num_layers = 12;
  c.max_position_embeddings = 514;
  c.pad_token_id = kRobertaPadId;
  c.layer_norm_eps = 1e-5f;
  c.type_vocab_size = 1;
  c.labels = {"negative", "neutral", "positive"};
}

void roberta_base(ModelConfig& c) {
  c.model_type = "roberta";
  c.vocab_size = 50265;
  roberta_shape(c);
}

void xlm_roberta_base(ModelConfig& c) {
  c.model_type = "xlm-roberta";
  c.vocab_size = 250002;
  roberta_shape(c);
}

constexpr std::string_view kRobertaBpeFiles[] = {"vocab.json", "merges.txt"};
constexpr FamilyModelType kRobertaTypes[] = {
    {"roberta", "RobertaForSequenceClassification", kRobertaBpeFiles},
    {"xlm-roberta", "XLMRobertaForSequenceClassification"},
    {"camembert", "CamembertForSequenceClassification"}};
constexpr SynthPreset kRobertaPresets[] = {{"roberta-base", roberta_base},
                                           {"xlm-roberta-base", xlm_roberta_base}};

}  // namespace

extern const Family kRobertaFamily = {
    .architecture = Architecture::kRoberta,
    .model_types = kRobertaTypes,
    .head_activation = Activation::kTanh,
    .padding_positions = true,
    .shows_token_types = true,
    .config = {roberta_read_config, roberta_write_config},
    .weights = {&kRobertaNames},
    .synth = {kRobertaPresets, roberta_tokenizer},
};

}  // namespace infercost::model
