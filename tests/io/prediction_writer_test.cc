#include "io/prediction_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "io/row_source.h"
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

// Embeddings: the text and `embedding`, an array of the row's values (each
// the shortest text reading back as the same float32), null for a null row;
// CSV refused.
TEST(PredictionWriter, EmbeddingsAreArraysInJsonLines) {
  TempDir dir;
  PredictionColumns columns;
  columns.dimensions = 3;
  const std::string path = dir.file("out.jsonl");
  auto writer = create_prediction_writer(path, OutputFormat::kJsonl, columns);
  ASSERT_TRUE(writer.ok()) << writer.status().to_string();
  ASSERT_TRUE(
      (*writer)->write({"a", "", "c"}, {0, 1, 0}, {0.1f, -2.5f, 1e-8f, 9, 9, 9, 0, 1, 0.3333333f}).ok());
  ASSERT_TRUE((*writer)->close().ok());
  EXPECT_EQ(slurp(path),
            "{\"text\":\"a\",\"embedding\":[0.1,-2.5,1e-08]}\n"
            "{\"text\":null,\"embedding\":null}\n"
            "{\"text\":\"c\",\"embedding\":[0,1,0.3333333]}\n");
  columns.keep_text = false;
  auto bare = create_prediction_writer(path, OutputFormat::kJsonl, columns);
  ASSERT_TRUE(bare.ok());
  ASSERT_TRUE((*bare)->write({"a"}, {}, {1, 2, 3}).ok());
  ASSERT_TRUE((*bare)->close().ok());
  EXPECT_EQ(slurp(path), "{\"embedding\":[1,2,3]}\n");
  {  // The wrong number of values is the caller's bug, said so.
    auto wrong = create_prediction_writer(path, OutputFormat::kJsonl, columns);
    ASSERT_TRUE(wrong.ok());
    EXPECT_EQ((*wrong)->write({"a"}, {}, {1, 2}).code(), StatusCode::kInternal);
  }

  auto csv = create_prediction_writer(dir.file("out.csv"), OutputFormat::kCsv, columns);
  ASSERT_FALSE(csv.ok());
  EXPECT_EQ(csv.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(csv.status().message().find("CSV cannot hold a vector"), std::string::npos);
  EXPECT_EQ(count_entries(dir.path()), 1u);  // out.jsonl only: nothing of the CSV
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

// Multi-label outputs: three labels, threshold 0.5.
PredictionColumns multi_label(float threshold = 0.5f) {
  PredictionColumns c;
  c.labels = {"Toxic", "Insult", "Threat"};
  c.label_set = true;
  c.threshold = threshold;
  return c;
}

TEST(LabelSet, LabelsAtOrAboveTheThresholdInLabelOrder) {
  const std::vector<std::string> labels = {"a", "b", "c"};
  const float none[] = {0.1f, 0.49999997f, 0.0f};
  EXPECT_EQ(label_set(labels, none, 0.5f), "");
  const float all[] = {0.9f, 0.5f, 1.0f};
  EXPECT_EQ(label_set(labels, all, 0.5f), "a,b,c");
  const float some[] = {0.7f, 0.2f, 0.6999999f};
  // A value written "0.7" is at a threshold 0.7: both are the float 0.7f.
  EXPECT_EQ(label_set(labels, some, 0.7f), "a");
  EXPECT_EQ(label_set(labels, some, 0.0f), "a,b,c");
  const float nan[] = {std::numeric_limits<float>::quiet_NaN(), 1.0f, 0.0f};
  EXPECT_EQ(label_set(labels, nan, 0.0f), "b,c");
  EXPECT_EQ(label_set(labels, all, 1.0f), "c");
}

TEST(PredictionColumnNames, LabelsLowercasedThenLabelThenLabels) {
  // ASCII letters only are lowercased: the same names in every writer and in the Python package.
  const std::vector<std::string> labels = {"NEGATIVE", "Mixed_1", "\xc3\x89T\xc3\x89"};  // "ÉTÉ"
  EXPECT_EQ(prediction_column_names(labels, false),
            (std::vector<std::string>{"negative", "mixed_1", "\xc3\x89t\xc3\x89", "label"}));
  EXPECT_EQ(prediction_column_names(labels, true),
            (std::vector<std::string>{"negative", "mixed_1", "\xc3\x89t\xc3\x89", "label", "labels"}));
}

TEST(PredictionWriter, JsonLinesLabelsColumn) {
  TempDir dir;
  for (const char* name : {"out.jsonl", "out.json"}) {
    const std::string path = dir.file(name);
    auto format = output_format_for(path, "");
    ASSERT_TRUE(format.ok());
    auto writer = create_prediction_writer(path, *format, multi_label());
    ASSERT_TRUE(writer.ok()) << writer.status().to_string();
    ASSERT_TRUE(
        (*writer)->write({"x", "y", "z"}, {0, 1, 0}, {0.5f, 0.75f, 0.25f, 9, 9, 9, 0.1f, 0.2f, 0.3f}).ok());
    ASSERT_TRUE((*writer)->close().ok());
    EXPECT_EQ(
        slurp(path),
        "{\"text\":\"x\",\"toxic\":0.5,\"insult\":0.75,\"threat\":0.25,\"label\":\"Insult\","
        "\"labels\":\"Toxic,Insult\"}\n"
        "{\"text\":null,\"toxic\":null,\"insult\":null,\"threat\":null,\"label\":null,\"labels\":null}\n"
        "{\"text\":\"z\",\"toxic\":0.1,\"insult\":0.2,\"threat\":0.3,\"label\":\"Threat\",\"labels\":\"\"}\n")
        << name;
  }
}

TEST(PredictionWriter, CsvLabelsColumnNullEmptyAndQuoted) {
  TempDir dir;
  const std::string path = dir.file("out.csv");
  auto writer = create_prediction_writer(path, OutputFormat::kCsv, multi_label());
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)
                  ->write({"x", "", "z", "w"}, {0, 1, 0, 0},
                          {0.5f, 0.75f, 0.25f, 9, 9, 9, 0.1f, 0.2f, 0.3f, 0.5f, 0.25f, 0.5f})
                  .ok());
  ASSERT_TRUE((*writer)->close().ok());
  EXPECT_EQ(slurp(path),
            "text,toxic,insult,threat,label,labels\n"
            "x,0.5,0.75,0.25,Insult,\"Toxic,Insult\"\n"
            ",,,,,\n"
            "z,0.1,0.2,0.3,Threat,\"\"\n"
            "w,0.5,0.25,0.5,Toxic,\"Toxic,Threat\"\n");
  // Without the flag, no column: outputs of softmax runs keep their bytes.
  PredictionColumns plain = multi_label();
  plain.label_set = false;
  auto softmax = create_prediction_writer(dir.file("plain.csv"), OutputFormat::kCsv, plain);
  ASSERT_TRUE(softmax.ok());
  ASSERT_TRUE((*softmax)->write({"x"}, {}, {0.5f, 0.25f, 0.25f}).ok());
  ASSERT_TRUE((*softmax)->close().ok());
  EXPECT_EQ(slurp(dir.file("plain.csv")), "text,toxic,insult,threat,label\nx,0.5,0.25,0.25,Toxic\n");
}

// Read back with our Parquet reader: a string column, null for a null row.
TEST(PredictionWriter, ParquetLabelsColumn) {
  TempDir dir;
  const std::string path = dir.file("out.parquet");
  auto writer = create_prediction_writer(path, OutputFormat::kParquet, multi_label(0.25f));
  ASSERT_TRUE(writer.ok()) << writer.status().to_string();
  ASSERT_TRUE(
      (*writer)->write({"x", "", "z"}, {0, 1, 0}, {0.5f, 0.75f, 0.25f, 9, 9, 9, 0.1f, 0.2f, 0.0f}).ok());
  ASSERT_TRUE((*writer)->close().ok());
  for (const auto& [column, expected] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"labels", {"Toxic,Insult,Threat", "", ""}}, {"label", {"Insult", "", "Insult"}}}) {
    SourceOptions options;
    options.column = column;
    auto source = open_row_source(path, InputFormat::kParquet, options);
    ASSERT_TRUE(source.ok()) << source.status().to_string();
    RowBatch rows;
    ASSERT_TRUE((*source)->next(10, rows).ok());
    EXPECT_EQ(rows.texts, expected) << column;
    EXPECT_EQ(rows.is_null, (std::vector<uint8_t>{0, 1, 0})) << column;
  }
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
