// RowSource::position() and seek(): a reading continued from any position an
// earlier reading reported gives exactly the rows that reading gave next.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/row_source.h"
#include "parquet/writer.h"
#include "test_utils.h"

namespace infercost::io {
namespace {

using infercost::testing::TempDir;

struct Read {
  std::vector<std::string> texts;
  std::vector<int64_t> lines;
  std::vector<SourcePosition> positions;  // after each chunk
};

Read read_from(const std::string& path, InputFormat format, const SourceOptions& options,
               const SourcePosition* at, size_t chunk) {
  Read r;
  auto opened = open_row_source(path, format, options);
  EXPECT_TRUE(opened.ok()) << opened.status().to_string();
  if (!opened.ok()) return r;
  std::unique_ptr<RowSource> source = std::move(*opened);
  if (at) {
    Status s = source->seek(*at);
    EXPECT_TRUE(s.ok()) << s.to_string();
  }
  for (;;) {
    RowBatch batch;
    auto n = source->next(chunk, batch);
    EXPECT_TRUE(n.ok()) << n.status().to_string();
    if (!n.ok() || *n == 0) break;
    for (size_t i = 0; i < batch.size(); ++i) {
      r.texts.push_back(batch.is_null[i] ? "<null>" : batch.texts[i]);
      r.lines.push_back(batch.lines[i]);
    }
    r.positions.push_back(source->position());
  }
  return r;
}

// Reads `path` whole in chunks of `chunk` rows, then again from every
// position the first reading reported: each continuation is the tail of the
// whole, and the position counts the rows consumed (bad ones included).
void expect_seeks_continue(const std::string& path, InputFormat format, SourceOptions options = {},
                           size_t chunk = 2, int64_t bad_rows = 0) {
  const Read whole = read_from(path, format, options, nullptr, chunk);
  ASSERT_FALSE(whole.texts.empty());
  ASSERT_FALSE(whole.positions.empty());
  EXPECT_EQ(whole.positions.back().rows, static_cast<int64_t>(whole.texts.size()) + bad_rows);
  size_t before = 0;
  for (size_t k = 0; k < whole.positions.size(); ++k) {
    before += std::min(chunk, whole.texts.size() - before);
    SCOPED_TRACE("from position " + std::to_string(k) + " (row " + std::to_string(whole.positions[k].rows) +
                 ")");
    const Read rest = read_from(path, format, options, &whole.positions[k], chunk);
    ASSERT_EQ(rest.texts.size(), whole.texts.size() - before);
    for (size_t i = 0; i < rest.texts.size(); ++i) {
      EXPECT_EQ(rest.texts[i], whole.texts[before + i]);
      EXPECT_EQ(rest.lines[i], whole.lines[before + i]);
    }
    if (!rest.positions.empty()) {
      EXPECT_EQ(rest.positions.back().rows, whole.positions.back().rows);
    }
  }
}

TEST(Seek, JsonLinesContinueAtTheNextLine) {
  TempDir dir;
  const std::string path = dir.write(
      "a.jsonl",
      "\xEF\xBB\xBF{\"full_text\": \"one\"}\n\n{\"full_text\": null}\n{\"full_text\": \"three\"}\r\n"
      "not json\n{\"full_text\": \"f\\u00fcnf\"}\n{\"full_text\": \"six\"}\n{\"full_text\": \"7\"}");
  SourceOptions skip;
  skip.on_bad_row = OnBadRow::kSkip;
  expect_seeks_continue(path, InputFormat::kJsonl, skip, 2, 1);
  expect_seeks_continue(path, InputFormat::kJsonl, skip, 1, 1);
}

TEST(Seek, CsvContinuesAfterTheHeaderAtARecordThatSpansLines) {
  TempDir dir;
  const std::string path =
      dir.write("a.csv",
                "id,full_text\n1,one\n2,\"two\nlines\"\n3,\"say \"\"three\"\"\"\n\n4,four\n"
                "5,five\n6,six\n");
  expect_seeks_continue(path, InputFormat::kCsv, {}, 2);
  expect_seeks_continue(path, InputFormat::kCsv, {}, 3);
}

TEST(Seek, JsonArraysContinueAfterAnElement) {
  TempDir dir;
  const std::string path = dir.write("a.json",
                                     "[\n {\"full_text\": \"one\"},\n {\"full_text\": \"[two]\"}, "
                                     "{\"full_text\": null},\n {\"full_text\": \"four\"},"
                                     "{\"full_text\": \"five\"}\n]\n");
  expect_seeks_continue(path, InputFormat::kJsonArray, {}, 2);
  expect_seeks_continue(path, InputFormat::kJsonArray, {}, 1);
}

TEST(Seek, ParquetSkipsWholeRowGroupsThenRows) {
  TempDir dir;
  const std::string path = dir.file("a.parquet");
  parquet::WriterOptions options;
  options.row_group_rows = 7;
  auto writer = parquet::ParquetWriter::create(path,
                                               {{"id", parquet::ColumnSpec::Kind::kInt64, false},
                                                {"full_text", parquet::ColumnSpec::Kind::kString, true}},
                                               options);
  ASSERT_TRUE(writer.ok()) << writer.status().to_string();
  for (int i = 0; i < 40; ++i) {
    (*writer)->append_int64(0, i);
    if (i % 9 == 4) {
      (*writer)->append_null(1);
    } else {
      (*writer)->append_string(1, "row " + std::to_string(i));
    }
    ASSERT_TRUE((*writer)->end_row().ok());
  }
  ASSERT_TRUE((*writer)->close().ok());
  for (size_t chunk : {3, 7, 10}) {
    SCOPED_TRACE("chunks of " + std::to_string(chunk));
    expect_seeks_continue(path, InputFormat::kParquet, {}, chunk);
  }
}

TEST(Seek, PositionsThatCannotBeOfTheFileAreRefused) {
  TempDir dir;
  const std::string jsonl = dir.write("a.jsonl", "{\"full_text\": \"one\"}\n{\"full_text\": \"two\"}\n");
  auto source = open_row_source(jsonl, InputFormat::kJsonl, {});
  ASSERT_TRUE(source.ok());
  Status mid_line = (*source)->seek({1, 5, 1});
  EXPECT_EQ(mid_line.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(mid_line.message().find(jsonl), std::string::npos) << mid_line.message();
  EXPECT_EQ((*source)->seek({1, 1000, 1}).code(), StatusCode::kInvalidArgument);
  const std::string csv = dir.write("a.csv", "full_text\none\ntwo\n");
  auto c = open_row_source(csv, InputFormat::kCsv, {});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->seek({1, 3, 1}).code(), StatusCode::kInvalidArgument) << "inside the header";
}

}  // namespace
}  // namespace infercost::io
