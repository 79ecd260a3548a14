// Full DistilBERT-base, BERT-base, RoBERTa-base and XLM-R-base shapes: the weights come from our
// synthesizer (deterministic), regenerated here; the golden logits came from
// HF transformers on the same directory.
#include <filesystem>

#include "golden_util.h"
#include "infercost/model/synth.h"
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

  model::ModelConfig config;
  model::EncoderWeights weights;
  ASSERT_NO_FATAL_FAILURE(load_model(dir, config, weights));
  // If this differs, synth's output changed since the golden was written:
  // rerun tools/gen_model_golden.py rather than suspecting the backend.
  double sum_sq = 0;
  auto add = [&](const std::vector<float>& v) {
    for (float x : v) sum_sq += double(x) * x;
  };
  auto add_linear = [&](const model::Linear& l) {
    add(l.weight);
    add(l.bias);
  };
  auto add_ln = [&](const model::LayerNormWeights& ln) {
    add(ln.gamma);
    add(ln.beta);
  };
  add(weights.word_embeddings);
  add(weights.position_embeddings);
  add(weights.token_type_embeddings);
  add_ln(weights.embeddings_ln);
  for (const auto& l : weights.layers) {
    for (const model::Linear* x : {&l.q, &l.k, &l.v, &l.attn_out, &l.ffn_in, &l.ffn_out}) add_linear(*x);
    add_ln(l.attn_ln);
    add_ln(l.ffn_ln);
  }
  add_linear(weights.head.pre);
  add_linear(weights.head.classifier);
  const double want = g.doc.at("weights_sum_of_squares").get<double>();
  ASSERT_NEAR(sum_sq, want, 1e-9 * want)
      << "synthesized weights differ from those the golden was made with; regenerate " << golden_path;
  check_all_batchings("synth " + preset, config, weights, g, /*one_by_one=*/false);
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Presets, SynthGoldenTest,
                         ::testing::Values("distilbert-base", "bert-base", "roberta-base",
                                           "xlm-roberta-base"),
                         ::infercost::testing::DashesToUnderscores());

}  // namespace
}  // namespace infercost::backend::testing
