// The plain reference forward pass against HF transformers logits on the tiny
// committed models (tests/data_files/golden, written by
// tools/gen_model_golden.py), and its pieces against hand-computed values.
#include "model/reference_encoder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/model_dir.h"
#include "model/safetensors.h"
#include "model/weights.h"
#include "test_utils.h"

namespace infercost::model {
namespace {

TEST(ReferenceEncoderTest, LinearLayerNormAndGelu) {
  Linear l;
  l.out = 2;
  l.in = 10;  // one block of 8 lanes and a tail of 2
  for (int o = 0; o < 2; ++o)
    for (int i = 0; i < 10; ++i) l.weight.push_back(float(o == 0 ? i : -1));
  l.bias = {0.5f, 1.0f};
  std::vector<float> x(20, 1.0f), y(4);
  for (int i = 0; i < 10; ++i) x[10 + size_t(i)] = float(i);
  reference_linear(l, x.data(), 2, y.data());
  EXPECT_EQ(y, (std::vector<float>{45.5f, -9.0f, 285.5f, -44.0f}));

  std::vector<float> r = {1, 2, 3, 4};
  reference_layer_norm(r.data(), 1, 4, {{1, 1, 2, 1}, {0, 0, 0, 10}}, 0.0f);
  const float s = 1.0f / std::sqrt(1.25f);
  EXPECT_NEAR(r[0], -1.5f * s, 1e-6);
  EXPECT_NEAR(r[1], -0.5f * s, 1e-6);
  EXPECT_NEAR(r[2], 2 * 0.5f * s, 1e-6);
  EXPECT_NEAR(r[3], 10 + 1.5f * s, 1e-6);

  EXPECT_EQ(reference_gelu(0.0f), 0.0f);
  EXPECT_NEAR(reference_gelu(1.0f), 0.8413447f, 1e-6);
  EXPECT_NEAR(reference_gelu(-3.0f), -0.0040499f, 1e-6);
}

class ReferenceGoldenTest : public ::testing::TestWithParam<std::string> {
 protected:
  // The committed model GetParam() names.
  void load() {
    const std::string dir = std::string(INFERCOST_TEST_DATA_DIR) + "/golden/" + GetParam();
    auto c = load_config(dir + "/config.json");
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    auto file = SafeTensorsFile::open(dir + "/model.safetensors");
    ASSERT_TRUE(file.ok()) << file.status().to_string();
    auto w = read_encoder_weights(*file, *c);
    ASSERT_TRUE(w.ok()) << w.status().to_string();
    config = std::move(c).value();
    weights = std::move(w).value();
  }
  ModelConfig config;
  EncoderWeights weights;
};

TEST_P(ReferenceGoldenTest, MatchesTransformersLogits) {
  ASSERT_NO_FATAL_FAILURE(load());
  const std::string dir = std::string(INFERCOST_TEST_DATA_DIR) + "/golden/" + GetParam();
  std::ifstream in(dir + ".json");
  ASSERT_TRUE(in.good()) << "cannot open " << dir << ".json";
  std::stringstream ss;
  ss << in.rdbuf();
  const auto doc = nlohmann::json::parse(ss.str());
  const double tolerance = doc.value("tolerance_abs", 1e-4);
  size_t cases = 0;
  double max_diff = 0, max_abs = 0;
  for (const auto& c : doc.at("cases")) {
    const auto ids = c.at("input_ids").get<std::vector<int32_t>>();
    const auto want = c.at("logits").get<std::vector<double>>();
    const std::vector<float> got = reference_logits(config, weights, ids);
    ASSERT_EQ(got.size(), want.size());
    for (size_t l = 0; l < want.size(); ++l) {
      max_diff = std::max(max_diff, std::abs(double(got[l]) - want[l]));
      max_abs = std::max(max_abs, std::abs(want[l]));
    }
    // The logits are the classifier applied to the head features.
    const std::vector<float> g = reference_head_features(config, weights, ids);
    ASSERT_EQ(g.size(), size_t(config.hidden_size));
    std::vector<float> logits(want.size());
    reference_linear(weights.head.classifier, g.data(), 1, logits.data());
    EXPECT_EQ(logits, got);
    ++cases;
  }
  EXPECT_GE(cases, 10u);
  EXPECT_GT(max_abs, 0.1) << "logits too small for the comparison to mean anything";
  EXPECT_LE(max_diff, tolerance) << "over " << cases << " cases";
}

// Outputs per token, anchored to what MatchesTransformersLogits and the
// embedding goldens check against Hugging Face: the states are the pooled
// vectors' rows (the first token's; their mean); where the model's head reads
// the first token, token
// 0's token-classifier row with token_head_pre (the head's dense layer,
// activation and norm, then the classifier) is the sequence classifier's
// logits, and token 0's state is the first token's pooled vector; the
// classifier alone sees the states unchanged, so it differs from the head.
TEST_P(ReferenceGoldenTest, TokenOutputsAgreeWithTheSequenceHead) {
  ASSERT_NO_FATAL_FAILURE(load());
  const std::vector<int32_t> ids = {2, 17, 5, 9, 30, 11, 3};
  const size_t n = ids.size(), h = size_t(config.hidden_size), labels = size_t(weights.head.classifier.out);
  const std::vector<float> states = reference_token_outputs(config, weights, ids, TokenOutput::kStates);
  ASSERT_EQ(states.size(), n * h);
  const std::vector<float> first = reference_pooled(config, weights, ids, Pooling::kCls);
  EXPECT_EQ(std::vector<float>(states.begin(), states.begin() + long(h)), first);
  const std::vector<float> mean = reference_pooled(config, weights, ids, Pooling::kMean);
  for (size_t d = 0; d < h; ++d) {
    double sum = 0;
    for (size_t t = 0; t < n; ++t) sum += states[t * h + d];
    EXPECT_NEAR(sum / double(n), mean[d], 1e-5) << "dimension " << d;
  }
  // A head that pools the mean reads no one token: the rows below are the
  // first-token heads'.
  if (config.head_mean_pooling) return;

  config.token_head_pre = true;
  const std::vector<float> headed = reference_token_outputs(config, weights, ids, TokenOutput::kLogits);
  ASSERT_EQ(headed.size(), n * labels);
  const std::vector<float> sequence = reference_logits(config, weights, ids);
  for (size_t l = 0; l < labels; ++l) EXPECT_NEAR(headed[l], sequence[l], 1e-6) << "label " << l;

  config.token_head_pre = false;
  const std::vector<float> bare = reference_token_outputs(config, weights, ids, TokenOutput::kLogits);
  ASSERT_EQ(bare.size(), n * labels);
  EXPECT_NE(std::vector<float>(bare.begin(), bare.begin() + long(labels)),
            std::vector<float>(headed.begin(), headed.begin() + long(labels)));
}

INSTANTIATE_TEST_SUITE_P(Models, ReferenceGoldenTest,
                         ::testing::Values("tiny-distilbert", "tiny-distilbert-relu", "tiny-bert",
                                           "tiny-roberta", "tiny-roberta-multilabel", "tiny-xlm-roberta",
                                           "tiny-camembert", "tiny-modernbert", "tiny-modernbert-mean",
                                           "tiny-modernbert-multilabel", "tiny-modernbert-long",
                                           "tiny-deberta", "tiny-deberta-3", "tiny-deberta-multilabel"),
                         ::infercost::testing::DashesToUnderscores());

}  // namespace
}  // namespace infercost::model
