// The forward program each family's config gives: the steps every executor
// runs (their arithmetic is checked by the parity suites against HF).
#include "model/program.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <variant>

#include "model/config.h"

namespace infercost::model {
namespace {

ModelConfig parse(const char* json) {
  auto c = parse_config(json, "config.json");
  EXPECT_TRUE(c.ok()) << c.status().to_string();
  return c.value();
}

const char* kBert = R"({"model_type": "bert", "hidden_size": 64, "intermediate_size": 128,
  "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 100, "type_vocab_size": 2,
  "id2label": {"0": "a", "1": "b", "2": "c"}})";

// ModernBERT-base's shape, 4 layers: global attention every third layer.
const char* kModernBert = R"({"model_type": "modernbert", "hidden_size": 64, "intermediate_size": 96,
  "num_attention_heads": 4, "num_hidden_layers": 4, "vocab_size": 100, "global_attn_every_n_layers": 3,
  "global_rope_theta": 160000.0, "local_rope_theta": 10000.0, "local_attention": 128,
  "classifier_pooling": "mean", "classifier_activation": "gelu", "pad_token_id": 0,
  "id2label": {"0": "a", "1": "b"}})";

const char* kDeberta = R"({"model_type": "deberta-v2", "hidden_size": 64, "intermediate_size": 128,
  "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 100, "relative_attention": true,
  "position_buckets": 16, "pos_att_type": "p2c|c2p", "max_relative_positions": -1,
  "position_biased_input": false, "type_vocab_size": 0, "id2label": {"0": "a", "1": "b"}})";

template <typename T>
const T& at(const ForwardProgram& p, size_t i) {
  EXPECT_LT(i, p.steps.size());
  EXPECT_TRUE(std::holds_alternative<T>(p.steps[i])) << "step " << i << " is of kind " << p.steps[i].index();
  return std::get<T>(p.steps[i]);
}

TEST(Program, PostNormLayersAddThenNormTheStream) {
  const ModelConfig c = parse(kBert);
  const ForwardProgram p = forward_program(c);
  ASSERT_EQ(p.steps.size(), 1u + 4u * 2u + 1u);
  EXPECT_TRUE(at<EmbedStep>(p, 0).position_table);
  for (int layer = 0; layer < 2; ++layer) {
    const size_t s = 1 + 4 * size_t(layer);
    const AttentionStep& a = at<AttentionStep>(p, s);
    EXPECT_EQ(a.layer, layer);
    EXPECT_EQ(a.in, Slot::kStates);
    EXPECT_EQ(a.scores, Scores::kDot);
    EXPECT_EQ(a.window, 0);
    EXPECT_EQ(a.rotary_theta, 0.0);
    EXPECT_EQ(a.position_terms, 0);
    EXPECT_EQ(a.scale, 1.0f / std::sqrt(16.0f));
    const ResidualStep& r1 = at<ResidualStep>(p, s + 1);
    EXPECT_EQ(r1.projection, ResidualStep::Projection::kAttentionOutput);
    EXPECT_EQ(r1.norm.kind, NormRef::Kind::kAttention);
    EXPECT_EQ(r1.norm.layer, layer);
    EXPECT_EQ(r1.out, Slot::kStates);
    EXPECT_FALSE(r1.keep_sum);
    const FeedForwardStep& f = at<FeedForwardStep>(p, s + 2);
    EXPECT_EQ(f.in, Slot::kStates);
    EXPECT_EQ(f.activation, Activation::kGelu);
    EXPECT_FALSE(f.glu);
    const ResidualStep& r2 = at<ResidualStep>(p, s + 3);
    EXPECT_EQ(r2.projection, ResidualStep::Projection::kFeedForwardOutput);
    EXPECT_EQ(r2.norm.kind, NormRef::Kind::kFeedForward);
    EXPECT_EQ(r2.out, Slot::kStates);
  }
  const HeadStep& head = at<HeadStep>(p, p.steps.size() - 1);
  EXPECT_EQ(head.pooling, Pooling::kCls);
  EXPECT_EQ(head.activation, Activation::kTanh);  // BERT's pooler
  EXPECT_FALSE(head.norm);
  EXPECT_FALSE(p.pooled());
  EXPECT_FALSE(p.per_token());
  EXPECT_TRUE(p.reads_head());
  EXPECT_EQ(encoder_steps(p), p.steps.size() - 1);
}

TEST(Program, AnEmbedderEndsInItsPooling) {
  const ModelConfig c = parse(kBert);
  const ForwardProgram p = forward_program(c, Pooling::kMax);
  EXPECT_TRUE(p.pooled());
  EXPECT_EQ(at<PoolStep>(p, p.steps.size() - 1).pooling, Pooling::kMax);
  EXPECT_FALSE(p.reads_head());
  // The encoder's steps are the classifier's.
  EXPECT_EQ(encoder_steps(p), encoder_steps(forward_program(c)));
}

// Outputs per token: the states, or the classifier on each token, after the
// head's dense layer, activation and (where the head has one) norm only
// where the config's token head has them (ModernBERT's).
TEST(Program, TokenOutputsEndInATokenStep) {
  ModelConfig c = parse(kBert);
  ForwardProgram p = forward_program(c, std::nullopt, TokenOutput::kStates);
  EXPECT_TRUE(p.per_token());
  EXPECT_FALSE(p.reads_head());
  EXPECT_FALSE(at<TokenStep>(p, p.steps.size() - 1).classifier);
  EXPECT_EQ(encoder_steps(p), encoder_steps(forward_program(c)));
  p = forward_program(c, Pooling::kMean, TokenOutput::kLogits);  // tokens win
  EXPECT_TRUE(p.reads_head());
  const TokenStep& bert = at<TokenStep>(p, p.steps.size() - 1);
  EXPECT_TRUE(bert.classifier);
  EXPECT_FALSE(bert.pre);
  EXPECT_FALSE(bert.norm);

  c = parse(kModernBert);
  c.token_head_pre = true;
  p = forward_program(c, std::nullopt, TokenOutput::kLogits);
  const TokenStep& modernbert = at<TokenStep>(p, p.steps.size() - 1);
  EXPECT_TRUE(modernbert.pre);
  EXPECT_EQ(modernbert.activation, Activation::kGelu);
  EXPECT_TRUE(modernbert.norm);
  EXPECT_EQ(describe(p, c, SIZE_MAX).substr(describe(p, c, encoder_steps(p)).size()),
            "  output: on every token: dense, gelu, LayerNorm, classifier to 2 labels\n");
}

TEST(Program, PreNormLayersNormBeforeEachBlockAndAtTheEnd) {
  const ModelConfig c = parse(kModernBert);
  const ForwardProgram p = forward_program(c);
  ASSERT_EQ(p.steps.size(), 1u + 4u * 4u + 1u);
  EXPECT_FALSE(at<EmbedStep>(p, 0).position_table);
  for (int layer = 0; layer < 4; ++layer) {
    const size_t s = 1 + 4 * size_t(layer);
    const bool global = layer % 3 == 0;
    const AttentionStep& a = at<AttentionStep>(p, s);
    // The first layer attends to the embeddings: it has no attention norm.
    EXPECT_EQ(a.in, layer == 0 ? Slot::kStates : Slot::kNormed);
    EXPECT_EQ(a.window, global ? 0 : 64);
    EXPECT_EQ(a.rotary_theta, global ? 160000.0 : 10000.0);
    const ResidualStep& r1 = at<ResidualStep>(p, s + 1);
    EXPECT_EQ(r1.norm.kind, NormRef::Kind::kFeedForward);
    EXPECT_EQ(r1.out, Slot::kNormed);
    EXPECT_TRUE(r1.keep_sum);
    const FeedForwardStep& f = at<FeedForwardStep>(p, s + 2);
    EXPECT_EQ(f.in, Slot::kNormed);
    EXPECT_TRUE(f.glu);
    const ResidualStep& r2 = at<ResidualStep>(p, s + 3);
    EXPECT_TRUE(r2.keep_sum);
    if (layer < 3) {  // the next layer's attention norm, for its attention to read
      EXPECT_EQ(r2.norm.kind, NormRef::Kind::kAttention);
      EXPECT_EQ(r2.norm.layer, layer + 1);
      EXPECT_EQ(r2.out, Slot::kNormed);
    } else {  // the final norm, in place
      EXPECT_EQ(r2.norm.kind, NormRef::Kind::kFinal);
      EXPECT_EQ(r2.out, Slot::kStates);
    }
  }
  const HeadStep& head = at<HeadStep>(p, p.steps.size() - 1);
  EXPECT_EQ(head.pooling, Pooling::kMean);
  EXPECT_EQ(head.activation, Activation::kGelu);
  EXPECT_TRUE(head.norm);
}

TEST(Program, DisentangledAttentionScalesByItsTerms) {
  const ModelConfig c = parse(kDeberta);
  const ForwardProgram p = forward_program(c);
  const AttentionStep& a = at<AttentionStep>(p, 1);
  EXPECT_EQ(a.scores, Scores::kDisentangled);
  EXPECT_EQ(a.position_terms, 2);
  EXPECT_EQ(a.scale, 1.0f / std::sqrt(16.0f * 3.0f));  // content, c2p and p2c
  EXPECT_FALSE(at<EmbedStep>(p, 0).position_table);
}

TEST(Program, DescribesOneLayerAndTheOutput) {
  const ModelConfig c = parse(kModernBert);
  const std::string text = describe(forward_program(c), c);
  EXPECT_NE(text.find("layer 0: 4 heads x 16: attention, rotary (theta 160000), global of states"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("layers 1..3: the same steps, each with its own window and rotary base (above); the last "
                "layer's last norm is the final norm, in place"),
      std::string::npos)
      << text;
  // Without the output: the encoder's steps.
  const std::string encoder = describe(forward_program(c), c, encoder_steps(forward_program(c)));
  EXPECT_EQ(encoder.find("output:"), std::string::npos) << encoder;
  EXPECT_NE(encoder.find("layers 1..3: the same steps"), std::string::npos) << encoder;
  EXPECT_NE(text.find("gated"), std::string::npos) << text;
  EXPECT_NE(
      text.find("output: head on the mean of the tokens: dense, gelu, LayerNorm, classifier to 2 labels"),
      std::string::npos)
      << text;
}

}  // namespace
}  // namespace infercost::model
