#include "model/synth.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <tuple>

#include "corpus/tweets.h"
#include "model/model_dir.h"
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
  const size_t labels = c.labels.size();
  return (c.vocab_size + c.max_position_embeddings + c.type_vocab_size) * h + 2 * h + c.num_layers * layer +
         (h * h + h) + (labels * h + labels);
}

TEST(SynthConfig, Presets) {
  EXPECT_EQ(synth_presets(),
            (std::vector<std::string>{"distilbert-base", "bert-base", "roberta-base", "xlm-roberta-base",
                                      "modernbert-base", "deberta-v3-base", "tiny"}));
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
  for (auto [preset, type, vocab, params] :
       {std::tuple<const char*, const char*, int, size_t>{"roberta-base", "roberta", 50265, 124647939u},
        {"xlm-roberta-base", "xlm-roberta", 250002, 278045955u}}) {
    auto r = synth_config(preset).value();
    EXPECT_EQ(r.architecture, Architecture::kRoberta) << preset;
    EXPECT_EQ(r.model_type, type);
    EXPECT_EQ(r.vocab_size, vocab);
    EXPECT_EQ(r.num_layers, 12);
    EXPECT_EQ(r.hidden_size, 768);
    EXPECT_EQ(r.intermediate_size, 3072);
    EXPECT_EQ(r.max_position_embeddings, 514);
    EXPECT_EQ(r.max_positions(), 512);
    EXPECT_EQ(r.pad_token_id, 1);
    EXPECT_EQ(r.type_vocab_size, 1);
    EXPECT_FLOAT_EQ(r.layer_norm_eps, 1e-5f);
    EXPECT_EQ(r.labels, (std::vector<std::string>{"negative", "neutral", "positive"}));
    // HF's RobertaForSequenceClassification / XLMRobertaForSequenceClassification, 3 labels.
    EXPECT_EQ(expected_parameters(r), params) << preset;
  }
  // As answerdotai/ModernBERT-base's config.json says (tests/backend/golden_synth_test.cc checks
  // the whole directory against HF, 149,606,402 parameters).
  auto m = synth_config("modernbert-base").value();
  EXPECT_EQ(m.architecture, Architecture::kModernBert);
  EXPECT_EQ(m.model_type, "modernbert");
  EXPECT_EQ(m.vocab_size, 50368);
  EXPECT_EQ(m.num_layers, 22);
  EXPECT_EQ(m.intermediate_size, 1152);
  EXPECT_EQ(m.max_positions(), 8192);
  EXPECT_EQ(m.pad_token_id, 50283);
  EXPECT_TRUE(m.glu && m.head_mean_pooling && m.head_norm && !m.position_table);
  EXPECT_FALSE(m.attention_bias || m.mlp_bias || m.norm_bias || m.head_bias);
  ASSERT_EQ(m.attention_window.size(), 22u);
  for (int i = 0; i < 22; ++i) {
    EXPECT_EQ(m.attention_window[size_t(i)], i % 3 == 0 ? 0 : 64) << i;
    EXPECT_EQ(m.rope_theta[size_t(i)], i % 3 == 0 ? 160000.0 : 10000.0) << i;
  }
  // Its config.json reads back as the same model.
  auto again = parse_config(config_to_json(m), "config.json");
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(again->attention_window, m.attention_window);
  EXPECT_EQ(again->rope_theta, m.rope_theta);
  EXPECT_EQ(again->pad_token_id, m.pad_token_id);
  EXPECT_TRUE(again->head_mean_pooling);
  // As microsoft/deberta-v3-base's config.json says (golden_synth_test.cc: 184,423,682 parameters
  // with a 2-label head, HF's logits on the synthesized directory).
  auto db = synth_config("deberta-v3-base").value();
  EXPECT_EQ(db.architecture, Architecture::kDebertaV2);
  EXPECT_EQ(db.vocab_size, 128100);
  EXPECT_EQ(db.num_layers, 12);
  EXPECT_TRUE(db.relative_attention && db.c2p && db.p2c && db.share_att_key && db.norm_relative_embeddings);
  EXPECT_FALSE(db.position_table);
  EXPECT_EQ(db.relative_span(), 256);
  auto d_again = parse_config(config_to_json(db), "config.json");
  ASSERT_TRUE(d_again.ok()) << d_again.status().to_string();
  EXPECT_EQ(d_again->position_buckets, 256);
  EXPECT_EQ(d_again->max_relative_positions, 512);
  EXPECT_TRUE(d_again->c2p && d_again->p2c && d_again->share_att_key && d_again->norm_relative_embeddings);
  EXPECT_FALSE(d_again->position_table);
  EXPECT_FLOAT_EQ(d_again->layer_norm_eps, 1e-7f);
  auto t = synth_config("tiny").value();
  EXPECT_EQ(t.vocab_size, 30522);
  EXPECT_LE(t.hidden_size, 64);
  EXPECT_EQ(synth_config("gpt2").status().code(), StatusCode::kInvalidArgument);
}

class SynthTiny : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = scratch_dir("tiny");
    ASSERT_TRUE(synthesize_model({dir_, "tiny", 7, ""}).ok());
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
  const auto& lexicon = corpus::tweet_lexicon();
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
  ASSERT_TRUE(synthesize_model({again, "tiny", 7, ""}).ok());
  ASSERT_TRUE(synthesize_model({other, "tiny", 8, ""}).ok());
  for (const char* f : {"config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json"}) {
    EXPECT_EQ(read_bytes(dir_ + "/" + f), read_bytes(again + "/" + f)) << f;
  }
  EXPECT_NE(read_bytes(dir_ + "/model.safetensors"), read_bytes(other + "/model.safetensors"));
  EXPECT_EQ(read_bytes(dir_ + "/vocab.txt"), read_bytes(other + "/vocab.txt"));
}

// --tokenizer: the given files replace the project's; the weights stay those
// of the preset and seed.
TEST_F(SynthTiny, GivenTokenizerIsCopiedAndWeightsStay) {
  const std::string given = std::string(INFERCOST_TEST_DATA_DIR) + "/golden/tiny-bert";
  const std::string dir = scratch_dir("tiny-given");
  ASSERT_TRUE(synthesize_model({dir, "tiny", 7, given}).ok());
  EXPECT_EQ(read_bytes(dir + "/vocab.txt"), read_bytes(given + "/vocab.txt"));
  EXPECT_EQ(read_bytes(dir + "/tokenizer_config.json"), read_bytes(given + "/tokenizer_config.json"));
  EXPECT_EQ(read_bytes(dir + "/model.safetensors"), read_bytes(dir_ + "/model.safetensors"));
  const std::string file_dir = scratch_dir("tiny-given-file");
  const std::string json = std::string(INFERCOST_TEST_DATA_DIR) + "/golden/tiny-roberta/tokenizer.json";
  ASSERT_TRUE(synthesize_model({file_dir, "tiny", 7, json}).ok());
  EXPECT_EQ(read_bytes(file_dir + "/tokenizer.json"), read_bytes(json));
  EXPECT_FALSE(fs::exists(file_dir + "/vocab.txt"));
  const std::string empty = scratch_dir("no-tokenizer");
  fs::create_directories(empty);
  const Status refused = synthesize_model({scratch_dir("tiny-refused"), "tiny", 7, empty});
  EXPECT_EQ(refused.code(), StatusCode::kNotFound);
  EXPECT_EQ(refused.message(),
            "--tokenizer: " + empty + ": no tokenizer here: expected tokenizer.json or vocab.txt");
  // Checked before any weight is made.
  const Status roberta = synthesize_model({scratch_dir("roberta-refused"), "roberta-base", 7, empty});
  EXPECT_EQ(roberta.message(), "--tokenizer: " + empty +
                                   ": no tokenizer here: expected tokenizer.json or vocab.json + merges.txt");
  const Status xlmr = synthesize_model({scratch_dir("xlmr-refused"), "xlm-roberta-base", 7, empty});
  EXPECT_EQ(xlmr.message(), "--tokenizer: " + empty + ": no tokenizer here: expected tokenizer.json");
}

TEST(Synth, RejectsBadOptions) {
  EXPECT_EQ(synthesize_model({scratch_dir("bad"), "huge", 1, ""}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(synthesize_model({"", "tiny", 1, ""}).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace infercost::model
