// Where each canonical weight lives in a Hugging Face checkpoint: the layout
// of BERT's names, which the families fill in (each family's file holds its
// own and says only what differs from BERT's; kBertNames is BERT's). Read by
// weights.cc, written by synth.cc. Private to src/model.
#pragma once

#include <string>

#include "model/config.h"

namespace infercost::model {

struct CheckpointNames {
  const char* prefix;  // base-model prefix ("distilbert."), absent in base-model checkpoints
  // Under `prefix`: the embeddings (+ word_embeddings, position_embeddings,
  // token_type_embeddings, LayerNorm) and the layers (+ N + "." + the
  // per-layer names below).
  const char* embeddings = "embeddings.";
  const char* layer = "encoder.layer.";
  const char *q = "attention.self.query", *k = "attention.self.key", *v = "attention.self.value";
  const char *attn_out = "attention.output.dense", *attn_ln = "attention.output.LayerNorm";
  const char *ffn_in = "intermediate.dense", *ffn_out = "output.dense", *ffn_ln = "output.LayerNorm";
  // Whole names: the head's first layer (DistilBERT pre_classifier, BERT
  // pooler, RoBERTa classifier.dense) and the output layer ("classifier",
  // RoBERTa classifier.out_proj).
  const char* head_pre = "bert.pooler.dense";
  const char* classifier = "classifier";

  // A name under the prefix ("bert." + "encoder.rel_embeddings").
  std::string under_prefix(const char* name) const { return std::string(prefix) + name; }
  // "bert.embeddings."; "bert.encoder.layer.3.".
  std::string embeddings_prefix() const { return under_prefix(embeddings); }
  std::string layer_prefix(int i) const { return under_prefix(layer) + std::to_string(i) + "."; }
};

inline constexpr CheckpointNames kBertNames = {.prefix = "bert."};

}  // namespace infercost::model
