#include <gtest/gtest.h>

#include "core/json_text.h"
#include "core/utf8.h"

namespace infercost {
namespace {

TEST(Utf8, FindsTheFirstInvalidByte) {
  constexpr auto npos = std::string_view::npos;
  EXPECT_EQ(find_invalid_utf8(""), npos);
  EXPECT_EQ(find_invalid_utf8("plain ascii, longer than eight bytes"), npos);
  EXPECT_EQ(find_invalid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x82"), npos);  // é € 😂
  EXPECT_EQ(find_invalid_utf8("abcdefghij\xFF"), 10u);
  EXPECT_EQ(find_invalid_utf8("ab\xC3"), 2u);              // truncated sequence
  EXPECT_EQ(find_invalid_utf8("ab\xC0\xAF"), 2u);          // overlong '/'
  EXPECT_EQ(find_invalid_utf8("x\xED\xA0\x80"), 1u);       // surrogate U+D800
  EXPECT_EQ(find_invalid_utf8("\xF4\x90\x80\x80"), 0u);    // above U+10FFFF
  EXPECT_EQ(find_invalid_utf8("\xE2\x82z"), 0u);           // bad continuation
  EXPECT_TRUE(is_valid_utf8("\xE4\xB8\xAD\xE6\x96\x87"));  // 中文
  EXPECT_FALSE(is_valid_utf8(std::string_view("\x80", 1)));
}

TEST(JsonText, StringsPassUtf8ThroughAndBytesEscapeIt) {
  std::string out;
  append_json_string(out, "a\"b\\c\n\x01 \xC3\xA9");
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\n\\u0001 \xC3\xA9\"");
  out.clear();
  append_json_bytes(out, "a\"\xC3\xA9\xFF");
  EXPECT_EQ(out, "\"a\\\"\\u00c3\\u00a9\\u00ff\"");
}

// Nesting is bounded before anything parses a document: the offset of the
// first bracket too deep is named; strings and escaped quotes do not count.
TEST(JsonText, NestingIsBoundedBeforeParsing) {
  EXPECT_TRUE(check_json_nesting(R"({"a":[{"b":[1,2]}],"c":"[[[[{{{{"})", "x.json", 4).ok());
  EXPECT_TRUE(check_json_nesting(R"({"a":"\"[[[[[["})", "x.json", 1).ok());
  const std::string deep = std::string(50000, '[') + std::string(50000, ']');
  Status s = check_json_nesting(deep, "tokenizer.json");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_EQ(s.message(), "tokenizer.json: byte 128: JSON nests deeper than 128 levels of objects and arrays");
  EXPECT_TRUE(check_json_nesting(std::string(kMaxJsonNesting, '{'), "x").ok());
  // A real tokenizer.json nests a normalizer Sequence a few levels deep.
  std::string sequences;
  for (int i = 0; i < 5; ++i) sequences += R"({"type":"Sequence","normalizers":[)";
  EXPECT_TRUE(check_json_nesting(sequences, "x").ok());
}

}  // namespace
}  // namespace infercost
