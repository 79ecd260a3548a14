#include "golden_util.h"
#include "test_utils.h"

namespace infercost::backend::testing {
namespace {

class TinyGoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TinyGoldenTest, MatchesTransformersLogits) {
  const std::string name = GetParam();
  const std::string dir = std::string(INFERCOST_TEST_DATA_DIR) + "/golden/" + name;
  model::ModelConfig config;
  model::EncoderWeights weights;
  ASSERT_NO_FATAL_FAILURE(load_model(dir, config, weights));
  const Golden g = load_golden(dir + ".json");
  check_all_batchings(name, config, weights, g);
}

INSTANTIATE_TEST_SUITE_P(Models, TinyGoldenTest,
                         ::testing::Values("tiny-distilbert", "tiny-distilbert-relu", "tiny-bert"),
                         ::infercost::testing::DashesToUnderscores());

}  // namespace
}  // namespace infercost::backend::testing
