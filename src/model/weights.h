// Encoder weights in one canonical fp32 layout, whatever the checkpoint's
// naming (DistilBERT, BERT, RoBERTa or ModernBERT) or dtype (F32, F16, BF16). Linear weights keep
// the PyTorch layout: [out_features, in_features], row-major.
#pragma once

#include <vector>

#include "model/config.h"

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
  // DistilBERT sa_layer_norm / BERT attention.output.LayerNorm / ModernBERT
  // attn_norm (before attention; empty in layer 0, which has none).
  LayerNormWeights attn_ln;
  Linear ffn_in, ffn_out;   // DistilBERT ffn.lin1/lin2 / BERT intermediate.dense / output.dense
  LayerNormWeights ffn_ln;  // DistilBERT output_layer_norm / BERT output.LayerNorm / ModernBERT mlp_norm
  // DeBERTa's relative embeddings (LayerNorm'd where the config says) through
  // this layer's position key / query projections, [2 x relative_span(),
  // hidden]: what the c2p and p2c terms read. Derived when the weights are
  // read (they depend on no input); empty without those terms.
  std::vector<float> pos_key, pos_query;
};

// DistilBERT: logits = classifier(relu(pre_classifier(h[CLS]))).
// BERT:       logits = classifier(tanh(pooler(h[CLS]))).
// RoBERTa:    logits = classifier.out_proj(tanh(classifier.dense(h[<s>]))).
// ModernBERT: logits = classifier(norm(act(head.dense(pool(h))))).
// DeBERTa:    logits = classifier(act(pooler.dense(h[CLS]))).
struct ClassifierHeadWeights {
  Linear
      pre;  // DistilBERT pre_classifier, BERT pooler.dense, RoBERTa classifier.dense, ModernBERT head.dense
  LayerNormWeights norm;  // ModernBERT head.norm; empty for the others
  Linear classifier;      // "classifier", RoBERTa classifier.out_proj
};

struct EncoderWeights {
  std::vector<float> word_embeddings;        // [vocab, hidden]
  std::vector<float> position_embeddings;    // [max_position_embeddings, hidden]
  std::vector<float> token_type_embeddings;  // [type_vocab, hidden]; empty for DistilBERT
  // What the backends add to every token's word and position embedding, so
  // that none needs to know the family: embedding_bias_of() (BERT's token
  // type 0 row; zeros for DistilBERT). Always [hidden]; not a parameter of
  // its own (parameter_count() counts the token type table).
  std::vector<float> embedding_bias;
  LayerNormWeights embeddings_ln;
  std::vector<EncoderLayerWeights> layers;
  LayerNormWeights final_ln;  // ModernBERT final_norm, after the last layer; empty for the others
  ClassifierHeadWeights head;
  // Biases the checkpoint does not have (ModernBERT without attention_bias,
  // ...) read as zeros; parameter_count() leaves them out.
  size_t zero_filled = 0;
  // Where tables were derived from the checkpoint's tensors (DeBERTa: the
  // embeddings through embed_proj, the layers' pos_key / pos_query): the
  // checkpoint's elements minus the tables' that stand for them, so that
  // parameter_count() counts the checkpoint.
  int64_t derived_delta = 0;

  size_t parameter_count() const;
};

// The embedding bias of a model with these token type embeddings: their row 0
// (every text is one segment, of type 0), or zeros where there are none.
std::vector<float> embedding_bias_of(const ModelConfig& config, const std::vector<float>& token_types);

}  // namespace infercost::model
