// Unit tests of the Unigram tokenizer's parts: the precompiled charsmap (a
// double array built here by hand), base64, the Viterbi's ties, unknown
// fusing and byte fallback, Metaspace's schemes, truncation, the errors a bad
// tokenizer.json gives, and random input (which must never crash).
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "core/file.h"
#include "text/precompiled.h"
#include "text/unigram_json.h"
#include "text/unigram_model.h"
#include "text/unigram_pipeline.h"

namespace infercost::text {
namespace {

using detail::PrecompiledCharsmap;
using detail::UnigramModel;
using nlohmann::json;

// A charsmap in sentencepiece's layout: a double array where node k's
// children live at base_k ^ label and its value at base_k, bases 256 apart.
class CharsmapBuilder {
 public:
  CharsmapBuilder() : units_(256 * 64, 0), bases_(units_.size(), 0) { units_[0] = 256u << 10; }
  void add(const std::string& key, const std::string& replacement) {
    uint32_t base = 256;
    size_t pos = 0;
    for (const char ch : key) {
      const auto c = static_cast<unsigned char>(ch);
      pos = base ^ c;
      if (units_[pos] == 0) {
        next_ += 256;
        units_[pos] = c | static_cast<uint32_t>((pos ^ next_) << 10);
        bases_[pos] = next_;
      }
      base = bases_[pos];
    }
    units_[pos] |= 1u << 8;
    units_[base] = static_cast<uint32_t>(pool_.size());
    pool_ += replacement;
    pool_.push_back('\0');
  }
  std::string blob() const {
    std::string b(4, '\0');
    const uint32_t bytes = static_cast<uint32_t>(units_.size() * 4);
    std::memcpy(b.data(), &bytes, 4);
    b.append(reinterpret_cast<const char*>(units_.data()), bytes);
    return b + pool_;
  }

 private:
  std::vector<uint32_t> units_;
  std::vector<uint32_t> bases_;
  uint32_t next_ = 256;
  std::string pool_;
};

std::string base64(const std::string& in) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < in.size(); i += 3) {
    uint32_t v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    if (i + 2 < in.size()) v |= static_cast<unsigned char>(in[i + 2]);
    out += k[(v >> 18) & 63];
    out += k[(v >> 12) & 63];
    out += i + 1 < in.size() ? k[(v >> 6) & 63] : '=';
    out += i + 2 < in.size() ? k[v & 63] : '=';
  }
  return out;
}

PrecompiledCharsmap test_charsmap() {
  CharsmapBuilder b;
  b.add("\xEF\xBC\xA1", "A");  // Ａ
  b.add("\r", " ");
  b.add("\t", " ");
  b.add("\x1e", "");
  b.add("a", "X");
  b.add("ab", "Y");
  b.add("\xEF\xAC\x81", "fi");  // ﬁ
  auto m = PrecompiledCharsmap::parse(b.blob());
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  return std::move(m).value();
}

std::string normalize(const PrecompiledCharsmap& m, const std::string& s) {
  std::string out;
  m.normalize(s, out);
  return out;
}

TEST(PrecompiledTest, LooksUpTheShortestPrefix) {
  const PrecompiledCharsmap m = test_charsmap();
  std::string_view r;
  ASSERT_TRUE(m.transform("\xEF\xBC\xA1", &r));
  EXPECT_EQ(r, "A");
  ASSERT_TRUE(m.transform("ab", &r));
  EXPECT_EQ(r, "X");  // "a" is the first key found, as HF's results[0]
  ASSERT_TRUE(m.transform("\x1e", &r));
  EXPECT_EQ(r, "");
  EXPECT_FALSE(m.transform("b", &r));
  EXPECT_FALSE(m.transform(std::string_view("\0a", 2), &r));  // keys end at NUL
}

TEST(PrecompiledTest, NormalizesByGraphemeCluster) {
  const PrecompiledCharsmap m = test_charsmap();
  EXPECT_EQ(normalize(m, "b\xEF\xBC\xA1\xEF\xAC\x81 c"), "bAfi c");
  EXPECT_EQ(normalize(m, "x\ty\x1ez"), "x yz");
  // CR LF is one cluster, replaced whole by "\r"'s replacement.
  EXPECT_EQ(normalize(m, "p\r\nq"), "p q");
  EXPECT_EQ(normalize(m, "p\rq"), "p q");
  // A cluster under 6 bytes: Ａ + U+0301 becomes "A", the mark lost.
  EXPECT_EQ(normalize(m, "\xEF\xBC\xA1\xCC\x81!"), "A!");
  // 6 bytes or more: each code point alone, the marks kept.
  EXPECT_EQ(normalize(m, "\xEF\xBC\xA1\xCC\x81\xCC\x81"), "A\xCC\x81\xCC\x81");
  EXPECT_EQ(normalize(m, "\xEF\xBC\xA1\xE2\x83\x9D"), "A\xE2\x83\x9D");  // Ａ + U+20DD: exactly 6
  // "a" + U+0301 is a cluster whose shortest key is "a".
  EXPECT_EQ(normalize(m, "a\xCC\x81"), "X");
  // Emoji with ZWJ and skin tone: one cluster of 6+ bytes, unmapped.
  const std::string family = "\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x92\xBB";
  EXPECT_EQ(normalize(m, family), family);
  EXPECT_EQ(normalize(m, "ab"), "Xb");  // ASCII clusters are single characters
}

TEST(PrecompiledTest, RefusesBadCharsmaps) {
  std::string blob = CharsmapBuilder().blob();
  EXPECT_TRUE(PrecompiledCharsmap::parse(blob).ok());
  auto r = PrecompiledCharsmap::parse(blob.substr(0, 100));
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_NE(r.status().message().find("runs past"), std::string::npos) << r.status().message();
  EXPECT_FALSE(PrecompiledCharsmap::parse("ab").ok());
  std::string odd = blob;
  odd[0] = 3;
  EXPECT_FALSE(PrecompiledCharsmap::parse(odd).ok());
  r = PrecompiledCharsmap::parse(blob + "\xFF");
  EXPECT_NE(r.status().message().find("not UTF-8"), std::string::npos) << r.status().message();
}

TEST(Base64Test, DecodesAndRefuses) {
  for (const std::string& s : std::vector<std::string>{"", "f", "fo", "foo", "foob", "fooba", "foobar",
                                                       std::string("\0\xFF\x10", 3)}) {
    auto d = detail::decode_base64(base64(s));
    ASSERT_TRUE(d.ok()) << d.status().to_string();
    EXPECT_EQ(*d, s);
  }
  EXPECT_FALSE(detail::decode_base64("Zm9").ok());   // length
  EXPECT_FALSE(detail::decode_base64("Zm9*").ok());  // alphabet
  EXPECT_FALSE(detail::decode_base64("Zh==").ok());  // trailing bits
  EXPECT_FALSE(detail::decode_base64("Z===").ok());
  EXPECT_FALSE(detail::decode_base64("Zg==Zg==").ok());  // padding inside
}

UnigramModel make_model(std::vector<UnigramModel::Piece> pieces, int32_t unk = 0,
                        bool byte_fallback = false) {
  auto m = UnigramModel::create(std::move(pieces), unk, byte_fallback);
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  return std::move(m).value();
}

std::vector<int32_t> encode(const UnigramModel& m, std::string_view word, size_t room = 1000) {
  std::vector<int32_t> ids;
  m.encode(word, ids, room);
  return ids;
}

TEST(UnigramModelTest, HuggingFaceExample) {
  // models/unigram/model.rs's doc example: "abcdacdxx" -> abcd a cd xx.
  const UnigramModel m = make_model(
      {{"<unk>", 0}, {"a", 0}, {"b", 0}, {"c", 0}, {"d", 0}, {"cd", 1}, {"ab", 2}, {"abc", 5}, {"abcd", 10}});
  EXPECT_EQ(encode(m, "abcdacdxx"), (std::vector<int32_t>{8, 1, 5, 0}));
  EXPECT_DOUBLE_EQ(m.unk_score(), -10.0);
  EXPECT_EQ(encode(m, "abcdacdxx", 2), (std::vector<int32_t>{8, 1}));
}

TEST(UnigramModelTest, TiesKeepTheEarliestStart) {
  // a + b and ab score the same: the path found first (ab, from 0) stays.
  const UnigramModel m = make_model({{"<unk>", 0}, {"a", -1}, {"b", -1}, {"ab", -2}});
  EXPECT_EQ(encode(m, "ab"), (std::vector<int32_t>{3}));
  // x + yz and xy + z tie: xy (start 0) reaches the end's predecessor first,
  // but the end is reached from start 1 (yz) before start 2 (z).
  const UnigramModel n = make_model({{"<unk>", 0}, {"x", -1}, {"yz", -1}, {"xy", -1}, {"z", -1}});
  EXPECT_EQ(encode(n, "xyz"), (std::vector<int32_t>{1, 2}));
}

TEST(UnigramModelTest, FusesUnknownRuns) {
  const UnigramModel m = make_model({{"a", -1}, {"<unk>", 0}}, 1);
  EXPECT_EQ(encode(m, "xyz"), (std::vector<int32_t>{1}));
  EXPECT_EQ(encode(m, "x\xC3\xA9zay"), (std::vector<int32_t>{1, 0, 1}));
  EXPECT_EQ(m.unk_id(), 1);
}

TEST(UnigramModelTest, ByteFallback) {
  std::vector<UnigramModel::Piece> pieces = {{"<unk>", 0}, {"a", -1}};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    pieces.push_back({name, -5});
  }
  const UnigramModel m = make_model(pieces, 0, true);
  // "é" is C3 A9: two byte pieces; "a" stays itself.
  EXPECT_EQ(encode(m,
                   "\xC3\xA9"
                   "a"),
            (std::vector<int32_t>{2 + 0xC3, 2 + 0xA9, 1}));
  pieces[2 + 0xF4].text = "zz";  // no <0xF4>: a run with that byte becomes <unk>
  const UnigramModel n = make_model(pieces, 0, true);
  EXPECT_EQ(encode(n, "\xF4\x8F\xBF\xBF"), (std::vector<int32_t>{0}));
}

TEST(UnigramModelTest, LaterDuplicateWins) {
  const UnigramModel m = make_model({{"<unk>", 0}, {"a", -1}, {"a", -2}});
  EXPECT_EQ(m.find("a"), 2);
  EXPECT_EQ(encode(m, "aa"), (std::vector<int32_t>{2, 2}));
}

TEST(UnigramModelTest, RefusesBadModels) {
  EXPECT_FALSE(UnigramModel::create({}, 0, false).ok());
  EXPECT_FALSE(UnigramModel::create({{"a", 0}}, 1, false).ok());
  EXPECT_FALSE(UnigramModel::create({{"a", 0}}, -1, false).ok());
}

// A small tokenizer.json: pieces with ▁ (U+2581), Metaspace `pre`.
json tiny_json(json pre) {
  json vocab = json::array({{"<unk>", 0.0},
                            {"<s>", 0.0},
                            {"</s>", 0.0},
                            {"<pad>", 0.0},
                            {"\xE2\x96\x81", -2.0},
                            {"\xE2\x96\x81"
                             "a",
                             -1.0},
                            {"a", -1.5},
                            {"b", -1.5},
                            {"\xE2\x96\x81"
                             "b",
                             -1.0},
                            {"\xE2\x96\x81"
                             "a\xE2\x96\x81"
                             "b",
                             -0.5},
                            {"<x>", 0.0}});
  return json{{"version", "1.0"},
              {"added_tokens",
               json::array({{{"id", 1}, {"content", "<s>"}, {"special", true}, {"normalized", false}},
                            {{"id", 10}, {"content", "<x>"}, {"special", true}, {"normalized", false}}})},
              {"normalizer", nullptr},
              {"pre_tokenizer", pre},
              {"post_processor",
               {{"type", "TemplateProcessing"},
                {"single", json::array({{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
                                        {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                                        {{"SpecialToken", {{"id", "</s>"}, {"type_id", 0}}}}})},
                {"special_tokens",
                 {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}},
                  {"</s>", {{"id", "</s>"}, {"ids", {2}}, {"tokens", {"</s>"}}}}}}}},
              {"model", {{"type", "Unigram"}, {"unk_id", 0}, {"vocab", vocab}}}};
}

json metaspace(const char* scheme, bool split = true) {
  return {
      {"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", scheme}, {"split", split}};
}

std::vector<int32_t> ids_of(const json& root, std::string_view text, int max_length = 0) {
  auto tok = unigram_from_tokenizer_json(root, "tiny.json", max_length);
  EXPECT_TRUE(tok.ok()) << tok.status().to_string();
  if (!tok.ok()) return {};
  auto ids = (*tok)->encode(text);
  EXPECT_TRUE(ids.ok()) << ids.status().to_string();
  return ids.ok() ? *ids : std::vector<int32_t>{};
}

TEST(UnigramTokenizerTest, MetaspaceSchemes) {
  using V = std::vector<int32_t>;
  EXPECT_EQ(ids_of(tiny_json(metaspace("always")), "a b"), (V{1, 5, 8, 2}));
  EXPECT_EQ(ids_of(tiny_json(metaspace("always")), "<x>a"), (V{1, 10, 5, 2}));
  EXPECT_EQ(ids_of(tiny_json(metaspace("first")), "a"), (V{1, 5, 2}));
  EXPECT_EQ(ids_of(tiny_json(metaspace("first")), "<x>a"), (V{1, 10, 6, 2}));
  EXPECT_EQ(ids_of(tiny_json(metaspace("never")), "a b"), (V{1, 6, 8, 2}));
  // Without split the whole text is one word: "▁a▁b" is a piece.
  EXPECT_EQ(ids_of(tiny_json(metaspace("always", false)), "a b"), (V{1, 9, 2}));
  // A leading space is the replacement: no second one.
  EXPECT_EQ(ids_of(tiny_json(metaspace("always")), " a"), (V{1, 5, 2}));
  EXPECT_EQ(ids_of(tiny_json(metaspace("always")), ""), (V{1, 2}));
  // The older serialization: add_prefix_space true is "always".
  json legacy = {{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"add_prefix_space", true}};
  EXPECT_EQ(ids_of(tiny_json(legacy), "a"), (V{1, 5, 2}));
  legacy["add_prefix_space"] = false;  // HF: contradicts the default "always"
  EXPECT_EQ(unigram_from_tokenizer_json(tiny_json(legacy), "tiny.json", 0).status().code(),
            StatusCode::kCorruption);
  legacy["prepend_scheme"] = "never";
  EXPECT_EQ(ids_of(tiny_json(legacy), "a"), (V{1, 6, 2}));
  const json ws = {{"type", "Sequence"},
                   {"pretokenizers", json::array({{{"type", "WhitespaceSplit"}}, metaspace("first")})}};
  EXPECT_EQ(ids_of(tiny_json(ws), "a  b"), (V{1, 5, 7, 2}));  // only the first word is at the start
}

// "first" asks whether the text still starts at its original offset 0, as
// HF's alignments say: not after Strip or a Replace with nothing took its
// first characters, still after a Precompiled deletion (HF aligns from 0).
TEST(UnigramTokenizerTest, MetaspaceFirstAfterNormalizers) {
  using V = std::vector<int32_t>;
  json j = tiny_json(metaspace("first"));
  j["normalizer"] = {{"type", "Strip"}, {"strip_left", true}, {"strip_right", true}};
  EXPECT_EQ(ids_of(j, " a"), (V{1, 6, 2}));
  EXPECT_EQ(ids_of(j, "a "), (V{1, 5, 2}));
  j["normalizer"] = {{"type", "Replace"}, {"pattern", {{"String", "x"}}}, {"content", ""}};
  EXPECT_EQ(ids_of(j, "xa"), (V{1, 6, 2}));
  EXPECT_EQ(ids_of(j, "ax"), (V{1, 5, 2}));
  j["normalizer"] = {{"type", "Replace"}, {"pattern", {{"String", "x"}}}, {"content", "a"}};
  EXPECT_EQ(ids_of(j, "xb"), (V{1, 5, 7, 2}));
  CharsmapBuilder b;
  b.add("\x1e", "");
  j["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", base64(b.blob())}};
  EXPECT_EQ(ids_of(j,
                   "\x1e"
                   "a"),
            (V{1, 5, 2}));
}

TEST(UnigramTokenizerTest, TruncatesAndReports) {
  using V = std::vector<int32_t>;
  const json root = tiny_json(metaspace("always"));
  EXPECT_EQ(ids_of(root, "a a a a a", 4), (V{1, 5, 5, 2}));
  EXPECT_EQ(ids_of(root, "a <x> a", 3), (V{1, 5, 2}));
  EXPECT_EQ(ids_of(root, "<x> a", 3), (V{1, 10, 2}));
  auto tok = unigram_from_tokenizer_json(root, "tiny.json", 4);
  ASSERT_TRUE(tok.ok());
  EXPECT_EQ((*tok)->pad_id(), 3);
  EXPECT_EQ((*tok)->vocab_size(), 11u);
  EXPECT_EQ((*tok)->piece(9),
            "\xE2\x96\x81"
            "a\xE2\x96\x81"
            "b");
  EXPECT_EQ((*tok)->piece(11), "");
  EXPECT_EQ((*tok)->max_length(), 4);
  std::vector<int32_t> out = {7};
  auto bad = (*tok)->encode_append("a\xC3(", out);
  EXPECT_EQ(bad.status().code(), StatusCode::kCorruption);
  EXPECT_NE(bad.status().message().find("byte offset 1"), std::string::npos) << bad.status().message();
  EXPECT_EQ(out, (V{7}));
  EXPECT_EQ(unigram_from_tokenizer_json(root, "tiny.json", 1).status().code(), StatusCode::kInvalidArgument);
}

// Each bad file names the file and the entry.
void expect_error(const json& root, StatusCode code, const std::string& fragment) {
  auto tok = unigram_from_tokenizer_json(root, "bad.json", 512);
  ASSERT_FALSE(tok.ok()) << fragment;
  EXPECT_EQ(tok.status().code(), code) << tok.status().to_string();
  EXPECT_EQ(tok.status().message().rfind("bad.json: ", 0), 0u) << tok.status().message();
  EXPECT_NE(tok.status().message().find(fragment), std::string::npos) << tok.status().message();
}

TEST(UnigramTokenizerTest, BadFiles) {
  const json good = tiny_json(metaspace("always"));
  json j = good;
  j["model"]["vocab"][3] = json::array({"<pad>"});
  expect_error(j, StatusCode::kCorruption, "model.vocab[3] is not [piece, score]");
  j = good;
  j["model"]["vocab"][4] = json::array({"x", "-1"});
  expect_error(j, StatusCode::kCorruption, "model.vocab[4]");
  j = good;
  j["model"]["unk_id"] = 11;
  expect_error(j, StatusCode::kCorruption, "model.unk_id 11 is out of range (11 pieces)");
  j = good;
  j["model"]["unk_id"] = nullptr;
  expect_error(j, StatusCode::kUnsupported, "model.unk_id");
  j = good;
  j["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", "AAAA*AAA"}};
  expect_error(j, StatusCode::kCorruption,
               "normalizer.precompiled_charsmap: bad base64 character at offset 4");
  j["normalizer"] = {
      {"type", "Sequence"},
      {"normalizers",
       json::array({{{"type", "Precompiled"},
                     {"precompiled_charsmap", base64(CharsmapBuilder().blob().substr(0, 64))}}})}};
  expect_error(j, StatusCode::kCorruption, "normalizer.normalizers[0].precompiled_charsmap: charsmap trie");
  j["normalizer"] = {{"type", "BertNormalizer"}};
  expect_error(j, StatusCode::kUnsupported, "normalizer 'BertNormalizer'");
  j["normalizer"] = {{"type", "Replace"}, {"pattern", {{"Regex", "[^a]+"}}}, {"content", " "}};
  expect_error(j, StatusCode::kUnsupported, "Replace regex '[^a]+'");
  j["normalizer"] = {{"type", "Replace"}, {"pattern", {{"Regex", "(ab)+|c"}}}, {"content", " "}};
  expect_error(j, StatusCode::kUnsupported, "Replace regex '(ab)+|c'");
  j = good;
  j["pre_tokenizer"] = {{"type", "ByteLevel"}};
  expect_error(j, StatusCode::kUnsupported, "pre-tokenizer 'ByteLevel'");
  j = good;
  j["post_processor"] = {{"type", "ByteLevel"}};
  expect_error(j, StatusCode::kUnsupported, "post-processor 'ByteLevel'");
  j = good;
  j["model"]["type"] = "BPE";
  expect_error(j, StatusCode::kInvalidArgument, "model.type");
  j = good;
  j["added_tokens"][0].erase("content");
  auto tok = unigram_from_tokenizer_json(j, "bad.json", 512);
  EXPECT_FALSE(tok.ok());
  EXPECT_EQ(tok.status().message().rfind("bad.json: added_tokens", 0), 0u) << tok.status().message();
}

TEST(UnigramTokenizerTest, ReplaceNormalizers) {
  using V = std::vector<int32_t>;
  json j = tiny_json(metaspace("always"));
  j["normalizer"] = {
      {"type", "Sequence"},
      {"normalizers",
       json::array({{{"type", "Replace"}, {"pattern", {{"Regex", " {2,}"}}}, {"content", " "}},
                    {{"type", "Replace"}, {"pattern", {{"String", "c"}}}, {"content", "b"}}})}};
  EXPECT_EQ(ids_of(j, "a     c"), (V{1, 5, 8, 2}));
  j["normalizer"] = {{"type", "Replace"}, {"pattern", {{"Regex", "a{2}"}}}, {"content", "b"}};
  EXPECT_EQ(ids_of(j, "aaaaa"), (V{1, 8, 7, 6, 2}));  // ▁b b a
}

// DeBERTa-v3's `\\s{2,}|[\\n\\r\\t]`: a run of two or more White_Space
// characters becomes one space, and so does a lone newline, return or tab; a
// lone other space (NBSP, U+3000) stays, as regex alternation leftmost-first
// does it.
TEST(UnigramTokenizerTest, ReplaceOfAWhitespaceRunOrAControlCharacter) {
  detail::NormalizerStep step;
  step.kind = detail::NormalizerStep::Kind::kReplace;
  step.run_set.space = true;
  step.run_min = 2;
  step.single_set.chars = {U'\n', U'\r', U'\t'};
  step.content = " ";
  const auto apply = [&](std::string_view text, bool* at_origin = nullptr) {
    std::string out;
    bool origin = true;
    step.apply(text, out, at_origin ? at_origin : &origin);
    return out;
  };
  EXPECT_EQ(apply("a  b"), "a b");
  EXPECT_EQ(apply("a \t\n b"), "a b");
  EXPECT_EQ(apply("a\tb\nc\rd"), "a b c d");
  EXPECT_EQ(apply("a b"), "a b");
  EXPECT_EQ(apply("a\u00a0b"), "a\u00a0b");
  EXPECT_EQ(apply("a\u00a0\u00a0b\u3000\u2003c"), "a b c");
  EXPECT_EQ(apply("\xff\t\xfe"), "\xff \xfe");  // bytes that are not UTF-8 pass through
  step.content.clear();
  bool at_origin = true;
  EXPECT_EQ(apply("\tx", &at_origin), "x");
  EXPECT_FALSE(at_origin) << "a leading match deleted: the text no longer starts at its origin";
}

// Random bytes are refused or tokenized; random valid UTF-8 always is.
TEST(UnigramTokenizerTest, RandomInputNeverCrashes) {
  const std::string dir = std::string(INFERCOST_TEST_DATA_DIR) + "/tokenizer/";
  std::vector<std::unique_ptr<UnigramTokenizer>> toks;
  const std::string shared = std::string(INFERCOST_SHARED_DATA_DIR) + "/xlm-roberta/tokenizer.json";
  for (const std::string& path : std::vector<std::string>{
           dir + "tiny_unigram_tokenizer.json", dir + "tiny_unigram_bytes_tokenizer.json", shared}) {
    if (path == shared && !path_exists(path)) continue;  // said below, once the tiny ones are checked
    auto data = read_file(path);
    ASSERT_TRUE(data.ok());
    auto tok = unigram_from_tokenizer_json(json::parse(*data), path, 64);
    ASSERT_TRUE(tok.ok()) << tok.status().to_string();
    toks.push_back(std::move(tok).value());
  }
  std::mt19937 rng(7);
  const char32_t pool[] = {'a',     ' ',     '\t',    '\r',   '\n', 0,      0x301,  0x200D,
                           0x1F44D, 0x1F3FD, 0x1F1EB, 0x3000, 0xA0, 0xFF21, 0x0E01, 0x0915,
                           0x094D,  0x05D0,  0x0600,  0x2581, '<',  's',    '>',    0xFFFD};
  for (int iter = 0; iter < 3000; ++iter) {
    std::string bytes(rng() % 40, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    std::string text;
    for (int k = static_cast<int>(rng() % 60); k > 0; --k) {
      char32_t cp = rng() % 3 ? pool[rng() % std::size(pool)] : static_cast<char32_t>(rng() % 0x110000);
      if (cp >= 0xD800 && cp < 0xE000) cp = 'x';
      char buf[4];
      int n = 0;
      if (cp < 0x80) {
        buf[n++] = static_cast<char>(cp);
      } else if (cp < 0x800) {
        buf[n++] = static_cast<char>(0xC0 | (cp >> 6));
        buf[n++] = static_cast<char>(0x80 | (cp & 0x3F));
      } else if (cp < 0x10000) {
        buf[n++] = static_cast<char>(0xE0 | (cp >> 12));
        buf[n++] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        buf[n++] = static_cast<char>(0x80 | (cp & 0x3F));
      } else {
        buf[n++] = static_cast<char>(0xF0 | (cp >> 18));
        buf[n++] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        buf[n++] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        buf[n++] = static_cast<char>(0x80 | (cp & 0x3F));
      }
      text.append(buf, static_cast<size_t>(n));
    }
    for (const auto& tok : toks) {
      std::vector<int32_t> ids;
      auto r = tok->encode_append(bytes, ids);
      if (!r.ok()) {
        EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
      }
      ids.clear();
      auto v = tok->encode_append(text, ids);
      ASSERT_TRUE(v.ok()) << v.status().to_string();
      EXPECT_LE(ids.size(), 64u);
      EXPECT_GE(ids.size(), 2u);
      for (const int32_t id : ids) ASSERT_LT(static_cast<size_t>(id), tok->vocab_size());
    }
  }
  if (!path_exists(shared)) {
    GTEST_SKIP() << "shared XLM-R tokenizer.json " << shared
                 << " is absent; skipped it (the two tiny Unigram tokenizers were checked)";
  }
}

}  // namespace
}  // namespace infercost::text
