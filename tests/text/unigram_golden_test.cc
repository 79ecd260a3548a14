// Replays tests/data_files/tokenizer/unigram_golden.jsonl, written by
// tools/gen_unigram_golden.py with Hugging Face `tokenizers` (and checked
// against XLMRobertaTokenizerFast) on the real XLM-R tokenizer.json: ids must
// match exactly, first on one thread, then on every hardware thread at once
// sharing one tokenizer per variant. The tiny Unigram tokenizers committed
// beside it are replayed too (no shared data needed).
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/file.h"
#include "golden_replay.h"
#include "text/unigram_json.h"

namespace infercost::text {
namespace {

const std::string kXlmrPath = std::string(INFERCOST_SHARED_DATA_DIR) + "/xlm-roberta/tokenizer.json";
const std::string kDataDir = std::string(INFERCOST_TEST_DATA_DIR) + "/tokenizer/";

using golden::Case;
using golden::read_cases;

std::unique_ptr<UnigramTokenizer> load(const std::string& path, int max_length, bool special) {
  auto data = read_file(path);
  EXPECT_TRUE(data.ok()) << data.status().to_string();
  if (!data.ok()) return nullptr;
  const auto root = nlohmann::json::parse(*data);
  auto tok = unigram_from_tokenizer_json(root, path, max_length, special);
  EXPECT_TRUE(tok.ok()) << tok.status().to_string();
  return tok.ok() ? std::move(tok).value() : nullptr;
}

using Tokenizers = std::map<std::string, std::unique_ptr<UnigramTokenizer>>;

golden::TokenizerOf tokenizer_of(const Tokenizers& toks) {
  return [&toks](const std::string& v) -> const Tokenizer* { return toks.at(v).get(); };
}

// Number of cases whose ids differ from HF; reports the first few.
size_t replay(const std::vector<Case>& cases, const Tokenizers& toks, bool report) {
  return golden::replay(cases, tokenizer_of(toks), report);
}

size_t replay_on_all_threads(const std::vector<Case>& cases, const Tokenizers& toks) {
  return golden::replay_on_all_threads(cases, tokenizer_of(toks));
}

class XlmrGoldenTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!path_exists(kXlmrPath)) return;
    cases_ = new std::vector<Case>(read_cases(kDataDir + "unigram_golden.jsonl"));
    toks_ = new Tokenizers;
    const auto t0 = std::chrono::steady_clock::now();
    (*toks_)["default"] = load(kXlmrPath, 512, true);
    const auto t1 = std::chrono::steady_clock::now();
    std::cout << "XLM-R tokenizer.json read, parsed and built in "
              << std::chrono::duration<double>(t1 - t0).count() << " s\n";
    (*toks_)["max16"] = load(kXlmrPath, 16, true);
    (*toks_)["nospecial"] = load(kXlmrPath, 512, false);
  }
  static void TearDownTestSuite() {
    delete cases_;
    delete toks_;
    cases_ = nullptr;
    toks_ = nullptr;
  }
  void SetUp() override {
    if (!path_exists(kXlmrPath)) {
      GTEST_SKIP() << "shared XLM-R tokenizer " << kXlmrPath << " is absent; Unigram golden test skipped";
    }
    for (const auto& [name, tok] : *toks_) ASSERT_NE(tok, nullptr) << name;
  }
  static std::vector<Case>* cases_;
  static Tokenizers* toks_;
};
std::vector<Case>* XlmrGoldenTest::cases_ = nullptr;
Tokenizers* XlmrGoldenTest::toks_ = nullptr;

TEST_F(XlmrGoldenTest, MatchesHuggingFace) {
  const golden::DefaultCounts counts = golden::count_default(*cases_);
  // The golden file must be the full one, not an accidentally short one.
  EXPECT_GE(counts.rows, 10000u);
  EXPECT_GE(counts.truncated, 20u);
  EXPECT_EQ(replay(*cases_, *toks_, true), 0u) << "of " << cases_->size() << " golden texts";
}

TEST_F(XlmrGoldenTest, MatchesOnAllThreadsAtOnce) {
  EXPECT_EQ(replay_on_all_threads(*cases_, *toks_), 0u);
}

TEST_F(XlmrGoldenTest, Properties) {
  const UnigramTokenizer& t = *toks_->at("default");
  EXPECT_EQ(t.kind(), TokenizerKind::kUnigram);
  EXPECT_EQ(t.vocab_size(), 250002u);
  EXPECT_EQ(t.pad_id(), 1);
  EXPECT_EQ(t.unk_id(), 3);
  EXPECT_EQ(t.special_tokens(), 2);
  EXPECT_EQ(t.max_length(), 512);
  EXPECT_EQ(t.piece(250001), "<mask>");
  EXPECT_EQ(t.piece(6), "\xE2\x96\x81");
  EXPECT_EQ(toks_->at("nospecial")->special_tokens(), 0);
}

// The tiny tokenizers trained by the generator: NFKC + Replace + Lowercase,
// Metaspace "first", a normalized added token and an lstrip/rstrip one; the
// second with byte_fallback.
TEST(TinyUnigramTest, MatchesHuggingFace) {
  const std::vector<Case> cases = read_cases(kDataDir + "tiny_unigram_expected.jsonl");
  Tokenizers toks;
  toks["tiny"] = load(kDataDir + "tiny_unigram_tokenizer.json", 512, true);
  toks["tiny_bytes"] = load(kDataDir + "tiny_unigram_bytes_tokenizer.json", 512, true);
  ASSERT_NE(toks["tiny"], nullptr);
  ASSERT_NE(toks["tiny_bytes"], nullptr);
  EXPECT_GE(cases.size(), 1000u);
  EXPECT_EQ(replay(cases, toks, true), 0u) << "of " << cases.size() << " texts";
  EXPECT_EQ(replay_on_all_threads(cases, toks), 0u);
}

}  // namespace
}  // namespace infercost::text
