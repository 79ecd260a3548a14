// End-to-end: the `infercost` executable run the way a user runs it.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "backend/backend.h"
#include "backend/cpu_info.h"
#include "test_utils.h"

namespace infercost {
namespace {

using testing::count_entries;
using testing::slurp;
using testing::TempDir;

using Outcome = infercost::testing::CommandOutcome;
Outcome run_cli(const std::string& args) {
  return infercost::testing::run_infercost(args);
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
  for (const char* cmd : {"run", "tokenize", "model", "datagen", "demo", "cat", "inspect"}) {
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
              " --metrics " + work.file("m.json") + " --batch-size 16 --threads 2 --precision fp32");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("its speed is real, its sentiments are not"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("rows/s"), std::string::npos);
  auto metrics = nlohmann::json::parse(slurp(work.file("m.json")));
  EXPECT_EQ(metrics["rows"], 300);
  EXPECT_EQ(metrics["threads"], 2);
  EXPECT_EQ(metrics["model"]["synthetic"], true);
  EXPECT_EQ(metrics["batching"], "tokens");
  EXPECT_EQ(metrics["batch_size"], 16);
  EXPECT_EQ(metrics["max_batch_tokens"], 4096);
  EXPECT_DOUBLE_EQ(metrics["padding_efficiency"].get<double>(), 1.0);
  for (const char* key : {"precision", "window_rows", "tokenizer_threads", "batch_fill", "infer_share"}) {
    EXPECT_TRUE(metrics.contains(key)) << key;
  }
  for (const char* text : {"padding efficiency", "batching tokens", "precision ", "tokens/s"}) {
    EXPECT_NE(run.output.find(text), std::string::npos) << text << "\n" << run.output;
  }
  std::string csv = slurp(work.file("out.csv"));
  EXPECT_EQ(csv.rfind("text,negative,positive,label\n", 0), 0u);
}

TEST_F(CliTest, RunBatchingFlags) {
  TempDir work;
  Outcome gen = run_cli("datagen --rows 120 --seed 5 --out " + work.file("in.jsonl"));
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  const std::string base = "run " + work.file("in.jsonl") + " --model " + model() + " --threads 2 ";
  Outcome seed =
      run_cli(base + "--batching seed --window-rows 50 --tokenizer-threads 2 --precision fp32 -o " +
              work.file("seed.jsonl") + " --metrics " + work.file("seed.json"));
  ASSERT_EQ(seed.exit_code, 0) << seed.output;
  auto m = nlohmann::json::parse(slurp(work.file("seed.json")));
  EXPECT_EQ(m["batching"], "seed");
  EXPECT_EQ(m["batch_size"], 200);   // 100 x threads
  EXPECT_EQ(m["window_rows"], 200);  // whole seed batches
  EXPECT_EQ(m["tokenizer_threads"], 2);
  EXPECT_EQ(m["precision"], "fp32");
  EXPECT_LT(m["padding_efficiency"].get<double>(), 1.0);  // seed computes the padding
  EXPECT_NE(seed.output.find("batching seed"), std::string::npos) << seed.output;
  Outcome tokens = run_cli(base + "--max-batch-tokens 8 --window-rows 9 -o " + work.file("tokens.jsonl") +
                           " --metrics " + work.file("tokens.json"));
  ASSERT_EQ(tokens.exit_code, 0) << tokens.output;
  m = nlohmann::json::parse(slurp(work.file("tokens.json")));
  EXPECT_EQ(m["max_batch_tokens"], 8);  // below --max-length: fine, long rows run alone
  EXPECT_EQ(m["rows"], 120);
  for (const std::string bad : {"--batching sorted", "--precision fp8", "--max-batch-tokens 0",
                                "--window-rows 0", "--batch-size -1", "--tokenizer-threads -2"}) {
    Outcome o = run_cli(base + bad + " -o " + work.file("bad.jsonl"));
    EXPECT_EQ(o.exit_code, 2) << bad << "\n" << o.output;
    const std::string flag = bad.substr(0, bad.find(' '));
    EXPECT_NE(o.output.find(flag), std::string::npos) << bad << "\n" << o.output;
    EXPECT_FALSE(std::filesystem::exists(work.file("bad.jsonl"))) << bad;
  }
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
  EXPECT_EQ(count_entries(out.path()), 2);  // the output and its job's record

  Outcome missing = run_cli("run " + work.file("nope.jsonl") + " --model " + model());
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  Outcome no_model = run_cli("run " + input + " --model " + work.file("no-model"));
  EXPECT_NE(no_model.exit_code, 0);
}

TEST_F(CliTest, RunOnCudaRunsOrSaysWhyNot) {
  TempDir work;
  ASSERT_EQ(run_cli("datagen --rows 60 --seed 6 --out " + work.file("in.jsonl")).exit_code, 0);
  // The module beside the executable, as `infercost run` finds it.
  const std::string module = std::string(INFERCOST_BINARY_DIR) + "/libinfercost_cuda.so";
  if (std::filesystem::exists(module)) ::setenv("INFERCOST_CUDA_MODULE", module.c_str(), 0);
  auto gpus = backend::cuda_devices();
  Outcome run = run_cli("run " + work.file("in.jsonl") + " --model " + model() + " --device cuda -o " +
                        work.file("out.jsonl") + " --metrics " + work.file("m.json"));
  if (!gpus.ok()) {
    // No GPU here (exit 4, Unavailable), or no module in this build (the
    // sanitizer build has none): either way the run says why and leaves nothing.
    EXPECT_EQ(run.exit_code, 4) << run.output;
    if (std::filesystem::exists(module)) {
      EXPECT_NE(run.output.find("CUDA cannot run here: "), std::string::npos) << run.output;
      EXPECT_NE(run.output.find(gpus.status().message()), std::string::npos) << run.output;
    } else {
      EXPECT_NE(run.output.find("this build has no CUDA module"), std::string::npos) << run.output;
    }
    EXPECT_EQ(count_entries(work.path()), 1) << "only in.jsonl";
    return;
  }
  // A GPU machine: every GPU runs, and the metrics say what the GPUs did.
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto m = nlohmann::json::parse(slurp(work.file("m.json")));
  EXPECT_EQ(m["rows"], 60);
  EXPECT_EQ(m["devices"].size(), gpus->size());
  EXPECT_GE(m["workers"].get<int>(), static_cast<int>(gpus->size()));
  EXPECT_TRUE(m.contains("gpus") || m.contains("gpu_monitor")) << m.dump(2);
  if (m.contains("gpus")) {
    ASSERT_FALSE(m["gpus"].empty());
    EXPECT_GT(m["gpus"][0]["memory_total_bytes"].get<int64_t>(), 0);
    EXPECT_GT(m["gpus"][0]["memory_used_peak_bytes"].get<int64_t>(), 0);
  }
}

TEST_F(CliTest, RunDeviceAndAutoSizeFlags) {
  TempDir work;
  ASSERT_EQ(run_cli("datagen --rows 80 --seed 7 --out " + work.file("in.jsonl")).exit_code, 0);
  const std::string base = "run " + work.file("in.jsonl") + " --model " + model() + " --threads 2 ";
  Outcome gpu = run_cli(base + "--device gpu -o " + work.file("bad.jsonl"));
  EXPECT_EQ(gpu.exit_code, 2) << gpu.output;
  for (const char* form : {"--device", "'gpu'", "cpu, cuda, cuda:all, cuda:N, cuda:N,M"}) {
    EXPECT_NE(gpu.output.find(form), std::string::npos) << form << "\n" << gpu.output;
  }
  for (const std::string bad :
       {"--batch-size abc", "--batch-size 1.5", "--max-batch-tokens abc", "--max-batch-tokens -3",
        "--streams-per-device -1", "--streams-per-device 17", "--window-rows -5"}) {
    Outcome o = run_cli(base + bad + " -o " + work.file("bad.jsonl"));
    EXPECT_EQ(o.exit_code, 2) << bad << "\n" << o.output;
    EXPECT_NE(o.output.find(bad.substr(0, bad.find(' '))), std::string::npos) << bad << "\n" << o.output;
    EXPECT_NE(o.output.find("infercost: error: Invalid argument: "), std::string::npos) << bad << "\n"
                                                                                        << o.output;
  }
  Outcome streams = run_cli(base + "--streams-per-device 17 -o " + work.file("bad.jsonl"));
  EXPECT_NE(streams.output.find("--streams-per-device 17: must be 1 to 16 (or 0 for the device's default)"),
            std::string::npos)
      << streams.output;
  Outcome abc = run_cli(base + "--batch-size abc -o " + work.file("bad.jsonl"));
  EXPECT_NE(abc.output.find("'auto'"), std::string::npos) << abc.output;
  EXPECT_FALSE(std::filesystem::exists(work.file("bad.jsonl")));

  Outcome run = run_cli(base + "--batch-size auto --max-batch-tokens auto --precision fp32 -o " +
                        work.file("out.jsonl") + " --metrics " + work.file("m.json"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto m = nlohmann::json::parse(slurp(work.file("m.json")));
  EXPECT_EQ(m["rows"], 80);
  EXPECT_EQ(m["batch_size_auto"], true);
  EXPECT_EQ(m["max_batch_tokens_auto"], true);
  EXPECT_EQ(m["batch_size"], 256);  // the CPU backend's capacity: its defaults
  EXPECT_EQ(m["max_batch_tokens"], 4096);
  EXPECT_EQ(m["capacity"]["max_tokens"], 4096);
  EXPECT_EQ(m["devices"], nlohmann::json::array({"cpu"}));
  EXPECT_EQ(m["workers"], 1);
  EXPECT_EQ(m["oom_retries"], 0);
  EXPECT_GT(m["model_flops"].get<double>(), 0);
  EXPECT_FALSE(m.contains("gpus"));  // a CPU run samples no GPU
  EXPECT_NE(run.output.find("auto sizes      batch 256 rows, 4096 tokens"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("model FLOPs"), std::string::npos) << run.output;
  // Seed: rows = token capacity / --max-length.
  Outcome seed = run_cli(base + "--batching seed --batch-size auto --max-length 128 -o " +
                         work.file("seed.jsonl") + " --metrics " + work.file("s.json"));
  ASSERT_EQ(seed.exit_code, 0) << seed.output;
  auto s = nlohmann::json::parse(slurp(work.file("s.json")));
  EXPECT_EQ(s["batch_size"], 4096 / 128);
  EXPECT_EQ(s["max_batch_tokens_auto"], false);
}

TEST_F(CliTest, BenchTakesAutoSizes) {
  TempDir work;
  Outcome dry = run_cli("bench --model " + model() + " --out " + work.file("r.jsonl") + " --data-dir " +
                        work.file("data") +
                        " --batching tokens,seed --batch-size auto,8 --max-batch-tokens auto,1024 --dry-run");
  ASSERT_EQ(dry.exit_code, 0) << dry.output;
  // tokens: 2 sizes x 2 budgets; seed: 2 sizes (no token budget).
  EXPECT_NE(dry.output.find("6 points"), std::string::npos) << dry.output;
  EXPECT_NE(dry.output.find("1  batch auto auto tokens json-3 cpu all threads max auto tokens"),
            std::string::npos)
      << dry.output;
  EXPECT_NE(dry.output.find("batch 8 auto tokens json-3 cpu all threads max 1024 tokens"), std::string::npos)
      << dry.output;
  for (const std::string bad : {"--max-batch-tokens big", "--batch-size autox"}) {
    Outcome o =
        run_cli("bench --model " + model() + " --out " + work.file("r.jsonl") + " " + bad + " --dry-run");
    EXPECT_EQ(o.exit_code, 2) << bad << "\n" << o.output;
    EXPECT_NE(o.output.find("auto"), std::string::npos) << bad << "\n" << o.output;
  }
  EXPECT_FALSE(std::filesystem::exists(work.file("r.jsonl")));
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

TEST_F(CliTest, TokenizeTakesATokenizerFileOrFolder) {
  const Outcome by_model = run_cli("tokenize --model " + model() + " -- 'Hello, world!'");
  ASSERT_EQ(by_model.exit_code, 0) << by_model.output;
  const std::string vocab = model() + "/vocab.txt";
  ASSERT_TRUE(std::filesystem::exists(vocab));
  for (const std::string& path : {model(), vocab}) {
    const Outcome by_path = run_cli("tokenize --tokenizer " + path + " -- 'Hello, world!'");
    ASSERT_EQ(by_path.exit_code, 0) << by_path.output;
    EXPECT_EQ(by_path.output, by_model.output) << path;
  }
  const Outcome bare =
      run_cli("tokenize --tokenizer " + vocab + " --no-special-tokens --max-length 3 -- 'hello world'");
  ASSERT_EQ(bare.exit_code, 0) << bare.output;
  EXPECT_EQ(bare.output.find("[CLS]"), std::string::npos) << bare.output;
  const Outcome two = run_cli("tokenize --tokenizer " + vocab + " --vocab " + vocab + " -- x");
  EXPECT_EQ(two.exit_code, 2) << two.output;
  const Outcome none = run_cli("tokenize -- x");
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_NE(none.output.find("give exactly one of --tokenizer PATH, --model DIR or --vocab FILE"),
            std::string::npos)
      << none.output;
  const Outcome absent = run_cli("tokenize --tokenizer " + model() + "/absent.json -- x");
  EXPECT_NE(absent.exit_code, 0);
  EXPECT_NE(absent.output.find("absent.json"), std::string::npos) << absent.output;
}

TEST_F(CliTest, ModelInfoDescribesTheModel) {
  Outcome info = run_cli("model info " + model());
  ASSERT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find("distilbert"), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("POSITIVE"), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("synthetic"), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("head function   softmax (2 labels)\n"), std::string::npos) << info.output;
  // The forward program every backend runs: DistilBERT's post-norm layer and its ReLU head.
  EXPECT_NE(info.output.find("steps per row\n  embeddings: words + positions (table), LayerNorm\n"),
            std::string::npos)
      << info.output;
  EXPECT_NE(info.output.find("  layer 0: states += attention output; attention norm -> states\n"),
            std::string::npos)
      << info.output;
  EXPECT_NE(info.output.find("  output: head on the first token: dense, relu, classifier to 2 labels\n"),
            std::string::npos)
      << info.output;
  // A multi-label config: the function and what decided it.
  TempDir work;
  std::filesystem::copy(model(), work.file("multi"), std::filesystem::copy_options::recursive);
  auto config = nlohmann::json::parse(slurp(work.file("multi/config.json")));
  config["problem_type"] = "multi_label_classification";
  work.write("multi/config.json", config.dump(2));
  Outcome multi = run_cli("model info " + work.file("multi"));
  ASSERT_EQ(multi.exit_code, 0) << multi.output;
  EXPECT_NE(multi.output.find("head function   sigmoid (problem_type multi_label_classification), "
                              "multi-label: a 'labels' column\n"),
            std::string::npos)
      << multi.output;
}

// `model info` reads the weight file's header, never its tensors: with the
// data section cut off it says what it says of the whole file, and `run`,
// which needs the tensors, fails on it.
TEST_F(CliTest, ModelInfoReadsNoTensorBytes) {
  TempDir work;
  std::filesystem::copy(model(), work.file("cut"), std::filesystem::copy_options::recursive);
  const std::string weights = work.file("cut/model.safetensors");
  const std::string bytes = slurp(weights);
  uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);
  ASSERT_LT(8 + header_len + 1000, bytes.size());
  std::ofstream(weights, std::ios::binary | std::ios::trunc) << bytes.substr(0, 8 + header_len);
  const Outcome whole = run_cli("model info " + model());
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  const Outcome cut = run_cli("model info " + work.file("cut"));
  ASSERT_EQ(cut.exit_code, 0) << cut.output;
  // The same lines but the first (the directory).
  EXPECT_EQ(cut.output.substr(cut.output.find('\n')), whole.output.substr(whole.output.find('\n')));
  EXPECT_NE(cut.output.find("parameters      "), std::string::npos) << cut.output;
  Outcome gen = run_cli("datagen --rows 5 --seed 4 --out " + work.file("in.jsonl"));
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  const Outcome run = run_cli("run " + work.file("in.jsonl") + " --model " + work.file("cut") + " --output " +
                              work.file("out.jsonl") + " --threads 1 --quiet");
  EXPECT_NE(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find(weights), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("past the data section"), std::string::npos) << run.output;
  EXPECT_FALSE(std::filesystem::exists(work.file("out.jsonl")));
}

TEST_F(CliTest, RunFunctionAndThresholdFlags) {
  TempDir work;
  Outcome gen = run_cli("datagen --rows 50 --seed 4 --out " + work.file("in.jsonl"));
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  const std::string run = "run " + work.file("in.jsonl") + " --model " + model() + " --threads 1 --quiet ";
  Outcome help = run_cli("run --help");
  EXPECT_NE(help.output.find("--function"), std::string::npos) << help.output;
  EXPECT_NE(help.output.find("--threshold"), std::string::npos) << help.output;
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"--function max", "--function 'max': expected softmax, sigmoid, none or default"},
      {"--function sigmoid --threshold 2", "--threshold 2: must be in [0, 1]"},
      {"--function sigmoid --threshold -0.5", "--threshold -0.5: must be in [0, 1]"},
      {"--function sigmoid --threshold abc", "--threshold 'abc': expected a number in [0, 1]"},
      {"--function sigmoid --threshold nan", "--threshold nan: must be in [0, 1]"},
      {"--threshold 0.3", "--threshold 0.3: only multi-label outputs"},
      {"--function none --threshold 0.3", "this run's function is none over 2 labels"},
  };
  for (const auto& [flags, message] : bad) {
    Outcome o = run_cli(run + flags + " --output " + work.file("bad.csv"));
    EXPECT_EQ(o.exit_code, 2) << flags << ": " << o.output;
    EXPECT_NE(o.output.find(message), std::string::npos) << flags << ": " << o.output;
    EXPECT_EQ(count_entries(work.path()), 1) << flags << ": only the input is left";
  }
  Outcome sigmoid = run_cli(run + "--function sigmoid --threshold 0.25 --output " + work.file("out.csv") +
                            " --metrics " + work.file("m.json"));
  ASSERT_EQ(sigmoid.exit_code, 0) << sigmoid.output;
  const std::string csv = slurp(work.file("out.csv"));
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "text,negative,positive,label,labels");
  auto metrics = nlohmann::json::parse(slurp(work.file("m.json")));
  EXPECT_EQ(metrics["head"],
            nlohmann::json::parse(R"({"function": "sigmoid", "labels_column": true, "threshold": 0.25})"));
  Outcome plain = run_cli(run + "--output " + work.file("plain.csv") + " --metrics " + work.file("p.json"));
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  const std::string plain_csv = slurp(work.file("plain.csv"));
  EXPECT_EQ(plain_csv.substr(0, plain_csv.find('\n')), "text,negative,positive,label");
  EXPECT_EQ(nlohmann::json::parse(slurp(work.file("p.json")))["head"],
            nlohmann::json::parse(R"({"function": "softmax", "labels_column": false})"));
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

TEST_F(CliTest, DatagenShapesHoldTheSameRows) {
  TempDir work;
  for (const char* shape : {"jsonl", "json-3", "parquet", "parquet-10"}) {
    std::string out = work.file(std::string("d-") + shape);
    if (std::string(shape) == "jsonl") out += ".jsonl";
    if (std::string(shape) == "parquet") out += ".parquet";
    Outcome gen = run_cli("datagen --rows 50 --seed 9 --shape " + std::string(shape) + " --out " + out);
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
  }
  EXPECT_EQ(count_entries(work.file("d-json-3")), 3);
  EXPECT_EQ(count_entries(work.file("d-parquet-10")), 10);
  // `cat` over each shape prints the same 50 texts in the same order.
  Outcome reference = run_cli("cat " + work.file("d-jsonl.jsonl") + " --column full_text");
  ASSERT_EQ(reference.exit_code, 0) << reference.output;
  EXPECT_EQ(std::count(reference.output.begin(), reference.output.end(), '\n'), 50);
  for (const char* other : {"d-json-3", "d-parquet.parquet", "d-parquet-10"}) {
    Outcome cat = run_cli("cat " + work.file(other) + " --column full_text");
    EXPECT_EQ(cat.exit_code, 0) << cat.output;
    EXPECT_EQ(cat.output, reference.output) << other;
  }
  Outcome ids = run_cli("cat " + work.file("d-parquet-10") + " --column id --limit 4");
  EXPECT_EQ(ids.output, "0\n1\n2\n3\n");
  Outcome bad = run_cli("datagen --rows 5 --shape parquet-3 --out " + work.file("x"));
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("parquet-10"), std::string::npos) << bad.output;
}

TEST_F(CliTest, CatAndInspectExplainAFile) {
  TempDir work;
  std::string csv = work.write("t.csv", "id,full_text\n1,hello\n2,\n3,\"say \"\"hi\"\"\"\n");
  Outcome cat = run_cli("cat " + csv + " --column full_text");
  ASSERT_EQ(cat.exit_code, 0) << cat.output;
  EXPECT_EQ(cat.output, "\"hello\"\nnull\n\"say \\\"hi\\\"\"\n");
  Outcome missing = run_cli("cat " + csv + " --column text");
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("full_text"), std::string::npos) << missing.output;  // names what exists

  ASSERT_EQ(run_cli("datagen --rows 30 --shape parquet --out " + work.file("p.parquet")).exit_code, 0);
  Outcome inspect = run_cli("inspect " + work.file("p.parquet"));
  ASSERT_EQ(inspect.exit_code, 0) << inspect.output;
  for (const char* expected : {"full_text", "id", "SNAPPY", "30"}) {
    EXPECT_NE(inspect.output.find(expected), std::string::npos) << expected << "\n" << inspect.output;
  }
  Outcome not_parquet = run_cli("inspect " + csv);
  EXPECT_NE(not_parquet.exit_code, 0);
  EXPECT_NE(not_parquet.output.find("cat"), std::string::npos) << not_parquet.output;
  std::string broken = work.write("broken.parquet", "PAR1 this is not really parquet PAR1");
  Outcome corrupt = run_cli("inspect " + broken);
  EXPECT_EQ(corrupt.exit_code, 3) << corrupt.output;
  EXPECT_NE(corrupt.output.find(broken), std::string::npos) << corrupt.output;
}

TEST_F(CliTest, RunReadsAParquetFolderIntoAFolderOfParts) {
  TempDir work;
  ASSERT_EQ(run_cli("datagen --rows 40 --shape parquet-10 --out " + work.file("in")).exit_code, 0);
  Outcome run = run_cli("run " + work.file("in") + " --model " + model() + " --output " + work.file("out/") +
                        " --metrics " + work.file("m.json"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(count_entries(work.file("out")), 11);  // the parts and the job's record
  auto metrics = nlohmann::json::parse(slurp(work.file("m.json")));
  EXPECT_EQ(metrics["rows"], 40);
  EXPECT_EQ(metrics["input_files"], 10);
  Outcome labels = run_cli("cat " + work.file("out") + " --column label");
  ASSERT_EQ(labels.exit_code, 0) << labels.output;
  EXPECT_EQ(std::count(labels.output.begin(), labels.output.end(), '\n'), 40);
  EXPECT_NE(labels.output.find("\"POSITIVE\""), std::string::npos) << labels.output;
  // A glob, and an explicit output format.
  Outcome glob = run_cli("run '" + work.file("in") + "/part-0000[01].parquet' --model " + model() +
                         " --output " + work.file("two.csv"));
  ASSERT_EQ(glob.exit_code, 0) << glob.output;
  Outcome two = run_cli("cat " + work.file("two.csv") + " --column label");  // texts may hold newlines
  ASSERT_EQ(two.exit_code, 0) << two.output;
  EXPECT_EQ(std::count(two.output.begin(), two.output.end(), '\n'), 8);
}

TEST_F(CliTest, RunPricesTheRunForAnInstance) {
  TempDir work;
  ASSERT_EQ(run_cli("datagen --rows 50 --seed 3 --out " + work.file("in.jsonl")).exit_code, 0);
  Outcome priced = run_cli("run " + work.file("in.jsonl") + " --model " + model() + " --output " +
                           work.file("out.jsonl") + " --metrics " + work.file("m.json") +
                           " --instance p3.8xlarge --spot-discount 0.5 --machines 2 --corpus-rows 1000000");
  ASSERT_EQ(priced.exit_code, 0) << priced.output;
  EXPECT_NE(priced.output.find("cost            p3.8xlarge (aws-2026 prices, 2026-01-21)"), std::string::npos)
      << priced.output;
  const nlohmann::json m = nlohmann::json::parse(slurp(work.file("m.json")));
  const nlohmann::json& c = m.at("cost");
  EXPECT_EQ(c.at("instance"), "p3.8xlarge");
  EXPECT_EQ(c.at("price_list"), "aws-2026");  // a bare name gets the current list
  EXPECT_DOUBLE_EQ(c.at("usd_per_hour").get<double>(), 12.24 * 0.5 * 2);
  const double wall = m.at("wall_seconds").get<double>();
  const double rows = m.at("rows").get<double>();
  EXPECT_EQ(rows, 50);
  EXPECT_NEAR(c.at("cost_to_solution_usd").get<double>(), wall / 3600 * 12.24, 1e-12);
  EXPECT_NEAR(c.at("usd_per_million_rows").get<double>(), 1e6 / (rows / wall) * 12.24 / 3600, 1e-9);
  EXPECT_EQ(c.at("corpus_rows"), 1000000);
  EXPECT_NEAR(c.at("corpus_seconds").get<double>(), 1e6 / (rows / wall), 1e-6);

  Outcome unknown = run_cli("run " + work.file("in.jsonl") + " --model " + model() + " --output " +
                            work.file("x.jsonl") + " --instance p9.huge");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find("'p9.huge' is not in the price lists aws-2026, gcp-2026, seed-2021"),
            std::string::npos)
      << unknown.output;
  EXPECT_FALSE(std::filesystem::exists(work.file("x.jsonl")));
  Outcome orphan = run_cli("run " + work.file("in.jsonl") + " --model " + model() + " --output " +
                           work.file("x.jsonl") + " --corpus-rows 10");
  EXPECT_EQ(orphan.exit_code, 2);
  EXPECT_NE(orphan.output.find("give --instance NAME too"), std::string::npos) << orphan.output;
}

}  // namespace
}  // namespace infercost

namespace infercost {
namespace {

TEST(CliPrices, ListsTheSeedListAndUserFiles) {
  Outcome all = run_cli("prices");
  ASSERT_EQ(all.exit_code, 0) << all.output;
  EXPECT_NE(all.output.find("seed-2021"), std::string::npos) << all.output;
  EXPECT_NE(all.output.find("p3dn.24xlarge"), std::string::npos);
  EXPECT_NE(all.output.find("4.2330"), std::string::npos);
  EXPECT_NE(all.output.find("8 x V100"), std::string::npos);

  testing::TempDir work;
  {
    std::ofstream out(work.file("mine.json"));
    out << R"({"name": "mine", "source": "our invoice", "date": "2026-11",
               "instances": [{"name": "box-a", "usd_per_hour": 2.5, "gpus": 2, "gpu": "L4"}]})";
  }
  Outcome mine = run_cli("prices --prices " + work.file("mine.json") + " --list mine");
  ASSERT_EQ(mine.exit_code, 0) << mine.output;
  EXPECT_NE(mine.output.find("box-a"), std::string::npos) << mine.output;
  EXPECT_NE(mine.output.find("our invoice"), std::string::npos);
  EXPECT_EQ(mine.output.find("seed-2021"), std::string::npos) << "--list shows one list";

  {
    std::ofstream out(work.file("bad.json"));
    out << R"({"name": "bad", "source": "s", "date": "d", "instances": [{"name": "x", "usd_per_hour": 0}]})";
  }
  Outcome bad = run_cli("prices --prices " + work.file("bad.json"));
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("bad.json: instances[0] (x)"), std::string::npos) << bad.output;
  Outcome unknown = run_cli("prices --list nope");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find("known: seed-2021"), std::string::npos) << unknown.output;
}

TEST(DevicesCli, ListsTheCpuAndSaysWhyThereIsNoGpu) {
  TempDir dir;
  // A library that is not NVML: no GPU, and the reason named, whatever the machine has.
  const std::string no_nvml = " --nvml-library " + dir.file("no-such-libnvidia-ml.so");
  Outcome text = run_cli("devices" + no_nvml);
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("cpu       "), std::string::npos) << text.output;
  EXPECT_NE(text.output.find(std::to_string(backend::cpu_info().logical_cpus) + " logical CPU"),
            std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("gpus      none found (NVML not available: "), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("backends  cpu: available; cuda: "), std::string::npos) << text.output;

  Outcome json = run_cli("devices --json -" + no_nvml);
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const nlohmann::json j = nlohmann::json::parse(json.output);
  EXPECT_EQ(j.at("cpu").at("logical_cpus").get<int>(), backend::cpu_info().logical_cpus);
  EXPECT_EQ(j.at("cpu").at("isa").get<std::string>(), backend::cpu_info().isa());
  EXPECT_GT(j.at("cpu").at("memory_bytes").get<int64_t>(), 0);
  EXPECT_TRUE(j.at("gpus").empty());
  EXPECT_NE(j.at("nvml").get<std::string>().find("NVML not available"), std::string::npos);
  EXPECT_EQ(j.at("backends").at("cpu"), "available");

  Outcome to_file = run_cli("devices --json " + dir.file("d.json") + no_nvml);
  ASSERT_EQ(to_file.exit_code, 0) << to_file.output;
  EXPECT_EQ(nlohmann::json::parse(slurp(dir.file("d.json"))), j);
  Outcome bad = run_cli("devices --json " + dir.file("missing/d.json") + no_nvml);
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_EQ(count_entries(dir.path()), 1);  // d.json only: nothing partial left
}

}  // namespace
}  // namespace infercost
