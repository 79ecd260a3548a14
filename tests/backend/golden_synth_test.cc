// Full DistilBERT-base, BERT-base, RoBERTa-base, XLM-R-base, ModernBERT-base (rows past its
// local windows, up to 2,100 tokens) and DeBERTa-v3-base (rows past its exact
// relative positions, into the log buckets, up to 512 tokens) shapes: the weights come from our
// synthesizer (deterministic), regenerated here; the golden logits came from
// HF transformers on the same directory. Each preset is synthesized once
// (seconds of weights and a calibration pass) and also checked for what HF
// would build: the whole directory loads, with HF's parameter count.
#include <filesystem>
#include <map>

#include "golden_util.h"
#include "model/model_dir.h"
#include "model/safetensors.h"
#include "model/synth.h"
#include "test_utils.h"

namespace infercost::backend::testing {
namespace {

class SynthGoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SynthGoldenTest, MatchesTransformersLogits) {
  const std::string preset = GetParam();
  const std::string golden_path = std::string(INFERCOST_TEST_DATA_DIR) + "/golden/synth-" + preset + ".json";
  const Golden g = load_golden(golden_path);
  const std::string dir = std::string(INFERCOST_BINARY_DIR) + "/golden_synth/" + preset;
  std::filesystem::remove_all(dir);
  model::SynthOptions opts;
  opts.out_dir = dir;
  opts.preset = preset;
  opts.seed = g.doc.at("synth_seed").get<uint64_t>();
  const Status st = model::synthesize_model(opts);
  ASSERT_TRUE(st.ok()) << st.to_string();

  // The directory as `infercost run` loads it (tokenizer included), with the
  // parameter count HF's model of this shape has.
  const std::map<std::string, size_t> hf_parameters = {
      {"distilbert-base", 66955010u},   {"bert-base", 109483778u},       {"roberta-base", 124647939u},
      {"xlm-roberta-base", 278045955u}, {"modernbert-base", 149606402u}, {"deberta-v3-base", 184423682u}};
  {
    auto loaded = model::load_model_dir(dir, {});
    ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
    EXPECT_EQ(loaded->weights.parameter_count(), hf_parameters.at(preset));
    EXPECT_EQ(loaded->config.synthetic_preset, preset);
  }
  model::ModelConfig config;
  model::EncoderWeights weights;
  ASSERT_NO_FATAL_FAILURE(load_model(dir, config, weights));
  if (config.architecture == model::Architecture::kRoberta) {
    // HF's padding rows: the pad id's word and position embeddings are zero.
    for (int i = 0; i < config.hidden_size; ++i) {
      ASSERT_EQ(weights.word_embeddings[size_t(config.hidden_size + i)], 0.0f);
      ASSERT_EQ(weights.position_embeddings[size_t(config.hidden_size + i)], 0.0f);
    }
    const char* tokenizer_file = preset == "roberta-base" ? "/merges.txt" : "/tokenizer.json";
    EXPECT_TRUE(std::filesystem::exists(dir + tokenizer_file)) << preset;
    EXPECT_TRUE(std::filesystem::exists(dir + "/tokenizer_config.json")) << preset;
  }
  // If this differs, synth's output changed since the golden was written:
  // rerun tools/gen_model_golden.py rather than suspecting the backend. The
  // sum of squares of every tensor of the file, as the golden's generator
  // sums them (DeBERTa's loaded weights hold tables derived from them).
  double sum_sq = 0;
  {
    auto file = model::SafeTensorsFile::open(dir + "/model.safetensors");
    ASSERT_TRUE(file.ok()) << file.status().to_string();
    for (const auto& [name, info] : file->tensors()) {
      auto values = file->read_f32(name, info.shape);
      ASSERT_TRUE(values.ok()) << values.status().to_string();
      for (float x : *values) sum_sq += double(x) * x;
    }
  }
  const double want = g.doc.at("weights_sum_of_squares").get<double>();
  ASSERT_NEAR(sum_sq, want, 1e-9 * want)
      << "synthesized weights differ from those the golden was made with; regenerate " << golden_path;
  // Every case at once: the arithmetic at the real shape. Batching (one by
  // one, shuffled batches, computed padding) cannot change a row's logits,
  // and the tiny goldens of every family check that, rows past ModernBERT's
  // windows and DeBERTa's buckets included: at this size it would double
  // the suite's time.
  check_all_batchings("synth " + preset, config, weights, g, /*one_by_one=*/false, "cpu",
                      /*padded_too=*/false, /*shuffled_too=*/false);
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Presets, SynthGoldenTest,
                         ::testing::Values("distilbert-base", "bert-base", "roberta-base", "xlm-roberta-base",
                                           "modernbert-base", "deberta-v3-base"),
                         ::infercost::testing::DashesToUnderscores());

}  // namespace
}  // namespace infercost::backend::testing
