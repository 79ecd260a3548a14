// A Hugging Face model directory: config.json, model.safetensors and the
// tokenizer (tokenizer.json and/or vocab.txt, plus tokenizer_config.json).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "model/config.h"
#include "model/safetensors.h"
#include "model/weights.h"
#include "text/tokenizer.h"

namespace infercost::model {

struct LoadedModel {
  std::string dir;
  ModelConfig config;
  EncoderWeights weights;
  std::string weights_dtype;  // dtype(s) found in the checkpoint, e.g. "F32"
  std::shared_ptr<const text::Tokenizer> tokenizer;
  std::string tokenizer_source;  // "tokenizer.json" or "vocab.txt"

  // The tokenizer as the WordPiece one it is for BERT and DistilBERT (its
  // normalizer options and vocabulary), or null for another kind.
  const text::WordPieceTokenizer* wordpiece() const {
    return dynamic_cast<const text::WordPieceTokenizer*>(tokenizer.get());
  }
};

struct LoadOptions {
  bool load_weights = true;  // false: config, tokenizer and the weights header only
  // False: the encoder's token vectors are what is wanted (embeddings), so a
  // checkpoint without a classification head loads (read_encoder_weights
  // without `classifier`); true: one without is refused
  // (check_classification_head).
  bool classification_head = true;
  // Tokenizer truncation; 0: the model's limit (its positions, or its
  // tokenizer_config.json's model_max_length where that is smaller).
  int max_length = 0;
  bool add_special_tokens = true;
  // Overrides of the tokenizer's normalizer flags, when set.
  std::optional<bool> lowercase;
  std::optional<bool> strip_accents;
};

// The model's own limit on tokens per row (what max_length 0 means): its
// positions, or its tokenizer_config.json's model_max_length where smaller.
int model_length_limit(const ModelConfig& config, int model_max_length);
// model_length_limit of the model directory `dir`, from config.json and
// tokenizer_config.json only (their errors).
Result<int> read_model_length_limit(const std::string& dir);

// Refuses pickle checkpoints (pytorch_model.bin, *.pt, *.pth, *.ckpt) when no
// model.safetensors is present, explaining why and how to convert. Missing or
// mis-shaped tensors are errors naming the tensor.
Result<LoadedModel> load_model_dir(const std::string& dir, const LoadOptions& options);

// Maps HF checkpoint names to EncoderWeights; exposed for tests. Without
// `classifier`: the encoder and, where the file has it, the head's first
// layer (BERT's pooler); no classifier is required or read.
Result<EncoderWeights> read_encoder_weights(const SafeTensorsFile& file, const ModelConfig& config,
                                            bool classifier = true);
// The parameters read_encoder_weights() would load from the file at `path`
// whose header this is, counted from the header's shapes: the same tensors
// found and checked the same way (and the same errors), none read. Equals
// read_encoder_weights(file, config)->parameter_count(). Without
// `classifier` (a checkpoint without a classification head): the encoder
// and, where the file has it, the head's first layer (BERT's pooler).
Result<int64_t> count_encoder_parameters(const SafeTensorsHeader& header, const std::string& path,
                                         const ModelConfig& config, bool classifier = true);

// Whether a checkpoint's tensors hold the config's classification head: its
// output layer ("classifier.weight"; RoBERTa's "classifier.out_proj.weight").
bool has_classification_head(const std::map<std::string, TensorInfo>& tensors, const ModelConfig& config);

// The one rule for models without a classification head (a bare encoder
// such as BertModel, a sentence-transformers model): kUnsupported naming
// `dir`, the architecture config.json declares, modules.json where present,
// and the *ForSequenceClassification class classification needs, when the
// checkpoint has no head and config.json declares no classifier (a declared
// classifier whose head is missing is a missing tensor, kNotFound, when
// loading). load_model_dir() refuses such a model with it unless
// load_weights is false (config, tokenizer and header serve `model info`,
// `tokenize` and `plan`); describe_model_dir() reports it.
Status check_classification_head(const std::string& dir, const ModelConfig& config,
                                 const std::map<std::string, TensorInfo>& tensors);

}  // namespace infercost::model
