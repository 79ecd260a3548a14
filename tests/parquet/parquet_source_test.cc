// The Parquet RowSource (src/io/parquet_source.cc) through open_row_source.
#include <gtest/gtest.h>

#include <fstream>

#include "io/row_source.h"
#include "parquet/reader_test_util.h"

namespace infercost {
namespace {

using parquet::PhysicalType;
using parquet::Repetition;
using parquet::testing::Chunk;
using parquet::testing::Column;
using Opt = std::optional<std::string>;

std::string write_file(const std::string& name, const std::string& bytes) {
  std::string path = std::string(INFERCOST_BINARY_DIR) + "/" + name;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

// full_text (optional UTF8) with a null and invalid UTF-8 in row 4; n (INT64).
std::string sample_path() {
  Chunk text0, text1, n0, n1;
  text0.bytes = parquet::testing::string_page({Opt("hello"), Opt(), Opt("w\xc3\xb6rld")});
  text0.num_values = 3;
  text1.bytes = parquet::testing::string_page({Opt(std::string("bad \xff byte")), Opt("last \"one\"")});
  text1.num_values = 2;
  n0.bytes = parquet::testing::int64_page({1, 2, 3});
  n0.num_values = 3;
  n1.bytes = parquet::testing::int64_page({4, 5});
  n1.num_values = 2;
  return write_file("parquet_source_test.parquet",
                    parquet::testing::assemble(
                        {Column{"full_text"}, Column{"n", PhysicalType::kInt64, Repetition::kRequired}},
                        {{text0, n0}, {text1, n1}}, {3, 2}));
}

Result<io::RowBatch> read_all(const std::string& path, const io::SourceOptions& options, size_t batch,
                              int64_t* skipped = nullptr) {
  INFERCOST_ASSIGN_OR_RETURN(auto source, io::open_row_source(path, io::InputFormat::kParquet, options));
  EXPECT_STREQ(source->location_unit(), "row");
  io::RowBatch all;
  for (;;) {
    INFERCOST_ASSIGN_OR_RETURN(size_t n, source->next(batch, all));
    if (n == 0) break;
  }
  EXPECT_GT(source->bytes_read(), 0u);
  EXPECT_GT(source->bytes_total(), 0u);
  if (skipped) *skipped = source->rows_skipped();
  return all;
}

TEST(ParquetSource, TextColumnWithNullsFailsOnInvalidUtf8NamingTheRow) {
  std::string path = sample_path();
  io::SourceOptions options;
  auto got = read_all(path, options, 2);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kCorruption);
  EXPECT_NE(got.status().message().find(path + ": row 4: column 'full_text'"), std::string::npos)
      << got.status().message();
}

TEST(ParquetSource, SkipsAndCountsInvalidUtf8Rows) {
  std::string path = sample_path();
  io::SourceOptions options;
  options.on_bad_row = OnBadRow::kSkip;
  int64_t skipped = 0;
  for (size_t batch : {1, 2, 10}) {
    auto got = read_all(path, options, batch, &skipped);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    EXPECT_EQ(got->texts, (std::vector<std::string>{"hello", "", "w\xc3\xb6rld", "last \"one\""}));
    EXPECT_EQ(got->is_null, (std::vector<uint8_t>{0, 1, 0, 0}));
    EXPECT_EQ(got->lines, (std::vector<int64_t>{1, 2, 3, 5}));
    EXPECT_EQ(skipped, 1);
  }
}

TEST(ParquetSource, ValuesAsJsonRendersAnyColumn) {
  std::string path = sample_path();
  io::SourceOptions options;
  options.values_as_json = true;
  options.column = "n";
  auto got = read_all(path, options, 3);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  EXPECT_EQ(got->texts, (std::vector<std::string>{"1", "2", "3", "4", "5"}));
  options.column = "full_text";
  got = read_all(path, options, 3);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  EXPECT_EQ(got->texts[0], "\"hello\"");
  EXPECT_EQ(got->texts[1], "");
  EXPECT_EQ(got->is_null[1], 1);
  EXPECT_EQ(got->texts[3], "\"bad \\u00ff byte\"");
  EXPECT_EQ(got->texts[4], "\"last \\\"one\\\"\"");
}

TEST(ParquetSource, RefusesNonTextAndMissingColumns) {
  std::string path = sample_path();
  io::SourceOptions options;
  options.column = "n";
  auto source = io::open_row_source(path, io::InputFormat::kParquet, options);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(source.status().message(), path + ": column 'n' is INT64, not a text column");
  options.column = "nope";
  source = io::open_row_source(path, io::InputFormat::kParquet, options);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().code(), StatusCode::kNotFound);
  EXPECT_NE(source.status().message().find("full_text, n"), std::string::npos) << source.status().message();
}

}  // namespace
}  // namespace infercost
