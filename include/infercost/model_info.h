// What a model directory holds and how the engine would run it, read from
// its config.json, its tokenizer files and the header of its
// model.safetensors (never the tensor bytes): the description `infercost
// model info` prints.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "infercost/options.h"
#include "infercost/status.h"

namespace infercost {

struct ModelInfo {
  std::string dir;
  std::string name;        // config.json's _name_or_path, or the directory's name
  std::string model_type;  // "bert", "roberta", "modernbert", ...
  int layers = 0;
  int hidden_size = 0;
  int max_length = 0;      // tokens per row a run reads by default
  int64_t parameters = 0;  // the weights the engine loads
  bool classification_head = false;
  std::vector<std::string> labels;      // by id, where there is a classification head
  Task default_task = Task::kClassify;  // what `infercost run` / `embed` does with it
  bool synthetic = false;               // random weights (`infercost model synth`)
  // The whole description, as `infercost model info --json` prints it.
  std::string json;
};

// kNotFound / kCorruption / kUnsupported for a directory the engine cannot
// load, naming the file.
Result<ModelInfo> describe_model(const std::string& model_dir);

}  // namespace infercost
