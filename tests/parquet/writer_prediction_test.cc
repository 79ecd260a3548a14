// The Parquet PredictionWriter (create_prediction_writer with kParquet):
// schema, codec, null rows, first-maximum labels, errors naming the path, and
// no output when abandoned.
#include <gtest/gtest.h>

#include "io/prediction_writer.h"
#include "test_utils.h"
#include "writer_test_util.h"

namespace infercost::parquet {
namespace {

using infercost::testing::count_entries;
using infercost::testing::TempDir;

TEST(ParquetPredictionWriter, WritesTextProbabilitiesAndLabel) {
  TempDir dir;
  std::string path = dir.file("p.parquet");
  io::PredictionColumns columns;
  columns.labels = {"NEGATIVE", "Positive"};
  columns.compression = "zstd";
  auto w = io::create_prediction_writer(path, io::OutputFormat::kParquet, columns);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  ASSERT_TRUE((*w)->write({"good", "", "bad"}, {0, 1, 0}, {0.1f, 0.9f, 0.f, 0.f, 0.7f, 0.3f}).ok());
  ASSERT_TRUE((*w)->write({"more"}, {}, {0.5f, 0.5f}).ok());
  ASSERT_TRUE((*w)->close().ok());
  auto s = testing::walk_file(path);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  const FileMetaData& md = s->metadata;
  EXPECT_EQ(md.num_rows, 4);
  ASSERT_EQ(md.schema.size(), 5u);
  EXPECT_EQ(md.schema[1].name, "text");
  EXPECT_EQ(md.schema[2].name, "negative");
  EXPECT_EQ(md.schema[2].type, PhysicalType::kFloat);
  EXPECT_EQ(md.schema[3].name, "positive");
  EXPECT_EQ(md.schema[4].name, "label");
  EXPECT_EQ(md.row_groups[0].columns[0].meta_data->codec, Codec::kZstd);
  // One null row: every column has null_count 1.
  for (const ColumnChunk& cc : md.row_groups[0].columns) EXPECT_EQ(cc.meta_data->statistics->null_count, 1);
  // label min/max: "NEGATIVE" (rows 2 and 3: the first maximum) and "Positive".
  const Statistics& label = *md.row_groups[0].columns[3].meta_data->statistics;
  EXPECT_EQ(label.min_value, std::optional<std::string>("NEGATIVE"));
  EXPECT_EQ(label.max_value, std::optional<std::string>("Positive"));
}

TEST(ParquetPredictionWriter, DropsTextAndRejectsBadCodecNamingThePath) {
  TempDir dir;
  std::string path = dir.file("p.parquet");
  io::PredictionColumns columns;
  columns.labels = {"a", "b", "c"};
  columns.keep_text = false;
  columns.compression = "lzma";
  auto bad = io::create_prediction_writer(path, io::OutputFormat::kParquet, columns);
  ASSERT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find(path), std::string::npos) << bad.status().message();
  columns.compression = "none";
  auto w = io::create_prediction_writer(path, io::OutputFormat::kParquet, columns);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  ASSERT_TRUE((*w)->write({"x"}, {}, {0.2f, 0.3f, 0.5f}).ok());
  EXPECT_EQ((*w)->write({"x"}, {}, {0.2f}).code(), StatusCode::kInternal);
  ASSERT_TRUE((*w)->close().ok());
  auto s = testing::walk_file(path);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  ASSERT_EQ(s->metadata.schema.size(), 5u);  // a, b, c, label
  EXPECT_EQ(s->metadata.schema[1].name, "a");
  EXPECT_EQ(s->metadata.row_groups[0].columns[0].meta_data->codec, Codec::kUncompressed);
  // Labels that collide once lowercased are a clear error, not a bad file.
  columns.labels = {"Pos", "POS"};
  auto dup = io::create_prediction_writer(dir.file("d.parquet"), io::OutputFormat::kParquet, columns);
  EXPECT_EQ(dup.status().code(), StatusCode::kInvalidArgument);
}

TEST(ParquetPredictionWriter, AbandonedWriterLeavesNothing) {
  TempDir dir;
  io::PredictionColumns columns;
  columns.labels = {"a", "b"};
  {
    auto w = io::create_prediction_writer(dir.file("p.parquet"), io::OutputFormat::kParquet, columns);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->write({"x"}, {}, {0.2f, 0.8f}).ok());
  }
  EXPECT_EQ(count_entries(dir.path()), 0);
}

}  // namespace
}  // namespace infercost::parquet
