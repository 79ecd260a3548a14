// The parts of a Hugging Face config.json that the engine uses.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "infercost/status.h"

namespace infercost::model {

// Which family (src/model/family.h) a config was read as; what the family
// computes is the data below, which the backends read instead.
// kRoberta: RoBERTa and the models built on it (XLM-RoBERTa, CamemBERT).
// kModernBert: ModernBERT (and the encoders that share its modules).
// kDebertaV2: DeBERTa-v2 and -v3 (model_type deberta-v2), disentangled attention.
enum class Architecture { kDistilBert, kBert, kRoberta, kModernBert, kDebertaV2 };

// Where a layer's LayerNorms sit. kPost (BERT): after each residual sum.
// kPre (ModernBERT): before attention (none in layer 0) and before the MLP,
// with one more after the last layer.
enum class NormPlacement { kPost, kPre };

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

// How a row's position ids follow from its token ids (fill_position_ids):
// a token that is not `pad_id` gets `first` + the number of such tokens before
// it in the row; a `pad_id` token gets `first - 1`. BERT and DistilBERT:
// first 0 and no pad id (-1), so positions are 0..len-1. RoBERTa: first
// pad_token_id + 1 and pad_id pad_token_id (HF's
// create_position_ids_from_input_ids, padding_idx = pad_token_id).
struct PositionScheme {
  int32_t first = 0;
  int32_t pad_id = -1;
};

// The position ids of the `len` tokens at `ids` into `out`. Inline, as both
// backends' host code and the reference encoder call it.
inline void fill_position_ids(const PositionScheme& scheme, const int32_t* ids, int len, int32_t* out) {
  int32_t next = scheme.first;
  for (int t = 0; t < len; ++t) out[t] = ids[t] == scheme.pad_id ? scheme.first - 1 : next++;
}

struct ModelConfig {
  Architecture architecture = Architecture::kDistilBert;
  std::string model_type;  // "distilbert", "bert", "roberta", "xlm-roberta", "camembert", as in config.json
  std::string name;        // _name_or_path, or the directory name
  int vocab_size = 30522;
  int hidden_size = 768;         // DistilBERT "dim"
  int num_layers = 6;            // DistilBERT "n_layers"
  int num_heads = 12;            // DistilBERT "n_heads"
  int intermediate_size = 3072;  // DistilBERT "hidden_dim"
  int max_position_embeddings = 512;
  int type_vocab_size = 0;  // BERT: 2; RoBERTa: 1 in real files; DistilBERT has no token types
  // What the backends apply (with head_activation() below), decided here so
  // that none reads `architecture`.
  Activation ffn_activation = Activation::kGelu;  // gelu or relu (activation / hidden_act)
  float layer_norm_eps = 1e-12f;
  int pad_token_id = 0;
  // Labels by id, from id2label; defaults to LABEL_0..LABEL_{n-1}.
  std::vector<std::string> labels;
  // config.json's problem_type: "single_label_classification",
  // "multi_label_classification", "regression", or empty when absent. It
  // decides the head's output function (engine::default_head_function).
  std::string problem_type;
  // config.json's "architectures": the HF classes the checkpoint was saved
  // from ("BertForSequenceClassification", "BertModel"); empty when absent.
  std::vector<std::string> architectures;
  // ModernBERT's encoder, as data: what differs from BERT's (all at BERT's
  // values for the other families).
  NormPlacement norm_placement = NormPlacement::kPost;
  // Absolute position embeddings are added to the word embeddings; false:
  // none (positions come from rotary embeddings alone).
  bool position_table = true;
  // The FFN's first layer gives [input | gate], 2 x intermediate_size: the
  // second layer reads act(input) * gate (ModernBERT's Wi, a GELU GLU).
  bool glu = false;
  // Per layer, num_layers entries where set: the rotary base (theta) applied
  // to queries and keys (empty: no rotary positions) and how many tokens a
  // token sees on each side (0: all; ModernBERT's local layers:
  // local_attention / 2). Empty attention_window: every layer global.
  std::vector<double> rope_theta;
  std::vector<int> attention_window;
  // Which linear layers and norms carry a bias (ModernBERT: attention_bias,
  // mlp_bias, norm_bias, classifier_bias; false by default there). A missing
  // bias reads as zeros.
  bool attention_bias = true, mlp_bias = true, norm_bias = true, head_bias = true;
  // The head: the mean of the real tokens' states instead of the first
  // token's (ModernBERT classifier_pooling "mean"), a LayerNorm after the
  // head's activation (ModernBERT's head.norm), and that activation
  // (classifier_activation) where the family does not fix it.
  bool head_mean_pooling = false;
  bool head_norm = false;
  // A token classifier (TokenOutput::kLogits) runs the head's dense layer,
  // its activation and, with head_norm, its norm on each token before the
  // classifier (ModernBERT's ForTokenClassification); false: the classifier
  // alone (BERT's, RoBERTa's, DeBERTa's). The family's (Family::token_head_pre);
  // no config.json key.
  bool token_head_pre = false;
  // The head's activation (head_activation()): the family's where it fixes
  // one (DistilBERT's relu, BERT's and RoBERTa's tanh), else config.json's
  // (ModernBERT's classifier_activation, DeBERTa's pooler_hidden_act).
  Activation classifier_activation = Activation::kRelu;
  // Position ids count from pad_token_id + 1 and a pad id takes the pad row
  // (RoBERTa's create_position_ids_from_input_ids); false: 0..len-1.
  bool padding_positions = false;
  // DeBERTa's disentangled attention (relative_attention), as data: besides
  // content-to-content, the content-to-position (c2p: a query against the
  // relative position's key) and position-to-content (p2c: a key against the
  // relative position's query) terms, all divided by sqrt(head_dim x the
  // number of terms). The relative position q - k is bucketed
  // logarithmically (relative_position_index) where position_buckets > 0;
  // max_relative_positions is resolved (HF: max_position_embeddings when < 1).
  bool relative_attention = false;
  bool c2p = false, p2c = false;
  int position_buckets = 0;
  int max_relative_positions = 0;
  // The relative embeddings' rows, 2 x this: position_buckets, else
  // max_relative_positions.
  int relative_span() const { return position_buckets > 0 ? position_buckets : max_relative_positions; }
  // How the checkpoint stores what the weights reader folds into tables
  // (src/model/families/deberta.cc): the word embeddings' width where it is not hidden_size
  // (DeBERTa's embedding_size, projected by embed_proj; 0: hidden_size), the
  // relative embeddings' LayerNorm (norm_rel_ebd "layer_norm") and whether
  // they go through the layer's own query / key projections (share_att_key)
  // or separate ones.
  int embedding_size = 0;
  bool norm_relative_embeddings = false;
  bool share_att_key = false;
  // True for models made by `infercost model synth`: speed real, sentiment not.
  bool synthetic = false;
  std::string synthetic_preset;
  uint64_t synthetic_seed = 0;

  int num_labels() const { return static_cast<int>(labels.size()); }
  int head_dim() const { return hidden_size / num_heads; }
  // The head's activation, the family's: DistilBERT's pre_classifier ReLU,
  // BERT's pooler tanh, RoBERTa's classifier.dense tanh, ModernBERT's
  // classifier_activation.
  Activation head_activation() const { return classifier_activation; }
  // Whether layer `layer` attends to every token (no window).
  bool global_layer(int layer) const {
    return attention_window.empty() || attention_window[static_cast<size_t>(layer)] == 0;
  }
  // The first position id of a row: pad_token_id + 1 for RoBERTa (rows
  // 0..pad_token_id of its position table are never used by a text token), 0
  // otherwise.
  int position_offset() const { return padding_positions ? pad_token_id + 1 : 0; }
  // The most tokens a row may have: the position table's rows from
  // position_offset() on (512 for roberta-base's 514).
  int max_positions() const { return max_position_embeddings - position_offset(); }
  // How the backends number a row's positions (PositionScheme).
  PositionScheme position_scheme() const {
    if (!padding_positions) return PositionScheme{};
    return PositionScheme{pad_token_id + 1, pad_token_id};
  }
};

// The row of the relative embeddings that query position q sees key position
// k through, for delta = q - k (|delta| < max_positions()): HF's
// make_log_bucket_position (computed in fp32 as torch does) where
// position_buckets > 0, plus relative_span(), clamped to [0, 2 x span).
int relative_position_index(const ModelConfig& config, int delta);
// relative_position_index of every delta from -(max_positions() - 1) to
// max_positions() - 1, in that order: the table the backends index by
// delta + max_positions() - 1. Empty without relative_attention.
std::vector<int32_t> relative_position_table(const ModelConfig& config);

// Parses config.json text; `source` names it in errors. Checks that sizes are
// positive and hidden_size divides by num_heads. Size keys (vocab_size, dim /
// hidden_size, n_layers / num_hidden_layers, n_heads / num_attention_heads,
// hidden_dim / intermediate_size) are required; other keys default as in HF
// transformers. Errors: kCorruption for malformed JSON or values, kNotFound
// for a missing key, kUnsupported for another model_type or activation.
Result<ModelConfig> parse_config(const std::string& json_text, const std::string& source);
// What a user is told of a synthetic model (`infercost model synth`: random
// weights): "'NAME' is a synthetic model (random weights): its speed is real,
// its sentiments are not." The CLI prints it as a note, Python warns. Empty
// for a real model (config.synthetic false).
std::string synthetic_model_notice(const ModelConfig& config);

Result<ModelConfig> load_config(const std::string& path);
// The HF class of the config's sequence classifier, by family and model_type
// ("XLMRobertaForSequenceClassification" for xlm-roberta).
const char* hf_classifier_class(const ModelConfig& config);
// The HF class the directory holds: config.json's first "architectures"
// entry ("BertModel" for a bare encoder), or hf_classifier_class() where it
// names none.
std::string architecture_name(const ModelConfig& config);
// Whether `architecture` is a sequence classifier (*ForSequenceClassification).
bool is_classifier_class(std::string_view architecture);
// Writes a config.json that HF transformers loads as the same model.
std::string config_to_json(const ModelConfig& config);

}  // namespace infercost::model
