#include "infercost/io/jsonl_reader.h"

#include <gtest/gtest.h>

#include "test_utils.h"

namespace infercost::io {
namespace {

using infercost::testing::TempDir;

Result<RowBatch> read_all(const std::string& path, OnBadRow policy = OnBadRow::kFail, size_t chunk = 3,
                          int64_t* skipped = nullptr) {
  INFERCOST_ASSIGN_OR_RETURN(auto reader, JsonlReader::open(path, "full_text", policy));
  RowBatch rows;
  for (;;) {
    INFERCOST_ASSIGN_OR_RETURN(size_t n, reader->next(chunk, rows));
    if (n == 0) break;
  }
  if (rows.is_null.size() != rows.texts.size()) return internal_error("is_null does not match the rows");
  if (skipped) *skipped = reader->rows_skipped();
  return rows;
}

TEST(JsonlReader, ReadsRowsInOrderSkippingBlankLines) {
  TempDir dir;
  std::string path = dir.write("in.jsonl",
                               "{\"id\":1,\"full_text\":\"hello\"}\n\n"
                               "{\"full_text\":\"caf\\u00e9 \\\"quoted\\\"\\nnew line\",\"x\":[1,2]}\r\n"
                               "  \n{\"full_text\":\"\"}\n{\"full_text\":\"no newline at end\"}");
  auto rows = read_all(path);
  ASSERT_TRUE(rows.ok()) << rows.status().to_string();
  ASSERT_EQ(rows->size(), 4u);
  EXPECT_EQ(rows->texts[0], "hello");
  EXPECT_EQ(rows->texts[1], "caf\xc3\xa9 \"quoted\"\nnew line");
  EXPECT_EQ(rows->texts[2], "");
  EXPECT_EQ(rows->texts[3], "no newline at end");
  EXPECT_EQ(rows->lines, (std::vector<int64_t>{1, 3, 5, 6}));
}

TEST(JsonlReader, MalformedJsonNamesFileAndLine) {
  TempDir dir;
  std::string path =
      dir.write("bad.jsonl", "{\"full_text\":\"ok\"}\n{\"full_text\":\"truncated\", \"a\": [1,\n");
  auto rows = read_all(path);
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), StatusCode::kCorruption);
  EXPECT_NE(rows.status().message().find(path + ": line 2: malformed JSON"), std::string::npos)
      << rows.status().message();
}

TEST(JsonlReader, MissingColumnInFirstObjectIsNotFound) {
  TempDir dir;
  auto missing = read_all(dir.write("a.jsonl", "\n{\"text\":\"x\",\"id\":2}\n{\"full_text\":\"y\"}\n"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(
      missing.status().message().find("a.jsonl: no column 'full_text' (the first object has: text, id)"),
      std::string::npos)
      << missing.status().message();
  // Later rows without the column are bad rows.
  auto later = read_all(dir.write("b.jsonl", "{\"full_text\":\"x\"}\n{\"text\":\"y\"}\n"));
  ASSERT_FALSE(later.ok());
  EXPECT_EQ(later.status().code(), StatusCode::kCorruption);
  EXPECT_NE(later.status().message().find("line 2: no column 'full_text'"), std::string::npos);
}

TEST(JsonlReader, NonStringColumnsAreBadRows) {
  TempDir dir;
  auto number = read_all(dir.write("b.jsonl", "{\"full_text\":\"x\"}\n{\"full_text\":12}\n"));
  ASSERT_FALSE(number.ok());
  EXPECT_EQ(number.status().code(), StatusCode::kCorruption);
  EXPECT_NE(number.status().message().find("line 2: column 'full_text' is a number"), std::string::npos)
      << number.status().message();
  auto array = read_all(dir.write("d.jsonl", "[\"full_text\"]\n"));
  ASSERT_FALSE(array.ok());
  EXPECT_NE(array.status().message().find("expected a JSON object, found an array"), std::string::npos);
}

TEST(JsonlReader, NullIsANullRow) {
  TempDir dir;
  auto rows =
      read_all(dir.write("c.jsonl", "{\"full_text\":null}\n{\"full_text\":\"x\"}\n{\"full_text\":null}\n"));
  ASSERT_TRUE(rows.ok()) << rows.status().to_string();
  EXPECT_EQ(rows->texts, (std::vector<std::string>{"", "x", ""}));
  EXPECT_EQ(rows->is_null, (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(rows->lines, (std::vector<int64_t>{1, 2, 3}));
}

TEST(JsonlReader, ValuesAsJsonRendersAnyValue) {
  TempDir dir;
  SourceOptions options;
  options.values_as_json = true;
  auto reader =
      JsonlReader::open(dir.write("v.jsonl",
                                  "{\"full_text\": \"a\\\"b\\u00e9\"}\n{\"full_text\": -7}\n"
                                  "{\"full_text\": [1, {\"k\": \"v\"}, null]}\n{\"full_text\": null}\n"
                                  "{\"full_text\": false}\n"),
                        options);
  ASSERT_TRUE(reader.ok()) << reader.status().to_string();
  RowBatch rows;
  auto n = (*reader)->next(10, rows);
  ASSERT_TRUE(n.ok()) << n.status().to_string();
  EXPECT_EQ(rows.texts,
            (std::vector<std::string>{"\"a\\\"b\xc3\xa9\"", "-7", "[1,{\"k\":\"v\"},null]", "", "false"}));
  EXPECT_EQ(rows.is_null, (std::vector<uint8_t>{0, 0, 0, 1, 0}));
  EXPECT_STREQ((*reader)->location_unit(), "line");
}

TEST(JsonlReader, ByteOrderMarkIsSkipped) {
  TempDir dir;
  auto rows = read_all(dir.write("bom.jsonl", "\xEF\xBB\xBF{\"full_text\":\"x\"}\n"));
  ASSERT_TRUE(rows.ok()) << rows.status().to_string();
  EXPECT_EQ(rows->texts, (std::vector<std::string>{"x"}));
}

TEST(JsonlReader, InvalidUtf8IsAnError) {
  TempDir dir;
  auto rows =
      read_all(dir.write("u.jsonl", "{\"full_text\":\"ok\"}\n{\"full_text\":\"bad \xff\xfe byte\"}\n"));
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), StatusCode::kCorruption);
  EXPECT_NE(rows.status().message().find("line 2: invalid UTF-8"), std::string::npos)
      << rows.status().message();
}

TEST(JsonlReader, SkipPolicyCountsBadRowsAndKeepsGoing) {
  TempDir dir;
  std::string path =
      dir.write("mixed.jsonl",
                "{\"full_text\":\"one\"}\nnot json\n{\"full_text\":3}\n{\"full_text\":\"two\"}\n"
                "{\"full_text\":\"\xc3\x28\"}\n{\"full_text\":\"three\"}\n");
  int64_t skipped = 0;
  auto rows = read_all(path, OnBadRow::kSkip, 2, &skipped);
  ASSERT_TRUE(rows.ok()) << rows.status().to_string();
  EXPECT_EQ(rows->texts, (std::vector<std::string>{"one", "two", "three"}));
  EXPECT_EQ(rows->lines, (std::vector<int64_t>{1, 4, 6}));
  EXPECT_EQ(skipped, 3);
}

TEST(JsonlReader, MissingFileIsNotFound) {
  auto reader = JsonlReader::open("/nonexistent/infercost.jsonl", "full_text", OnBadRow::kFail);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), StatusCode::kNotFound);
  EXPECT_NE(reader.status().message().find("/nonexistent/infercost.jsonl"), std::string::npos);
}

TEST(JsonlReader, EmptyFileHasNoRows) {
  TempDir dir;
  auto rows = read_all(dir.write("empty.jsonl", ""));
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 0u);
}

}  // namespace
}  // namespace infercost::io
