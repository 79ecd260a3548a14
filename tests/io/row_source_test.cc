#include "io/row_source.h"

#include <gtest/gtest.h>

#include "source_test_util.h"
#include "test_utils.h"

namespace infercost::io {
namespace {

using infercost::testing::TempDir;
using test::read_all;

TEST(InputFormat, FromExtension) {
  TempDir dir;
  EXPECT_EQ(*input_format_for("a.jsonl", ""), InputFormat::kJsonl);
  EXPECT_EQ(*input_format_for("a.NDJSON", ""), InputFormat::kJsonl);
  EXPECT_EQ(*input_format_for("a.Csv", ""), InputFormat::kCsv);
  EXPECT_EQ(*input_format_for("a.parquet", ""), InputFormat::kParquet);
  EXPECT_EQ(*input_format_for("a.parq", ""), InputFormat::kParquet);
  EXPECT_EQ(*input_format_for("a.pq", ""), InputFormat::kParquet);
  auto unknown = input_format_for("data.txt", "");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("data.txt"), std::string::npos);
  EXPECT_NE(unknown.status().message().find(".parquet"), std::string::npos);
}

TEST(InputFormat, JsonIsSniffed) {
  TempDir dir;
  EXPECT_EQ(*input_format_for(dir.write("a.json", "  \n\t[{\"full_text\":\"x\"}]"), ""),
            InputFormat::kJsonArray);
  EXPECT_EQ(*input_format_for(dir.write("b.json", "\xEF\xBB\xBF[]"), ""), InputFormat::kJsonArray);
  EXPECT_EQ(*input_format_for(dir.write("c.json", "\n{\"full_text\":\"x\"}\n"), ""), InputFormat::kJsonl);
  EXPECT_EQ(*input_format_for(dir.write("d.json", ""), ""), InputFormat::kJsonl);
  std::string spaces(10000, ' ');
  EXPECT_EQ(*input_format_for(dir.write("e.json", spaces + "["), ""), InputFormat::kJsonArray);
  // --input-format json sniffs too, whatever the extension.
  EXPECT_EQ(*input_format_for(dir.write("f.txt", "[]"), "json"), InputFormat::kJsonArray);
  EXPECT_EQ(*input_format_for(dir.write("g.txt", "{}"), "JSON"), InputFormat::kJsonl);
  auto missing = input_format_for(dir.file("missing.json"), "");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(InputFormat, FlagWinsOverExtension) {
  EXPECT_EQ(*input_format_for("a.csv", "jsonl"), InputFormat::kJsonl);
  EXPECT_EQ(*input_format_for("a.jsonl", "csv"), InputFormat::kCsv);
  EXPECT_EQ(*input_format_for("a", "parquet"), InputFormat::kParquet);
  auto bad = input_format_for("a.csv", "xml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("'xml'"), std::string::npos);
}

TEST(InputFormat, Names) {
  EXPECT_EQ(input_format_name(InputFormat::kJsonl), "jsonl");
  EXPECT_EQ(input_format_name(InputFormat::kJsonArray), "json");
  EXPECT_EQ(input_format_name(InputFormat::kCsv), "csv");
  EXPECT_EQ(input_format_name(InputFormat::kParquet), "parquet");
}

// The same rows in each text format read the same, nulls included.
TEST(RowSource, SameRowsFromEveryTextFormat) {
  TempDir dir;
  struct File {
    std::string name;
    std::string content;
  };
  const std::vector<File> files = {
      {"a.jsonl",
       "{\"full_text\":\"one, \\\"1\\\"\"}\n{\"full_text\":null}\n{\"full_text\":\"\"}\n"
       "{\"full_text\":\"caf\\u00e9\\nx\"}\n"},
      {"a.json",
       "[{\"full_text\":\"one, \\\"1\\\"\"},\n{\"full_text\":null},\n{\"full_text\":\"\"},\n"
       "{\"full_text\":\"caf\\u00e9\\nx\"}]\n"},
      {"a.csv", "full_text\n\"one, \"\"1\"\"\"\n\"\"\n\"caf\xc3\xa9\nx\"\n"},
  };
  for (const File& f : files) {
    std::string path = dir.write(f.name, f.content);
    auto format = input_format_for(path, "");
    ASSERT_TRUE(format.ok());
    auto r = read_all(path, *format);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    if (f.name == "a.csv") {
      // A one-column CSV cannot hold a null row: it would be a blank line.
      EXPECT_EQ(r->rows.texts, (std::vector<std::string>{"one, \"1\"", "", "caf\xc3\xa9\nx"}));
      continue;
    }
    EXPECT_EQ(r->rows.texts, (std::vector<std::string>{"one, \"1\"", "", "", "caf\xc3\xa9\nx"})) << f.name;
    EXPECT_EQ(r->rows.is_null, (std::vector<uint8_t>{0, 1, 0, 0})) << f.name;
  }
}

TEST(RowSource, MissingFileIsNotFoundForEveryFormat) {
  for (InputFormat format :
       {InputFormat::kJsonl, InputFormat::kJsonArray, InputFormat::kCsv, InputFormat::kParquet}) {
    auto source = open_row_source("/nonexistent/in.data", format, {});
    ASSERT_FALSE(source.ok());
    EXPECT_EQ(source.status().code(), StatusCode::kNotFound);
    EXPECT_NE(source.status().message().find("/nonexistent/in.data"), std::string::npos);
  }
}

TEST(RowSource, LocationUnitIsLine) {
  TempDir dir;
  auto source = open_row_source(dir.write("a.csv", "full_text\nx\n"), InputFormat::kCsv, {});
  ASSERT_TRUE(source.ok());
  EXPECT_STREQ((*source)->location_unit(), "line");
}

}  // namespace
}  // namespace infercost::io
