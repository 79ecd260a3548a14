// A plain fp32 forward pass of the encoder and classifier head for one
// unpadded sequence, written to be read rather than to be fast. It is the
// oracle the backend tests compare with, and synthesize_model calibrates the
// synthetic head with it.
//
// The arithmetic is fixed: fp32 products and sums in a set order (each
// linear sums 8 strided lanes, then the tail, then the lanes), LayerNorm
// statistics in double, GELU through double erf. Synthesized model files
// depend on it bit for bit; change it and they change.
//
// Preconditions (not checked): 1 <= ids.size() <= max_positions(),
// every id in [0, vocab_size), weights shaped as `config` says.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/config.h"
#include "model/embedding.h"
#include "model/token_output.h"
#include "model/weights.h"

namespace infercost::model {

// y[rows, l.out] = x[rows, l.in] W^T + b, with W [out, in] row-major.
void reference_linear(const Linear& l, const float* x, int rows, float* y);

// LayerNorm of each of `rows` rows of `hidden` values of x, in place.
void reference_layer_norm(float* x, int rows, int hidden, const LayerNormWeights& ln, float eps);

// Exact (erf) GELU, as HF's "gelu".
float reference_gelu(float x);
// `activation` of x, GELU by reference_gelu.
float reference_activation(Activation activation, float x);

// The encoder's last hidden states of the sequence: [ids.size(),
// hidden_size], row-major: forward_program()'s steps up to its output.
// Positions as config.position_scheme() numbers them (a pre-norm encoder:
// rotary positions 0..n-1, each layer's window, the final norm); token types
// `type_ids` (one per id) where given and the model has a type table, else
// type 0.
std::vector<float> reference_token_states(const ModelConfig& config, const EncoderWeights& weights,
                                          std::span<const int32_t> ids,
                                          std::span<const int32_t> type_ids = {});

// One vector for the sequence: its token states pooled as sentence-transformers
// pools them (every token of `ids` is a real one), in double; hidden_size values.
std::vector<float> reference_pooled(const ModelConfig& config, const EncoderWeights& weights,
                                    std::span<const int32_t> ids, Pooling pooling,
                                    std::span<const int32_t> type_ids = {});

// Every token's output, [ids.size(), width] row-major: its last state
// (hidden_size values) or the model's token classifier's logits on it
// (num_labels values; the head's dense layer, activation and norm first
// where config.token_head_pre). Token types as reference_token_states.
std::vector<float> reference_token_outputs(const ModelConfig& config, const EncoderWeights& weights,
                                           std::span<const int32_t> ids, TokenOutput tokens,
                                           std::span<const int32_t> type_ids = {});

// The classifier's input for the sequence: the head's activation of its first
// layer on the first token (DistilBERT: relu(pre_classifier([CLS])); BERT:
// tanh(pooler([CLS])); RoBERTa: tanh(classifier.dense(<s>)); ModernBERT:
// head.norm(act(head.dense(the first token or the mean)))); hidden_size
// values. Positions as config.position_scheme() numbers them.
std::vector<float> reference_head_features(const ModelConfig& config, const EncoderWeights& weights,
                                           std::span<const int32_t> ids);

// The classifier's logits for the sequence; num_labels values. Token types
// as reference_token_states.
std::vector<float> reference_logits(const ModelConfig& config, const EncoderWeights& weights,
                                    std::span<const int32_t> ids, std::span<const int32_t> type_ids = {});

}  // namespace infercost::model
