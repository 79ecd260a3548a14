// The added-token splitter against what HF tokenizers' AddedVocabulary does
// (tokenizers 0.23, added_vocabulary.rs; its own tests hold the lstrip and
// single_word cases reproduced here).
#include "text/added_tokens.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace infercost::text::detail {
namespace {

AddedToken token(std::string content, int32_t id) {
  AddedToken t;
  t.content = std::move(content);
  t.id = id;
  return t;
}

// "text|" for a stretch, "<id>|" for a token.
std::string cut(const AddedTokenSplitter& s, std::string_view text) {
  std::string out;
  s.split(
      text,
      [&](std::string_view piece, size_t offset) {
        EXPECT_EQ(text.substr(offset, piece.size()), piece);
        out += "'" + std::string(piece) + "'|";
      },
      [&](const AddedToken& t) { out += std::to_string(t.id) + "|"; });
  return out;
}

TEST(AddedTokens, CutsLeftmostLongestAndKeepsTheRest) {
  const AddedTokenSplitter s({token("<s>", 0), token("</s>", 2), token("<s>x", 9)});
  EXPECT_EQ(cut(s, "a<s>b</s>c"), "'a'|0|'b'|2|'c'|");
  EXPECT_EQ(cut(s, "<s>xy"), "9|'y'|");  // longest at the leftmost start
  EXPECT_EQ(cut(s, "<s></s>"), "0|2|");  // no empty stretches between or around
  EXPECT_EQ(cut(s, "plain"), "'plain'|");
  EXPECT_EQ(cut(s, "<s"), "'<s'|");
}

TEST(AddedTokens, AnEmptyTextIsOneEmptyStretch) {
  const AddedTokenSplitter s({token("<s>", 0)});
  EXPECT_EQ(cut(s, ""), "''|");
  EXPECT_EQ(cut(AddedTokenSplitter(), ""), "''|");
  EXPECT_EQ(cut(AddedTokenSplitter(), "abc"), "'abc'|");
}

TEST(AddedTokens, LstripAndRstripTakeTheWhitespaceBesideTheToken) {
  AddedToken mask = token("<mask>", 4);
  mask.lstrip = true;
  AddedToken sep = token("[SEP]", 5);
  sep.rstrip = true;
  const AddedTokenSplitter s({mask, sep});
  EXPECT_EQ(cut(s, "a <mask> b"), "'a'|4|' b'|");
  EXPECT_EQ(cut(s, "a \t\u3000<mask>"), "'a'|4|");  // any Unicode whitespace
  EXPECT_EQ(cut(s, "  <mask>"), "4|");
  EXPECT_EQ(cut(s, "a[SEP]  b"), "'a'|5|'b'|");
  // The spaces one token took are not taken again by the next.
  EXPECT_EQ(cut(s, "[SEP]  <mask>x"), "5|4|'x'|");
}

TEST(AddedTokens, SingleWordMatchesOnlyBetweenNonWordCharacters) {
  AddedToken yes = token("yes", 7);
  yes.single_word = true;
  const AddedTokenSplitter s({yes});
  EXPECT_EQ(cut(s, "yes"), "7|");
  EXPECT_EQ(cut(s, "say yes!"), "'say '|7|'!'|");
  EXPECT_EQ(cut(s, "yesterday"), "'yesterday'|");
  EXPECT_EQ(cut(s, "eyes yes"), "'eyes '|7|");
  EXPECT_EQ(cut(s, "\u00e9yes"), "'\u00e9yes'|");  // a letter beyond ASCII is a word character
}

TEST(AddedTokens, TheFirstOfTwoEqualContentsWins) {
  const AddedTokenSplitter s({token("<x>", 1), token("<x>", 2)});
  EXPECT_EQ(cut(s, "<x>"), "1|");
}

TEST(AddedTokens, ReadsTokenizerJsonEntries) {
  const auto j = nlohmann::json::parse(R"([
    {"id": 0, "content": "<s>", "single_word": false, "lstrip": false, "rstrip": false,
     "normalized": false, "special": true},
    {"id": 50264, "content": "<mask>", "lstrip": true, "normalized": false, "special": true},
    {"id": 7, "content": "plain"}])");
  auto tokens = read_added_tokens(j);
  ASSERT_TRUE(tokens.ok()) << tokens.status().to_string();
  ASSERT_EQ(tokens->size(), 3u);
  EXPECT_EQ((*tokens)[1].id, 50264);
  EXPECT_TRUE((*tokens)[1].lstrip);
  EXPECT_FALSE((*tokens)[1].rstrip);
  EXPECT_TRUE((*tokens)[1].special);
  EXPECT_FALSE((*tokens)[0].normalized);
  EXPECT_TRUE((*tokens)[2].normalized);  // HF's default
  EXPECT_FALSE((*tokens)[2].special);
}

TEST(AddedTokens, BadEntriesAreNamed) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"id": 0})", "added_tokens is not an array"},
      {R"([{"id": 0}])", "added_tokens[0]: 'content'"},
      {R"([{"id": 0, "content": "a"}, {"id": -1, "content": "b"}])", "added_tokens[1] ('b'): 'id'"},
      {R"([{"id": 0, "content": ""}])", "added_tokens[0]: 'content'"},
      {R"([{"id": 0, "content": "a", "lstrip": "yes"}])", "added_tokens[0] ('a'): 'lstrip'"},
  };
  for (const auto& [text, message] : cases) {
    auto r = read_added_tokens(nlohmann::json::parse(text));
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find(message), std::string::npos) << r.status().to_string();
  }
}

}  // namespace
}  // namespace infercost::text::detail
