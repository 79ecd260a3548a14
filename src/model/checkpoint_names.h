// Where each canonical weight lives in a Hugging Face checkpoint, per
// architecture: read by weights.cc, written by synth.cc. Private to src/model.
#pragma once

#include "infercost/model/config.h"

namespace infercost::model {

struct CheckpointNames {
  const char* prefix;      // base-model prefix ("distilbert."), absent in base-model checkpoints
  const char* embeddings;  // + word_embeddings, position_embeddings, token_type_embeddings, LayerNorm
  const char* layer;       // + N + "." + the per-layer names below
  const char *q, *k, *v, *attn_out, *attn_ln, *ffn_in, *ffn_out, *ffn_ln;
  const char* head_pre;    // DistilBERT pre_classifier, BERT pooler, RoBERTa classifier.dense
  const char* classifier;  // the output layer: "classifier", RoBERTa classifier.out_proj
  bool token_types;
};

inline constexpr CheckpointNames kDistilBertNames = {"distilbert.",
                                                     "distilbert.embeddings.",
                                                     "distilbert.transformer.layer.",
                                                     "attention.q_lin",
                                                     "attention.k_lin",
                                                     "attention.v_lin",
                                                     "attention.out_lin",
                                                     "sa_layer_norm",
                                                     "ffn.lin1",
                                                     "ffn.lin2",
                                                     "output_layer_norm",
                                                     "pre_classifier",
                                                     "classifier",
                                                     false};

inline constexpr CheckpointNames kBertNames = {"bert.",
                                               "bert.embeddings.",
                                               "bert.encoder.layer.",
                                               "attention.self.query",
                                               "attention.self.key",
                                               "attention.self.value",
                                               "attention.output.dense",
                                               "attention.output.LayerNorm",
                                               "intermediate.dense",
                                               "output.dense",
                                               "output.LayerNorm",
                                               "bert.pooler.dense",
                                               "classifier",
                                               true};

// RobertaForSequenceClassification, and XLM-RoBERTa's and CamemBERT's, which
// reuse its modules: BERT's encoder under "roberta.", and a
// RobertaClassificationHead (dense + tanh on <s>, then out_proj) in place of
// the pooler. A checkpoint may also carry roberta.pooler.*, unused.
inline constexpr CheckpointNames kRobertaNames = [] {
  CheckpointNames n = kBertNames;
  n.prefix = "roberta.";
  n.embeddings = "roberta.embeddings.";
  n.layer = "roberta.encoder.layer.";
  n.head_pre = "classifier.dense";
  n.classifier = "classifier.out_proj";
  return n;
}();

// ModernBertForSequenceClassification: the encoder under "model." with its
// own module names (a fused Wqkv, an MLP of Wi and Wo, attn_norm and
// mlp_norm before them, final_norm) and a head of head.dense and head.norm.
// Only the prefix and the head's names are read from here: the layers'
// layout is not BERT's (weights.cc reads them).
inline constexpr CheckpointNames kModernBertNames = {
    "model.",    "model.embeddings.", "model.layers.", "attn.Wqkv", "attn.Wqkv",
    "attn.Wqkv", "attn.Wo",           "attn_norm",     "mlp.Wi",    "mlp.Wo",
    "mlp_norm",  "head.dense",        "classifier",    false};

// ModernBERT's names that BERT's layout has no place for.
struct ModernBertNames {
  const char* tok_embeddings;   // + ".weight", under CheckpointNames::embeddings
  const char* embeddings_norm;  // under CheckpointNames::embeddings
  const char* final_norm;
  const char* head_norm;
};
inline constexpr ModernBertNames kModernBertExtraNames = {"tok_embeddings", "norm", "model.final_norm",
                                                          "head.norm"};

// DebertaV2ForSequenceClassification: BERT's layer names with query_proj /
// key_proj / value_proj, under "deberta."; a ContextPooler ("pooler.dense",
// no "deberta." prefix) before the classifier. The relative embeddings and
// the position projections are read by weights.cc (DebertaNames).
inline constexpr CheckpointNames kDebertaNames = [] {
  CheckpointNames n = kBertNames;
  n.prefix = "deberta.";
  n.embeddings = "deberta.embeddings.";
  n.layer = "deberta.encoder.layer.";
  n.q = "attention.self.query_proj";
  n.k = "attention.self.key_proj";
  n.v = "attention.self.value_proj";
  n.head_pre = "pooler.dense";
  n.token_types = false;  // only where type_vocab_size > 0 (weights.cc)
  return n;
}();

struct DebertaNames {
  const char* embed_proj;      // under CheckpointNames::embeddings
  const char* rel_embeddings;  // + ".weight"
  const char* rel_norm;        // the relative embeddings' LayerNorm
  const char* pos_key_proj;    // per layer, where not share_att_key
  const char* pos_query_proj;
};
inline constexpr DebertaNames kDebertaExtraNames = {
    "embed_proj", "deberta.encoder.rel_embeddings", "deberta.encoder.LayerNorm",
    "attention.self.pos_key_proj", "attention.self.pos_query_proj"};

inline const CheckpointNames& checkpoint_names(Architecture architecture) {
  switch (architecture) {
    case Architecture::kDistilBert: return kDistilBertNames;
    case Architecture::kBert: return kBertNames;
    case Architecture::kRoberta: return kRobertaNames;
    case Architecture::kModernBert: return kModernBertNames;
    case Architecture::kDebertaV2: return kDebertaNames;
  }
  return kBertNames;
}

}  // namespace infercost::model
