// Full-size presets: shapes HF would build, written and read back (slow:
// hundreds of MB of weights and a calibration forward pass).
#include <gtest/gtest.h>

#include <filesystem>
#include <tuple>

#include "infercost/model/model_dir.h"
#include "infercost/model/safetensors.h"
#include "infercost/model/synth.h"
#include "infercost/model/weights.h"
#include "test_utils.h"

namespace infercost::model {
namespace {

TEST(SynthFullSize, PresetsLoadWithPublishedParameterCounts) {
  for (auto [preset, params] :
       {std::pair<const char*, size_t>{"distilbert-base", 66955010u}, {"bert-base", 109483778u}}) {
    testing::TempDir scratch;
    const std::string dir = scratch.file(preset);
    ASSERT_TRUE(synthesize_model({dir, preset, 1, ""}).ok()) << preset;
    auto m = load_model_dir(dir, {});
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    EXPECT_EQ(m->weights.parameter_count(), params) << preset;
    EXPECT_EQ(m->config.synthetic_preset, preset);
  }
}

// The RoBERTa presets, read through config and weights (their BPE and Unigram
// tokenizers are the tokenizer layer's; tools/check_synth_model.py loads the
// whole directory with HF).
TEST(SynthFullSize, RobertaPresetsHaveHfShapesAndTokenizerFiles) {
  for (auto [preset, params, tokenizer_file] :
       {std::tuple<const char*, size_t, const char*>{"roberta-base", 124647939u, "merges.txt"},
        {"xlm-roberta-base", 278045955u, "tokenizer.json"}}) {
    testing::TempDir scratch;
    const std::string dir = scratch.file(preset);
    ASSERT_TRUE(synthesize_model({dir, preset, 1, ""}).ok()) << preset;
    auto config = load_config(dir + "/config.json");
    ASSERT_TRUE(config.ok()) << config.status().to_string();
    EXPECT_EQ(config->architecture, Architecture::kRoberta);
    EXPECT_EQ(config->synthetic_preset, preset);
    auto file = SafeTensorsFile::open(dir + "/model.safetensors");
    ASSERT_TRUE(file.ok()) << file.status().to_string();
    auto w = read_encoder_weights(*file, *config);
    ASSERT_TRUE(w.ok()) << w.status().to_string();
    EXPECT_EQ(w->parameter_count(), params) << preset;
    // HF's padding rows: the pad id's word and position embeddings are zero.
    for (int i = 0; i < config->hidden_size; ++i) {
      ASSERT_EQ(w->word_embeddings[size_t(config->hidden_size + i)], 0.0f);
      ASSERT_EQ(w->position_embeddings[size_t(config->hidden_size + i)], 0.0f);
    }
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + tokenizer_file)) << preset;
    EXPECT_TRUE(std::filesystem::exists(dir + "/tokenizer_config.json")) << preset;
  }
}

}  // namespace
}  // namespace infercost::model
