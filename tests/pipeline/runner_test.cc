#include "run/runner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "backend/backend.h"
#include "corpus/tweets.h"
#include "model/model_dir.h"
#include "pipeline_test_util.h"
#include "test_utils.h"

namespace infercost::run {
namespace {

using infercost::testing::count_entries;
using infercost::testing::slurp;
using infercost::testing::TempDir;

// One tiny synthetic model shared by the suite (synthesis is deterministic).
class RunnerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    make_tiny_model(*dir_, 3);
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
    // The tests compare against fp32 references; "auto" may pick bf16.
    o.precision = "fp32";
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
  ASSERT_TRUE(corpus::write_tweets_jsonl(input, 500, 11).ok());
  auto metrics = run_files(options({input}, work.file("out.jsonl")));
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
  for (const char* key :
       {"rows", "tokens", "padded_tokens", "wall_seconds", "rows_per_second", "tokens_per_second",
        "peak_rss_bytes", "stages", "model", "threads", "batching", "precision", "batch_size",
        "max_batch_tokens", "window_rows", "tokenizer_threads", "batch_fill", "infer_share"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["batching"], "tokens");
  EXPECT_EQ(j["batch_size"], 256);  // the tokens policy's default
  EXPECT_EQ(j["max_batch_tokens"], 4096);
  EXPECT_EQ(j["window_rows"], 8192);
  EXPECT_EQ(j["tokenizer_threads"], 1);  // CPU default
  EXPECT_EQ(j["precision"], "fp32");
  EXPECT_GT(metrics->infer_share(), 0.0);
  EXPECT_LE(metrics->infer_share(), 1.0);
  EXPECT_NE(metrics->to_summary().find("stages overlap"), std::string::npos) << metrics->to_summary();
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
  auto metrics = run_files(o);
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
  ASSERT_TRUE(corpus::write_tweets_jsonl(input, 200, 5).ok());
  std::vector<std::vector<nlohmann::json>> results;
  for (int batch : {1, 7, 64}) {
    RunOptions o = options({input}, work.file("out" + std::to_string(batch) + ".jsonl"));
    o.batch_size = batch;
    auto metrics = run_files(o);
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
  auto metrics = run_files(options({a, b}, work.file("out.jsonl")));
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
  auto metrics = run_files(options({input}, out_dir.file("out.jsonl")));
  ASSERT_FALSE(metrics.ok());
  EXPECT_NE(metrics.status().message().find(input + ": line 2"), std::string::npos)
      << metrics.status().message();
  EXPECT_EQ(count_entries(out_dir.path()), 0);
}

TEST_F(RunnerTest, SkipPolicyKeepsGoodRows) {
  TempDir work;
  std::string input = work.write("bad.jsonl", "{\"full_text\":\"ok\"}\n{oops\n{\"full_text\":\"fine\"}\n");
  RunOptions o = options({input}, work.file("out.jsonl"));
  o.on_bad_row = OnBadRow::kSkip;
  auto metrics = run_files(o);
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
  EXPECT_EQ(run_files(o).status().code(), StatusCode::kInvalidArgument);
  o = options({input}, work.file("out.xml"));
  EXPECT_EQ(run_files(o).status().code(), StatusCode::kInvalidArgument);
  o = options({work.file("missing.jsonl")}, work.file("out.jsonl"));
  EXPECT_EQ(run_files(o).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(count_entries(work.path()), 1);
}

TEST_F(RunnerTest, NullTextsAreKeptWithNullOutputs) {
  TempDir work;
  std::string input = work.write(
      "n.jsonl", "{\"full_text\":\"good day\"}\n{\"full_text\":null}\n{\"full_text\":\"bad day\"}\n");
  auto metrics = run_files(options({input}, work.file("out.jsonl")));
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
  auto metrics = run_files(options({jsonl, array, csv}, work.file("out.parquet")));
  ASSERT_TRUE(metrics.ok()) << metrics.status().to_string();
  EXPECT_EQ(metrics->rows, 6);
  // The same texts as one JSON lines file give the same probabilities.
  std::string same = work.write("same.jsonl",
                                "{\"full_text\":\"first, \\\"quoted\\\"\"}\n{\"full_text\":\"second\"}\n"
                                "{\"full_text\":\"third\"}\n{\"full_text\":\"fourth\"}\n"
                                "{\"full_text\":\"fifth\\nline\"}\n{\"full_text\":\"sixth\"}\n");
  ASSERT_TRUE(run_files(options({same}, work.file("same_out.jsonl"))).ok());
  auto expected = read_jsonl(work.file("same_out.jsonl"));
  ASSERT_EQ(expected.size(), 6u);
  EXPECT_EQ(expected[4]["text"], "fifth\nline");
  // Back through our own Parquet reader, as JSON lines.
  RunOptions again = options({work.file("out.parquet")}, work.file("again.jsonl"));
  again.column = "text";
  ASSERT_TRUE(run_files(again).ok());
  auto round = read_jsonl(work.file("again.jsonl"));
  ASSERT_EQ(round.size(), 6u);
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(round[i]["text"], expected[i]["text"]) << i;
}

TEST_F(RunnerTest, FolderOutputWritesOnePartPerInput) {
  TempDir work;
  std::string in = work.file("in");
  corpus::DatasetOptions shape;
  shape.shape = corpus::DatasetShape::kParquet10;
  shape.rows = 25;
  auto written = corpus::write_tweets_dataset(in, shape, {});
  ASSERT_TRUE(written.ok()) << written.status().to_string();
  RunOptions o = options({in}, work.file("out") + "/");
  auto metrics = run_files(o);
  ASSERT_TRUE(metrics.ok()) << metrics.status().to_string();
  EXPECT_EQ(metrics->rows, 25);
  EXPECT_EQ(metrics->input_files, 10);
  EXPECT_EQ(metrics->output_files, 10);
  EXPECT_EQ(count_entries(work.file("out")), 11);  // the parts and the job's record
  EXPECT_TRUE(path_exists(work.file("out/.infercost-job")));
  EXPECT_TRUE(path_exists(work.file("out/part-00009.parquet")));
  // Part 0 holds rows 0..2 (25 rows over 10 files: 3,3,3,3,3,2,...).
  RunOptions back = options({work.file("out/part-00000.parquet")}, work.file("p0.jsonl"));
  back.column = "text";
  ASSERT_TRUE(run_files(back).ok());
  EXPECT_EQ(read_jsonl(work.file("p0.jsonl")).size(), 3u);
}

TEST_F(RunnerTest, FailureInALaterInputRemovesEarlierParts) {
  TempDir work;
  work.write("in/a.jsonl", "{\"full_text\":\"fine\"}\n");
  work.write("in/b.jsonl", "{\"full_text\":\"fine\"}\n{broken\n");
  auto metrics = run_files(options({work.file("in")}, work.file("out") + "/"));
  ASSERT_FALSE(metrics.ok());
  EXPECT_NE(metrics.status().message().find("b.jsonl: line 2"), std::string::npos)
      << metrics.status().message();
  EXPECT_EQ(count_entries(work.file("out")), 0);
}

// Probabilities of each text classified alone (a batch of one, fp32): what
// every batching must reproduce.
std::vector<std::vector<float>> reference_probs(const std::string& model_dir,
                                                const std::vector<std::string>& texts) {
  std::vector<std::vector<float>> out;
  auto m = model::load_model_dir(model_dir, model::LoadOptions());
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  if (!m.ok()) return out;
  backend::BackendOptions bo;
  bo.threads = 2;
  auto engine = backend::create_backend("cpu", bo);
  EXPECT_TRUE(engine.ok()) << engine.status().to_string();
  if (!engine.ok()) return out;
  EXPECT_TRUE((*engine)->prepare(m->config, m->weights).ok());
  for (const std::string& text : texts) {
    auto ids = m->tokenizer->encode(text);
    EXPECT_TRUE(ids.ok());
    backend::TokenBatch b;
    b.batch = 1;
    b.seq_len = static_cast<int>(ids->size());
    b.ids = *ids;
    b.lengths = {b.seq_len};
    auto logits = (*engine)->forward(b);
    EXPECT_TRUE(logits.ok()) << logits.status().to_string();
    softmax_rows(logits->values.data(), 1, logits->width);
    out.push_back(logits->values);
  }
  return out;
}

std::string jsonl_line(const std::string& text) {
  return nlohmann::json{{"full_text", text}}.dump() + "\n";
}

TEST_F(RunnerTest, EveryBatchingGivesTheSameOutputsInInputOrder) {
  TempDir work;
  // a: tweets with a null row and two bad rows (skipped) in the middle; b: no
  // rows; c: more tweets. One output part each.
  ASSERT_TRUE(corpus::write_tweets_jsonl(work.file("src_a.jsonl"), 30, 21).ok());
  ASSERT_TRUE(corpus::write_tweets_jsonl(work.file("src_c.jsonl"), 17, 22).ok());
  auto tweets_a = read_jsonl(work.file("src_a.jsonl"));
  auto tweets_c = read_jsonl(work.file("src_c.jsonl"));
  std::string a, c;
  std::vector<nlohmann::json> expected_a, expected_c;  // text or null
  for (size_t i = 0; i < tweets_a.size(); ++i) {
    if (i == 9) {
      a += "{\"full_text\":null}\n";
      expected_a.push_back(nullptr);
    }
    if (i == 13) a += "{oops\n";
    if (i == 20) a += "{\"full_text\": 5}\n";
    a += jsonl_line(tweets_a[i]["full_text"]);
    expected_a.push_back(tweets_a[i]["full_text"]);
  }
  for (const auto& t : tweets_c) {
    c += jsonl_line(t["full_text"]);
    expected_c.push_back(t["full_text"]);
  }
  work.write("in/a.jsonl", a);
  work.write("in/b.jsonl", "");
  work.write("in/c.jsonl", c);
  std::vector<std::string> texts;
  for (const auto* list : {&expected_a, &expected_c}) {
    for (const auto& t : *list) texts.push_back(t.is_null() ? std::string() : t.get<std::string>());
  }
  const auto reference = reference_probs(dir_->file("tiny"), texts);
  ASSERT_EQ(reference.size(), texts.size());

  int run = 0;
  for (Batching batching : {Batching::kTokens, Batching::kSeed}) {
    for (int window : {7, 8192}) {
      for (int batch : {1, 5}) {
        for (int tokenizers : {1, 3}) {
          SCOPED_TRACE(std::string(batching_name(batching)) + " window " + std::to_string(window) +
                       " batch " + std::to_string(batch) + " tokenizers " + std::to_string(tokenizers));
          const std::string out = work.file("out" + std::to_string(run++) + "/");
          RunOptions o = options({work.file("in")}, out);
          o.batching = batching;
          o.window_rows = window;
          o.batch_size = batch;
          o.tokenizer_threads = tokenizers;
          o.on_bad_row = OnBadRow::kSkip;
          auto metrics = run_files(o);
          ASSERT_TRUE(metrics.ok()) << metrics.status().to_string();
          EXPECT_EQ(metrics->rows, 47);
          EXPECT_EQ(metrics->rows_null, 1);
          EXPECT_EQ(metrics->rows_skipped, 2);
          EXPECT_EQ(metrics->output_files, 3);
          EXPECT_EQ(metrics->batch_size, batch);
          ASSERT_TRUE(path_exists(out + "b.jsonl"));
          EXPECT_EQ(slurp(out + "b.jsonl"), "");
          size_t k = 0;
          for (auto [part, expected] :
               {std::pair{"a.jsonl", &expected_a}, std::pair{"c.jsonl", &expected_c}}) {
            auto rows = read_jsonl(out + part);
            ASSERT_EQ(rows.size(), expected->size()) << part;
            for (size_t i = 0; i < rows.size(); ++i, ++k) {
              EXPECT_EQ(rows[i]["text"], (*expected)[i]) << part << " row " << i;
              if ((*expected)[i].is_null()) {
                EXPECT_TRUE(rows[i]["label"].is_null());
                continue;
              }
              // 2e-4, not 1e-5: oneDNN blocks its GEMMs by the batch's row
              // count, so fp32 sums round differently per batch shape, and the
              // synthetic head amplifies that (see BatchSizeDoesNotChangePredictions).
              // A row out of place would miss by far more: logits have std 6.
              const double neg = rows[i]["negative"], pos = rows[i]["positive"];
              EXPECT_NEAR(neg, reference[k][0], 2e-4) << part << " row " << i;
              EXPECT_NEAR(pos, reference[k][1], 2e-4) << part << " row " << i;
              if (std::abs(reference[k][1] - reference[k][0]) > 4e-4) {
                EXPECT_EQ(rows[i]["label"], reference[k][1] > reference[k][0] ? "POSITIVE" : "NEGATIVE");
              }
            }
          }
        }
      }
    }
  }
}

TEST_F(RunnerTest, SeedPadsEveryRowToItsFilesLongestRow) {
  model::LoadOptions load;
  load.load_weights = false;
  auto m = model::load_model_dir(dir_->file("tiny"), load);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  // [CLS] words [SEP]: 3, 5, 4 tokens in file 1; 8, 3 in file 2.
  for (auto [text, length] :
       {std::pair{"a", 3}, std::pair{"a b c", 5}, std::pair{"a b", 4}, std::pair{"a b c d e f", 8}}) {
    ASSERT_EQ(m->tokenizer->encode(text)->size(), static_cast<size_t>(length)) << text;
  }
  TempDir work;
  std::string f1 = work.write("f1.jsonl", jsonl_line("a") + jsonl_line("a b c") + jsonl_line("a b"));
  std::string f2 = work.write("f2.jsonl", jsonl_line("a b c d e f") + jsonl_line("a"));
  RunOptions o = options({f1, f2}, work.file("out.jsonl"));
  o.batching = Batching::kSeed;
  o.batch_size = 2;
  o.window_rows = 1;  // rounded up to 2: batches still count from each file's start
  auto metrics = run_files(o);
  ASSERT_TRUE(metrics.ok()) << metrics.status().to_string();
  EXPECT_EQ(metrics->tokens, 3 + 5 + 4 + 8 + 3);
  EXPECT_EQ(metrics->computed_tokens, 3 * 5 + 2 * 8);  // rows x file max, padding computed
  EXPECT_EQ(metrics->padded_tokens, 3 * 5 + 2 * 8);
  EXPECT_EQ(metrics->batches, 3);  // f1: 2 + 1 rows; f2: 2 rows
  EXPECT_EQ(metrics->window_rows, 2);
  EXPECT_DOUBLE_EQ(metrics->padding_efficiency(), 23.0 / 31.0);
  EXPECT_EQ(metrics->batching, "seed");
  EXPECT_EQ(read_jsonl(work.file("out.jsonl")).size(), 5u);
  // The default seed batch is 100 x threads.
  o.batch_size = 0;
  o.force = true;
  metrics = run_files(o);
  ASSERT_TRUE(metrics.ok()) << metrics.status().to_string();
  EXPECT_EQ(metrics->batch_size, 200);
  EXPECT_EQ(metrics->batches, 2);
}

TEST_F(RunnerTest, TokenBatchingSpendsNothingOnPaddingOfTweets) {
  TempDir work;
  const std::string input = work.file("tweets.jsonl");
  ASSERT_TRUE(corpus::write_tweets_jsonl(input, 3000, 7).ok());
  for (int budget : {1024, 4096}) {
    RunOptions o = options({input}, work.file("out.jsonl"));
    o.max_batch_tokens = budget;
    o.force = true;
    auto metrics = run_files(o);
    ASSERT_TRUE(metrics.ok()) << metrics.status().to_string();
    EXPECT_EQ(metrics->rows, 3000);
    EXPECT_DOUBLE_EQ(metrics->padding_efficiency(), 1.0);
    // Fill depends on how many rows share a length: 3000 rows in 4096-token
    // batches (23 batches) give each batch ~4% of the sorted lengths (0.924
    // measured); 1024-token batches (83) give 0.983. Full 8192-row windows fill better.
    EXPECT_GE(metrics->batch_fill(), budget == 1024 ? 0.95 : 0.90) << metrics->to_summary();
    EXPECT_GT(metrics->tokens, 3000 * 3);
  }
}

TEST_F(RunnerTest, BadRowAfterSeveralWindowsFailsPromptlyAndLeavesNothing) {
  TempDir work;
  std::string text;
  for (int i = 0; i < 60; ++i) text += jsonl_line("row number " + std::to_string(i));
  text += "{\"full_text\": [1]}\n";  // line 61
  for (int i = 0; i < 20; ++i) text += jsonl_line("after " + std::to_string(i));
  const std::string input = work.write("in/bad.jsonl", text);
  work.write("in/a_first.jsonl", jsonl_line("committed before the failure"));
  for (Batching batching : {Batching::kTokens, Batching::kSeed}) {
    for (const std::string& output : {work.file("out.jsonl"), work.file("parts") + "/"}) {
      SCOPED_TRACE(std::string(batching_name(batching)) + " -> " + output);
      RunOptions o = options({work.file("in")}, output);
      o.batching = batching;
      o.window_rows = 7;
      o.batch_size = 3;
      o.tokenizer_threads = 2;
      auto metrics = run_or_abort_on_hang(o);
      ASSERT_FALSE(metrics.ok());
      EXPECT_NE(metrics.status().message().find(input + ": line 61"), std::string::npos)
          << metrics.status().message();
      EXPECT_FALSE(path_exists(work.file("out.jsonl")));
      if (path_exists(work.file("parts"))) {
        EXPECT_EQ(count_entries(work.file("parts")), 0);
      }
    }
  }
}

TEST_F(RunnerTest, ZeroRowInputGivesAnEmptyOutput) {
  TempDir work;
  std::string input = work.write("empty.jsonl", "");
  for (Batching batching : {Batching::kTokens, Batching::kSeed}) {
    RunOptions o = options({input}, work.file("out.csv"));
    o.batching = batching;
    o.force = true;
    auto metrics = run_or_abort_on_hang(o);
    ASSERT_TRUE(metrics.ok()) << metrics.status().to_string();
    EXPECT_EQ(metrics->rows, 0);
    EXPECT_EQ(metrics->batches, 0);
    EXPECT_EQ(slurp(work.file("out.csv")), "text,negative,positive,label\n");
  }
}

TEST_F(RunnerTest, RejectsBadBatchingOptions) {
  TempDir work;
  std::string input = work.write("a.jsonl", jsonl_line("x"));
  RunOptions o = options({input}, work.file("out.jsonl"));
  o.window_rows = 0;
  EXPECT_EQ(run_files(o).status().code(), StatusCode::kInvalidArgument);
  o = options({input}, work.file("out.jsonl"));
  o.max_batch_tokens = -1;
  EXPECT_EQ(run_files(o).status().code(), StatusCode::kInvalidArgument);
  o = options({input}, work.file("out.jsonl"));
  o.precision = "fp8";
  auto bad = run_files(o);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("fp8"), std::string::npos) << bad.status().message();
  o = options({input}, work.file("out.jsonl"));
  o.max_batch_tokens = 2;  // below one row's length: each row runs alone
  auto alone = run_files(o);
  ASSERT_TRUE(alone.ok()) << alone.status().to_string();
  EXPECT_EQ(alone->batches, 1);
  EXPECT_EQ(count_entries(work.path()), 3);  // the input, the output and its job's record
  EXPECT_EQ(parse_batching("tokens").value(), Batching::kTokens);
  EXPECT_EQ(parse_batching("seed").value(), Batching::kSeed);
  EXPECT_FALSE(parse_batching("sorted").ok());
}

}  // namespace
}  // namespace infercost::run
