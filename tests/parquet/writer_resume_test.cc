// ParquetWriter::checkpoint() and create_resumable(): a file continued from
// a checkpoint, after a crash that left anything past it, reads back as the
// file written in one go (every row once, in order), with one footer.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/file.h"
#include "parquet/reader.h"
#include "parquet/writer.h"
#include "test_utils.h"
#include "writer_test_cases.h"

namespace infercost::parquet {
namespace {

using infercost::testing::TempDir;

const std::vector<ColumnSpec> kSchema = {{"text", ColumnSpec::Kind::kString, true},
                                         {"p", ColumnSpec::Kind::kFloat, true}};

Status add_rows(ParquetWriter& w, int from, int to) {
  for (int i = from; i < to; ++i) {
    if (i % 11 == 3) {
      w.append_null(0);
      w.append_null(1);
    } else {
      w.append_string(0, "row " + std::to_string(i % 17));  // repeats: dictionary pages
      w.append_double(1, i * 0.25);
    }
    INFERCOST_RETURN_IF_ERROR(w.end_row());
  }
  return Status();
}

// The text column, as read back ("<null>" for nulls).
std::vector<std::string> read_texts(const std::string& path) {
  std::vector<std::string> out;
  auto file = ParquetFile::open(path);
  EXPECT_TRUE(file.ok()) << file.status().to_string();
  if (!file.ok()) return out;
  auto reader = ColumnReader::open(*file, 0);
  EXPECT_TRUE(reader.ok());
  ColumnValues values;
  for (;;) {
    values.clear();
    auto n = (*reader)->next(100, values);
    EXPECT_TRUE(n.ok()) << n.status().to_string();
    if (!n.ok() || *n == 0) break;
    for (size_t i = 0; i < *n; ++i)
      out.push_back(values.valid[i] ? std::string(values.strings.at(i)) : "<null>");
  }
  return out;
}

TEST(WriterResume, AFileContinuedFromACheckpointReadsAsOneWrittenInOneGo) {
  TempDir dir;
  WriterOptions options;
  options.row_group_rows = 50;
  const std::string whole = dir.file("whole.parquet");
  {
    auto w = ParquetWriter::create(whole, kSchema, options);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(add_rows(**w, 0, 300).ok());
    ASSERT_TRUE((*w)->close().ok());
  }
  const std::string path = dir.file("out.parquet"), partial = dir.file("out.parquet.partial");
  WriterCheckpoint at;
  {
    auto w = ParquetWriter::create_resumable(path, partial, kSchema, options, nullptr);
    ASSERT_TRUE(w.ok()) << w.status().to_string();
    ASSERT_TRUE(add_rows(**w, 0, 120).ok());
    auto c = (*w)->checkpoint();  // ends the row group of rows 100..119
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    at = *c;
    EXPECT_EQ(at.rows, 120);
    EXPECT_EQ(at.bytes, std::filesystem::file_size(partial));
    ASSERT_TRUE(add_rows(**w, 120, 170).ok());  // written, never checkpointed: a crash loses it
    // Destroyed without close(): the partial stays, longer than the checkpoint.
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  ASSERT_GT(std::filesystem::file_size(partial), at.bytes);
  {
    std::ofstream garbage(partial, std::ios::app | std::ios::binary);
    garbage << "half a footer";
  }
  {
    auto w = ParquetWriter::create_resumable(path, partial, kSchema, options, &at);
    ASSERT_TRUE(w.ok()) << w.status().to_string();
    EXPECT_EQ((*w)->rows_written(), 120);
    ASSERT_TRUE(add_rows(**w, 120, 300).ok());
    ASSERT_TRUE((*w)->close().ok());
  }
  EXPECT_FALSE(std::filesystem::exists(partial));
  EXPECT_EQ(read_texts(path), read_texts(whole));
  auto file = ParquetFile::open(path);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->get()->metadata().num_rows, 300);
}

TEST(WriterResume, ACheckpointThatDoesNotFitTheFileIsRefused) {
  TempDir dir;
  const std::string path = dir.file("out.parquet"), partial = dir.file("p");
  WriterCheckpoint at;
  {
    auto w = ParquetWriter::create_resumable(path, partial, kSchema, {}, nullptr);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(add_rows(**w, 0, 10).ok());
    at = *(*w)->checkpoint();
  }
  WriterCheckpoint wrong_end = at;
  wrong_end.bytes -= 1;
  auto a = ParquetWriter::create_resumable(path, partial, kSchema, {}, &wrong_end);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kCorruption);
  EXPECT_NE(a.status().message().find(partial), std::string::npos) << a.status().message();
  WriterCheckpoint garbled = at;
  garbled.footer = "not thrift";
  EXPECT_EQ(ParquetWriter::create_resumable(path, partial, kSchema, {}, &garbled).status().code(),
            StatusCode::kCorruption);
  const std::vector<ColumnSpec> other = {{"text", ColumnSpec::Kind::kString, true}};
  EXPECT_EQ(ParquetWriter::create_resumable(path, partial, other, {}, &at).status().code(),
            StatusCode::kCorruption);
  WriterCheckpoint longer = at;
  longer.bytes = at.bytes + 1'000'000;
  EXPECT_EQ(ParquetWriter::create_resumable(path, partial, kSchema, {}, &longer).status().code(),
            StatusCode::kCorruption)
      << "bytes that are not where the row groups end";
  // Each refusal came before the partial was touched: it still resumes.
  auto ok = ParquetWriter::create_resumable(path, partial, kSchema, {}, &at);
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  ASSERT_TRUE((*ok)->close().ok());
  auto file = ParquetFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  EXPECT_EQ(file->get()->metadata().num_rows, 10);
}

// ---- list columns ----

TEST(WriterResume, ListColumnsContinuedFromACheckpointHoldTheSameRows) {
  const testing::Dataset data = testing::embeddings_dataset(300, 8);
  TempDir dir;
  WriterOptions options;
  options.row_group_rows = 50;
  options.page_bytes = 256;
  const std::string whole = dir.file("whole.parquet"), path = dir.file("out.parquet");
  ASSERT_TRUE(testing::write_dataset(whole, data, options).ok());
  const std::string partial = dir.file("out.parquet.partial");
  ASSERT_TRUE(testing::write_resumed(path, partial, data, options, 120, 170).ok());
  EXPECT_FALSE(std::filesystem::exists(partial));
  auto a = testing::walk_file(whole);
  auto b = testing::walk_file(path);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(b->metadata.num_rows, 300);
  EXPECT_EQ(b->metadata.row_groups.size(), 7u);  // 50, 50, 20 (to the checkpoint), 50, 50, 50, 30
  EXPECT_EQ(b->metadata.key_value_metadata, a->metadata.key_value_metadata);  // ARROW:schema
  for (size_t col : {1, 3}) {
    EXPECT_EQ(b->columns[col].rep_levels, a->columns[col].rep_levels) << col;
    EXPECT_EQ(b->columns[col].def_levels, a->columns[col].def_levels) << col;
    EXPECT_TRUE(testing::same_float_bits(b->columns[col].values, a->columns[col].values)) << col;
  }
  EXPECT_EQ(read_texts(path), read_texts(whole));
}

TEST(WriterResume, AListColumnMustMatchTheCheckpoint) {
  TempDir dir;
  const std::string path = dir.file("out.parquet"), partial = dir.file("p");
  const std::vector<ColumnSpec> schema = {{"id", ColumnSpec::Kind::kString, true},
                                          {"emb", ColumnSpec::Kind::kFloat, true, 4}};
  WriterCheckpoint at;
  {
    auto w = ParquetWriter::create_resumable(path, partial, schema, {}, nullptr);
    ASSERT_TRUE(w.ok());
    const std::vector<float> v = {1, 2, 3, 4};
    for (int i = 0; i < 10; ++i) {
      (*w)->append_string(0, "x");
      (*w)->append_floats(1, v);
      ASSERT_TRUE((*w)->end_row().ok());
    }
    at = *(*w)->checkpoint();
  }
  // Another list size (only the Arrow schema says it), nullability, or a
  // flat column in the list's place.
  const std::vector<std::vector<ColumnSpec>> others = {
      {schema[0], {"emb", ColumnSpec::Kind::kFloat, true, 5}},
      {schema[0], {"emb", ColumnSpec::Kind::kFloat, false, 4}},
      {schema[0], {"emb", ColumnSpec::Kind::kFloat, true}}};
  for (const auto& other : others) {
    auto r = ParquetWriter::create_resumable(path, partial, other, {}, &at);
    ASSERT_EQ(r.status().code(), StatusCode::kCorruption);
    EXPECT_NE(r.status().message().find(partial), std::string::npos) << r.status().message();
  }
  auto longer = ParquetWriter::create_resumable(path, partial, others[0], {}, &at);
  EXPECT_NE(longer.status().message().find("ARROW:schema"), std::string::npos) << longer.status().message();
  auto ok = ParquetWriter::create_resumable(path, partial, schema, {}, &at);
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  ASSERT_TRUE((*ok)->close().ok());
  auto s = testing::walk_file(path);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->metadata.num_rows, 10);
  EXPECT_EQ(s->columns[1].values.size(), 40u);
}

}  // namespace
}  // namespace infercost::parquet
