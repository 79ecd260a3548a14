// Unit tests on a vocabulary built here; tokenizer.json loading on the small
// file tools/gen_tokenizer_golden.py saved with HF `tokenizers`.
#include "text/tokenizer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_utils.h"

namespace infercost::text {
namespace {

const std::vector<std::string> kTokens = {
    "[PAD]",       "[UNK]", "[CLS]", "[SEP]", "[MASK]",                                   // 0-4
    "hello",       "world", "un",    "##aff", "##able",                                   // 5-9
    "!",           ",",     ".",     "a",     "b",      "##b", "##a", "cafe", "é",  "e",  // 10-19
    "中",          "文",    "[",     "]",     "i",      "##i", "x",   "##y",  "xi",       // 20-28
    "##i\xCC\x87",                                                                        // 29: ## i U+0307
};
enum : int32_t { kPad = 0, kUnk = 1, kCls = 2, kSep = 3, kMask = 4, kHello = 5, kWorld = 6 };

WordPieceTokenizer make(TokenizerOptions options = {}) {
  auto tok = WordPieceTokenizer::create(Vocab::from_tokens(kTokens), std::move(options));
  EXPECT_TRUE(tok.ok()) << tok.status().to_string();
  return std::move(tok).value();
}

std::vector<int32_t> ids(const WordPieceTokenizer& tok, std::string_view text) {
  auto r = tok.encode(text);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : std::vector<int32_t>{-99};
}

using V = std::vector<int32_t>;

std::string temp_file(const std::string& name, const std::string& content) {
  const std::string path = infercost::testing::process_temp_dir().file(name);
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

TEST(VocabTest, FromTokensFindsIds) {
  Vocab v = Vocab::from_tokens(kTokens);
  EXPECT_EQ(v.size(), kTokens.size());
  EXPECT_EQ(v.find("hello"), kHello);
  EXPECT_EQ(v.find("##aff"), 8);
  EXPECT_EQ(v.find("missing"), -1);
  EXPECT_EQ(v.token(kWorld), "world");
}

TEST(VocabTest, LoadTxtKeepsEmptyLinesStripsCrAndLaterDuplicateWins) {
  const std::string path = temp_file("vocab_basic.txt", "a\r\nb\n\nc\nb\n");
  auto v = Vocab::load_txt(path);
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  ASSERT_EQ(v->size(), 5u);
  EXPECT_EQ(v->find("a"), 0);
  EXPECT_EQ(v->find(""), 2);
  EXPECT_EQ(v->find("c"), 3);
  EXPECT_EQ(v->find("b"), 4);  // HF's dict keeps the later line
  EXPECT_EQ(v->token(1), "b");
}

TEST(VocabTest, LoadTxtErrors) {
  auto bad = Vocab::load_txt(temp_file("vocab_bad.txt", "ok\n\xFF\xFE\n"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kCorruption);
  EXPECT_NE(bad.status().message().find("line 2"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(Vocab::load_txt(::testing::TempDir() + "/no_such_vocab.txt").ok());
}

TEST(TokenizerTest, BasicLowercasePunctuationAndSpecials) {
  auto tok = make();
  EXPECT_EQ(ids(tok, "Hello, World!"), (V{kCls, kHello, 11, kWorld, 10, kSep}));
  EXPECT_EQ(ids(tok, ""), (V{kCls, kSep}));
  EXPECT_EQ(ids(tok, " \t\n\u3000 "), (V{kCls, kSep}));
  EXPECT_EQ(tok.cls_id(), kCls);
  EXPECT_EQ(tok.sep_id(), kSep);
  EXPECT_EQ(tok.pad_id(), kPad);
  EXPECT_EQ(tok.unk_id(), kUnk);
}

// with_prefix: the prefix's tokens before the text's, inside the special
// tokens and the truncation; a text the tokenizer refuses is refused with the
// error of the text alone (its own byte offset); an empty prefix is the base.
TEST(TokenizerTest, APrefixGoesBeforeEveryText) {
  auto base = std::make_shared<WordPieceTokenizer>(make());
  Result<std::shared_ptr<const Tokenizer>> prefixed = with_prefix(base, "hello ");
  ASSERT_TRUE(prefixed.ok()) << prefixed.status().to_string();
  std::vector<int32_t> out;
  ASSERT_TRUE((*prefixed)->encode_append("world", out).ok());
  EXPECT_EQ(out, (V{kCls, kHello, kWorld, kSep}));
  EXPECT_EQ((*prefixed)->pad_id(), kPad);
  EXPECT_EQ((*prefixed)->special_tokens(), base->special_tokens());
  out.assign({7});
  Result<size_t> bad = (*prefixed)->encode_append("ok \xff", out);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(out, (V{7}));  // nothing appended
  Result<size_t> alone = base->encode_append("ok \xff", out);
  ASSERT_FALSE(alone.ok());
  EXPECT_EQ(bad.status().message(), alone.status().message());
  Result<std::shared_ptr<const Tokenizer>> none = with_prefix(base, "");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->get(), base.get());
  EXPECT_EQ(with_prefix(base, "\xc3").status().code(), StatusCode::kInvalidArgument);
}

TEST(TokenizerTest, GreedyLongestMatchAndUnknownWords) {
  auto tok = make();
  EXPECT_EQ(ids(tok, "unaffable"), (V{kCls, 7, 8, 9, kSep}));
  // One unmatched piece makes the whole word [UNK].
  EXPECT_EQ(ids(tok, "unaffablez hello"), (V{kCls, kUnk, kHello, kSep}));
  EXPECT_EQ(ids(tok, "abba"), (V{kCls, 13, 15, 15, 16, kSep}));
}

TEST(TokenizerTest, MaxInputCharsPerWord) {
  TokenizerOptions o;
  o.max_input_chars_per_word = 5;
  auto tok = make(o);
  EXPECT_EQ(ids(tok, "aaaaa"), (V{kCls, 13, 16, 16, 16, 16, kSep}));
  EXPECT_EQ(ids(tok, "aaaaaa a"), (V{kCls, kUnk, 13, kSep}));
  // Counted after normalization: U+0130 lowercases to two characters when
  // accents are kept.
  o.strip_accents = false;
  auto keep = make(o);
  EXPECT_EQ(ids(keep, "aaa\xC4\xB0"), (V{kCls, 13, 16, 16, 29, kSep}));  // "aaai\u0307": 5 chars
  EXPECT_EQ(ids(keep, "aaaa\xC4\xB0"), (V{kCls, kUnk, kSep}));           // 5 in, 6 after lowercase
}

TEST(TokenizerTest, AccentsAndFullLowercase) {
  auto tok = make();
  EXPECT_EQ(ids(tok, "Caf\xC3\xA9"), (V{kCls, 17, kSep}));     // café -> cafe
  EXPECT_EQ(ids(tok, "Cafe\xCC\x81"), (V{kCls, 17, kSep}));    // combining acute stripped
  EXPECT_EQ(ids(tok, "x\xC4\xB0y"), (V{kCls, 28, 27, kSep}));  // xİy -> xiy -> xi ##y
  TokenizerOptions cased;
  cased.lowercase = false;
  auto c = make(cased);
  EXPECT_EQ(ids(c, "Caf\xC3\xA9 \xC3\xA9"), (V{kCls, kUnk, 18, kSep}));  // no stripping when cased
  TokenizerOptions nostrip;
  nostrip.strip_accents = false;
  auto n = make(nostrip);
  EXPECT_EQ(ids(n, "\xC3\x89"), (V{kCls, 18, kSep}));  // É -> é, kept
}

TEST(TokenizerTest, CleanTextAndChineseCharacters) {
  auto tok = make();
  EXPECT_EQ(ids(tok,
                "a\xE2\x80\x8B"
                "b"),
            (V{kCls, 13, 15, kSep}));  // zero-width space dropped
  EXPECT_EQ(ids(tok, std::string("a\0b", 3)), (V{kCls, 13, 15, kSep}));
  EXPECT_EQ(ids(tok,
                "a\xC2\xA0"
                "b"),
            (V{kCls, 13, 14, kSep}));  // NBSP is whitespace
  EXPECT_EQ(ids(tok, "\xE4\xB8\xAD\xE6\x96\x87"), (V{kCls, 20, 21, kSep}));
  TokenizerOptions o;
  o.tokenize_chinese_chars = false;
  EXPECT_EQ(ids(make(o), "\xE4\xB8\xAD\xE6\x96\x87"), (V{kCls, kUnk, kSep}));
  o = {};
  o.clean_text = false;
  EXPECT_EQ(ids(make(o),
                "a\xE2\x80\x8B"
                "b"),
            (V{kCls, kUnk, kSep}));
}

TEST(TokenizerTest, SpecialTokensInTextAreNotSplit) {
  auto tok = make();
  EXPECT_EQ(ids(tok, "a[SEP]b"), (V{kCls, 13, kSep, 14, kSep}));
  EXPECT_EQ(ids(tok, "[MASK] [PAD][UNK]"), (V{kCls, kMask, kPad, kUnk, kSep}));
  EXPECT_EQ(ids(tok, "[[CLS]]"), (V{kCls, 22, kCls, 23, kSep}));
  // Matched on the raw text: lowercase or broken forms are ordinary text.
  EXPECT_EQ(ids(tok, "[cls]"), (V{kCls, 22, kUnk, 23, kSep}));
  EXPECT_EQ(ids(tok, "[CLS"), (V{kCls, 22, kUnk, kSep}));
  TokenizerOptions o;
  o.added_tokens = std::vector<std::string>{"[CLS]"};
  EXPECT_EQ(ids(make(o), "[SEP]"), (V{kCls, 22, kUnk, 23, kSep}));
}

TEST(TokenizerTest, Truncation) {
  TokenizerOptions o;
  o.max_length = 5;
  auto tok = make(o);
  EXPECT_EQ(ids(tok, "a b a b a b"), (V{kCls, 13, 14, 13, kSep}));
  EXPECT_EQ(ids(tok, "abbb"), (V{kCls, 13, 15, 15, kSep}));  // cut inside a word's pieces
  EXPECT_EQ(ids(tok, "a [SEP] b b"), (V{kCls, 13, kSep, 14, kSep}));
  o.max_length = 2;
  EXPECT_EQ(ids(make(o), "a b"), (V{kCls, kSep}));
  o.max_length = 3;
  o.add_special_tokens = false;
  EXPECT_EQ(ids(make(o), "a b a b"), (V{13, 14, 13}));
  o.max_length = 0;  // no limit
  EXPECT_EQ(ids(make(o), "a b a b"), (V{13, 14, 13, 14}));
  o.max_length = 1;
  o.add_special_tokens = true;
  auto bad = WordPieceTokenizer::create(Vocab::from_tokens(kTokens), o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

// The special tokens of a row are the tokenizer's fact: what an empty text
// encodes to, and the floor every --max-length check uses.
TEST(TokenizerTest, SpecialTokensAreWhatAnEmptyTextEncodesTo) {
  TokenizerOptions o;
  auto tok = make(o);
  EXPECT_EQ(tok.special_tokens(), kSpecialTokensPerRow);
  EXPECT_EQ(ids(tok, "").size(), size_t(tok.special_tokens()));
  o.add_special_tokens = false;
  auto bare = make(o);
  EXPECT_EQ(bare.special_tokens(), 0);
  EXPECT_EQ(ids(bare, "").size(), size_t(bare.special_tokens()));

  EXPECT_TRUE(check_max_length(kSpecialTokensPerRow).ok());
  Status s = check_max_length(kSpecialTokensPerRow - 1);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "--max-length must be at least 2 (the special tokens around a text: [CLS] and [SEP], or <s> and "
            "</s>), got 1");
  EXPECT_EQ(check_max_length(0, "max_length").message(),
            "max_length must be at least 2 (the special tokens around a text: [CLS] and [SEP], or <s> and "
            "</s>), got 0");
}

// The engine sees a WordPiece tokenizer through the Tokenizer interface only:
// the same ids, pieces and sizes as the concrete type.
TEST(TokenizerTest, WordPieceThroughTheInterface) {
  TokenizerOptions o;
  o.max_length = 5;
  const WordPieceTokenizer wordpiece = make(o);
  const Tokenizer& tok = wordpiece;
  EXPECT_EQ(tok.kind(), TokenizerKind::kWordPiece);
  EXPECT_STREQ(tokenizer_kind_name(tok.kind()), "WordPiece");
  EXPECT_EQ(*tok.encode("a b a b a b"), ids(wordpiece, "a b a b a b"));
  std::vector<int32_t> out = {7};
  ASSERT_EQ(*tok.encode_append("abbb", out), 5u);
  EXPECT_EQ(out, (V{7, kCls, 13, 15, 15, kSep}));
  EXPECT_EQ(tok.piece(13), wordpiece.vocab().token(13));
  EXPECT_EQ(tok.vocab_size(), wordpiece.vocab().size());
  EXPECT_EQ(tok.max_length(), 5);
  EXPECT_EQ(tok.pad_id(), wordpiece.pad_id());
  EXPECT_EQ(tok.special_tokens(), 2);
}

TEST(TokenizerTest, InvalidUtf8NamesTheByteOffset) {
  TokenizerOptions o;
  o.max_length = 3;
  auto truncating = make(o);
  auto tok = make();
  struct Case {
    const WordPieceTokenizer* tok;
    std::string text;
    size_t offset;
  };
  const Case cases[] = {
      {&tok,
       "ab\xFF"
       "cd",
       2},
      {&tok, "hello \xC3", 6},
      {&tok, "[SEP]\xC3(", 5},
      {&tok, "\xED\xA0\x80", 0},
      {&truncating, "a b a b a b \xC0\x80", 12},  // after the point where encoding stops
  };
  for (const Case& c : cases) {
    auto r = c.tok->encode(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
    EXPECT_NE(r.status().message().find("byte offset " + std::to_string(c.offset)), std::string::npos)
        << r.status().message();
  }
}

TEST(TokenizerTest, EncodeAppendAppends) {
  auto tok = make();
  std::vector<int32_t> out = {77};
  auto n = tok.encode_append("hello", out);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 3u);
  EXPECT_EQ(out, (V{77, kCls, kHello, kSep}));
  n = tok.encode_append("world", out);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(out, (V{77, kCls, kHello, kSep, kCls, kWorld, kSep}));
}

TEST(TokenizerTest, CreateRejectsMissingSpecialTokens) {
  std::vector<std::string> no_unk = kTokens;
  no_unk[1] = "[UNKNOWN]";
  auto r = WordPieceTokenizer::create(Vocab::from_tokens(no_unk), {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("[UNK]"), std::string::npos);
}

using W = std::vector<std::string>;

W words(std::string_view text, const TokenizerOptions& options = {}) {
  auto r = basic_tokenize(text, options);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : W{"<error>"};
}

TEST(BasicTokenizeTest, SplitsAtWhitespaceAndPunctuationAndLowercases) {
  EXPECT_EQ(words("Hello, World!"), (W{"hello", ",", "world", "!"}));
  EXPECT_EQ(words("  a\tb\n\r c  "), (W{"a", "b", "c"}));
  EXPECT_EQ(words("don't"), (W{"don", "'", "t"}));
  EXPECT_EQ(words(""), W{});
  EXPECT_EQ(words(" \t "), W{});
}

TEST(BasicTokenizeTest, NormalizesAsEncodeDoes) {
  EXPECT_EQ(words("Caf\xC3\xA9 Cafe\xCC\x81"), (W{"cafe", "cafe"}));  // accents stripped
  EXPECT_EQ(words("x\xC4\xB0y"), (W{"xiy"}));                         // strip, then lowercase
  EXPECT_EQ(words("a\xE4\xB8\xAD\xE6\x96\x87z"), (W{"a", "\xE4\xB8\xAD", "\xE6\x96\x87", "z"}));  // CJK
  EXPECT_EQ(words(std::string("a\0b\xE2\x80\x8B"
                              "c\xC2\xA0"
                              "d",
                              10)),
            (W{"abc", "d"}));  // NUL and zero-width space dropped, NBSP splits
  TokenizerOptions cased;
  cased.lowercase = false;
  EXPECT_EQ(words("Caf\xC3\xA9", cased), (W{"Caf\xC3\xA9"}));
  TokenizerOptions nostrip;
  nostrip.strip_accents = false;
  EXPECT_EQ(words("\xC3\x89t\xC3\xA9 x\xC4\xB0", nostrip), (W{"\xC3\xA9t\xC3\xA9", "xi\xCC\x87"}));
  TokenizerOptions nochinese;
  nochinese.tokenize_chinese_chars = false;
  EXPECT_EQ(words("a\xE4\xB8\xAD\xE6\x96\x87z", nochinese), (W{"a\xE4\xB8\xAD\xE6\x96\x87z"}));
  TokenizerOptions noclean;
  noclean.clean_text = false;
  EXPECT_EQ(words("a\xE2\x80\x8B"
                  "b",
                  noclean),
            (W{"a\xE2\x80\x8B"
               "b"}));
}

TEST(BasicTokenizeTest, SpecialTokensStayWhole) {
  EXPECT_EQ(words("[CLS] Hi[SEP]x [cls]"), (W{"[CLS]", "hi", "[SEP]", "x", "[", "cls", "]"}));
  EXPECT_EQ(words("[[MASK]]"), (W{"[", "[MASK]", "]"}));
  TokenizerOptions none;
  none.added_tokens = std::vector<std::string>{};
  EXPECT_EQ(words("[CLS]", none), (W{"[", "cls", "]"}));
  TokenizerOptions mine;
  mine.added_tokens = std::vector<std::string>{"<Me>"};
  EXPECT_EQ(words("a<Me>[SEP]", mine), (W{"a", "<Me>", "[", "sep", "]"}));
}

TEST(BasicTokenizeTest, LongWordsComeBackWholeAndLimitsAreIgnored) {
  TokenizerOptions o;
  o.max_input_chars_per_word = 5;
  o.max_length = 3;
  const std::string longer(3000, 'q');
  EXPECT_EQ(words("a b c d " + longer + " \xC3\xA9\xC3\xA9\xC3\xA9", o),
            (W{"a", "b", "c", "d", longer, "eee"}));
}

TEST(BasicTokenizeTest, WordsAreWhatWordPieceSees) {
  // Each word, encoded alone without further normalization, gives the ids
  // that the whole text gives.
  auto whole = make();
  TokenizerOptions raw;
  raw.lowercase = false;
  raw.strip_accents = false;
  raw.add_special_tokens = false;
  auto piece = make(raw);
  for (const char* text : {"Hello, world! unaffable cafe\xCC\x81",
                           "[CLS]xi\xC4\xB0 \xE4\xB8\xAD\xE6\x96\x87.ab", "aaab unknownword [MASK]"}) {
    V want = ids(whole, text), got = {kCls};
    for (const std::string& w : words(text)) {
      const V p = ids(piece, w);
      got.insert(got.end(), p.begin(), p.end());
    }
    got.push_back(kSep);
    EXPECT_EQ(got, want) << text;
  }
}

TEST(BasicTokenizeTest, InvalidUtf8NamesTheByteOffset) {
  for (const auto& [text, offset] : {std::pair<std::string, size_t>{"ab\xFF", 2}, {"[SEP]\xC3(", 5}}) {
    auto r = basic_tokenize(text, {});
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
    EXPECT_NE(r.status().message().find("byte offset " + std::to_string(offset)), std::string::npos)
        << r.status().message();
  }
}

TEST(TokenizerJsonTest, LoadsHuggingFaceFileAndMatchesItsIds) {
  const std::string dir = std::string(INFERCOST_TEST_DATA_DIR) + "/tokenizer/";
  auto loaded = load_tokenizer_json(dir + "tiny_tokenizer.json", TokenizerOptions{});
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  // The generator saved it cased, accent-stripping, truncating at 12.
  EXPECT_FALSE(loaded->options.lowercase);
  ASSERT_TRUE(loaded->options.strip_accents.has_value());
  EXPECT_TRUE(*loaded->options.strip_accents);
  EXPECT_EQ(loaded->options.max_length, 12);
  ASSERT_TRUE(loaded->options.added_tokens.has_value());
  EXPECT_EQ(loaded->options.added_tokens->size(), 5u);
  auto tok = WordPieceTokenizer::create(loaded->vocab, loaded->options);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();

  std::ifstream in(dir + "tiny_tokenizer_expected.jsonl");
  ASSERT_TRUE(in);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    const std::string text = j.at("t");
    EXPECT_EQ(ids(*tok, text), j.at("ids").get<V>()) << text;
    ++n;
  }
  EXPECT_GE(n, 15);
}

TEST(TokenizerJsonTest, FieldsNotMentionedKeepTheirDefaults) {
  const std::string path = temp_file("tok_min.json", R"({"model": {"type": "WordPiece",
      "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "hi": 4}}})");
  TokenizerOptions defaults;
  defaults.max_length = 77;
  defaults.lowercase = false;
  auto loaded = load_tokenizer_json(path, defaults);
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_EQ(loaded->options.max_length, 77);
  EXPECT_FALSE(loaded->options.lowercase);
  EXPECT_EQ(loaded->vocab.size(), 5u);
  EXPECT_EQ(loaded->vocab.find("hi"), 4);
}

TEST(TokenizerJsonTest, Errors) {
  auto expect = [](const std::string& name, const std::string& content, StatusCode code) {
    const std::string path = temp_file(name, content);
    auto r = load_tokenizer_json(path, {});
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.status().code(), code) << r.status().to_string();
    EXPECT_NE(r.status().message().find(name), std::string::npos) << r.status().message();
  };
  expect("tok_bad.json", "{not json", StatusCode::kCorruption);
  expect("tok_bpe.json", R"({"model": {"type": "BPE", "vocab": {}}})", StatusCode::kUnsupported);
  expect("tok_gap.json", R"({"model": {"type": "WordPiece", "vocab": {"a": 0, "b": 2}}})",
         StatusCode::kCorruption);
  expect("tok_type.json", R"({"model": {"type": "WordPiece", "vocab": {"a": "zero"}}})",
         StatusCode::kCorruption);
  expect("tok_norm.json",
         R"({"normalizer": {"type": "NFC"}, "model": {"type": "WordPiece", "vocab": {"a": 0}}})",
         StatusCode::kUnsupported);
  EXPECT_FALSE(load_tokenizer_json(::testing::TempDir() + "/no_such_tokenizer.json", {}).ok());
}

}  // namespace
}  // namespace infercost::text
