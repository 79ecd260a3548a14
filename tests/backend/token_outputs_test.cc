// The CPU backend's outputs per token (token classification) against the
// reference encoder on a tiny HF-saved model of every family.
#include <gtest/gtest.h>

#include <string>

#include "cuda_test_util.h"
#include "token_outputs_util.h"

namespace infercost::backend {
namespace {

// Each token's state, the classifier on each token, and the head's dense
// layer and norm before it, packed and with the padding computed, as the
// reference computes them one unpadded row at a time (within 2e-4, as the
// pooled vectors); the outputs of padded positions are zeros.
TEST(CpuTokenOutputs, MatchTheReferenceOnEveryFamily) {
  testing::for_each_family_and_token_case([](const model::ModelConfig& config,
                                             const model::EncoderWeights& weights,
                                             const testing::TokenCase& c, const BackendOptions& options) {
    const testing::Rows rows = testing::random_rows(5, 1, 24, config.vocab_size, 31);
    auto cpu = testing::prepared_or_null(create_backend("cpu", options), config, weights);
    ASSERT_TRUE(cpu);
    for (bool padded : {false, true}) {
      const TokenBatch batch = testing::batch_of(rows, 0, rows.size(), padded, config.pad_token_id, 27);
      Result<ForwardOutput> got = cpu->forward(batch);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      ASSERT_NO_FATAL_FAILURE(
          testing::expect_reference_token_outputs(config, weights, c.tokens, batch, *got, 2e-4))
          << (padded ? "padding computed" : "packed");
    }
  });
}

// Token states need no head; token logits do, and pooling with token
// outputs is refused when the backend is made.
TEST(CpuTokenOutputs, StatesNeedNoHeadAndPoolingIsNotTokens) {
  model::ModelConfig config;
  model::EncoderWeights weights;
  ASSERT_NO_FATAL_FAILURE(
      testing::load_model(std::string(INFERCOST_TEST_DATA_DIR) + "/golden/tiny-bert", config, weights));
  weights.head = {};
  BackendOptions options;
  options.tokens = model::TokenOutput::kStates;
  EXPECT_TRUE(testing::prepared_or_null(create_backend("cpu", options), config, weights));
  options.tokens = model::TokenOutput::kLogits;
  auto made = create_backend("cpu", options);
  ASSERT_TRUE(made.ok());
  const Status st = (*made)->prepare(config, weights);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
  EXPECT_NE(st.message().find("classifier"), std::string::npos) << st.message();
  options.pooling = Pooling::kMean;
  EXPECT_EQ(create_backend("cpu", options).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace infercost::backend
