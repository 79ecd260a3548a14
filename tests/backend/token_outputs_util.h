// Outputs per token (BackendOptions::tokens) against the reference encoder:
// what the CPU and the emulated CUDA backends' suites check on a tiny
// HF-saved model of every family.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "golden_util.h"
#include "backend/backend.h"
#include "model/config.h"
#include "model/token_output.h"
#include "model/weights.h"
#include "model/reference_encoder.h"

namespace infercost::backend::testing {

// One of each family (tests/data_files/golden).
inline constexpr const char* kTinyModelOfEachFamily[] = {
    "tiny-distilbert", "tiny-bert", "tiny-roberta", "tiny-xlm-roberta", "tiny-modernbert", "tiny-deberta"};

// What a test asks for per token: the states, the classifier on each one,
// or the head's dense layer, activation and norm before it
// (ModelConfig::token_head_pre, set on the config).
struct TokenCase {
  model::TokenOutput tokens;
  bool head_pre;
  const char* name;
};
inline constexpr TokenCase kTokenCases[] = {
    {model::TokenOutput::kStates, false, "states"},
    {model::TokenOutput::kLogits, false, "classifier"},
    {model::TokenOutput::kLogits, true, "dense, norm and classifier"}};

// Calls check(config, weights, token case, backend options) for each of
// kTinyModelOfEachFamily and kTokenCases, with the config's token_head_pre
// and the options' tokens set as the case says (a trace names both).
template <typename Check>
void for_each_family_and_token_case(Check&& check) {
  for (const char* name : kTinyModelOfEachFamily) {
    model::ModelConfig config;
    model::EncoderWeights weights;
    ASSERT_NO_FATAL_FAILURE(
        load_model(std::string(INFERCOST_TEST_DATA_DIR) + "/golden/" + name, config, weights));
    for (const TokenCase& c : kTokenCases) {
      SCOPED_TRACE(std::string(name) + ": " + c.name);
      config.token_head_pre = c.head_pre;
      BackendOptions options;
      options.tokens = c.tokens;
      ASSERT_NO_FATAL_FAILURE(check(config, weights, c, options));
    }
  }
}

// Expects `got`, forward() of `batch` with token outputs `tokens`, to be
// [rows, seq_len, width] holding each row's reference_token_outputs within
// `tolerance` at its real positions and zeros at its padded ones.
inline void expect_reference_token_outputs(const model::ModelConfig& config,
                                           const model::EncoderWeights& weights, model::TokenOutput tokens,
                                           const TokenBatch& batch, const ForwardOutput& got,
                                           double tolerance) {
  const int width = tokens == model::TokenOutput::kStates ? config.hidden_size : weights.head.classifier.out;
  ASSERT_EQ(got.rows, batch.batch);
  ASSERT_EQ(got.tokens, batch.seq_len);
  ASSERT_EQ(got.width, width);
  const int64_t per_row = int64_t(batch.seq_len) * width;
  ASSERT_EQ(got.values.size(), size_t(batch.batch * per_row));
  double largest = 0;
  for (int r = 0; r < batch.batch; ++r) {
    const int64_t real = int64_t(batch.lengths[size_t(r)]) * width;
    const std::span<const int32_t> ids(batch.ids.data() + r * int64_t(batch.seq_len),
                                       size_t(batch.lengths[size_t(r)]));
    const std::vector<float> want = model::reference_token_outputs(config, weights, ids, tokens);
    ASSERT_EQ(int64_t(want.size()), real);
    const float* row = got.values.data() + r * per_row;
    for (int64_t i = 0; i < per_row; ++i) {
      if (i < real) {
        ASSERT_NEAR(row[i], want[size_t(i)], tolerance)
            << "row " << r << " token " << i / width << " value " << i % width;
        largest = std::max(largest, double(std::abs(want[size_t(i)])));
      } else {
        ASSERT_EQ(row[i], 0.0f) << "row " << r << " padded token " << i / width;
      }
    }
  }
  EXPECT_GT(largest, 0.1) << "outputs too small for the comparison to mean anything";
}

}  // namespace infercost::backend::testing
