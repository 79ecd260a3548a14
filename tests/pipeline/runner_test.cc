#include "infercost/pipeline/runner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "infercost/data/tweets.h"
#include "infercost/model/model_dir.h"
#include "infercost/model/synth.h"
#include "test_utils.h"

namespace infercost::pipeline {
namespace {

using infercost::testing::count_entries;
using infercost::testing::slurp;
using infercost::testing::TempDir;

// One tiny synthetic model shared by the suite (synthesis is deterministic).
class RunnerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    model::SynthOptions synth;
    synth.out_dir = dir_->file("tiny");
    synth.preset = "tiny";
    synth.seed = 3;
    Status s = model::synthesize_model(synth);
    ASSERT_TRUE(s.ok()) << s.to_string();
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  RunOptions options(std::vector<std::string> inputs, const std::string& output) {
    RunOptions o;
    o.inputs = std::move(inputs);
    o.model_dir = dir_->file("tiny");
    o.output = output;
    o.threads = 2;
    return o;
  }

  static std::vector<nlohmann::json> read_jsonl(const std::string& path) {
    std::vector<nlohmann::json> rows;
    std::istringstream in(slurp(path));
    for (std::string line; std::getline(in, line);) rows.push_back(nlohmann::json::parse(line));
    return rows;
  }

  static TempDir* dir_;
};

TempDir* RunnerTest::dir_ = nullptr;

TEST_F(RunnerTest, OneOutputRowPerInputRowInOrder) {
  TempDir work;
  const std::string input = work.file("tweets.jsonl");
  ASSERT_TRUE(data::write_tweets_jsonl(input, 500, 11).ok());
  auto metrics = run_classification(options({input}, work.file("out.jsonl")));
  ASSERT_TRUE(metrics.ok()) << metrics.status().to_string();
  auto in_rows = read_jsonl(input);
  auto out_rows = read_jsonl(work.file("out.jsonl"));
  ASSERT_EQ(out_rows.size(), in_rows.size());
  for (size_t i = 0; i < in_rows.size(); ++i) {
    EXPECT_EQ(out_rows[i]["text"], in_rows[i]["full_text"]) << "row " << i;
    const double neg = out_rows[i]["negative"], pos = out_rows[i]["positive"];
    EXPECT_NEAR(neg + pos, 1.0, 1e-5);
    EXPECT_EQ(out_rows[i]["label"], pos > neg ? "POSITIVE" : "NEGATIVE");
  }
  EXPECT_EQ(metrics->rows, 500);
  EXPECT_EQ(metrics->rows_skipped, 0);
  EXPECT_GE(metrics->padded_tokens, metrics->tokens);
  EXPECT_EQ(metrics->computed_tokens, metrics->tokens);  // the CPU backend skips padding
  EXPECT_DOUBLE_EQ(metrics->padding_efficiency(), 1.0);
  EXPECT_GE(metrics->tokens, 2 * 500);
  EXPECT_TRUE(metrics->model_synthetic);
  for (const char* stage : {"load", "read", "tokenize", "infer", "write"}) {
    EXPECT_TRUE(metrics->stage_seconds.count(stage)) << stage;
  }
  auto j = nlohmann::json::parse(metrics->to_json());
  for (const char* key : {"rows", "tokens", "padded_tokens", "wall_seconds", "rows_per_second",
                          "tokens_per_second", "peak_rss_bytes", "stages", "model", "threads"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["model"]["synthetic"], true);
  EXPECT_GT(j["peak_rss_bytes"].get<int64_t>(), 0);
}

TEST_F(RunnerTest, TokensCountMatchesTheTokenizer) {
  TempDir work;
  const std::string input = work.write(
      "in.jsonl", "{\"full_text\":\"\"}\n{\"full_text\":\"hello world\"}\n{\"full_text\":\"a b c d\"}\n");
  model::LoadOptions load;
  load.load_weights = false;
  auto m = model::load_model_dir(dir_->file("tiny"), load);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  int64_t expected = 0;
  for (const char* t : {"", "hello world", "a b c d"})
    expected += static_cast<int64_t>(m->tokenizer->encode(t)->size());
  RunOptions o = options({input}, work.file("out.csv"));
  o.batch_size = 2;
  auto metrics = run_classification(o);
  ASSERT_TRUE(metrics.ok()) << metrics.status().to_string();
  EXPECT_EQ(metrics->tokens, expected);
  EXPECT_EQ(metrics->batches, 2);
  std::string csv = slurp(work.file("out.csv"));
  EXPECT_EQ(csv.rfind("text,negative,positive,label\n", 0), 0u) << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);
}

TEST_F(RunnerTest, BatchSizeDoesNotChangePredictions) {
  TempDir work;
  const std::string input = work.file("tweets.jsonl");
  ASSERT_TRUE(data::write_tweets_jsonl(input, 200, 5).ok());
  std::vector<std::vector<nlohmann::json>> results;
  for (int batch : {1, 7, 64}) {
    RunOptions o = options({input}, work.file("out" + std::to_string(batch) + ".jsonl"));
    o.batch_size = batch;
    auto metrics = run_classification(o);
    ASSERT_TRUE(metrics.ok()) << metrics.status().to_string();
    results.push_back(read_jsonl(o.output));
  }
  // oneDNN blocks its GEMMs by the batch's row count, so fp32 sums round
  // differently per batching; the synthetic head amplifies hidden-state noise
  // (it scales a small input-dependent part of [CLS] to logits of std 6), so
  // probabilities agree to 2e-4 here, not to 1e-6.
  for (size_t v = 1; v < results.size(); ++v) {
    ASSERT_EQ(results[v].size(), results[0].size());
    for (size_t i = 0; i < results[0].size(); ++i) {
      EXPECT_NEAR(results[v][i]["positive"].get<double>(), results[0][i]["positive"].get<double>(), 2e-4)
          << i;
    }
  }
}

TEST_F(RunnerTest, SeveralInputsAreConcatenatedInOrder) {
  TempDir work;
  std::string a = work.write("a.jsonl", "{\"full_text\":\"first\"}\n{\"full_text\":\"second\"}\n");
  std::string b = work.write("b.jsonl", "{\"full_text\":\"third\"}\n");
  auto metrics = run_classification(options({a, b}, work.file("out.jsonl")));
  ASSERT_TRUE(metrics.ok()) << metrics.status().to_string();
  auto rows = read_jsonl(work.file("out.jsonl"));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0]["text"], "first");
  EXPECT_EQ(rows[2]["text"], "third");
}

TEST_F(RunnerTest, BadRowFailsAndLeavesNoOutput) {
  TempDir work;
  std::string input = work.write("bad.jsonl", "{\"full_text\":\"ok\"}\n{\"full_text\": 5}\n");
  TempDir out_dir;
  auto metrics = run_classification(options({input}, out_dir.file("out.jsonl")));
  ASSERT_FALSE(metrics.ok());
  EXPECT_NE(metrics.status().message().find(input + ": line 2"), std::string::npos)
      << metrics.status().message();
  EXPECT_EQ(count_entries(out_dir.path()), 0);
}

TEST_F(RunnerTest, SkipPolicyKeepsGoodRows) {
  TempDir work;
  std::string input = work.write("bad.jsonl", "{\"full_text\":\"ok\"}\n{oops\n{\"full_text\":\"fine\"}\n");
  RunOptions o = options({input}, work.file("out.jsonl"));
  o.on_bad_row = io::OnBadRow::kSkip;
  auto metrics = run_classification(o);
  ASSERT_TRUE(metrics.ok()) << metrics.status().to_string();
  EXPECT_EQ(metrics->rows, 2);
  EXPECT_EQ(metrics->rows_skipped, 1);
  EXPECT_NE(metrics->first_skip_reason.find("line 2"), std::string::npos) << metrics->first_skip_reason;
  EXPECT_EQ(read_jsonl(work.file("out.jsonl")).size(), 2u);
}

TEST_F(RunnerTest, RejectsBadOptions) {
  TempDir work;
  std::string input = work.write("a.jsonl", "{\"full_text\":\"x\"}\n");
  RunOptions o = options({input}, work.file("out.jsonl"));
  o.max_length = 100000;
  EXPECT_EQ(run_classification(o).status().code(), StatusCode::kInvalidArgument);
  o = options({input}, work.file("out.xml"));
  EXPECT_EQ(run_classification(o).status().code(), StatusCode::kInvalidArgument);
  o = options({work.file("missing.jsonl")}, work.file("out.jsonl"));
  EXPECT_EQ(run_classification(o).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(count_entries(work.path()), 1);
}

TEST_F(RunnerTest, NullTextsAreKeptWithNullOutputs) {
  TempDir work;
  std::string input = work.write(
      "n.jsonl", "{\"full_text\":\"good day\"}\n{\"full_text\":null}\n{\"full_text\":\"bad day\"}\n");
  auto metrics = run_classification(options({input}, work.file("out.jsonl")));
  ASSERT_TRUE(metrics.ok()) << metrics.status().to_string();
  EXPECT_EQ(metrics->rows, 2);
  EXPECT_EQ(metrics->rows_null, 1);
  auto rows = read_jsonl(work.file("out.jsonl"));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0]["text"], "good day");
  EXPECT_TRUE(rows[1]["text"].is_null()) << rows[1].dump();
  EXPECT_TRUE(rows[1]["label"].is_null()) << rows[1].dump();
  EXPECT_EQ(rows[2]["text"], "bad day");
  EXPECT_FALSE(rows[2]["label"].is_null());
}

TEST_F(RunnerTest, MixedFormatsGiveTheSamePredictions) {
  TempDir work;
  std::string jsonl =
      work.write("a.jsonl", "{\"full_text\":\"first, \\\"quoted\\\"\"}\n{\"full_text\":\"second\"}\n");
  std::string array = work.write("b.json", "[{\"full_text\": \"third\"},\n {\"full_text\": \"fourth\"}]\n");
  std::string csv = work.write("c.csv", "id,full_text\n1,\"fifth\nline\"\n2,sixth\n");
  auto metrics = run_classification(options({jsonl, array, csv}, work.file("out.parquet")));
  ASSERT_TRUE(metrics.ok()) << metrics.status().to_string();
  EXPECT_EQ(metrics->rows, 6);
  // The same texts as one JSON lines file give the same probabilities.
  std::string same = work.write("same.jsonl",
                                "{\"full_text\":\"first, \\\"quoted\\\"\"}\n{\"full_text\":\"second\"}\n"
                                "{\"full_text\":\"third\"}\n{\"full_text\":\"fourth\"}\n"
                                "{\"full_text\":\"fifth\\nline\"}\n{\"full_text\":\"sixth\"}\n");
  ASSERT_TRUE(run_classification(options({same}, work.file("same_out.jsonl"))).ok());
  auto expected = read_jsonl(work.file("same_out.jsonl"));
  ASSERT_EQ(expected.size(), 6u);
  EXPECT_EQ(expected[4]["text"], "fifth\nline");
  // Back through our own Parquet reader, as JSON lines.
  RunOptions again = options({work.file("out.parquet")}, work.file("again.jsonl"));
  again.column = "text";
  ASSERT_TRUE(run_classification(again).ok());
  auto round = read_jsonl(work.file("again.jsonl"));
  ASSERT_EQ(round.size(), 6u);
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(round[i]["text"], expected[i]["text"]) << i;
}

TEST_F(RunnerTest, FolderOutputWritesOnePartPerInput) {
  TempDir work;
  std::string in = work.file("in");
  data::DatasetOptions shape;
  shape.shape = data::DatasetShape::kParquet10;
  shape.rows = 25;
  auto written = data::write_tweets_dataset(in, shape, {});
  ASSERT_TRUE(written.ok()) << written.status().to_string();
  RunOptions o = options({in}, work.file("out") + "/");
  auto metrics = run_classification(o);
  ASSERT_TRUE(metrics.ok()) << metrics.status().to_string();
  EXPECT_EQ(metrics->rows, 25);
  EXPECT_EQ(metrics->input_files, 10);
  EXPECT_EQ(metrics->output_files, 10);
  EXPECT_EQ(count_entries(work.file("out")), 10);
  EXPECT_TRUE(path_exists(work.file("out/part-00009.parquet")));
  // Part 0 holds rows 0..2 (25 rows over 10 files: 3,3,3,3,3,2,...).
  RunOptions back = options({work.file("out/part-00000.parquet")}, work.file("p0.jsonl"));
  back.column = "text";
  ASSERT_TRUE(run_classification(back).ok());
  EXPECT_EQ(read_jsonl(work.file("p0.jsonl")).size(), 3u);
}

TEST_F(RunnerTest, FailureInALaterInputRemovesEarlierParts) {
  TempDir work;
  work.write("in/a.jsonl", "{\"full_text\":\"fine\"}\n");
  work.write("in/b.jsonl", "{\"full_text\":\"fine\"}\n{broken\n");
  auto metrics = run_classification(options({work.file("in")}, work.file("out") + "/"));
  ASSERT_FALSE(metrics.ok());
  EXPECT_NE(metrics.status().message().find("b.jsonl: line 2"), std::string::npos)
      << metrics.status().message();
  EXPECT_EQ(count_entries(work.file("out")), 0);
}

TEST(Softmax, RowsSumToOneAndAreStable) {
  std::vector<float> x = {1000.f, 1001.f, -3.f, 5.f};
  softmax_rows(x.data(), 2, 2);
  EXPECT_NEAR(x[0] + x[1], 1.f, 1e-6);
  EXPECT_NEAR(x[1], 1.f / (1.f + std::exp(-1.f)), 1e-6);
  EXPECT_NEAR(x[3], 1.f / (1.f + std::exp(-8.f)), 1e-6);
}

}  // namespace
}  // namespace infercost::pipeline
