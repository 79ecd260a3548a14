// int8 and bf16 against fp32 at real scale: synthesized DistilBERT-base
// weights (model::synthesize_model, as golden_synth_test.cc), 400 random
// token rows of 1..64 tokens (tweet lengths). About a minute on 2 cores: label slow.
#include <gtest/gtest.h>

#include <filesystem>

#include "backend/cpu_info.h"
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
  // The synthesized weights are random, so many rows sit near a tie with
  // steep logits (bench/RESULTS.md has the figures on synthetic tweets).
  // These 400 rows (seeded: the same every run) were measured, and each
  // bound is that figure plus a margin of about two rows' flips and half the
  // largest move again:
  // - a CPU with native bf16 (AVX-512 BF16; int8 runs its LayerNorm-fed
  //   GEMMs in bf16), the CI VM's: int8 99.25% agreement (3 rows flip), max
  //   |prob diff| 0.170; bf16 99.75% (1 row), 0.044. Bounds: 98.75%, 0.25;
  //   99.25%, 0.07.
  // - without native bf16 (every GEMM int8, bf16 emulated) no CPU at hand
  //   measured these rows; an earlier measurement there, on 1,000 rows of
  //   1..128 tokens, gave int8 99.0%, 0.488 and (emulated) bf16 99.9%, 0.088.
  //   Bounds: 97%, 0.6; 99%, 0.15.
  const Bounds bounds =
      cpu_info().native_bf16() ? Bounds{0.9875, 0.25, 0.9925, 0.07} : Bounds{0.97, 0.6, 0.99, 0.15};
  check_precisions("synth distilbert-base", config, weights, 400, 64, bounds);
}

}  // namespace
}  // namespace infercost::backend::testing
