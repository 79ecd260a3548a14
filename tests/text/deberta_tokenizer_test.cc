// DeBERTa-v3's tokenizer: the SentencePiece model file read without the
// protobuf library (sentencepiece_model.h), and DebertaV2Tokenizer's
// pipeline built around it as transformers 5 builds it. The real spm.model
// (../shared/data/deberta-v3) is replayed against the goldens
// tools/gen_deberta_golden.py makes with transformers' AutoTokenizer,
// made once per build (golden::generated_cases, ctest golden_deberta: 2.8 MB
// of ids that belong in no commit): ids must match exactly, on one thread and on every
// hardware thread at once. (The
// tokenizer.json kind of directory is checked by
// tests/python/test_deberta_tokenizer.py, which has transformers write one.)
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/file.h"
#include "golden_replay.h"
#include "text/sentencepiece_model.h"
#include "text/tokenizer.h"

namespace infercost::text {
namespace {

const std::string kSpmPath = std::string(INFERCOST_SHARED_DATA_DIR) + "/deberta-v3/spm.model";

// One protobuf field: key, then a varint, 4 bytes or a length and bytes.
std::string varint(uint64_t v) {
  std::string out;
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    if (v) b |= 0x80;
    out.push_back(static_cast<char>(b));
  } while (v);
  return out;
}
std::string field(int number, int wire, const std::string& payload) {
  return varint(uint64_t(number) << 3 | uint64_t(wire)) + (wire == 2 ? varint(payload.size()) : "") + payload;
}
std::string piece(const std::string& text, float score, int type = 1) {
  std::string s(4, '\0');
  std::memcpy(s.data(), &score, 4);
  return field(1, 2, field(1, 2, text) + field(2, 5, s) + field(3, 0, varint(uint64_t(type))));
}

// A tiny model written field by field: pieces, a trainer spec (Unigram,
// unk_id 1) and a normalizer spec, with an unknown field the reader skips.
TEST(SentencePieceModel, ReadsPiecesScoresTypesAndSpecs) {
  const std::string model =
      piece("[PAD]", 0, 3) + piece("[UNK]", 0, 2) +
      piece(
          "\xE2\x96\x81"
          "a",
          -1.5f) +
      piece("b", -2.25f) + field(2, 2, field(3, 0, varint(1)) + field(40, 0, varint(1))) +
      field(3, 2, field(1, 2, "nmt_nfkc") + field(3, 0, varint(0))) + field(99, 0, varint(7));
  auto m = detail::parse_sentencepiece_model(model, "t.model");
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  ASSERT_EQ(m->pieces.size(), 4u);
  EXPECT_EQ(m->pieces[2].piece,
            "\xE2\x96\x81"
            "a");
  EXPECT_FLOAT_EQ(m->pieces[3].score, -2.25f);
  EXPECT_EQ(m->pieces[0].type, detail::SentencePieceModel::PieceType::kControl);
  EXPECT_EQ(m->unk_id, 1);
  EXPECT_EQ(m->model_type, 1);
  EXPECT_EQ(m->normalizer_name, "nmt_nfkc");
  EXPECT_FALSE(m->add_dummy_prefix);
}

// Broken bytes: every cut of a valid model and a few forged fields give a
// clear error with the byte offset, never a crash or a partial model.
TEST(SentencePieceModel, BrokenBytesNameTheOffset) {
  const std::string specs = field(3, 2, field(1, 2, "identity"));
  const std::string model = piece("[UNK]", 0, 2) + piece("x", -1) +
                            field(2, 2, field(4, 0, varint(2)) + field(40, 0, varint(0))) + specs;
  ASSERT_TRUE(detail::parse_sentencepiece_model(model, "t.model").ok());
  // Every cut fails, a cut between whole pieces too: it lacks the specs that
  // follow the pieces (a model of fewer pieces never loads in their place).
  for (size_t cut = 1; cut < model.size(); ++cut) {
    auto m = detail::parse_sentencepiece_model(model.substr(0, cut), "t.model");
    ASSERT_FALSE(m.ok()) << cut;
    EXPECT_EQ(m.status().code(), StatusCode::kCorruption) << cut;
    EXPECT_NE(m.status().message().find("t.model"), std::string::npos) << m.status().message();
  }
  const struct {
    std::string bytes;
    const char* needle;
  } bad[] = {
      {"", "no pieces"},
      {field(1, 2, field(2, 5, std::string(4, '\0'))), "a piece without its text"},
      {varint(1 << 3 | 2) + varint(1000) + "ab", "byte 3: a field of 1000 bytes where 2 remain"},
      {piece("x", 0) + field(2, 2, field(40, 0, varint(5))) + specs, "unk_id 5 is outside the 1 pieces"},
      {piece("x", 0) + piece("y", 0) + field(2, 2, field(4, 0, varint(3))) + specs,
       "holds 2 pieces, but its trainer spec's vocab_size is 3"},
      {piece("x", 0) + piece("y", 0),
       "the file ends after 2 pieces without its trainer and normalizer specs"},
      {piece("x", 0) + field(2, 2, field(40, 0, varint(0))), "without its normalizer spec"},
      {piece("x", 0) + varint(1 << 3 | 3), "wire type 3"},
      {field(1, 2, field(3, 0, varint(9)) + field(1, 2, "x")), "piece type 9"},
      {std::string(11, '\xff'), "longer than 10 bytes"},
  };
  for (const auto& b : bad) {
    auto m = detail::parse_sentencepiece_model(b.bytes, "t.model");
    ASSERT_FALSE(m.ok()) << b.needle;
    EXPECT_EQ(m.status().code(), StatusCode::kCorruption) << b.needle;
    EXPECT_NE(m.status().message().find(b.needle), std::string::npos) << m.status().message();
  }
}

class DebertaGoldenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!path_exists(kSpmPath))
      GTEST_SKIP() << "shared DeBERTa spm.model " << kSpmPath << " is absent; skipped";
    static std::string why_not;
    static const std::vector<golden::Case> cases = golden::generated_cases(
        "gen_deberta_golden.py", "--deberta '" + std::string(INFERCOST_SHARED_DATA_DIR) + "/deberta-v3'",
        "deberta_golden.jsonl", &why_not);
    ASSERT_FALSE(cases.empty()) << why_not;
    cases_ = &cases;
    for (const auto& [variant, max_length, special] :
         {std::tuple{"default", 512, true}, {"max16", 16, true}, {"nospecial", 512, false}}) {
      TokenizerSettings s;
      s.max_length = max_length;
      s.add_special_tokens = special;
      s.transformers_class = "DebertaV2Tokenizer";
      auto loaded = load_tokenizer(kSpmPath, s);
      ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
      tokenizers_[variant] = loaded->tokenizer;
    }
  }

  golden::TokenizerOf of() const {
    return [this](const std::string& v) -> const Tokenizer* {
      auto it = tokenizers_.find(v);
      return it == tokenizers_.end() ? nullptr : it->second.get();
    };
  }

  const std::vector<golden::Case>* cases_ = nullptr;
  std::map<std::string, std::shared_ptr<const Tokenizer>> tokenizers_;
};

TEST_F(DebertaGoldenTest, SpmModelMatchesHuggingFace) {
  size_t rows = 0, cut = 0;
  for (const golden::Case& c : *cases_) {
    if (c.variant != "default") continue;
    ++rows;
    cut += c.ids.size() == 512;
  }
  EXPECT_GE(rows, 10000u);
  EXPECT_GE(cut, 10u);  // rows past DeBERTa's 512 positions
  EXPECT_EQ(golden::replay(*cases_, of(), true), 0u) << "of " << cases_->size() << " golden texts";
}

TEST_F(DebertaGoldenTest, MatchesOnAllThreadsAtOnce) {
  unsigned n_threads = 0;
  EXPECT_EQ(golden::replay_on_all_threads(*cases_, of(), &n_threads), 0u)
      << "across " << n_threads << " threads";
}

TEST_F(DebertaGoldenTest, ReadsWhatTheModelSays) {
  const Tokenizer& t = *tokenizers_.at("default");
  EXPECT_EQ(t.kind(), TokenizerKind::kUnigram);
  EXPECT_EQ(t.vocab_size(), 128001u);  // 128,000 pieces and [MASK]
  EXPECT_EQ(t.pad_id(), 0);
  EXPECT_EQ(t.special_tokens(), 2);
  // Another SentencePiece class is not read as DeBERTa's.
  TokenizerSettings xlmr;
  xlmr.transformers_class = "XLMRobertaTokenizer";
  auto refused = load_tokenizer(kSpmPath, xlmr);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(refused.status().message().find("XLMRobertaTokenizer"), std::string::npos);
  TokenizerSettings punct;
  punct.split_by_punct = true;
  auto refused_punct = load_tokenizer(kSpmPath, punct);
  ASSERT_FALSE(refused_punct.ok());
  EXPECT_NE(refused_punct.status().message().find("split_by_punct"), std::string::npos);
}

}  // namespace
}  // namespace infercost::text
