// Encoder weights in one canonical fp32 layout, whatever the checkpoint's
// naming (DistilBERT or BERT) or dtype (F32, F16, BF16). Linear weights keep
// the PyTorch layout: [out_features, in_features], row-major.
#pragma once

#include <vector>

#include "infercost/model/config.h"

namespace infercost::model {

struct Linear {
  int out = 0, in = 0;
  std::vector<float> weight;  // [out, in]
  std::vector<float> bias;    // [out]
};

struct LayerNormWeights {
  std::vector<float> gamma, beta;  // [hidden]
};

struct EncoderLayerWeights {
  Linear q, k, v, attn_out;
  LayerNormWeights attn_ln;  // DistilBERT sa_layer_norm / BERT attention.output.LayerNorm
  Linear ffn_in, ffn_out;    // DistilBERT ffn.lin1/lin2 / BERT intermediate.dense / output.dense
  LayerNormWeights ffn_ln;   // DistilBERT output_layer_norm / BERT output.LayerNorm
};

// DistilBERT: logits = classifier(relu(pre_classifier(h[CLS]))).
// BERT:       logits = classifier(tanh(pooler(h[CLS]))).
struct ClassifierHeadWeights {
  Linear pre;  // DistilBERT pre_classifier, or BERT pooler.dense
  Linear classifier;
};

struct EncoderWeights {
  std::vector<float> word_embeddings;        // [vocab, hidden]
  std::vector<float> position_embeddings;    // [max_positions, hidden]
  std::vector<float> token_type_embeddings;  // [type_vocab, hidden]; empty for DistilBERT
  LayerNormWeights embeddings_ln;
  std::vector<EncoderLayerWeights> layers;
  ClassifierHeadWeights head;

  size_t parameter_count() const;
};

}  // namespace infercost::model
