// End-to-end: the `infercost` executable run the way a user runs it.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_utils.h"

namespace infercost {
namespace {

using testing::count_entries;
using testing::slurp;
using testing::TempDir;

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

Outcome run_cli(const std::string& args) {
  std::string cmd = std::string(INFERCOST_BINARY_DIR) + "/infercost " + args + " 2>&1";
  Outcome o;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return o;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) o.output.append(buf, n);
  int status = ::pclose(pipe);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

class CliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    Outcome synth = run_cli("model synth --preset tiny --seed 2 --out " + dir_->file("tiny"));
    ASSERT_EQ(synth.exit_code, 0) << synth.output;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string model() { return dir_->file("tiny"); }
  static TempDir* dir_;
};
TempDir* CliTest::dir_ = nullptr;

TEST_F(CliTest, HelpAndUsageErrors) {
  Outcome help = run_cli("--help");
  EXPECT_EQ(help.exit_code, 0);
  for (const char* cmd : {"run", "tokenize", "model", "datagen", "demo"}) {
    EXPECT_NE(help.output.find(cmd), std::string::npos) << cmd;
  }
  EXPECT_EQ(run_cli("run --help").exit_code, 0);
  EXPECT_EQ(run_cli("").exit_code, 2);
  EXPECT_EQ(run_cli("no-such-command").exit_code, 2);
  Outcome no_model = run_cli("run x.jsonl");
  EXPECT_EQ(no_model.exit_code, 2);
  EXPECT_NE(no_model.output.find("--model"), std::string::npos) << no_model.output;
}

TEST_F(CliTest, RunWritesPredictionsMetricsAndSummary) {
  TempDir work;
  Outcome gen = run_cli("datagen --rows 300 --seed 4 --out " + work.file("in.jsonl"));
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  Outcome run =
      run_cli("run " + work.file("in.jsonl") + " --model " + model() + " --output " + work.file("out.csv") +
              " --metrics " + work.file("m.json") + " --batch-size 16 --threads 2");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("its speed is real, its sentiments are not"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("rows/s"), std::string::npos);
  auto metrics = nlohmann::json::parse(slurp(work.file("m.json")));
  EXPECT_EQ(metrics["rows"], 300);
  EXPECT_EQ(metrics["threads"], 2);
  EXPECT_EQ(metrics["model"]["synthetic"], true);
  std::string csv = slurp(work.file("out.csv"));
  EXPECT_EQ(csv.rfind("text,negative,positive,label\n", 0), 0u);
}

TEST_F(CliTest, BadInputExitsNonZeroAndLeavesNothing) {
  TempDir work;
  std::string input = work.write("bad.jsonl", "{\"full_text\":\"fine\"}\n{\"full_text\":\"broken\n");
  TempDir out;
  Outcome run = run_cli("run " + input + " --model " + model() + " --output " + out.file("pred.jsonl"));
  EXPECT_EQ(run.exit_code, 3) << run.output;
  EXPECT_NE(run.output.find(input + ": line 2"), std::string::npos) << run.output;
  EXPECT_EQ(count_entries(out.path()), 0);

  Outcome skip =
      run_cli("run " + input + " --model " + model() + " --on-error skip --output " + out.file("pred.jsonl"));
  EXPECT_EQ(skip.exit_code, 0) << skip.output;
  EXPECT_NE(skip.output.find("1 bad rows skipped"), std::string::npos) << skip.output;
  EXPECT_EQ(count_entries(out.path()), 1);

  Outcome missing = run_cli("run " + work.file("nope.jsonl") + " --model " + model());
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  Outcome no_model = run_cli("run " + input + " --model " + work.file("no-model"));
  EXPECT_NE(no_model.exit_code, 0);
}

TEST_F(CliTest, TokenizeWritesJsonPerText) {
  Outcome tok = run_cli("tokenize --model " + model() + " -- 'hello world' ''");
  ASSERT_EQ(tok.exit_code, 0) << tok.output;
  std::istringstream in(tok.output);
  std::string line;
  std::vector<nlohmann::json> rows;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '{') rows.push_back(nlohmann::json::parse(line));
  }
  ASSERT_EQ(rows.size(), 2u) << tok.output;
  EXPECT_EQ(rows[1]["tokens"], nlohmann::json::array({"[CLS]", "[SEP]"}));
  EXPECT_EQ(rows[0]["tokens"].front(), "[CLS]");
  EXPECT_EQ(rows[0]["ids"].size(), rows[0]["tokens"].size());
}

TEST_F(CliTest, ModelInfoDescribesTheModel) {
  Outcome info = run_cli("model info " + model());
  ASSERT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find("distilbert"), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("POSITIVE"), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("synthetic"), std::string::npos) << info.output;
}

TEST_F(CliTest, PickleCheckpointIsRefused) {
  TempDir work;
  std::string dir = work.file("pickled");
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(model() + "/config.json", dir + "/config.json");
  std::filesystem::copy_file(model() + "/vocab.txt", dir + "/vocab.txt");
  work.write("pickled/pytorch_model.bin", "not really a pickle");
  std::string input = work.write("in.jsonl", "{\"full_text\":\"x\"}\n");
  Outcome run = run_cli("run " + input + " --model " + dir);
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.output.find("pickle"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("safe_serialization"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace infercost
