// Replays tests/data_files/tokenizer/wordpiece_golden.jsonl, written by
// tools/gen_tokenizer_golden.py with Hugging Face's fast BERT tokenizer and
// the real bert-base-uncased vocabulary: ids must match exactly, first on one
// thread, then on every hardware thread at once against shared tokenizers.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/file.h"
#include "golden_replay.h"
#include "text/tokenizer.h"

namespace infercost::text {
namespace {

const std::string kVocabPath = std::string(INFERCOST_SHARED_DATA_DIR) + "/vocab/bert-base-uncased-vocab.txt";
const std::string kGoldenPath = std::string(INFERCOST_TEST_DATA_DIR) + "/tokenizer/wordpiece_golden.jsonl";

// Same names as VARIANTS in the generator.
TokenizerOptions options_for(const std::string& variant) {
  TokenizerOptions o;
  o.max_length = 512;  // the generator's truncation (BERT's model_max_length)
  if (variant == "cased") {
    o.lowercase = false;
  } else if (variant == "lower_nostrip") {
    o.strip_accents = false;
  } else if (variant == "cased_strip") {
    o.lowercase = false;
    o.strip_accents = true;
  } else if (variant == "nochinese") {
    o.tokenize_chinese_chars = false;
  } else if (variant == "noclean") {
    o.clean_text = false;
  } else if (variant == "nospecial") {
    o.add_special_tokens = false;
  } else if (variant == "max16") {
    o.max_length = 16;
  } else {
    EXPECT_EQ(variant, "default");
  }
  return o;
}

class WordPieceGoldenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!path_exists(kVocabPath)) {
      GTEST_SKIP() << "shared vocabulary " << kVocabPath << " is absent; golden tokenizer test skipped";
    }
    cases_ = golden::read_cases(kGoldenPath);
    auto vocab = Vocab::load_txt(kVocabPath);
    ASSERT_TRUE(vocab.ok()) << vocab.status().to_string();
    for (const golden::Case& c : cases_) {
      if (tokenizers_.count(c.variant)) continue;
      auto tok = WordPieceTokenizer::create(*vocab, options_for(c.variant));
      ASSERT_TRUE(tok.ok()) << tok.status().to_string();
      tokenizers_.emplace(c.variant, std::move(tok).value());
    }
  }

  // Number of cases whose ids differ from HF; reports the first few.
  size_t replay(bool report) const { return golden::replay(cases_, tokenizer_of(), report); }
  golden::TokenizerOf tokenizer_of() const {
    return [this](const std::string& v) -> const Tokenizer* { return &tokenizers_.at(v); };
  }

  std::vector<golden::Case> cases_;
  std::map<std::string, WordPieceTokenizer> tokenizers_;
};

TEST_F(WordPieceGoldenTest, MatchesHuggingFace) {
  const golden::DefaultCounts counts = golden::count_default(cases_);
  // The golden file must be the full one, not an accidentally short one.
  EXPECT_GE(counts.rows, 10000u);
  EXPECT_GE(counts.truncated, 100u);
  EXPECT_GE(tokenizers_.size(), 8u);
  EXPECT_EQ(replay(true), 0u) << "of " << cases_.size() << " golden texts";
}

TEST_F(WordPieceGoldenTest, MatchesOnAllThreadsAtOnce) {
  unsigned n_threads = 0;
  EXPECT_EQ(golden::replay_on_all_threads(cases_, tokenizer_of(), &n_threads), 0u)
      << "across " << n_threads << " threads";
}

// basic_tokenize gives the words WordPiece sees: encoding each word on its
// own, with no further normalization, gives the golden ids.
TEST_F(WordPieceGoldenTest, BasicTokenizeWordsGiveTheSameIds) {
  auto vocab = Vocab::load_txt(kVocabPath);
  ASSERT_TRUE(vocab.ok()) << vocab.status().to_string();
  size_t checked = 0, mismatches = 0;
  std::map<std::string, WordPieceTokenizer> raw;
  for (const golden::Case& c : cases_) {
    if (c.variant == "max16" || c.variant == "nospecial") continue;  // truncation, no [CLS]/[SEP]
    TokenizerOptions o = options_for(c.variant);
    auto it = raw.find(c.variant);
    if (it == raw.end()) {
      TokenizerOptions r = o;
      r.lowercase = false;
      r.strip_accents = false;
      r.add_special_tokens = false;
      r.max_length = 0;
      auto tok = WordPieceTokenizer::create(*vocab, r);
      ASSERT_TRUE(tok.ok()) << tok.status().to_string();
      it = raw.emplace(c.variant, std::move(tok).value()).first;
    }
    auto words = basic_tokenize(c.text, o);
    ASSERT_TRUE(words.ok()) << words.status().to_string();
    std::vector<int32_t> ids = {101};
    for (const std::string& w : *words) {
      auto n = it->second.encode_append(w, ids);
      ASSERT_TRUE(n.ok()) << n.status().to_string();
    }
    if (ids.size() > 511) ids.resize(511);
    ids.push_back(102);
    ++checked;
    if (ids != c.ids && ++mismatches <= 10) {
      ADD_FAILURE() << "variant " << c.variant << ", text " << nlohmann::json(c.text).dump() << "\n  words "
                    << nlohmann::json(*words).dump();
    }
  }
  EXPECT_GE(checked, 10000u);
  EXPECT_EQ(mismatches, 0u) << "of " << checked;
}

}  // namespace
}  // namespace infercost::text
