// `infercost bench` end to end, through the built binary, with the tiny
// committed model and a few dozen generated rows.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>

#include "infercost/record/record.h"
#include "infercost/sweep/nvml.h"
#include "test_utils.h"

namespace infercost::sweep {
namespace {

using testing::slurp;
using testing::TempDir;

using Outcome = infercost::testing::CommandOutcome;
Outcome run_cli(const std::string& args) {
  return infercost::testing::run_infercost(args);
}

std::string tiny_model() {
  return std::string(INFERCOST_TEST_DATA_DIR) + "/model/hf_tiny_distilbert";
}

// The sweep settings every test shares: 40 generated rows, the tiny model
// (32 positions), one thread.
std::string base_args(const TempDir& dir) {
  return "bench --model " + tiny_model() + " --rows 40 --data-seed 3 --data-dir " + dir.file("data") +
         " --max-length 32 --threads 1 --monitor-interval 0.02";
}

std::vector<record::Record> load(const std::string& path) {
  Result<std::vector<record::Record>> records = record::load_records({path});
  EXPECT_TRUE(records.ok()) << records.status().to_string();
  return records.ok() ? *records : std::vector<record::Record>{};
}

TEST(BenchCli, TwoPointSweepWritesValidRecords) {
  TempDir dir;
  const std::string out = dir.file("results.jsonl");
  Outcome o =
      run_cli(base_args(dir) +
              " --batching seed,tokens --precision fp32 --repetitions 2 --warmup 1 --label ci --instance "
              "c5.12xlarge --out " +
              out);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("writing 40 synthetic rows as json-3"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("point 2/2"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("rows/s median"), std::string::npos) << o.output;
  std::vector<record::Record> records = load(out);
  ASSERT_EQ(records.size(), 2u);
  const record::Record& seed = records[0];
  const record::Record& tokens = records[1];
  for (const record::Record& r : records) {
    EXPECT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.schema, record::kSchema);
    EXPECT_EQ(r.points, 2);
    EXPECT_EQ(r.sweep_id, records[0].sweep_id);
    EXPECT_EQ(r.label, "ci");
    EXPECT_EQ(r.repetitions.size(), 2u);
    EXPECT_EQ(r.warmup, 1);
    EXPECT_EQ(r.rows, 40);
    EXPECT_EQ(r.data.rows, 40);
    EXPECT_EQ(r.data.shape, "json-3");
    EXPECT_EQ(r.data.files, 3);
    EXPECT_GT(r.data.bytes, 0);
    EXPECT_EQ(r.data.content_sha256.size(), 64u);
    int64_t histogram_rows = 0;
    for (int64_t c : r.data.length_counts) histogram_rows += c;
    EXPECT_EQ(histogram_rows, 40);
    EXPECT_EQ(r.config.threads, 1);
    EXPECT_EQ(r.config.max_length, 32);
    EXPECT_EQ(r.config.precision, "fp32");
    EXPECT_GT(r.wall_seconds.median, 0);
    EXPECT_GT(r.rows_per_second.median, 0);
    EXPECT_GT(r.peak_rss_bytes, 0);
    EXPECT_FALSE(r.hardware.hostname.empty());
    EXPECT_EQ(r.software.infercost, "0.1.0");
    EXPECT_EQ(r.model.architecture, "distilbert");
    EXPECT_GT(r.model.parameters, 0);
    ASSERT_TRUE(r.instance.has_value());
    EXPECT_EQ(r.instance->name, "c5.12xlarge");
    ASSERT_TRUE(r.cost.has_value());
    EXPECT_GT(r.cost->cost_to_solution_usd, 0);
    ASSERT_GE(r.run_command.size(), 3u);
    EXPECT_EQ(r.run_command[1], "run");
    EXPECT_EQ(r.command[1], "bench");
  }
  EXPECT_EQ(seed.point, 1);
  EXPECT_EQ(seed.config.batching, "seed");
  EXPECT_EQ(tokens.point, 2);
  EXPECT_EQ(tokens.config.batching, "tokens");
  // The same rows and real tokens whatever the batching; seed computes padding.
  EXPECT_EQ(seed.tokens, tokens.tokens);
  EXPECT_EQ(seed.data.content_sha256, tokens.data.content_sha256);
  EXPECT_EQ(seed.data.length_counts, tokens.data.length_counts);
  EXPECT_LT(seed.padding_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(tokens.padding_efficiency, 1.0);
  // No run output is left behind in the temporary folder.
  EXPECT_TRUE(std::filesystem::exists(dir.file("data/json-3-40rows-seed3.complete")));

  // Rerun with --append: the data is reused and the records are added.
  Outcome again = run_cli(base_args(dir) + " --repetitions 1 --warmup 0 --append --out " + out);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("using the cached json-3 data"), std::string::npos) << again.output;
  std::vector<record::Record> appended = load(out);
  ASSERT_EQ(appended.size(), 3u);
  EXPECT_NE(appended[2].sweep_id, appended[0].sweep_id);
  EXPECT_EQ(appended[2].data.content_sha256, seed.data.content_sha256);
  EXPECT_FALSE(appended[2].instance.has_value());
  // Without --append the file is replaced.
  Outcome replace = run_cli(base_args(dir) + " --repetitions 1 --warmup 0 --out " + out);
  ASSERT_EQ(replace.exit_code, 0) << replace.output;
  EXPECT_EQ(load(out).size(), 1u);
}

TEST(BenchCli, AFailedPointIsRecordedAndTheSweepGoesOn) {
  Result<std::unique_ptr<Nvml>> nvml = Nvml::load();
  if (nvml.ok() && (*nvml)->device_count() > 0)
    GTEST_SKIP() << "a CUDA device is present: the cuda point may succeed";
  TempDir dir;
  const std::string out = dir.file("r.jsonl");
  Outcome o = run_cli(base_args(dir) + " --device cpu,cuda --repetitions 1 --warmup 0 --out " + out);
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_NE(o.output.find("1 of 2 points failed"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("FAILED"), std::string::npos) << o.output;
  std::vector<record::Record> records = load(out);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_TRUE(records[0].ok()) << records[0].error;
  EXPECT_EQ(records[0].config.device, "cpu");
  EXPECT_EQ(records[0].rows, 40);
  EXPECT_FALSE(records[1].ok());
  EXPECT_EQ(records[1].status, "failed");
  EXPECT_EQ(records[1].config.device, "cuda");
  EXPECT_NE(records[1].error.find("cuda"), std::string::npos) << records[1].error;
  EXPECT_EQ(records[1].error.rfind("repetition 1: ", 0), 0u) << records[1].error;
  EXPECT_TRUE(records[1].repetitions.empty());

  // A 'gpus' rule on a device whose GPUs cannot be counted fails that point, saying why.
  Outcome count = run_cli(base_args(dir) + " --device cuda --batch-size 40xgpus --out " + out);
  EXPECT_EQ(count.exit_code, 1) << count.output;
  records = load(out);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].config.batch_size_rule, "40xgpus");
  EXPECT_NE(records[0].error.find(
                "--batch-size 40xgpus: cannot count the GPUs of device 'cuda': NVML not available"),
            std::string::npos)
      << records[0].error;
}

TEST(BenchCli, DryRunListsPointsAndRunsNothing) {
  TempDir dir;
  Outcome o = run_cli(base_args(dir) + " --shape json-3,parquet --batch-size 8,100xvcpus --dry-run --out " +
                      dir.file("r.jsonl"));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("4 points"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("batch 100xvcpus auto tokens parquet cpu 1 thread"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("--batch-size 100"), std::string::npos) << o.output;
  EXPECT_FALSE(std::filesystem::exists(dir.file("r.jsonl")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("data")));
}

TEST(BenchCli, UsageErrorsStopBeforeAnythingRuns) {
  TempDir dir;
  const std::string out = dir.file("r.jsonl");
  Outcome unknown = run_cli(base_args(dir) + " --instance c5.13xlarge --out " + out);
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("c5.13xlarge"), std::string::npos) << unknown.output;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(dir.file("data")));

  Outcome gpu_rule = run_cli(base_args(dir) + " --batch-size 40xgpus --out " + out);
  EXPECT_EQ(gpu_rule.exit_code, 2) << gpu_rule.output;
  EXPECT_NE(gpu_rule.output.find("a 'gpus' rule needs a GPU device"), std::string::npos) << gpu_rule.output;

  const std::string sweep = dir.write("s.json", "{\"batch_sizes\": [8]}");
  Outcome bad_file = run_cli(base_args(dir) + " --sweep " + sweep + " --out " + out);
  EXPECT_EQ(bad_file.exit_code, 2) << bad_file.output;
  EXPECT_NE(bad_file.output.find(sweep + ": unknown key \"batch_sizes\""), std::string::npos)
      << bad_file.output;

  Outcome no_out = run_cli(base_args(dir));
  EXPECT_EQ(no_out.exit_code, 2) << no_out.output;
  EXPECT_NE(no_out.output.find("--out"), std::string::npos) << no_out.output;

  Outcome no_model = run_cli("bench --out " + out + " --model " + dir.file("nope"));
  EXPECT_EQ(no_model.exit_code, 2) << no_model.output;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_EQ(run_cli("bench --help").exit_code, 0);
}

TEST(BenchCli, SweepFileGivesThePointsAndFlagsOverrideIt) {
  TempDir dir;
  const std::string sweep = dir.write("s.json", R"({"model": ")" + tiny_model() + R"(",
    "out": "from-file.jsonl", "rows": 30, "data_dir": "data", "max_length": 32, "threads": [1],
    "batch_size": [4, 8], "repetitions": 1, "warmup": 0})");
  Outcome o = run_cli("bench --sweep " + sweep + " --batch-size 16");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  std::vector<record::Record> records = load(dir.file("from-file.jsonl"));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].config.batch_size, 16);
  EXPECT_EQ(records[0].rows, 30);
  EXPECT_TRUE(std::filesystem::exists(dir.file("data/json-3-30rows-seed1.complete")));
}

}  // namespace
}  // namespace infercost::sweep
