// What a model directory holds, read from its config.json, its tokenizer
// files and the header of its model.safetensors, never from the tensor bytes:
// describing a model of gigabytes reads a few kilobytes of its weights file.
// The one description of a model: `infercost model info`,
// infercost.model_info() (and so Model.info() and the Spark driver's output
// schema) and a benchmark record's model are made from it. (Implemented in
// src/model/model_dir.cc, beside load_model_dir(): they share their checks.)
//
// What a run does with the model's outputs (its default head function and
// output column names) is decided above this stage, from `config`:
// engine::default_head_function and io::prediction_column_names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "infercost/status.h"
#include "model/config.h"
#include "model/embedding.h"
#include "text/tokenizer.h"

namespace infercost::model {

// A WordPiece tokenizer's normalizer as it applies (strip accents resolved
// from lowercase when tokenizer_config.json leaves it unset).
struct NormalizerDescription {
  bool lowercase = false;
  bool strip_accents = false;
  bool split_cjk = false;  // tokenize_chinese_chars
};

// The tokenizer load_model_dir() would make with its default options.
struct TokenizerDescription {
  text::TokenizerKind kind = text::TokenizerKind::kWordPiece;
  std::string source;  // the file it was read from: "tokenizer.json" or "vocab.txt"
  size_t vocab_size = 0;
  int max_length = 0;                               // tokens per row, special tokens included
  std::optional<NormalizerDescription> normalizer;  // WordPiece tokenizers only
};

struct ModelDescription {
  std::string dir;
  // As loading parses it; `name` is the directory's name when config.json
  // has no _name_or_path. Sizes, labels by id, problem_type, the synthetic
  // preset and seed: see ModelConfig.
  ModelConfig config;
  // The elements of the tensors the engine loads (the encoder and its head),
  // from the shapes in the header: read_encoder_weights(...)->parameter_count()
  // without reading them. A tensor of the file that the engine does not use
  // (BERT's pooler under RoBERTa, a buffer) is not counted.
  int64_t parameters = 0;
  // False for an encoder without a classification head (check_classification_head
  // in model_dir.h): `parameters` then counts the encoder and its pooler
  // where present, and `no_head` says why it cannot run (what `infercost run`
  // says); the config's labels are then HF's defaults, not the model's.
  bool classification_head = true;
  std::string no_head;
  // The float dtype(s) of model.safetensors, "+"-joined ("F32", "BF16+F32").
  std::string weights_dtype;
  TokenizerDescription tokenizer;
  // Where the directory is a sentence-transformers model (it has a
  // modules.json): how it makes one vector per text, or, when the engine
  // cannot make sentence-transformers' vector, why (embedding_refused:
  // read_sentence_transformers' error). Both empty without a modules.json.
  std::optional<EmbeddingConfig> embedding;
  std::string embedding_refused;
};

// Describes the model directory `dir` with the checks load_model_dir(dir, {})
// makes, and its errors (but an encoder without a classification head is
// described, with classification_head false): a missing directory, config.json, tokenizer or
// model.safetensors; a pickle or sharded checkpoint; a corrupt header; a
// missing or mis-shaped tensor. No tensor is read, so a model.safetensors
// whose data section is cut short or corrupt still describes (and fails to
// load).
Result<ModelDescription> describe_model_dir(const std::string& dir);

}  // namespace infercost::model
