// Synthetic models: the exact shapes of a preset with deterministic random
// weights, a vocabulary the project builds itself, and "infercost_synthetic"
// in config.json. Their speed is real; their sentiments are not.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "infercost/status.h"
#include "model/config.h"

namespace infercost::model {

struct SynthOptions {
  std::string out_dir;
  // One of synth_presets(): each family's (src/model/families/), "tiny" last.
  std::string preset = "distilbert-base";
  uint64_t seed = 1;
  // Where the tokenizer files come from: "" for the ones the project builds,
  // else a tokenizer.json, or a folder with one (for roberta-base also
  // vocab.json + merges.txt; for the BERT presets vocab.txt), copied as is
  // with the folder's tokenizer_config.json and special_tokens_map.json.
  std::string tokenizer;
};

std::vector<std::string> synth_presets();
// The config a preset synthesizes (synthetic=true; labels NEGATIVE/POSITIVE,
// the RoBERTa presets negative/neutral/positive).
Result<ModelConfig> synth_config(const std::string& preset);
// Writes config.json, model.safetensors and the tokenizer's files into
// out_dir (created if needed). The project's tokenizers, built from the tweet
// word list (plausible tokens per tweet, not a real vocabulary): BERT's
// vocab.txt; RoBERTa's byte-level BPE vocab.json + merges.txt; XLM-R's
// Unigram tokenizer.json; each with a tokenizer_config.json. Same preset and
// seed give identical files; --tokenizer changes only the tokenizer's.
Status synthesize_model(const SynthOptions& options);

}  // namespace infercost::model
