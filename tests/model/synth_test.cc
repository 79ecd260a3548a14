#include "infercost/model/synth.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "infercost/data/tweets.h"
#include "infercost/model/model_dir.h"
#include "test_utils.h"

namespace infercost::model {
namespace {

namespace fs = std::filesystem;

using testing::scratch_dir;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

size_t expected_parameters(const ModelConfig& c) {
  size_t h = c.hidden_size, f = c.intermediate_size;
  size_t layer = 4 * (h * h + h) + 2 * (h * f) + f + h + 4 * h;
  return (c.vocab_size + c.max_position_embeddings + c.type_vocab_size) * h + 2 * h + c.num_layers * layer +
         (h * h + h) + (2 * h + 2);
}

TEST(SynthConfig, Presets) {
  EXPECT_EQ(synth_presets(), (std::vector<std::string>{"distilbert-base", "bert-base", "tiny"}));
  auto d = synth_config("distilbert-base").value();
  EXPECT_EQ(d.architecture, Architecture::kDistilBert);
  EXPECT_EQ(d.hidden_size, 768);
  EXPECT_EQ(d.num_layers, 6);
  EXPECT_EQ(d.num_heads, 12);
  EXPECT_EQ(d.intermediate_size, 3072);
  EXPECT_EQ(d.vocab_size, 30522);
  EXPECT_EQ(d.max_position_embeddings, 512);
  EXPECT_EQ(d.labels, (std::vector<std::string>{"NEGATIVE", "POSITIVE"}));
  EXPECT_TRUE(d.synthetic);
  // The published parameter counts of the HF classifiers with these shapes.
  EXPECT_EQ(expected_parameters(d), 66955010u);
  auto b = synth_config("bert-base").value();
  EXPECT_EQ(b.architecture, Architecture::kBert);
  EXPECT_EQ(b.num_layers, 12);
  EXPECT_EQ(b.type_vocab_size, 2);
  EXPECT_EQ(expected_parameters(b), 109483778u);
  auto t = synth_config("tiny").value();
  EXPECT_EQ(t.vocab_size, 30522);
  EXPECT_LE(t.hidden_size, 64);
  EXPECT_EQ(synth_config("gpt2").status().code(), StatusCode::kInvalidArgument);
}

class SynthTiny : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = scratch_dir("tiny");
    ASSERT_TRUE(synthesize_model({dir_, "tiny", 7}).ok());
  }
  static void TearDownTestSuite() { fs::remove_all(fs::path(dir_).parent_path()); }
  static std::string dir_;
};
std::string SynthTiny::dir_;

TEST_F(SynthTiny, WritesALoadableLabelledDirectory) {
  for (const char* f : {"config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json"}) {
    EXPECT_TRUE(fs::exists(dir_ + "/" + f)) << f;
  }
  auto m = load_model_dir(dir_, {});
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_TRUE(m->config.synthetic);
  EXPECT_EQ(m->config.synthetic_preset, "tiny");
  EXPECT_EQ(m->config.synthetic_seed, 7u);
  EXPECT_EQ(m->weights_dtype, "F32");
  EXPECT_EQ(m->tokenizer_source, "vocab.txt");
  EXPECT_TRUE(m->wordpiece()->options().lowercase);
  EXPECT_EQ(m->weights.parameter_count(), expected_parameters(m->config));
  // The head: POSITIVE row = -NEGATIVE row, scaled well above the HF init.
  const auto& cls = m->weights.head.classifier;
  const int h = cls.in;
  double norm = 0;
  for (int i = 0; i < h; ++i) {
    EXPECT_EQ(cls.weight[static_cast<size_t>(h + i)], -cls.weight[static_cast<size_t>(i)]);
    norm += cls.weight[static_cast<size_t>(i)] * cls.weight[static_cast<size_t>(i)];
  }
  EXPECT_GT(norm, 0.1);
  EXPECT_EQ(cls.bias[0], -cls.bias[1]);
  // HF init: padding row zero, LayerNorm 1/0, embeddings ~ N(0, 0.02).
  for (int i = 0; i < h; ++i) EXPECT_EQ(m->weights.word_embeddings[static_cast<size_t>(i)], 0.0f);
  EXPECT_EQ(m->weights.layers[1].ffn_ln.gamma, std::vector<float>(static_cast<size_t>(h), 1.0f));
  double sum = 0, sq = 0;
  const auto& we = m->weights.word_embeddings;
  for (float v : we) {
    sum += v;
    sq += v * v;
  }
  double mean = sum / we.size(), sd = std::sqrt(sq / we.size() - mean * mean);
  EXPECT_NEAR(mean, 0.0, 1e-3);
  EXPECT_NEAR(sd, 0.02, 5e-4);
}

TEST_F(SynthTiny, VocabularyHasBertLayout) {
  std::ifstream in(dir_ + "/vocab.txt");
  std::vector<std::string> tokens;
  for (std::string line; std::getline(in, line);) tokens.push_back(line);
  ASSERT_EQ(tokens.size(), 30522u);
  EXPECT_EQ(tokens[0], "[PAD]");
  EXPECT_EQ(tokens[1], "[unused0]");
  EXPECT_EQ(tokens[100], "[UNK]");
  EXPECT_EQ(tokens[101], "[CLS]");
  EXPECT_EQ(tokens[102], "[SEP]");
  EXPECT_EQ(tokens[103], "[MASK]");
  EXPECT_EQ(std::set<std::string>(tokens.begin(), tokens.end()).size(), tokens.size()) << "duplicate tokens";
  for (const auto& t : tokens) {
    ASSERT_FALSE(t.empty());
    ASSERT_EQ(t.find_first_of(" \t\r\n"), std::string::npos) << t;
  }
  for (const char* t : {"a", "##a", "z", "##z", "!", "#", "@", "0", "##9", "aa", "##zz"}) {
    EXPECT_TRUE(std::find(tokens.begin(), tokens.end(), t) != tokens.end()) << t;
  }
}

TEST_F(SynthTiny, TokenizerCoversTheTweetLexicon) {
  LoadOptions options;
  options.load_weights = false;
  auto m = load_model_dir(dir_, options);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  const auto& lexicon = data::tweet_lexicon();
  ASSERT_FALSE(lexicon.empty());
  size_t unknown = 0, tokens = 0;
  std::string worst;
  for (const auto& entry : lexicon) {
    auto ids = m->tokenizer->encode(entry);
    ASSERT_TRUE(ids.ok()) << entry << ": " << ids.status().to_string();
    for (int32_t id : *ids) {
      ++tokens;
      if (id == m->wordpiece()->unk_id()) {
        ++unknown;
        worst = entry;
      }
    }
  }
  EXPECT_EQ(unknown, 0u) << "of " << tokens << " tokens; e.g. in '" << worst << "'";
  // Whole lexicon words are single tokens, not characters.
  auto ids = m->tokenizer->encode(lexicon.front());
  ASSERT_TRUE(ids.ok());
  EXPECT_LE(ids->size(), 2 + lexicon.front().size());
}

TEST_F(SynthTiny, DeterministicPerSeed) {
  std::string again = scratch_dir("tiny-again"), other = scratch_dir("tiny-other");
  ASSERT_TRUE(synthesize_model({again, "tiny", 7}).ok());
  ASSERT_TRUE(synthesize_model({other, "tiny", 8}).ok());
  for (const char* f : {"config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json"}) {
    EXPECT_EQ(read_bytes(dir_ + "/" + f), read_bytes(again + "/" + f)) << f;
  }
  EXPECT_NE(read_bytes(dir_ + "/model.safetensors"), read_bytes(other + "/model.safetensors"));
  EXPECT_EQ(read_bytes(dir_ + "/vocab.txt"), read_bytes(other + "/vocab.txt"));
}

TEST(Synth, RejectsBadOptions) {
  EXPECT_EQ(synthesize_model({scratch_dir("bad"), "huge", 1}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(synthesize_model({"", "tiny", 1}).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace infercost::model
