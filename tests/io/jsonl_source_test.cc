// The JSON-lines row source (open_row_source with InputFormat::kJsonl).
#include <gtest/gtest.h>

#include "io/row_source.h"
#include "source_test_util.h"
#include "test_utils.h"

namespace infercost::io {
namespace {

using infercost::testing::TempDir;
using test::contains;
using test::read_all;

Result<test::ReadResult> read_lines(const std::string& path, SourceOptions options = {}, size_t chunk = 3) {
  return read_all(path, InputFormat::kJsonl, options, chunk);
}

TEST(JsonlSource, ReadsRowsInOrderSkippingBlankLines) {
  TempDir dir;
  std::string path = dir.write("in.jsonl",
                               "{\"id\":1,\"full_text\":\"hello\"}\n\n"
                               "{\"full_text\":\"caf\\u00e9 \\\"quoted\\\"\\nnew line\",\"x\":[1,2]}\r\n"
                               "  \n{\"full_text\":\"\"}\n{\"full_text\":\"no newline at end\"}");
  auto r = read_lines(path);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->rows.texts,
            (std::vector<std::string>{"hello", "caf\xc3\xa9 \"quoted\"\nnew line", "", "no newline at end"}));
  EXPECT_EQ(r->rows.lines, (std::vector<int64_t>{1, 3, 5, 6}));
  EXPECT_EQ(r->bytes_read, r->bytes_total);
}

TEST(JsonlSource, MalformedJsonNamesFileAndLine) {
  TempDir dir;
  std::string path =
      dir.write("bad.jsonl", "{\"full_text\":\"ok\"}\n{\"full_text\":\"truncated\", \"a\": [1,\n");
  auto r = read_lines(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_TRUE(contains(r.status(), path + ": line 2: malformed JSON")) << r.status().message();
}

TEST(JsonlSource, MissingColumnInFirstObjectIsNotFound) {
  TempDir dir;
  auto missing = read_lines(dir.write("a.jsonl", "\n{\"text\":\"x\",\"id\":2}\n{\"full_text\":\"y\"}\n"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(contains(missing.status(), "a.jsonl: no column 'full_text' (the first object has: text, id)"))
      << missing.status().message();
  // Later rows without the column are bad rows.
  auto later = read_lines(dir.write("b.jsonl", "{\"full_text\":\"x\"}\n{\"text\":\"y\"}\n"));
  ASSERT_FALSE(later.ok());
  EXPECT_EQ(later.status().code(), StatusCode::kCorruption);
  EXPECT_TRUE(contains(later.status(), "line 2: no column 'full_text'")) << later.status().message();
}

TEST(JsonlSource, NonStringColumnsAreBadRows) {
  TempDir dir;
  auto number = read_lines(dir.write("b.jsonl", "{\"full_text\":\"x\"}\n{\"full_text\":12}\n"));
  ASSERT_FALSE(number.ok());
  EXPECT_EQ(number.status().code(), StatusCode::kCorruption);
  EXPECT_TRUE(contains(number.status(), "line 2: column 'full_text' is a number"))
      << number.status().message();
  auto array = read_lines(dir.write("d.jsonl", "[\"full_text\"]\n"));
  ASSERT_FALSE(array.ok());
  EXPECT_TRUE(contains(array.status(), "expected a JSON object, found an array")) << array.status().message();
}

TEST(JsonlSource, NullIsANullRow) {
  TempDir dir;
  auto r =
      read_lines(dir.write("c.jsonl", "{\"full_text\":null}\n{\"full_text\":\"x\"}\n{\"full_text\":null}\n"));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->rows.texts, (std::vector<std::string>{"", "x", ""}));
  EXPECT_EQ(r->rows.is_null, (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(r->rows.lines, (std::vector<int64_t>{1, 2, 3}));
}

TEST(JsonlSource, ValuesAsJsonRendersAnyValue) {
  TempDir dir;
  const std::string path = dir.write("v.jsonl",
                                     "{\"full_text\": \"a\\\"b\\u00e9\"}\n{\"full_text\": -7}\n"
                                     "{\"full_text\": [1, {\"k\": \"v\"}, null]}\n{\"full_text\": null}\n"
                                     "{\"full_text\": false}\n");
  auto r = read_lines(path, test::json_options(), 10);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->rows.texts,
            (std::vector<std::string>{"\"a\\\"b\xc3\xa9\"", "-7", "[1,{\"k\":\"v\"},null]", "", "false"}));
  EXPECT_EQ(r->rows.is_null, (std::vector<uint8_t>{0, 0, 0, 1, 0}));
  auto source = open_row_source(path, InputFormat::kJsonl, {});
  ASSERT_TRUE(source.ok()) << source.status().to_string();
  EXPECT_STREQ((*source)->location_unit(), "line");
}

TEST(JsonlSource, ByteOrderMarkIsSkipped) {
  TempDir dir;
  auto r = read_lines(dir.write("bom.jsonl", "\xEF\xBB\xBF{\"full_text\":\"x\"}\n"));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->rows.texts, (std::vector<std::string>{"x"}));
  EXPECT_EQ(r->rows.lines, (std::vector<int64_t>{1}));
}

TEST(JsonlSource, InvalidUtf8IsAnError) {
  TempDir dir;
  auto r =
      read_lines(dir.write("u.jsonl", "{\"full_text\":\"ok\"}\n{\"full_text\":\"bad \xff\xfe byte\"}\n"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_TRUE(contains(r.status(), "line 2: invalid UTF-8")) << r.status().message();
}

TEST(JsonlSource, SkipPolicyCountsBadRowsAndKeepsGoing) {
  TempDir dir;
  std::string path =
      dir.write("mixed.jsonl",
                "{\"full_text\":\"one\"}\nnot json\n{\"full_text\":3}\n{\"full_text\":\"two\"}\n"
                "{\"full_text\":\"\xc3\x28\"}\n{\"full_text\":\"three\"}\n");
  auto r = read_lines(path, test::skip_options(), 2);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->rows.texts, (std::vector<std::string>{"one", "two", "three"}));
  EXPECT_EQ(r->rows.lines, (std::vector<int64_t>{1, 4, 6}));
  EXPECT_EQ(r->skipped, 3);
  EXPECT_TRUE(contains(r->first_skip, path + ": line 2: malformed JSON")) << r->first_skip.message();
}

TEST(JsonlSource, EmptyFileHasNoRows) {
  TempDir dir;
  auto r = read_lines(dir.write("empty.jsonl", ""));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->rows.size(), 0u);
  EXPECT_EQ(r->bytes_total, 0u);
}

}  // namespace
}  // namespace infercost::io
