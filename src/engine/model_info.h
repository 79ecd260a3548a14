// A model directory's description as JSON: what `infercost model info --json`
// prints and infercost.model_info() returns (one writer for both): the
// config, the weights header's count and dtype, the tokenizer, and what a run
// makes of the head (its function, output columns), or why there is none.
#pragma once

#include <string>

#include "model/describe.h"

namespace infercost::engine {

// `m` (model::describe_model_dir) as a JSON object, indented by 2.
std::string model_info_json(const model::ModelDescription& m);

// In words, for `model info`: "bf16 by default on this CPU (native bf16) ...".
std::string default_precision_text();

}  // namespace infercost::engine
