// How an encoder's token vectors become one vector per text: a
// sentence-transformers directory's modules.json (Transformer, Pooling,
// Normalize), its 1_Pooling/config.json, sentence_bert_config.json's
// max_seq_length and config_sentence_transformers.json's prompts, read to
// one description. Anything those files ask for that the engine does not do
// (a Dense or other module, a pooling mode it lacks, lowercasing the text) is
// refused by name: a vector that is not sentence-transformers' is never given.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "infercost/options.h"  // Pooling
#include "infercost/status.h"

namespace infercost::model {

// Pooling (options.h): over the real tokens of a row ([CLS] and [SEP] included, as
// sentence-transformers pools them): the first token's vector, the mean, the
// element-wise maximum, or the last token's vector.

// "cls", "mean", "max", "lasttoken".
const char* pooling_name(Pooling pooling);
// Parses pooling_name(); anything else is kInvalidArgument naming the choices.
Result<Pooling> parse_pooling(const std::string& name);

struct EmbeddingConfig {
  Pooling pooling = Pooling::kMean;
  bool normalize = false;  // unit length (L2) after pooling: a Normalize module
  int dimensions = 0;      // the vector's length: the encoder's hidden size
  // sentence_bert_config.json's max_seq_length: tokens per row, special
  // tokens included, when a run does not ask for another; 0 where unset (then
  // the tokenizer's limit, tokenizer_config.json's model_max_length).
  // Taken as sentence-transformers takes it: above the tokenizer's
  // model_max_length too (sentence_transformers_max_length).
  int max_seq_length = 0;
  // config_sentence_transformers.json's prompts by name, and the one
  // sentence-transformers puts before every text by default ("" for none).
  std::map<std::string, std::string> prompts;
  std::string default_prompt_name;
  // Whether mean, max or last-token pooling sees a prompt's tokens
  // (1_Pooling/config.json's include_prompt).
  bool include_prompt = true;
};

// The sentence-transformers description of directory `dir`, whose encoder
// has `hidden` dimensions, or nullopt where it has no modules.json. Errors
// name the file: kCorruption for JSON that is not what sentence-transformers
// writes; kUnsupported for a module or setting the engine does not run
// (naming it); kNotFound for a file modules.json needs (1_Pooling/config.json).
Result<std::optional<EmbeddingConfig>> read_sentence_transformers(const std::string& dir, int hidden);

// The tokens per row (special tokens included) sentence-transformers reads
// the directory's texts with: its max_seq_length as given, above the
// tokenizer's model_max_length too (sentence-transformers passes it to the
// tokenizer as max_length), within the encoder's `positions` (past them
// sentence-transformers itself fails on a long text); 0 where it has none
// (the model's own limit then).
int sentence_transformers_max_length(const EmbeddingConfig& st, int positions);

}  // namespace infercost::model
