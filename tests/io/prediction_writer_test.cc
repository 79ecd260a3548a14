#include "infercost/io/prediction_writer.h"

#include <gtest/gtest.h>

#include "test_utils.h"

namespace infercost::io {
namespace {

using infercost::testing::count_entries;
using infercost::testing::slurp;
using infercost::testing::TempDir;

PredictionColumns two_labels(bool keep_text = true) {
  PredictionColumns c;
  c.keep_text = keep_text;
  c.labels = {"NEGATIVE", "POSITIVE"};
  return c;
}

TEST(PredictionWriter, JsonLinesInOrderWithEscapes) {
  TempDir dir;
  std::string path = dir.file("out.jsonl");
  auto writer = create_prediction_writer(path, OutputFormat::kJsonl, two_labels());
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->write({"a \"q\"\n\t\\", "caf\xc3\xa9\x01"}, {}, {0.25f, 0.75f, 0.9f, 0.1f}).ok());
  ASSERT_TRUE((*writer)->close().ok());
  EXPECT_EQ(
      slurp(path),
      "{\"text\":\"a \\\"q\\\"\\n\\t\\\\\",\"negative\":0.25,\"positive\":0.75,\"label\":\"POSITIVE\"}\n"
      "{\"text\":\"caf\xc3\xa9\\u0001\",\"negative\":0.9,\"positive\":0.1,\"label\":\"NEGATIVE\"}\n");
}

TEST(PredictionWriter, CsvQuotesPerRfc4180) {
  TempDir dir;
  std::string path = dir.file("out.csv");
  auto writer = create_prediction_writer(path, OutputFormat::kCsv, two_labels());
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->write({"plain", "a,b", "say \"hi\"\nbye"}, {}, {0.5f, 0.5f, 1, 0, 0, 1}).ok());
  ASSERT_TRUE((*writer)->close().ok());
  EXPECT_EQ(slurp(path),
            "text,negative,positive,label\n"
            "plain,0.5,0.5,NEGATIVE\n"
            "\"a,b\",1,0,NEGATIVE\n"
            "\"say \"\"hi\"\"\nbye\",0,1,POSITIVE\n");
}

TEST(PredictionWriter, NoTextColumn) {
  TempDir dir;
  std::string path = dir.file("out.csv");
  auto writer = create_prediction_writer(path, OutputFormat::kCsv, two_labels(false));
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->write({"ignored"}, {}, {0.125f, 0.875f}).ok());
  ASSERT_TRUE((*writer)->close().ok());
  EXPECT_EQ(slurp(path), "negative,positive,label\n0.125,0.875,POSITIVE\n");
}

TEST(PredictionWriter, NothingLeftBehindWithoutClose) {
  TempDir dir;
  {
    auto writer = create_prediction_writer(dir.file("out.jsonl"), OutputFormat::kJsonl, two_labels());
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->write({"x"}, {}, {0.5f, 0.5f}).ok());
    EXPECT_EQ(count_entries(dir.path()), 1);  // the temporary
  }
  EXPECT_EQ(count_entries(dir.path()), 0);
}

TEST(PredictionWriter, RejectsMismatchedProbabilities) {
  TempDir dir;
  auto writer = create_prediction_writer(dir.file("o.jsonl"), OutputFormat::kJsonl, two_labels());
  ASSERT_TRUE(writer.ok());
  EXPECT_FALSE((*writer)->write({"x"}, {}, {0.5f}).ok());
}

TEST(PredictionWriter, JsonLinesNullRows) {
  TempDir dir;
  std::string path = dir.file("out.jsonl");
  auto writer = create_prediction_writer(path, OutputFormat::kJsonl, two_labels());
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->write({"a", "", ""}, {0, 1, 0}, {0.25f, 0.75f, 9, 9, 1, 0}).ok());
  ASSERT_TRUE((*writer)->close().ok());
  EXPECT_EQ(slurp(path),
            "{\"text\":\"a\",\"negative\":0.25,\"positive\":0.75,\"label\":\"POSITIVE\"}\n"
            "{\"text\":null,\"negative\":null,\"positive\":null,\"label\":null}\n"
            "{\"text\":\"\",\"negative\":1,\"positive\":0,\"label\":\"NEGATIVE\"}\n");
}

TEST(PredictionWriter, CsvNullIsEmptyAndEmptyStringIsQuoted) {
  TempDir dir;
  std::string path = dir.file("out.csv");
  auto writer = create_prediction_writer(path, OutputFormat::kCsv, two_labels());
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->write({"", "", " x "}, {1, 0, 0}, {9, 9, 0.5f, 0.5f, 0, 1}).ok());
  ASSERT_TRUE((*writer)->close().ok());
  EXPECT_EQ(slurp(path), "text,negative,positive,label\n,,,\n\"\",0.5,0.5,NEGATIVE\n x ,0,1,POSITIVE\n");
  auto no_text = create_prediction_writer(dir.file("n.csv"), OutputFormat::kCsv, two_labels(false));
  ASSERT_TRUE(no_text.ok());
  ASSERT_TRUE((*no_text)->write({"a", "b"}, {0, 1}, {0.5f, 0.5f, 0, 0}).ok());
  ASSERT_TRUE((*no_text)->close().ok());
  EXPECT_EQ(slurp(dir.file("n.csv")), "negative,positive,label\n0.5,0.5,NEGATIVE\n,,\n");
}

TEST(PredictionWriter, RejectsMismatchedNullFlags) {
  TempDir dir;
  auto writer = create_prediction_writer(dir.file("o.csv"), OutputFormat::kCsv, two_labels());
  ASSERT_TRUE(writer.ok());
  EXPECT_FALSE((*writer)->write({"x", "y"}, {0}, {0.5f, 0.5f, 0.5f, 0.5f}).ok());
}

TEST(OutputFormat, FromExtensionOrFlag) {
  EXPECT_EQ(*output_format_for("a.jsonl", ""), OutputFormat::kJsonl);
  EXPECT_EQ(*output_format_for("A.CSV", ""), OutputFormat::kCsv);
  EXPECT_EQ(*output_format_for("a.txt", "csv"), OutputFormat::kCsv);
  EXPECT_EQ(*output_format_for("-", ""), OutputFormat::kJsonl);
  EXPECT_FALSE(output_format_for("a.txt", "").ok());
  EXPECT_FALSE(output_format_for("a.jsonl", "xml").ok());
  EXPECT_EQ(*output_format_for("a.parquet", ""), OutputFormat::kParquet);
  EXPECT_EQ(*output_format_for("a.PQ", ""), OutputFormat::kParquet);
  EXPECT_EQ(*output_format_for("a.parq", ""), OutputFormat::kParquet);
  EXPECT_EQ(*output_format_for("a.out", "parquet"), OutputFormat::kParquet);
  EXPECT_EQ(*output_format_for("-", "csv"), OutputFormat::kCsv);
}

TEST(OutputFormat, UnwritableFolderIsAnError) {
  auto writer = create_prediction_writer("/nonexistent/dir/out.jsonl", OutputFormat::kJsonl, two_labels());
  ASSERT_FALSE(writer.ok());
  EXPECT_NE(writer.status().message().find("/nonexistent/dir/out.jsonl"), std::string::npos);
}

}  // namespace
}  // namespace infercost::io
