// Where each canonical weight lives in a Hugging Face checkpoint: the layout
// of BERT's names that the families fill in (each family's file holds its
// own; kBertNames is BERT's, which RoBERTa and DeBERTa start from). Read by
// weights.cc, written by synth.cc. Private to src/model.
#pragma once

#include "model/config.h"

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

}  // namespace infercost::model
