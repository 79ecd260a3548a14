// Full-size presets: shapes HF would build, written and read back (slow:
// hundreds of MB of weights and a calibration forward pass).
#include <gtest/gtest.h>

#include <filesystem>

#include "infercost/model/model_dir.h"
#include "infercost/model/synth.h"
#include "test_utils.h"

namespace infercost::model {
namespace {

TEST(SynthFullSize, PresetsLoadWithPublishedParameterCounts) {
  for (auto [preset, params] :
       {std::pair<const char*, size_t>{"distilbert-base", 66955010u}, {"bert-base", 109483778u}}) {
    testing::TempDir scratch;
    const std::string dir = scratch.file(preset);
    ASSERT_TRUE(synthesize_model({dir, preset, 1}).ok()) << preset;
    auto m = load_model_dir(dir, {});
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    EXPECT_EQ(m->weights.parameter_count(), params) << preset;
    EXPECT_EQ(m->config.synthetic_preset, preset);
  }
}

}  // namespace
}  // namespace infercost::model
