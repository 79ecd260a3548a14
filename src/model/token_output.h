// Outputs per token instead of one per row (token classification): what a
// forward program built with a TokenOutput ends in (model::forward_program,
// BackendOptions::tokens).
#pragma once

namespace infercost::model {

// kStates: each token's last hidden state (hidden_size values a token).
// kLogits: the model's token classifier on each token's state (the labels'
// values a token): HF's *ForTokenClassification, the classifier alone, or
// first the head's dense layer, activation and norm where the config says
// (ModelConfig::token_head_pre: ModernBERT's).
enum class TokenOutput { kStates, kLogits };

}  // namespace infercost::model
