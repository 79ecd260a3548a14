// Synthetic models: the exact shapes of a preset with deterministic random
// weights, a vocabulary the project builds itself, and "infercost_synthetic"
// in config.json. Their speed is real; their sentiments are not.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "infercost/core/status.h"
#include "infercost/model/config.h"

namespace infercost::model {

struct SynthOptions {
  std::string out_dir;
  std::string preset = "distilbert-base";  // distilbert-base | bert-base | tiny
  uint64_t seed = 1;
};

std::vector<std::string> synth_presets();
// The config a preset synthesizes (labels NEGATIVE/POSITIVE, synthetic=true).
Result<ModelConfig> synth_config(const std::string& preset);
// Writes config.json, model.safetensors, vocab.txt, tokenizer_config.json into
// out_dir (created if needed). Same preset and seed give identical files.
Status synthesize_model(const SynthOptions& options);

}  // namespace infercost::model
