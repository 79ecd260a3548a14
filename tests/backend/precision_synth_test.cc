// int8 and bf16 against fp32 at real scale: synthesized DistilBERT-base
// weights (model::synthesize_model, as golden_synth_test.cc), 400 random
// token rows of 1..64 tokens (tweet lengths). About a minute on 2 cores: label slow.
#include <gtest/gtest.h>

#include <filesystem>

#include "golden_util.h"
#include "model/synth.h"
#include "precision_util.h"

namespace infercost::backend::testing {
namespace {

TEST(SynthPrecision, DistilBertBaseAgreesWithFp32) {
  const std::string dir = std::filesystem::path(INFERCOST_BINARY_DIR) / "precision_synth/distilbert-base";
  model::ModelConfig config;
  model::EncoderWeights weights;
  ASSERT_NO_FATAL_FAILURE(synthesize_and_load("distilbert-base", dir, config, weights));
  // Measured on 1000 rows of 1..128 tokens: int8 99.0% agreement, max prob
  // diff 0.488; bf16 (emulated) 99.9%, 0.088. The synthesized weights are
  // random, so many rows sit near a tie with steep logits; int8 misses the
  // 99.5% target here (bench/RESULTS.md has the figures on synthetic tweets).
  // Fewer rows here to keep CI short, so the bounds leave room for sampling.
  check_precisions("synth distilbert-base", config, weights, 400, 64, {0.97, 0.6, 0.99, 0.15});
}

}  // namespace
}  // namespace infercost::backend::testing
