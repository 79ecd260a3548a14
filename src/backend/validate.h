// The checks every backend makes before it trusts a model or a batch: the
// config's sizes, the weights' shapes against it, and a TokenBatch against
// the model. Messages carry no backend prefix; the caller adds its context
// ("cpu backend: prepare <model>: ", "cuda:0: classify: ").
#pragma once

#include <optional>

#include "backend/backend.h"
#include "infercost/status.h"
#include "model/config.h"
#include "model/weights.h"

namespace infercost::backend {

// hidden_size divides into num_heads; vocab_size, max_positions() and
// intermediate_size are positive (kInvalidArgument); the FFN activation is
// gelu or relu (kUnsupported).
Status validate_config(const model::ModelConfig& config);

// The weights' shapes against a config that validate_config() accepted, for
// the program forward_program(config, pooling, tokens) runs: embeddings,
// every LayerNorm and linear layer (shape and value counts), the layer count,
// and its output step's weights (the head's layers and the classifier against
// the config's labels for a classifier; none for pooled vectors or token
// states; the classifier, and the dense layer and norm of a token head that
// has them, for token logits).
Status validate_weights(const model::ModelConfig& config, const model::EncoderWeights& weights,
                        std::optional<Pooling> pooling = std::nullopt,
                        std::optional<model::TokenOutput> tokens = std::nullopt);

// validate_config(), then validate_weights().
Status validate_model(const model::ModelConfig& config, const model::EncoderWeights& weights,
                      std::optional<Pooling> pooling = std::nullopt,
                      std::optional<model::TokenOutput> tokens = std::nullopt);

// A batch against the model: sizes, lengths in 1..seq_len, seq_len within the
// model's max_positions(), every id that gets computed (the padding too with
// compute_padding) inside the vocabulary. An empty batch is valid.
Status validate_batch(const model::ModelConfig& config, const TokenBatch& batch);

// The model's activation as a backend's own enum (one with kNone, kGelu,
// kRelu and kTanh: what its GEMM epilogues and kernels take).
template <typename BackendActivation>
BackendActivation activation_as(model::Activation activation) {
  switch (activation) {
    case model::Activation::kGelu: return BackendActivation::kGelu;
    case model::Activation::kRelu: return BackendActivation::kRelu;
    case model::Activation::kTanh: return BackendActivation::kTanh;
  }
  return BackendActivation::kNone;
}

}  // namespace infercost::backend
