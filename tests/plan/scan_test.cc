#include "plan/scan.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/sha256.h"
#include "engine/settings.h"
#include "parquet/writer.h"
#include "plan_test_util.h"
#include "test_utils.h"

namespace infercost::plan {
namespace {

using infercost::testing::TempDir;
using test::jsonl_row;
using test::text_of_length;
using test::tiny_model;

ScanOptions options_for(std::vector<std::string> inputs) {
  ScanOptions o;
  o.inputs = std::move(inputs);
  o.threads = 2;
  o.max_length = 32;
  return o;
}

TEST(Scan, CountsRowsNullRowsTokensAndTheExactHistogram) {
  TempDir dir;
  const std::string path = dir.write("a.jsonl", jsonl_row(3) + jsonl_row(4) + "{\"full_text\": null}\n" +
                                                    jsonl_row(7) + "\n" + "{\"full_text\": \"good bad\"}\n");
  model::LoadedModel m = tiny_model();
  Result<ScanResult> scan = scan_inputs(options_for({path}), *m.tokenizer);
  ASSERT_TRUE(scan.ok()) << scan.status().to_string();
  EXPECT_EQ(scan->rows, 4);
  EXPECT_EQ(scan->rows_null, 1);
  EXPECT_EQ(scan->rows_skipped, 0);
  EXPECT_EQ(scan->tokens, 3 + 4 + 7 + 4);
  EXPECT_EQ(scan->bytes, std::filesystem::file_size(path));
  ASSERT_EQ(scan->files.size(), 1u);
  EXPECT_EQ(scan->files[0].path, path);
  EXPECT_EQ(scan->files[0].format, "jsonl");
  EXPECT_EQ(scan->files[0].rows, 4);
  EXPECT_EQ(scan->files[0].rows_null, 1);
  EXPECT_EQ(scan->files[0].longest, 7);
  std::vector<int64_t> expected(8, 0);
  expected[3] = 1;
  expected[4] = 2;
  expected[7] = 1;
  EXPECT_EQ(scan->length_counts, expected);
  EXPECT_EQ(scan->longest(), 7);
  EXPECT_DOUBLE_EQ(scan->mean_length(), 18.0 / 4);
  EXPECT_EQ(scan->rows_at_max_length, 0);
}

TEST(Scan, ReadsFoldersOfCsvJsonArraysAndParquetInNameOrder) {
  TempDir dir;
  dir.write("in/a.csv", "id,full_text\n1," + text_of_length(5) + "\n2,\"" + text_of_length(3) + "\"\n");
  dir.write("in/b.json", "[{\"full_text\": \"" + text_of_length(6) + "\"}, {\"full_text\": null}]");
  {
    auto writer = parquet::ParquetWriter::create(dir.file("in/c.parquet"),
                                                 {{"id", parquet::ColumnSpec::Kind::kInt64, false},
                                                  {"full_text", parquet::ColumnSpec::Kind::kString, true}});
    ASSERT_TRUE(writer.ok()) << writer.status().to_string();
    const int lengths[] = {4, 0, 9, 2};  // 0: a null row
    for (int i = 0; i < 4; ++i) {
      (*writer)->append_int64(0, i);
      if (lengths[i] == 0) {
        (*writer)->append_null(1);
      } else {
        (*writer)->append_string(1, text_of_length(lengths[i]));
      }
      ASSERT_TRUE((*writer)->end_row().ok());
    }
    ASSERT_TRUE((*writer)->close().ok());
  }
  model::LoadedModel m = tiny_model();
  Result<ScanResult> scan = scan_inputs(options_for({dir.file("in")}), *m.tokenizer);
  ASSERT_TRUE(scan.ok()) << scan.status().to_string();
  ASSERT_EQ(scan->files.size(), 3u);
  EXPECT_EQ(scan->files[0].format, "csv");
  EXPECT_EQ(scan->files[0].rows, 2);
  EXPECT_EQ(scan->files[0].longest, 5);
  EXPECT_EQ(scan->files[1].format, "json");
  EXPECT_EQ(scan->files[1].rows, 1);
  EXPECT_EQ(scan->files[1].rows_null, 1);
  EXPECT_EQ(scan->files[2].format, "parquet");
  EXPECT_EQ(scan->files[2].rows, 3);
  EXPECT_EQ(scan->files[2].rows_null, 1);
  EXPECT_EQ(scan->files[2].tokens, 4 + 9 + 2);
  EXPECT_EQ(scan->files[2].longest, 9);
  EXPECT_EQ(scan->rows, 6);
  EXPECT_EQ(scan->rows_null, 2);
  EXPECT_EQ(scan->tokens, 5 + 3 + 6 + 4 + 9 + 2);
  // Seed: every row padded to its own file's longest row.
  EXPECT_EQ(scan->seed_padding.padded_tokens, 2 * 5 + 1 * 6 + 3 * 9);
  EXPECT_EQ(scan->seed_padding.computed_tokens, 2 * 5 + 1 * 6 + 3 * 9);
}

TEST(Scan, BadRowFailsNamingFileAndLineOrIsSkipped) {
  TempDir dir;
  const std::string path =
      dir.write("bad.jsonl", jsonl_row(3) + jsonl_row(4) + "{\"full_text\": \"x\"\n" + jsonl_row(5));
  model::LoadedModel m = tiny_model();
  Result<ScanResult> failed = scan_inputs(options_for({path}), *m.tokenizer);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kCorruption);
  EXPECT_NE(failed.status().message().find(path + ": line 3"), std::string::npos)
      << failed.status().to_string();

  ScanOptions skip = options_for({path});
  skip.on_bad_row = OnBadRow::kSkip;
  Result<ScanResult> skipped = scan_inputs(skip, *m.tokenizer);
  ASSERT_TRUE(skipped.ok()) << skipped.status().to_string();
  EXPECT_EQ(skipped->rows, 3);
  EXPECT_EQ(skipped->rows_skipped, 1);
  EXPECT_NE(skipped->first_skip_reason.find("line 3"), std::string::npos) << skipped->first_skip_reason;
}

TEST(Scan, MissingColumnAndMissingFileAreErrors) {
  TempDir dir;
  model::LoadedModel m = tiny_model();
  const std::string path = dir.write("a.jsonl", "{\"text\": \"the\"}\n");
  Result<ScanResult> column = scan_inputs(options_for({path}), *m.tokenizer);
  ASSERT_FALSE(column.ok());
  EXPECT_NE(column.status().message().find("full_text"), std::string::npos) << column.status().to_string();
  Result<ScanResult> missing = scan_inputs(options_for({dir.file("none.jsonl")}), *m.tokenizer);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  ScanOptions bad = options_for({path});
  bad.window_rows = 0;
  EXPECT_EQ(check_scan_options(bad).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(scan_inputs(options_for({}), *m.tokenizer).status().code(), StatusCode::kInvalidArgument);
}

// The plan's one check of its settings: the run's ranges, and no size a
// device's memory would decide.
TEST(Scan, CheckRefusesBadSettingsAndAutoSizes) {
  EXPECT_TRUE(check_scan_options(options_for({"a.jsonl"})).ok());
  ScanOptions threads = options_for({"a.jsonl"});
  threads.threads = -1;
  EXPECT_NE(engine::spell_settings(check_scan_options(threads), engine::Spelling::kFlag)
                .message()
                .find("--threads"),
            std::string::npos);
  for (bool batch_size : {true, false}) {
    ScanOptions o = options_for({"a.jsonl"});
    (batch_size ? o.batch_size_auto : o.max_batch_tokens_auto) = true;
    const Status s = check_scan_options(o);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("plan has no device"), std::string::npos) << s.message();
    const std::string flags = engine::spell_settings(s, engine::Spelling::kFlag).message();
    EXPECT_NE(flags.find("--batch-size auto and --max-batch-tokens auto"), std::string::npos) << flags;
  }
}

TEST(Scan, InputFormatAndColumnFlags) {
  TempDir dir;
  const std::string path = dir.write("rows.txt", "{\"body\": \"" + text_of_length(6) + "\"}\n");
  model::LoadedModel m = tiny_model();
  ScanOptions o = options_for({path});
  o.column = "body";
  EXPECT_EQ(scan_inputs(o, *m.tokenizer).status().code(),
            StatusCode::kInvalidArgument);  // .txt: say the format
  o.input_format = "jsonl";
  Result<ScanResult> scan = scan_inputs(o, *m.tokenizer);
  ASSERT_TRUE(scan.ok()) << scan.status().to_string();
  EXPECT_EQ(scan->tokens, 6);
}

TEST(Scan, TruncatesAtMaxLengthAndCountsTheRowsThatReachIt) {
  TempDir dir;
  const std::string path = dir.write("a.jsonl", jsonl_row(3) + jsonl_row(8) + jsonl_row(5) + jsonl_row(20));
  model::LoadedModel m = tiny_model(5);
  ScanOptions o = options_for({path});
  o.max_length = 5;
  Result<ScanResult> scan = scan_inputs(o, *m.tokenizer);
  ASSERT_TRUE(scan.ok()) << scan.status().to_string();
  EXPECT_EQ(scan->tokens, 3 + 5 + 5 + 5);
  EXPECT_EQ(scan->longest(), 5);
  EXPECT_EQ(scan->rows_at_max_length, 3);
}

// Lengths 3, 7, 4, 5, 3 in input order.
std::string five_rows() {
  return jsonl_row(3) + jsonl_row(7) + jsonl_row(4) + jsonl_row(5) + jsonl_row(3);
}

TEST(Scan, TokensPaddingUnderATokenBudget) {
  TempDir dir;
  const std::string path = dir.write("a.jsonl", five_rows());
  model::LoadedModel m = tiny_model();
  ScanOptions o = options_for({path});
  o.window_rows = 3;       // windows {3, 7, 4} and {5, 3}
  o.max_batch_tokens = 8;  // rows x longest <= 8
  Result<ScanResult> scan = scan_inputs(o, *m.tokenizer);
  ASSERT_TRUE(scan.ok()) << scan.status().to_string();
  const PolicyPadding& t = scan->tokens_padding;
  // Window 1 sorted 3,4,7: [3,4] (2 x 4 = 8), [7] (alone). Window 2 sorted 3,5:
  // 2 x 5 = 10 > 8, so [3], [5].
  EXPECT_EQ(t.batch_size, 256);
  EXPECT_EQ(t.max_batch_tokens, 8);
  EXPECT_EQ(t.batches, 4);
  EXPECT_EQ(t.rows, 5);
  EXPECT_EQ(t.tokens, 22);
  EXPECT_EQ(t.padded_tokens, 8 + 7 + 3 + 5);
  EXPECT_EQ(t.computed_tokens, 22);
  EXPECT_DOUBLE_EQ(t.padding_efficiency(), 1.0);
  EXPECT_DOUBLE_EQ(t.batch_fill(), 22.0 / 23.0);
  std::vector<int64_t> at(8, 0);
  at[3] = 1;
  at[4] = 2;
  at[5] = 1;
  at[7] = 1;
  EXPECT_EQ(t.padded_rows_at_length, at);
}

TEST(Scan, TokensPaddingUnderARowCapAndSeedPadding) {
  TempDir dir;
  const std::string path = dir.write("a.jsonl", five_rows());
  model::LoadedModel m = tiny_model();
  ScanOptions o = options_for({path});
  o.window_rows = 3;
  o.batch_size = 2;
  o.max_batch_tokens = 100;
  Result<ScanResult> scan = scan_inputs(o, *m.tokenizer);
  ASSERT_TRUE(scan.ok()) << scan.status().to_string();
  const PolicyPadding& t = scan->tokens_padding;
  // Window 1 sorted 3,4,7: [3,4] (8), [7] (7). Window 2: [3,5] (2 x 5 = 10).
  EXPECT_EQ(t.batches, 3);
  EXPECT_EQ(t.padded_tokens, 25);
  // Seed: batches of 2 rows in input order (3 batches), every row padded to the
  // file's longest row (7) and the padding computed.
  const PolicyPadding& s = scan->seed_padding;
  EXPECT_EQ(s.batch_size, 2);
  EXPECT_EQ(s.batches, 3);
  EXPECT_EQ(s.tokens, 22);
  EXPECT_EQ(s.padded_tokens, 35);
  EXPECT_EQ(s.computed_tokens, 35);
  EXPECT_DOUBLE_EQ(s.padding_efficiency(), 22.0 / 35.0);
  std::vector<int64_t> at(8, 0);
  at[7] = 5;
  EXPECT_EQ(s.padded_rows_at_length, at);
}

TEST(Scan, SeedBatchSizeDefaultsToHundredTimesThreads) {
  TempDir dir;
  const std::string path = dir.write("a.jsonl", five_rows());
  model::LoadedModel m = tiny_model();
  ScanOptions o = options_for({path});
  o.threads = 3;
  Result<ScanResult> scan = scan_inputs(o, *m.tokenizer);
  ASSERT_TRUE(scan.ok());
  EXPECT_EQ(scan->seed_padding.batch_size, 300);
  EXPECT_EQ(scan->seed_padding.batches, 1);
  EXPECT_EQ(scan->tokens_padding.batch_size, 256);
  EXPECT_EQ(scan->tokens_padding.max_batch_tokens, 4096);
  EXPECT_EQ(scan->tokens_padding.window_rows, 8192);
}

TEST(Scan, ManyRowsOnSeveralTokenizerThreadsMatchOneThread) {
  TempDir dir;
  std::string content;
  for (int i = 0; i < 3000; ++i) content += jsonl_row(2 + (i * 7919) % 29);
  const std::string path = dir.write("a.jsonl", content);
  model::LoadedModel m = tiny_model();
  ScanOptions one = options_for({path});
  one.tokenizer_threads = 1;
  one.window_rows = 1000;
  ScanOptions four = one;
  four.tokenizer_threads = 4;
  int64_t calls = 0;
  four.on_progress = [&calls](int64_t, uint64_t done, uint64_t total) {
    ++calls;
    EXPECT_LE(done, total);
  };
  Result<ScanResult> a = scan_inputs(one, *m.tokenizer);
  Result<ScanResult> b = scan_inputs(four, *m.tokenizer);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->rows, 3000);
  EXPECT_EQ(a->length_counts, b->length_counts);
  EXPECT_EQ(a->tokens_padding.padded_tokens, b->tokens_padding.padded_tokens);
  EXPECT_EQ(calls, 3);  // one per window
}

TEST(Scan, ContentHashIsOfTheFilesBytesInInputOrder) {
  TempDir dir;
  const std::string a = dir.write("a.jsonl", jsonl_row(3));
  const std::string b = dir.write("b.jsonl", jsonl_row(4) + jsonl_row(5));
  model::LoadedModel m = tiny_model();
  Result<ScanResult> scan = scan_inputs(options_for({b, a}), *m.tokenizer);
  ASSERT_TRUE(scan.ok());
  EXPECT_TRUE(scan->content_sha256.empty());
  ASSERT_TRUE(hash_inputs(*scan).ok());
  EXPECT_EQ(scan->content_sha256, sha256_hex(jsonl_row(4) + jsonl_row(5) + jsonl_row(3)));
}

TEST(Scan, PercentilesAndBins) {
  ScanResult s;
  s.length_counts.assign(600, 0);
  s.length_counts[5] = 50;
  s.length_counts[20] = 40;
  s.length_counts[300] = 9;
  s.length_counts[513] = 1;
  s.rows = 100;
  EXPECT_EQ(s.length_percentile(0.5), 5);
  EXPECT_EQ(s.length_percentile(0.51), 20);
  EXPECT_EQ(s.length_percentile(0.9), 20);
  EXPECT_EQ(s.length_percentile(0.99), 300);
  EXPECT_EQ(s.length_percentile(1.0), 513);
  EXPECT_EQ(s.longest(), 513);
  // Edges 1, 9, 17, 33, 65, 129, 257, 513.
  EXPECT_EQ(s.binned_lengths(), (std::vector<int64_t>{50, 0, 40, 0, 0, 0, 9, 1}));
}

}  // namespace
}  // namespace infercost::plan
