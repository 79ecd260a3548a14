// Replays tests/data_files/tokenizer/bpe_golden.jsonl, written by
// tools/gen_bpe_golden.py with Hugging Face's RobertaTokenizerFast and
// roberta-base's vocab.json + merges.txt: ids must match exactly, first on one
// thread, then on every hardware thread at once sharing one tokenizer per
// variant. The tokenizer.json that HF writes for the same files (built here in
// memory) must give the same ids as the two files.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/file.h"
#include "golden_replay.h"
#include "text/bpe.h"
#include "text/bpe_json.h"

namespace infercost::text {
namespace {

const std::string kRobertaDir = std::string(INFERCOST_SHARED_DATA_DIR) + "/roberta";
const std::string kVocabPath = kRobertaDir + "/vocab.json";
const std::string kMergesPath = kRobertaDir + "/merges.txt";
const std::string kGoldenPath = std::string(INFERCOST_TEST_DATA_DIR) + "/tokenizer/bpe_golden.jsonl";

// The tokenizer.json HF's RobertaTokenizerFast saves for vocab.json + merges.txt
// (`<mask>` lstrip, as roberta-base publishes it).
nlohmann::json roberta_tokenizer_json() {
  using nlohmann::json;
  json vocab = json::parse(read_file(kVocabPath).value());
  json merges = json::array();
  const std::string text = read_file(kMergesPath).value();
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.starts_with("#version") || line.empty()) continue;
    const size_t space = line.find(' ');
    merges.push_back(json::array({line.substr(0, space), line.substr(space + 1)}));
  }
  json added = json::array();
  for (const char* t : {"<s>", "<pad>", "</s>", "<unk>", "<mask>"}) {
    added.push_back({{"id", vocab.at(t)},
                     {"content", t},
                     {"single_word", false},
                     {"lstrip", std::string(t) == "<mask>"},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  }
  return {{"version", "1.0"},
          {"truncation", nullptr},
          {"padding", nullptr},
          {"added_tokens", added},
          {"normalizer", nullptr},
          {"pre_tokenizer",
           {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}},
          {"post_processor",
           {{"type", "RobertaProcessing"},
            {"sep", json::array({"</s>", vocab.at("</s>")})},
            {"cls", json::array({"<s>", vocab.at("<s>")})},
            {"trim_offsets", true},
            {"add_prefix_space", false}}},
          {"decoder",
           {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
          {"model",
           {{"type", "BPE"},
            {"dropout", nullptr},
            {"unk_token", nullptr},
            {"continuing_subword_prefix", ""},
            {"end_of_word_suffix", ""},
            {"fuse_unk", false},
            {"byte_fallback", false},
            {"ignore_merges", false},
            {"vocab", vocab},
            {"merges", merges}}}};
}

class BpeGoldenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!path_exists(kVocabPath) || !path_exists(kMergesPath)) {
      GTEST_SKIP() << "shared roberta-base files in " << kRobertaDir
                   << " are absent; golden BPE test skipped";
    }
    // Read once for all the tests (parsing 3.5 MB of JSON at -O0 is most of their time).
    static const std::vector<golden::Case> cases = golden::read_cases(kGoldenPath);
    cases_ = cases;
    // Same names as VARIANTS in the generator.
    for (const auto& [variant, max_length] :
         {std::pair{"default", 512}, {"prefix", 512}, {"max16", 16}, {"nospecial", 512}}) {
      auto tok = BpeTokenizer::load_files(kVocabPath, kMergesPath, max_length);
      ASSERT_TRUE(tok.ok()) << tok.status().to_string();
      BpeConfig c = (*tok)->config();
      if (std::string(variant) == "prefix") c.add_prefix_space = true;
      if (std::string(variant) == "nospecial") c.prefix_ids.clear(), c.suffix_ids.clear();
      auto made = BpeTokenizer::create(std::move(c));
      ASSERT_TRUE(made.ok()) << made.status().to_string();
      tokenizers_[variant] = std::move(made).value();
    }
  }

  // Number of cases whose ids differ from HF; reports the first few.
  size_t replay(const std::map<std::string, std::unique_ptr<BpeTokenizer>>& toks, bool report) const {
    return golden::replay(cases_, of(toks), report);
  }
  static golden::TokenizerOf of(const std::map<std::string, std::unique_ptr<BpeTokenizer>>& toks) {
    return [&toks](const std::string& v) -> const Tokenizer* {
      auto it = toks.find(v);
      return it == toks.end() ? nullptr : it->second.get();
    };
  }

  std::vector<golden::Case> cases_;
  std::map<std::string, std::unique_ptr<BpeTokenizer>> tokenizers_;
};

TEST_F(BpeGoldenTest, MatchesHuggingFace) {
  const golden::DefaultCounts counts = golden::count_default(cases_);
  // The golden file must be the full one, not an accidentally short one.
  EXPECT_GE(counts.rows, 10000u);
  EXPECT_GE(counts.truncated, 100u);
  EXPECT_EQ(replay(tokenizers_, true), 0u) << "of " << cases_.size() << " golden texts";
}

TEST_F(BpeGoldenTest, MatchesOnAllThreadsAtOnce) {
  unsigned n_threads = 0;
  EXPECT_EQ(golden::replay_on_all_threads(cases_, of(tokenizers_), &n_threads), 0u)
      << "across " << n_threads << " threads";
}

TEST_F(BpeGoldenTest, TokenizerJsonGivesTheSameIdsAsTheTwoFiles) {
  auto tok = bpe_from_tokenizer_json(roberta_tokenizer_json(), "roberta tokenizer.json", 512);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  const BpeTokenizer& files = *tokenizers_.at("default");
  EXPECT_EQ((*tok)->vocab_size(), files.vocab_size());
  EXPECT_EQ((*tok)->pad_id(), files.pad_id());
  EXPECT_EQ((*tok)->special_tokens(), 2);
  EXPECT_EQ((*tok)->piece(50264), "<mask>");
  std::map<std::string, std::unique_ptr<BpeTokenizer>> from_json;
  from_json["default"] = std::move(tok).value();
  EXPECT_EQ(replay(from_json, true), 0u);
}

TEST_F(BpeGoldenTest, VocabularyAndPieces) {
  const BpeTokenizer& t = *tokenizers_.at("default");
  EXPECT_EQ(t.kind(), TokenizerKind::kBpe);
  EXPECT_EQ(t.vocab_size(), 50265u);  // ids 0..50264; 50261-50263 have no token
  EXPECT_EQ(t.pad_id(), 1);
  EXPECT_EQ(t.piece(0), "<s>");
  EXPECT_EQ(t.piece(1437), "\xC4\xA0");  // "Ġ", the space byte
  EXPECT_EQ(t.piece(50262), "");
  EXPECT_EQ(t.max_length(), 512);
}

// ModernBERT's real tokenizer.json (NFC, ByteLevel, 116 added tokens among
// them runs of spaces and [MASK] with lstrip, `[CLS] $A [SEP]`), replayed
// against the goldens tools/gen_modernbert_golden.py makes with transformers'
// AutoTokenizer: 5 MB of ids that belong in no commit, made once per build
// (golden::generated_cases; ctest golden_modernbert).
class ModernBertGoldenTest : public ::testing::Test {
 protected:
  static inline const std::string kPath =
      std::string(INFERCOST_SHARED_DATA_DIR) + "/modernbert/tokenizer.json";

  void SetUp() override {
    if (!path_exists(kPath)) GTEST_SKIP() << "shared ModernBERT tokenizer " << kPath << " is absent; skipped";
    static std::string why_not;
    static const std::vector<golden::Case> cases =
        golden::generated_cases("gen_modernbert_golden.py",
                                "--modernbert '" + std::string(INFERCOST_SHARED_DATA_DIR) + "/modernbert'",
                                "modernbert_golden.jsonl", &why_not);
    ASSERT_FALSE(cases.empty()) << why_not;
    cases_ = &cases;
    const nlohmann::json root = nlohmann::json::parse(read_file(kPath).value());
    for (const auto& [variant, max_length] :
         {std::pair{"default", 8192}, {"max16", 16}, {"nospecial", 8192}}) {
      auto tok = bpe_from_tokenizer_json(root, kPath, max_length);
      ASSERT_TRUE(tok.ok()) << tok.status().to_string();
      BpeConfig c = (*tok)->config();
      if (std::string(variant) == "nospecial") c.prefix_ids.clear(), c.suffix_ids.clear();
      auto made = BpeTokenizer::create(std::move(c));
      ASSERT_TRUE(made.ok()) << made.status().to_string();
      tokenizers_[variant] = std::move(made).value();
    }
  }

  golden::TokenizerOf of() const {
    return [this](const std::string& v) -> const Tokenizer* {
      auto it = tokenizers_.find(v);
      return it == tokenizers_.end() ? nullptr : it->second.get();
    };
  }

  const std::vector<golden::Case>* cases_ = nullptr;
  std::map<std::string, std::unique_ptr<BpeTokenizer>> tokenizers_;
};

TEST_F(ModernBertGoldenTest, MatchesHuggingFace) {
  size_t rows = 0, cut = 0;
  for (const golden::Case& c : *cases_) {
    if (c.variant != "default") continue;
    ++rows;
    cut += c.ids.size() == 8192;
  }
  EXPECT_GE(rows, 10000u);
  EXPECT_GE(cut, 10u);  // rows past ModernBERT's 8,192 tokens
  EXPECT_EQ(golden::replay(*cases_, of(), true), 0u) << "of " << cases_->size() << " golden texts";
}

TEST_F(ModernBertGoldenTest, MatchesOnAllThreadsAtOnce) {
  unsigned n_threads = 0;
  EXPECT_EQ(golden::replay_on_all_threads(*cases_, of(), &n_threads), 0u)
      << "across " << n_threads << " threads";
}

TEST_F(ModernBertGoldenTest, ReadsWhatTheFileSays) {
  const BpeTokenizer& t = *tokenizers_.at("default");
  EXPECT_TRUE(t.config().nfc);
  EXPECT_EQ(t.vocab_size(), 50368u);  // ModernBERT's vocab_size: the BPE vocabulary and the added tokens
  EXPECT_EQ(t.piece(50284), "[MASK]");
  EXPECT_EQ(t.pad_id(), 50283);  // [PAD]
  EXPECT_EQ(t.special_tokens(), 2);
  EXPECT_EQ(t.config().prefix_ids, std::vector<int32_t>{50281});
  EXPECT_EQ(t.config().suffix_ids, std::vector<int32_t>{50282});
}

}  // namespace
}  // namespace infercost::text
