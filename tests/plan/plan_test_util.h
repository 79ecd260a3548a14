// Shared by the plan tests: the committed tiny model's tokenizer and texts of
// a known token length.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "model/model_dir.h"

namespace infercost::plan::test {

inline std::string tiny_model_dir() {
  return std::string(INFERCOST_TEST_DATA_DIR) + "/model/hf_tiny_distilbert";
}

// The tiny model's tokenizer (config and vocab only), truncating at max_length.
inline model::LoadedModel tiny_model(int max_length = 32) {
  model::LoadOptions load;
  load.load_weights = false;
  load.max_length = max_length;
  Result<model::LoadedModel> m = model::load_model_dir(tiny_model_dir(), load);
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  return std::move(*m);
}

// A text of `length` tokens with [CLS] and [SEP] ("the" is one token of the
// tiny vocabulary): length - 2 words.
inline std::string text_of_length(int length) {
  std::string s;
  for (int i = 0; i < length - 2; ++i) s += i ? " the" : "the";
  return s;
}

inline std::string jsonl_row(int length) {
  return "{\"full_text\": \"" + text_of_length(length) + "\"}\n";
}

}  // namespace infercost::plan::test
