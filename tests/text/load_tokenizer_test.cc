// load_tokenizer(): which files make which tokenizer, and the errors when
// none does. The tokenizers' own behaviour is tested in their suites.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/file.h"
#include "test_utils.h"
#include "text/tokenizer.h"

namespace infercost::text {
namespace {

using testing::slurp;
using testing::TempDir;

const std::string kTinyJson = std::string(INFERCOST_TEST_DATA_DIR) + "/tokenizer/tiny_tokenizer.json";
const std::string kTinyBpeJson = std::string(INFERCOST_TEST_DATA_DIR) + "/tokenizer/tiny_bpe_tokenizer.json";

std::string vocab_txt() {
  return "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\n";
}

std::vector<int32_t> ids(const Tokenizer& t, std::string_view text) {
  auto r = t.encode(text);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : std::vector<int32_t>{};
}

TEST(LoadTokenizer, AVocabTxtFileOrFolderIsWordPiece) {
  TempDir dir;
  const std::string file = dir.write("vocab.txt", vocab_txt());
  for (const std::string& path : {file, dir.path(), dir.path() + "/"}) {
    auto t = load_tokenizer(path, {});
    ASSERT_TRUE(t.ok()) << path << ": " << t.status().to_string();
    EXPECT_EQ(t->tokenizer->kind(), TokenizerKind::kWordPiece);
    EXPECT_EQ(t->source, "vocab.txt");
    EXPECT_EQ(ids(*t->tokenizer, "Hello world"), (std::vector<int32_t>{2, 5, 6, 3}));
  }
}

TEST(LoadTokenizer, SettingsComeLast) {
  TempDir dir;
  dir.write("vocab.txt", vocab_txt());
  TokenizerSettings s;
  s.max_length = 3;
  auto t = load_tokenizer(dir.path(), s);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(ids(*t->tokenizer, "hello world"), (std::vector<int32_t>{2, 5, 3}));
  s.max_length = 0;
  s.add_special_tokens = false;
  s.lowercase = false;
  t = load_tokenizer(dir.path(), s);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(ids(*t->tokenizer, "hello World"), (std::vector<int32_t>{5, 1}));
}

TEST(LoadTokenizer, ATokenizerJsonIsBuiltByItsModelType) {
  TempDir dir;
  const std::string copy = dir.write("tokenizer.json", slurp(kTinyJson));
  dir.write("vocab.txt", "not what is read\n");  // tokenizer.json comes first in a folder
  for (const std::string& path : {copy, dir.path()}) {
    auto t = load_tokenizer(path, {});
    ASSERT_TRUE(t.ok()) << path << ": " << t.status().to_string();
    EXPECT_EQ(t->tokenizer->kind(), TokenizerKind::kWordPiece);
    EXPECT_EQ(t->source, "tokenizer.json");
    EXPECT_EQ(ids(*t->tokenizer, "Hello hello HELLO"), (std::vector<int32_t>{2, 38, 39, 1, 3}));
  }
  const std::string other =
      dir.write("other/tokenizer.json", R"({"model": {"type": "WordLevel", "vocab": {}}})");
  auto t = load_tokenizer(other, {});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(t.status().message().find(other), std::string::npos) << t.status().to_string();
  EXPECT_NE(t.status().message().find("model type 'WordLevel' is not supported (WordPiece, BPE or Unigram)"),
            std::string::npos)
      << t.status().to_string();
}

// transformers truncates to what each call asks, never to a tokenizer.json's
// own "truncation" (all-MiniLM-L6-v2's says 128 for a model of 512), and
// never pads one text to its "padding" length: only settings.max_length cuts.
TEST(LoadTokenizer, ATokenizerJsonsOwnTruncationAndPaddingDoNotApply) {
  TempDir dir;
  nlohmann::json root = nlohmann::json::parse(slurp(kTinyJson));
  ASSERT_EQ(root.at("truncation").at("max_length"), 12);  // what the fixture says
  root["padding"] = {{"strategy", {{"Fixed", 40}}},
                     {"direction", "Right"},
                     {"pad_to_multiple_of", nullptr},
                     {"pad_id", 0},
                     {"pad_type_id", 0},
                     {"pad_token", "[PAD]"}};
  const std::string path = dir.write("tokenizer.json", root.dump());
  // 15 words, 17 ids with [CLS] and [SEP]: longer than the file's 12.
  const std::string text = "a b c a b c a b c a b c a b c";
  std::vector<int32_t> all = {2};
  for (int i = 0; i < 5; ++i) all.insert(all.end(), {24, 25, 26});
  all.push_back(3);
  for (const int asked : {0, 512, 17}) {
    TokenizerSettings s;
    s.max_length = asked;
    auto t = load_tokenizer(path, s);
    ASSERT_TRUE(t.ok()) << t.status().to_string();
    EXPECT_EQ(t->tokenizer->max_length(), asked);
    EXPECT_EQ(ids(*t->tokenizer, text), all) << "max_length " << asked;
    EXPECT_EQ(ids(*t->tokenizer, "a"), (std::vector<int32_t>{2, 24, 3})) << "padded? max_length " << asked;
  }
  TokenizerSettings s;
  s.max_length = 5;  // what is asked still truncates
  auto t = load_tokenizer(path, s);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(ids(*t->tokenizer, text), (std::vector<int32_t>{2, 24, 25, 26, 3}));

  // The same for a BPE tokenizer.json (its own truncation is 24).
  nlohmann::json bpe = nlohmann::json::parse(slurp(kTinyBpeJson));
  ASSERT_EQ(bpe.at("truncation").at("max_length"), 24);
  std::string long_text;
  for (int i = 0; i < 40; ++i) long_text += " hello";
  for (const int asked : {0, 512}) {
    TokenizerSettings b;
    b.max_length = asked;
    auto loaded = load_tokenizer(kTinyBpeJson, b);
    ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
    EXPECT_EQ(loaded->tokenizer->max_length(), asked);
    EXPECT_GT(ids(*loaded->tokenizer, long_text).size(), 24u) << "max_length " << asked;
  }
}

const std::string kTinyBpe = std::string(INFERCOST_TEST_DATA_DIR) + "/tokenizer/tiny_bpe_tokenizer.json";
const std::string kTinyUnigram =
    std::string(INFERCOST_TEST_DATA_DIR) + "/tokenizer/tiny_unigram_tokenizer.json";
const std::string kRobertaDir = std::string(INFERCOST_SHARED_DATA_DIR) + "/roberta";

TEST(LoadTokenizer, BpeAndUnigramTokenizerJsonsWithAndWithoutSpecialTokens) {
  for (const auto& [path, kind] :
       {std::pair{kTinyBpe, TokenizerKind::kBpe}, {kTinyUnigram, TokenizerKind::kUnigram}}) {
    auto with = load_tokenizer(path, {});
    ASSERT_TRUE(with.ok()) << with.status().to_string();
    EXPECT_EQ(with->tokenizer->kind(), kind);
    EXPECT_EQ(with->source, "tokenizer.json");
    TokenizerSettings bare;
    bare.add_special_tokens = false;
    auto without = load_tokenizer(path, bare);
    ASSERT_TRUE(without.ok()) << without.status().to_string();
    EXPECT_EQ(without->tokenizer->special_tokens(), 0);
    const std::vector<int32_t> full = ids(*with->tokenizer, "hello world"),
                               text = ids(*without->tokenizer, "hello world");
    ASSERT_EQ(full.size(), text.size() + static_cast<size_t>(with->tokenizer->special_tokens())) << path;
    EXPECT_TRUE(std::equal(text.begin(), text.end(), full.begin() + 1)) << path;
    TokenizerSettings lower;
    lower.lowercase = false;
    auto refused = load_tokenizer(path, lower);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("options of WordPiece tokenizers"), std::string::npos)
        << refused.status().to_string();
  }
}

TEST(LoadTokenizer, AFolderWithVocabJsonAndMergesTxtIsRobertasBpe) {
  if (!path_exists(kRobertaDir + "/merges.txt")) GTEST_SKIP() << kRobertaDir << " is absent; skipped";
  auto t = load_tokenizer(kRobertaDir, {});
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->tokenizer->kind(), TokenizerKind::kBpe);
  EXPECT_EQ(t->source, "vocab.json + merges.txt");
  EXPECT_EQ(ids(*t->tokenizer, "Hello world!"), (std::vector<int32_t>{0, 31414, 232, 328, 2}));
}

TEST(LoadTokenizer, WhatCannotBeLoadedIsNamed) {
  TempDir dir;
  const auto message = [](const std::string& path) {
    auto t = load_tokenizer(path, {});
    EXPECT_FALSE(t.ok()) << path;
    return t.ok() ? std::string() : t.status().message();
  };
  EXPECT_NE(message(dir.file("absent")).find("no such file or folder"), std::string::npos);
  EXPECT_NE(
      message(dir.path())
          .find("no tokenizer: expected tokenizer.json, vocab.json + merges.txt, spm.model or vocab.txt"),
      std::string::npos);
  const std::string vocab_json = dir.write("vocab.json", "{}");
  EXPECT_NE(message(dir.path()).find("vocab.json without merges.txt"), std::string::npos);
  EXPECT_NE(message(vocab_json).find("give the folder that holds both"), std::string::npos);
  const std::string broken = dir.write("broken/tokenizer.json", "{\"model\": ");
  EXPECT_NE(message(broken).find(broken + ": not a JSON object"), std::string::npos);
  const std::string no_model = dir.write("no_model/tokenizer.json", "{}");
  EXPECT_NE(message(no_model).find("no 'model' object"), std::string::npos);
}

}  // namespace
}  // namespace infercost::text
