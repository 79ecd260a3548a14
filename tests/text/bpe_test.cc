// Byte-level BPE: the GPT-2 split, the byte alphabet, merge order, added
// tokens, truncation, the tokenizer.json loader on the committed tiny
// tokenizers (trained by HF's BpeTrainer; tools/gen_bpe_golden.py), and the
// errors bad files give.
#include "text/bpe.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../test_utils.h"
#include "core/file.h"
#include "text/bpe_json.h"
#include "text/byte_level.h"

namespace infercost::text {
namespace {

using detail::SplitClass;

const std::string kDataDir = std::string(INFERCOST_TEST_DATA_DIR) + "/tokenizer";

std::vector<std::string> split(std::string_view text) {
  std::vector<std::string> words;
  detail::split_gpt2(text, [&](size_t b, size_t e) { words.emplace_back(text.substr(b, e - b)); });
  return words;
}

using Words = std::vector<std::string>;

TEST(BpeSplit, Gpt2Pattern) {
  EXPECT_EQ(split("Hello world"), (Words{"Hello", " world"}));
  EXPECT_EQ(split("it's they're we've I'm you'll he'd"),
            (Words{"it", "'s", " they", "'re", " we", "'ve", " I", "'m", " you", "'ll", " he", "'d"}));
  EXPECT_EQ(split("IT'S 'S"), (Words{"IT", "'", "S", " '", "S"}));  // contractions are lowercase only
  EXPECT_EQ(split("!!'s"), (Words{"!!'", "s"}));  // the punctuation run takes the apostrophe
  EXPECT_EQ(split("hello   world"), (Words{"hello", "  ", " world"}));
  EXPECT_EQ(split("a \tb"), (Words{"a", " ", "\t", "b"}));
  EXPECT_EQ(split("a\t b"), (Words{"a", "\t", " b"}));
  EXPECT_EQ(split("end  "), (Words{"end", "  "}));
  EXPECT_EQ(split(" "), (Words{" "}));
  EXPECT_EQ(split("abc123 456"), (Words{"abc", "123", " 456"}));
  EXPECT_EQ(split("x\xC2\xA0y"), (Words{"x", "\xC2\xA0", "y"}));  // U+00A0 is \s, not a prefix space
  EXPECT_EQ(split("caf\xC3\xA9 \xE4\xB8\xAD\xE6\x96\x87"),
            (Words{"caf\xC3\xA9", " \xE4\xB8\xAD\xE6\x96\x87"}));
  EXPECT_EQ(split(" ?! ,"), (Words{" ?!", " ,"}));
  EXPECT_TRUE(split("").empty());
}

// Every code point against what HF's regex engine decided
// (bpe_char_classes.txt, written by tools/gen_bpe_golden.py).
TEST(BpeSplit, EveryCodePointClassedAsHuggingFace) {
  std::ifstream in(kDataDir + "/bpe_char_classes.txt");
  ASSERT_TRUE(in);
  std::vector<SplitClass> expected(0x110000, SplitClass::kOther);
  std::string first, last, cls;
  size_t lines = 0;
  while (in >> first >> last >> cls) {
    ++lines;
    const SplitClass k = cls == "L"   ? SplitClass::kLetter
                         : cls == "N" ? SplitClass::kNumber
                                      : SplitClass::kSpace;
    for (auto cp = std::stoul(first, nullptr, 16); cp <= std::stoul(last, nullptr, 16); ++cp)
      expected[cp] = k;
  }
  EXPECT_GT(lines, 500u);
  size_t mismatches = 0;
  for (char32_t cp = 0; cp < 0x110000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    if (detail::split_class(cp) == expected[cp]) continue;
    if (++mismatches <= 20) {
      ADD_FAILURE() << "U+" << std::hex << static_cast<uint32_t>(cp) << ": got "
                    << static_cast<int>(detail::split_class(cp)) << ", HF " << static_cast<int>(expected[cp]);
    }
  }
  EXPECT_EQ(mismatches, 0u);
}

TEST(BpeBytes, Gpt2Alphabet) {
  EXPECT_EQ(detail::byte_to_unicode('a'), U'a');
  EXPECT_EQ(detail::byte_to_unicode('!'), U'!');
  EXPECT_EQ(detail::byte_to_unicode(0), char32_t{0x100});
  EXPECT_EQ(detail::byte_to_unicode(' '), char32_t{0x120});   // "Ġ"
  EXPECT_EQ(detail::byte_to_unicode('\n'), char32_t{0x10A});  // "Ċ"
  EXPECT_EQ(detail::byte_to_unicode(0xAD), char32_t{0x143});  // the soft hyphen is not printable
  EXPECT_EQ(detail::byte_to_unicode(0xFF), char32_t{0xFF});
  EXPECT_EQ(detail::byte_to_unicode_utf8(' '), "\xC4\xA0");
  for (int b = 0; b < 256; ++b)
    EXPECT_EQ(detail::unicode_to_byte(detail::byte_to_unicode(static_cast<uint8_t>(b))), b);
  EXPECT_EQ(detail::unicode_to_byte(0x200), -1);
}

// A vocabulary of the 256 byte symbols, then the merged tokens.
BpeConfig tiny_config(const std::vector<std::pair<std::string, std::string>>& merges) {
  BpeConfig c;
  for (int b = 0; b < 256; ++b) {
    c.vocab.emplace_back(std::string(detail::byte_to_unicode_utf8(static_cast<uint8_t>(b))), b);
  }
  for (const auto& [a, b] : merges) {
    c.vocab.emplace_back(a + b, static_cast<int32_t>(c.vocab.size()));
    c.merges.emplace_back(a, b);
  }
  const int32_t base = static_cast<int32_t>(c.vocab.size());
  for (const char* s : {"<s>", "<pad>", "</s>", "<mask>"}) {
    c.vocab.emplace_back(s, static_cast<int32_t>(c.vocab.size()));
    c.added_tokens.push_back(AddedToken{s, static_cast<int32_t>(c.vocab.size() - 1), false,
                                        std::string(s) == "<mask>", false, false, true});
  }
  c.prefix_ids = {base};
  c.suffix_ids = {base + 2};
  c.pad_id = base + 1;
  c.max_length = 0;
  return c;
}

std::vector<int32_t> ids_of(const BpeTokenizer& t, std::string_view text) {
  auto r = t.encode(text);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : std::vector<int32_t>{};
}

TEST(BpeMerges, LowestRankFirstThenLeftmost) {
  // "abc": (b, c) ranks before (a, b), so "a" + "bc" even though "ab" + "c"
  // would also spell a token.
  auto t = BpeTokenizer::create(tiny_config({{"b", "c"}, {"a", "b"}, {"ab", "c"}}));
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  // Ids: bytes 0-255, "bc" 256, "ab" 257, "abc" 258, <s> 259, </s> 261.
  EXPECT_EQ(ids_of(**t, "abc"), (std::vector<int32_t>{259, 'a', 256, 261}));
  EXPECT_EQ(ids_of(**t, "ab"), (std::vector<int32_t>{259, 257, 261}));
  // "aaa" with one merge (a, a): the leftmost pair merges first.
  auto u = BpeTokenizer::create(tiny_config({{"a", "a"}}));
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(ids_of(**u, "aaa"), (std::vector<int32_t>{257, 256, 'a', 259}));
  EXPECT_EQ(ids_of(**u, "aaaa"), (std::vector<int32_t>{257, 256, 256, 259}));
  // Bytes outside ASCII are symbols of the byte alphabet: é is C3 A9.
  EXPECT_EQ(ids_of(**u, "\xC3\xA9"), (std::vector<int32_t>{257, 0xC3, 0xA9, 259}));
}

TEST(BpeAddedTokens, MaskTakesTheSpaceBeforeIt) {
  auto t = BpeTokenizer::create(tiny_config({{"Ġ", "b"}}));
  ASSERT_TRUE(t.ok());
  const int32_t mask = 260, space_b = 256;
  EXPECT_EQ(ids_of(**t, "a <mask> b"), (std::vector<int32_t>{257, 'a', mask, space_b, 259}));
  EXPECT_EQ(ids_of(**t, "a<mask>b"), (std::vector<int32_t>{257, 'a', mask, 'b', 259}));
  // <s> has no lstrip: the space stays a word of its own.
  EXPECT_EQ(ids_of(**t, "a <s>"), (std::vector<int32_t>{257, 'a', ' ', 257, 259}));
  EXPECT_EQ(ids_of(**t, ""), (std::vector<int32_t>{257, 259}));
}

TEST(BpeTruncation, KeepsTheFirstTextIdsAndTheSpecialTokens) {
  BpeConfig c = tiny_config({});
  c.max_length = 5;
  auto t = BpeTokenizer::create(c);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(ids_of(**t, "abcdefgh"), (std::vector<int32_t>{256, 'a', 'b', 'c', 258}));
  EXPECT_EQ(ids_of(**t, "ab"), (std::vector<int32_t>{256, 'a', 'b', 258}));
  EXPECT_EQ((*t)->special_tokens(), 2);
  c.max_length = 1;
  auto bad = BpeTokenizer::create(c);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(BpeEncode, InvalidUtf8NamesTheByte) {
  auto t = BpeTokenizer::create(tiny_config({}));
  ASSERT_TRUE(t.ok());
  auto r = (*t)->encode("ab\xFF");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_NE(r.status().message().find("byte 2"), std::string::npos) << r.status().to_string();
}

// The two committed tokenizer.json files, against the ids HF gave.
TEST(BpeTokenizerJson, TinyTrainedTokenizersMatchHuggingFace) {
  std::ifstream in(kDataDir + "/tiny_bpe_expected.jsonl");
  ASSERT_TRUE(in);
  std::map<std::string, std::unique_ptr<BpeTokenizer>> toks;
  std::string line;
  size_t cases = 0, mismatches = 0;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    const std::string file = j.at("f").get<std::string>();
    if (!toks.count(file)) {
      const std::string path = kDataDir + "/" + file;
      auto root = nlohmann::json::parse(read_file(path).value());
      auto t = bpe_from_tokenizer_json(root, path, 0);
      ASSERT_TRUE(t.ok()) << t.status().to_string();
      toks[file] = std::move(t).value();
    }
    ++cases;
    const auto got = ids_of(*toks[file], j.at("t").get<std::string>());
    if (got != j.at("ids").get<std::vector<int32_t>>() && ++mismatches <= 10) {
      ADD_FAILURE() << file << ": " << j.at("t").dump() << "\n  expected " << j.at("ids").dump()
                    << "\n  got      " << nlohmann::json(got).dump();
    }
  }
  EXPECT_EQ(toks.size(), 2u);
  EXPECT_GE(cases, 100u);
  EXPECT_EQ(mismatches, 0u);
  EXPECT_EQ(toks.at("tiny_bpe_tokenizer.json")->max_length(), 24);  // the file's truncation
  EXPECT_EQ(toks.at("tiny_bpe_tokenizer.json")->special_tokens(), 3);
}

Status load_error(const nlohmann::json& root) {
  auto t = bpe_from_tokenizer_json(root, "bad.json", 512);
  return t.ok() ? Status() : t.status();
}

TEST(BpeTokenizerJson, RefusesWhatItDoesNotHandleByName) {
  const auto root = nlohmann::json::parse(read_file(kDataDir + "/tiny_bpe_tokenizer.json").value());
  struct Bad {
    const char* pointer;
    nlohmann::json value;
    StatusCode code;
    const char* says;
  };
  const Bad cases[] = {
      {"/model/type", "WordPiece", StatusCode::kUnsupported, "model type 'WordPiece'"},
      {"/model/dropout", 0.1, StatusCode::kUnsupported, "model.dropout"},
      {"/model/byte_fallback", true, StatusCode::kUnsupported, "byte_fallback"},
      {"/model/ignore_merges", true, StatusCode::kUnsupported, "ignore_merges"},
      {"/normalizer", {{"type", "NFKC"}}, StatusCode::kUnsupported, "normalizer 'NFKC'"},
      {"/pre_tokenizer", {{"type", "Whitespace"}}, StatusCode::kUnsupported, "pre_tokenizer 'Whitespace'"},
      {"/post_processor", {{"type", "Foo"}}, StatusCode::kUnsupported, "post_processor type 'Foo'"},
      {"/model/merges/3", "a b c", StatusCode::kCorruption, "model.merges: entry 3"},
      {"/model/merges/4", nlohmann::json::array({"zzzz", "q"}), StatusCode::kCorruption,
       "'zzzz' is not in the vocab"},
      {"/model/vocab/Hello", "x", StatusCode::kCorruption, "token 'Hello'"},
      {"/added_tokens/4/id", -1, StatusCode::kCorruption, "added_tokens[4]"},
  };
  for (const Bad& b : cases) {
    nlohmann::json j = root;
    j[nlohmann::json::json_pointer(b.pointer)] = b.value;
    const Status s = load_error(j);
    EXPECT_EQ(s.code(), b.code) << b.pointer << ": " << s.to_string();
    EXPECT_NE(s.message().find("bad.json"), std::string::npos) << s.to_string();
    EXPECT_NE(s.message().find(b.says), std::string::npos) << b.pointer << ": " << s.to_string();
  }
  nlohmann::json no_merges = root;
  no_merges["model"].erase("merges");
  EXPECT_NE(load_error(no_merges).message().find("model.merges: missing"), std::string::npos);
}

TEST(BpeFiles, BadFilesNameTheFileAndEntry) {
  const std::string dir = testing::scratch_dir("bpe_files");
  const auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = dir + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  };
  const std::string good_vocab =
      write("vocab.json", R"({"<s>":0,"<pad>":1,"</s>":2,"<unk>":3,"a":4,"b":5,"ab":6,"<mask>":7})");
  const std::string good_merges = write("merges.txt", "#version: 0.2\na b\n");
  auto ok = BpeTokenizer::load_files(good_vocab, good_merges, 512);
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  // No "Ġ" in this vocabulary and no unk token: the space byte is dropped, as HF does.
  EXPECT_EQ(ids_of(**ok, "ab a<mask>"), (std::vector<int32_t>{0, 6, 4, 7, 2}));

  auto missing = BpeTokenizer::load_files(good_vocab, dir + "/nope.txt", 512);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("nope.txt"), std::string::npos) << missing.status().to_string();

  auto malformed = BpeTokenizer::load_files(write("bad.json", "{\"a\": 1,"), good_merges, 512);
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.status().code(), StatusCode::kCorruption);
  EXPECT_NE(malformed.status().message().find("bad.json"), std::string::npos);

  auto bad_id = BpeTokenizer::load_files(write("neg.json", R"({"<s>":0,"x":-4})"), good_merges, 512);
  ASSERT_FALSE(bad_id.ok());
  EXPECT_NE(bad_id.status().message().find("neg.json: token 'x'"), std::string::npos)
      << bad_id.status().to_string();

  auto bad_line = BpeTokenizer::load_files(good_vocab, write("m3.txt", "#version: 0.2\na b\nab\n"), 512);
  ASSERT_FALSE(bad_line.ok());
  EXPECT_NE(bad_line.status().message().find("m3.txt: line 3"), std::string::npos)
      << bad_line.status().to_string();

  auto unknown = BpeTokenizer::load_files(good_vocab, write("m4.txt", "a c\n"), 512);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("m4.txt: merges: rank 0"), std::string::npos)
      << unknown.status().to_string();

  auto no_mask = BpeTokenizer::load_files(
      write("nomask.json", R"({"<s>":0,"<pad>":1,"</s>":2,"<unk>":3,"a":4})"), write("empty.txt", ""), 512);
  ASSERT_FALSE(no_mask.ok());
  EXPECT_NE(no_mask.status().message().find("'<mask>'"), std::string::npos) << no_mask.status().to_string();
}

}  // namespace
}  // namespace infercost::text
