// `infercost plan` end to end: the built binary, the committed tiny model and small data.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "core/sha256.h"
#include "plan_test_util.h"
#include "record/record.h"
#include "test_utils.h"

namespace infercost::plan {
namespace {

using infercost::testing::count_entries;
using infercost::testing::slurp;
using infercost::testing::TempDir;

using Outcome = infercost::testing::CommandOutcome;
Outcome run_cli(const std::string& args) {
  return infercost::testing::run_infercost(args);
}

// The committed tiny model has 32 positions.
std::string model_args() {
  return " --model " + test::tiny_model_dir() + " --max-length 32 --threads 2 ";
}

TEST(PlanCli, HelpAndUsageErrors) {
  Outcome help = run_cli("plan --help");
  EXPECT_EQ(help.exit_code, 0);
  for (const char* flag : {"--records", "--prices", "--price-list", "--corpus-rows", "--batch-size",
                           "--max-batch-tokens", "--window-rows", "--json", "--column", "--input-format"}) {
    EXPECT_NE(help.output.find(flag), std::string::npos) << flag;
  }
  EXPECT_NE(run_cli("--help").output.find("plan"), std::string::npos);
  TempDir dir;
  const std::string in = dir.write("in.jsonl", test::jsonl_row(4));
  Outcome no_model = run_cli("plan " + in);
  EXPECT_EQ(no_model.exit_code, 2);
  EXPECT_NE(no_model.output.find("--model"), std::string::npos) << no_model.output;
  // The default is the model's limit; more than its positions is refused.
  Outcome too_long = run_cli("plan " + in + " --model " + test::tiny_model_dir() + " --max-length 64");
  EXPECT_EQ(too_long.exit_code, 2);
  EXPECT_NE(too_long.output.find("exceeds the model's 32 positions"), std::string::npos) << too_long.output;
  Outcome list = run_cli("plan " + in + model_args() + "--price-list nope");
  EXPECT_EQ(list.exit_code, 2);
  EXPECT_NE(list.output.find("seed-2021"), std::string::npos) << list.output;
  Outcome missing = run_cli("plan " + dir.file("none.jsonl") + model_args());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.output.find("none.jsonl"), std::string::npos) << missing.output;
  // The settings are checked before anything is read: an "auto" size is
  // refused, in the CLI's flags, before the missing input is noticed.
  Outcome auto_size = run_cli("plan " + dir.file("none.jsonl") + model_args() + "--batch-size auto");
  EXPECT_EQ(auto_size.exit_code, 2);
  EXPECT_NE(
      auto_size.output.find("--batch-size auto and --max-batch-tokens auto are sized from a device's memory"),
      std::string::npos)
      << auto_size.output;
  EXPECT_EQ(auto_size.output.find("none.jsonl"), std::string::npos) << auto_size.output;
}

TEST(PlanCli, BadInputRowAndBadRecordsNameTheFileAndLine) {
  TempDir dir;
  const std::string in =
      dir.write("in.jsonl", test::jsonl_row(4) + test::jsonl_row(5) + "{\"full_text\": \"the\", oops}\n");
  Outcome bad_row = run_cli("plan " + in + model_args());
  EXPECT_EQ(bad_row.exit_code, 3);
  EXPECT_NE(bad_row.output.find(in + ": line 3"), std::string::npos) << bad_row.output;
  Outcome skipped = run_cli("plan " + in + model_args() + "--on-error skip");
  EXPECT_EQ(skipped.exit_code, 0) << skipped.output;
  EXPECT_NE(skipped.output.find("2 rows to classify (0 null, 1 skipped)"), std::string::npos)
      << skipped.output;

  record::Record r;
  const std::string records = dir.write(
      "bad.jsonl", record::to_json_line(r) + "\n{\"schema\": \"infercost.bench/1\", \"config\": 7}\n");
  Outcome bad_records =
      run_cli("plan " + dir.file("in.jsonl") + model_args() + "--on-error skip --records " + records);
  EXPECT_EQ(bad_records.exit_code, 3);
  EXPECT_NE(bad_records.output.find(records + ": line 2"), std::string::npos) << bad_records.output;
}

// The plan's padding figures are the run's own: compare with `infercost run --metrics`.
TEST(PlanCli, PaddingFiguresMatchTheRun) {
  TempDir dir;
  // Three files of 100 rows whose longest rows differ (12, 22 and 32 tokens).
  for (int k = 0; k < 3; ++k) {
    std::string rows;
    for (int i = 0; i < 100; ++i) rows += test::jsonl_row(3 + (i * 37 + k * 11) % (10 + 10 * k));
    dir.write("data/part-" + std::to_string(k) + ".jsonl", rows);
  }
  const std::string data = dir.file("data");
  const std::string limits = " --window-rows 70 --max-batch-tokens 200 --batch-size 16 ";
  Outcome plan = run_cli("plan " + data + model_args() + limits + "--json " + dir.file("plan.json"));
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  auto p = nlohmann::json::parse(slurp(dir.file("plan.json")));
  EXPECT_EQ(p["scan"]["files"].size(), 3u);
  EXPECT_EQ(p["scan"]["longest"], 32);
  EXPECT_LT(p["padding"][0]["padding_efficiency"].get<double>(), 0.7);  // seed pads to 12, 22 and 32
  EXPECT_LT(p["padding"][1]["batch_fill"].get<double>(), 1.0);          // tokens batches are not all full
  for (const char* batching : {"tokens", "seed"}) {
    Outcome run = run_cli("run " + data + model_args() + limits + "--precision fp32 --batching " + batching +
                          " -o " + dir.file(std::string(batching) + ".jsonl") + " --metrics " +
                          dir.file(std::string(batching) + ".json"));
    ASSERT_EQ(run.exit_code, 0) << run.output;
    auto m = nlohmann::json::parse(slurp(dir.file(std::string(batching) + ".json")));
    const auto& policy = p["padding"][std::string(batching) == "seed" ? 0 : 1];
    ASSERT_EQ(policy["batching"], batching);
    EXPECT_EQ(p["scan"]["rows"], m["rows"]) << batching;
    EXPECT_EQ(policy["tokens"], m["tokens"]) << batching;
    EXPECT_EQ(policy["padded_tokens"], m["padded_tokens"]) << batching;
    EXPECT_EQ(policy["computed_tokens"], m["computed_tokens"]) << batching;
    EXPECT_EQ(policy["batches"], m["batches"]) << batching;
    EXPECT_EQ(policy["batch_size"], m["batch_size"]) << batching;
    EXPECT_DOUBLE_EQ(policy["padding_efficiency"].get<double>(), m["padding_efficiency"].get<double>());
  }
  // data/, plan.json, 2 outputs, their job records, 2 metrics: no temporaries
  EXPECT_EQ(count_entries(dir.path()), 8);
}

// `plan --json` and `run --metrics` (fp32) of `in` with `args`, in dir: the
// plan's text names the model's shape `shape`, and its tokens policy counts
// the run's tokens and FLOPs; p and m get the two JSONs.
void plan_and_run(TempDir& dir, const std::string& in, const std::string& args, const std::string& shape,
                  nlohmann::json& p, nlohmann::json& m) {
  Outcome plan = run_cli("plan " + in + args + "--json " + dir.file("plan.json"));
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  EXPECT_NE(plan.output.find(shape), std::string::npos) << plan.output;
  Outcome run = run_cli("run " + in + args + "--precision fp32 -o " + dir.file("out.jsonl") + " --metrics " +
                        dir.file("m.json"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  p = nlohmann::json::parse(slurp(dir.file("plan.json")));
  m = nlohmann::json::parse(slurp(dir.file("m.json")));
  // The tokens policy's work is the run's: its tokens and FLOPs.
  const auto& tokens = p["padding"][1];
  ASSERT_EQ(tokens["batching"], "tokens");
  EXPECT_EQ(tokens["tokens"], m["tokens"]);
  const double ran = m["model_flops"].get<double>();
  EXPECT_NEAR(tokens["flops"].get<double>(), ran, ran * 1e-9);
}

// Sum over the plan's length histogram of rows x row_flops(L).
double over_lengths(const nlohmann::json& p, const std::function<double(double)>& row_flops) {
  const auto& lengths = p["scan"]["length_histogram"]["lengths"];
  const auto& counts = p["scan"]["length_histogram"]["counts"];
  EXPECT_EQ(lengths.size(), counts.size());
  double total = 0;
  for (size_t i = 0; i < lengths.size() && i < counts.size(); ++i)
    total += counts[i].get<double>() * row_flops(lengths[i].get<double>());
  return total;
}

// ModernBERT on long rows: the plan counts what the run counts (its GLU, and
// local windows on two of three layers), well below what a BERT of the same
// sizes would cost at those lengths.
TEST(PlanCli, ModernBertWorkIsTheRunsOnLongRows) {
  TempDir dir;
  std::string rows;
  for (int length : {40, 300, 900, 1500, 2000}) rows += test::jsonl_row(length) + test::jsonl_row(length / 3);
  const std::string in = dir.write("long.jsonl", rows);
  const std::string model = std::string(INFERCOST_TEST_DATA_DIR) + "/golden/tiny-modernbert-long";
  const std::string args = " --model " + model + " --threads 2 ";
  nlohmann::json p, m;
  ASSERT_NO_FATAL_FAILURE(
      plan_and_run(dir, in, args, "3 layers, hidden 32, FFN 48, GLU, 2 of 3 layers local (window 32)", p, m));
  EXPECT_EQ(p["model"]["glu"], true);
  EXPECT_EQ(p["model"]["attention_windows"], nlohmann::json::array({0, 32, 32}));
  const double planned = p["padding"][1]["flops"].get<double>();
  // The same rows through a BERT of these sizes: every layer global, a 2 h f FFN.
  double longest = 0;
  const double bert = over_lengths(p, [&](double L) {
    const double h = 32, f = 48;
    longest = std::max(longest, L);
    return 3 * (2 * L * (4 * h * h + 2 * h * f) + 4 * L * L * h);
  });
  EXPECT_GT(longest, 1000) << "the rows are not long enough for the windows to matter";
  EXPECT_LT(planned, 0.6 * bert) << "the local layers' windows are not counted";
}

// DeBERTa: the plan counts the c2p and p2c products of every query-key pair
// as the run does (8 h a pair instead of BERT's 4 h).
TEST(PlanCli, DebertaWorkCountsTheRelativeTermsAsTheRunDoes) {
  TempDir dir;
  std::string rows;
  for (int length : {10, 60, 200, 400}) rows += test::jsonl_row(length) + test::jsonl_row(length / 3);
  const std::string in = dir.write("rows.jsonl", rows);
  const std::string args = " --model " + std::string(INFERCOST_TEST_DATA_DIR) +
                           "/golden/tiny-deberta-3 --threads 2 --max-length 512 ";
  nlohmann::json p, m;
  ASSERT_NO_FATAL_FAILURE(plan_and_run(
      dir, in, args, "3 layers, hidden 32, FFN 48, disentangled attention (2 relative terms)", p, m));
  EXPECT_EQ(p["model"]["relative_terms"], 2);
  // Per row: 3 layers x (2 L (4 h^2 + 2 h f) + 8 h L^2).
  const double want = over_lengths(p, [](double L) {
    const double h = 32, f = 48;
    return 3 * (2 * L * (4 * h * h + 2 * h * f) + 8 * L * L * h);
  });
  const double planned = p["padding"][1]["flops"].get<double>();
  EXPECT_NEAR(planned, want, want * 1e-9);
}

// `plan --embed` scans as `infercost embed` tokenizes: a sentence-transformers
// model's truncation (the tiny one's 64 tokens) and the prefix; it adds the
// vectors' size, and its tokens are the embedding run's.
TEST(PlanCli, EmbeddingJobsScanAsEmbedDoes) {
  TempDir dir;
  std::string rows;
  for (int i = 0; i < 40; ++i) {
    std::string text;
    for (int w = 0; w < 3 + (i * 7) % 90; ++w) text += w ? " hello world" : "hello world";
    rows += "{\"full_text\": \"" + text + "\"}\n";
  }
  const std::string in = dir.write("in.jsonl", rows);
  const std::string st = std::string(INFERCOST_TEST_DATA_DIR) + "/golden/tiny-st-roberta";
  for (const std::string prefix : {"", "query: "}) {
    SCOPED_TRACE(prefix);
    const std::string prefix_args = prefix.empty() ? "" : " --prefix '" + prefix + "'";
    Outcome plan = run_cli("plan " + in + " --model " + st + " --embed --threads 2" + prefix_args +
                           " --json " + dir.file("plan.json"));
    ASSERT_EQ(plan.exit_code, 0) << plan.output;
    EXPECT_NE(plan.output.find("output  40 vectors of 32 float32"), std::string::npos) << plan.output;
    auto p = nlohmann::json::parse(slurp(dir.file("plan.json")));
    EXPECT_EQ(p["task"], "embed");
    EXPECT_EQ(p["embedding"]["dimensions"], 32);
    EXPECT_EQ(p["embedding"]["vector_bytes"].get<double>(), 40 * 32 * 4);
    EXPECT_EQ(p["scan"]["max_length"], 64);
    EXPECT_NE(p["bench_command_template"].get<std::string>().find(" --embed"), std::string::npos);
    Outcome run = run_cli("embed " + in + " --model " + st + " --threads 2" + prefix_args + " -o " +
                          dir.file("v.parquet") + " --metrics " + dir.file("m.json") + " --quiet --force");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    auto m = nlohmann::json::parse(slurp(dir.file("m.json")));
    EXPECT_EQ(p["scan"]["tokens"], m["tokens"]);
    EXPECT_EQ(p["scan"]["max_length"], m["max_length"]);
  }
  // The embedding settings belong to --embed; the classifier's plan is as before.
  Outcome pooling = run_cli("plan " + in + " --model " + st + " --pooling mean");
  EXPECT_EQ(pooling.exit_code, 2) << pooling.output;
  EXPECT_NE(pooling.output.find("--pooling applies to embeddings only"), std::string::npos) << pooling.output;
  Outcome classify = run_cli("plan " + in + model_args() + "--json " + dir.file("plan.json"));
  ASSERT_EQ(classify.exit_code, 0) << classify.output;
  auto c = nlohmann::json::parse(slurp(dir.file("plan.json")));
  EXPECT_EQ(c["task"], "classify");
  EXPECT_FALSE(c.contains("embedding"));
  EXPECT_EQ(classify.output.find("vectors of"), std::string::npos);
  EXPECT_EQ(c["bench_command_template"].get<std::string>().find("--embed"), std::string::npos);
}

TEST(PlanCli, PredictsFromARecordAndListsTheUnmeasured) {
  TempDir dir;
  std::string rows;
  for (int i = 0; i < 40; ++i) rows += test::jsonl_row(3 + i % 10);
  rows += "{\"full_text\": null}\n";
  const std::string in = dir.write("in.jsonl", rows);
  // The tiny model's shape (2 layers, hidden 8, FFN 16): 2048 FLOPs per token and 64 per squared length.
  // 10 rows of lengths 9..16 (midpoint 12.5), 100 tokens: 2048 x 100 + 64 x 10 x 12.5^2 = 304800 FLOPs in
  // 0.5 s: 609600 FLOP/s.
  record::Record r;
  r.sweep_id = "s-42";
  r.point = 2;
  r.points = 3;
  r.started_at = "2026-12-01T03:40:00Z";
  r.config.device = "cpu";
  r.config.precision = "fp32";
  r.config.batching = "tokens";
  r.config.batch_size = 256;
  r.config.max_length = 32;
  r.model.name = "tiny";
  r.model.layers = 2;
  r.model.hidden = 8;
  r.model.intermediate = 16;
  r.rows = r.data.rows = 10;
  r.tokens = r.data.tokens = r.computed_tokens = 100;
  r.padded_tokens = 120;
  r.data.length_edges = {1, 9, 17};
  r.data.length_counts = {0, 10, 0};
  r.wall_seconds = {0.5, 0.4, 0.6};
  record::InstanceInfo i;
  i.name = "c5.12xlarge";
  i.price_list = "seed-2021";
  i.on_demand_usd_per_hour = i.usd_per_hour = 0.728;
  r.instance = i;
  const std::string records = dir.write("r.jsonl", record::to_json_line(r) + "\n");
  Outcome plan = run_cli("plan " + in + model_args() + "--price-list seed-2021 --records " + records +
                         " --corpus-rows 40000000 --json " + dir.file("plan.json"));
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  for (const std::string& want : std::vector<std::string>{
           "Predictions for 40,000,000 rows", "c5.12xlarge", "projected", "[1]", "sweep s-42 point 2/3",
           "Not measured", "p3.2xlarge", "break-even", "infercost bench " + in}) {
    EXPECT_NE(plan.output.find(want), std::string::npos) << want << "\n" << plan.output;
  }
  auto p = nlohmann::json::parse(slurp(dir.file("plan.json")));
  EXPECT_EQ(p["scan"]["rows"], 40);
  EXPECT_EQ(p["scan"]["rows_null"], 1);
  // Real lengths 3..12, four rows each: 2048 x 4 x 75 + 64 x 4 x (9 + 16 + ... + 144) FLOPs.
  double real_flops = 0;
  for (int L = 3; L <= 12; ++L) real_flops += 4 * (2048.0 * L + 64.0 * L * L);
  EXPECT_DOUBLE_EQ(p["padding"][1]["flops"].get<double>(), real_flops);
  ASSERT_EQ(p["predictions"].size(), 2u);  // seed and tokens, fp32
  const auto& best = p["predictions"][0];
  EXPECT_EQ(best["instance"], "c5.12xlarge");
  EXPECT_EQ(best["batching"], "tokens");
  const double seconds = real_flops * 1e6 / 609600.0;
  EXPECT_NEAR(best["seconds"].get<double>(), seconds, 1e-6 * seconds);
  EXPECT_NEAR(best["usd"].get<double>(), seconds / 3600 * 0.728, 1e-6);
  EXPECT_EQ(best["basis"], "projected");
  EXPECT_EQ(p["records"][0]["origin"], records + ": line 1");
  EXPECT_EQ(p["unmeasured"].size(), 9u);  // the rest of seed-2021
  // The text's [1] is the JSON's record 1, records[0].
  EXPECT_EQ(best["record"], 1);
  EXPECT_EQ(p["records"][0]["number"], 1);
  int gpu = 0;
  const bool cuda_module =
      std::filesystem::exists(std::string(INFERCOST_BINARY_DIR) + "/libinfercost_cuda.so");
  for (const auto& u : p["unmeasured"]) {
    EXPECT_GT(u["break_even_rows_per_second"].get<double>(), 0) << u;
    const std::string command = u["bench_command"].get<std::string>();
    EXPECT_NE(command.find("--instance " + u["instance"].get<std::string>()), std::string::npos);
    // GPU instances get --device cuda, and a note where this build has no CUDA module; CPU ones neither.
    const bool is_gpu = u["gpus"].get<int>() > 0;
    gpu += is_gpu;
    EXPECT_EQ(command.find("--device cuda") != std::string::npos, is_gpu) << command;
    EXPECT_EQ(u["bench_note"].get<std::string>().find(
                  "needs the CUDA module (libinfercost_cuda.so), which this build "
                  "does not have") != std::string::npos,
              is_gpu && !cuda_module)
        << u;
  }
  EXPECT_EQ(gpu, 8);  // seed-2021 less c5.12xlarge: 8 GPU instances and c5.24xlarge
  EXPECT_EQ(plan.output.find("On a GPU instance add --device cuda. Note: --device cuda needs the CUDA module "
                             "(libinfercost_cuda.so), which this build does not have") != std::string::npos,
            !cuda_module)
      << plan.output;
}

TEST(PlanCli, MeasuredWhenARecordRanTheseVeryInputs) {
  TempDir dir;
  std::string rows;
  for (int i = 0; i < 20; ++i) rows += test::jsonl_row(3 + i % 7);
  const std::string in = dir.write("in.jsonl", rows);
  Outcome first = run_cli("plan " + in + model_args() + "--json " + dir.file("p.json"));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  auto scan = nlohmann::json::parse(slurp(dir.file("p.json")))["scan"];
  record::Record r;
  r.label = "box";
  r.config.device = "cpu";
  r.config.precision = "fp32";
  r.config.batching = "tokens";
  r.config.max_length = 32;
  r.model.layers = 2;
  r.model.hidden = 8;
  r.model.intermediate = 16;
  r.rows = r.data.rows = scan["rows"].get<int64_t>();
  r.tokens = r.data.tokens = r.computed_tokens = scan["tokens"].get<int64_t>();
  r.padded_tokens = r.tokens + 10;
  r.data.bytes = scan["bytes"].get<int64_t>();
  r.data.files = 1;
  r.data.content_sha256 = sha256_hex(rows);
  r.wall_seconds = {0.25, 0.2, 0.3};
  record::Record wrong = r;
  wrong.data.content_sha256 = sha256_hex("other bytes");
  wrong.label = "other";
  const std::string records =
      dir.write("r.jsonl", record::to_json_line(r) + "\n" + record::to_json_line(wrong) + "\n");
  Outcome plan =
      run_cli("plan " + in + model_args() + "--records " + records + " --json " + dir.file("p.json"));
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  auto p = nlohmann::json::parse(slurp(dir.file("p.json")));
  EXPECT_EQ(p["scan"]["content_sha256"], sha256_hex(rows));
  int checked = 0;
  for (const auto& prediction : p["predictions"]) {
    if (prediction["batching"] != "tokens") continue;
    if (prediction["target"] == "box (unpriced)") {
      EXPECT_EQ(prediction["basis"], "measured");
      EXPECT_DOUBLE_EQ(prediction["seconds"].get<double>(), 0.25);
      ++checked;
    } else if (prediction["target"] == "other (unpriced)") {
      EXPECT_EQ(prediction["basis"], "projected");
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2);
  EXPECT_NE(plan.output.find("measured"), std::string::npos);
}

}  // namespace
}  // namespace infercost::plan
