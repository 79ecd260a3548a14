// `infercost run --device cuda` end to end on the emulated GPU (the CUDA
// backend against the emulated runtime, tests/backend/cuda_emu_module.cc,
// loaded as the CLI loads libinfercost_cuda.so): its answers, and what a
// user sees when the GPU gives outputs that are not finite or fails mid-run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "edit_weights.h"
#include "test_utils.h"

namespace infercost {
namespace {

namespace fs = std::filesystem;
using testing::slurp;
using testing::TempDir;

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

testing::CommandOutcome on_emulated_gpu(const std::string& args, const std::string& env = "") {
  return testing::run_shell(env + " INFERCOST_CUDA_MODULE='" + INFERCOST_CUDA_EMU_MODULE + "' '" +
                            INFERCOST_BINARY_DIR + "/infercost' " + args);
}

class CudaEmuCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    auto synth = testing::run_infercost("model synth --preset tiny --seed 11 --out " + dir_->file("tiny"));
    ASSERT_EQ(synth.exit_code, 0) << synth.output;
    auto data = testing::run_infercost("datagen --quiet --rows 200 --out " + dir_->file("in.jsonl"));
    ASSERT_EQ(data.exit_code, 0) << data.output;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  // One stream: the emulator runs one thing at a time (its kernels' fibers
  // share its state); two streams are the real GPU's business.
  static std::string run_args(const std::string& model, const std::string& more) {
    return "run " + dir_->file("in.jsonl") + " --model " + model +
           " --quiet --max-length 64 --streams-per-device 1 " + more;
  }
  // `run` of the HF-saved directory golden/`name` on the GPU and on the CPU.
  static void expect_the_cpus_answers_on_the_gpu(const std::string& name);
  static TempDir* dir_;
};
TempDir* CudaEmuCli::dir_ = nullptr;

std::vector<nlohmann::json> rows_of(const std::string& path) {
  std::vector<nlohmann::json> rows;
  std::istringstream in(slurp(path));
  for (std::string line; std::getline(in, line);) rows.push_back(nlohmann::json::parse(line));
  return rows;
}

TEST_F(CudaEmuCli, Fp32OnTheGpuGivesTheCpusAnswers) {
  TempDir work;
  auto cpu = testing::run_infercost(
      run_args(dir_->file("tiny"), "--precision fp32 --output " + work.file("cpu.jsonl")));
  ASSERT_EQ(cpu.exit_code, 0) << cpu.output;
  auto gpu = on_emulated_gpu(run_args(dir_->file("tiny"), "--device cuda --precision fp32 --output " +
                                                              work.file("gpu.jsonl") + " --metrics " +
                                                              work.file("m.json")));
  ASSERT_EQ(gpu.exit_code, 0) << gpu.output;
  const auto want = rows_of(work.file("cpu.jsonl")), got = rows_of(work.file("gpu.jsonl"));
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i]["label"], want[i]["label"]) << i;
    EXPECT_NEAR(got[i]["positive"].get<double>(), want[i]["positive"].get<double>(), 1e-4) << i;
  }
  // The run sampled its GPUs through NVML, or says why it could not (no
  // NVML here: the emulated GPU is not one NVML lists).
  const auto m = nlohmann::json::parse(slurp(work.file("m.json")));
  EXPECT_TRUE(m.contains("gpus") || m.value("gpu_monitor", "").find("NVML") != std::string::npos)
      << m.dump(2);
}

// A weight beyond fp16's range (65504): fp16 refuses the model before it
// runs (exit status 2, the weight named, what to use); bf16 runs it.
TEST_F(CudaEmuCli, AWeightBeyondFp16sRangeIsRefusedForFp16) {
  TempDir work;
  const std::string model = work.file("huge");
  fs::copy(dir_->file("tiny"), model, fs::copy_options::recursive);
  bool first = true;  // one weight beyond fp16's range
  testing::edit_tensor(model + "/model.safetensors", "distilbert.transformer.layer.1.ffn.lin2.weight",
                       [&first](float& v) {
                         if (first) v = 1e5f;
                         first = false;
                       });
  auto fp16 =
      on_emulated_gpu(run_args(model, "--device cuda --precision fp16 --output " + work.file("h.jsonl")));
  EXPECT_EQ(fp16.exit_code, 2) << fp16.output;
  EXPECT_TRUE(
      has(fp16.output, "a weight of layer 1's FFN output is 100000, beyond fp16's largest finite value"))
      << fp16.output;
  EXPECT_TRUE(has(fp16.output, "use --precision bf16")) << fp16.output;
  EXPECT_FALSE(fs::exists(work.file("h.jsonl")));
  auto bf16 =
      on_emulated_gpu(run_args(model, "--device cuda --precision bf16 --output " + work.file("b.jsonl")));
  EXPECT_EQ(bf16.exit_code, 0) << bf16.output;
}

// `run` of the HF-saved directory golden/`name` on the GPU gives the CPU's
// answers: every probability within 1e-4 in fp32, and bf16 runs too.
void CudaEmuCli::expect_the_cpus_answers_on_the_gpu(const std::string& name) {
  TempDir work;
  const std::string model = std::string(INFERCOST_TEST_DATA_DIR) + "/golden/" + name;
  auto cpu = testing::run_infercost(run_args(model, "--precision fp32 --output " + work.file("cpu.jsonl")));
  ASSERT_EQ(cpu.exit_code, 0) << cpu.output;
  auto gpu =
      on_emulated_gpu(run_args(model, "--device cuda --precision fp32 --output " + work.file("gpu.jsonl")));
  ASSERT_EQ(gpu.exit_code, 0) << gpu.output;
  const auto want = rows_of(work.file("cpu.jsonl")), got = rows_of(work.file("gpu.jsonl"));
  ASSERT_EQ(got.size(), want.size());
  int compared = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i]["label"], want[i]["label"]) << i;
    for (const auto& [key, value] : want[i].items()) {
      if (!value.is_number_float()) continue;
      EXPECT_NEAR(got[i][key].get<double>(), value.get<double>(), 1e-4) << "row " << i << ", " << key;
      ++compared;
    }
  }
  EXPECT_GE(compared, int(2 * got.size())) << "no probabilities compared: " << want.front().dump();
  auto bf16 =
      on_emulated_gpu(run_args(model, "--device cuda --precision bf16 --output " + work.file("bf16.jsonl")));
  EXPECT_EQ(bf16.exit_code, 0) << bf16.output;
}

// A ModernBERT classifier (rotary positions, local windows, a GLU, pre-norm
// layers, a mean-pooled head with its norm).
TEST_F(CudaEmuCli, ModernBertOnTheGpuGivesTheCpusAnswers) {
  expect_the_cpus_answers_on_the_gpu("tiny-modernbert-mean");
}

// A DeBERTa-v3 classifier (disentangled attention with log-bucketed relative
// positions, an embedding projection, its Unigram tokenizer, the
// ContextPooler head).
TEST_F(CudaEmuCli, DebertaOnTheGpuGivesTheCpusAnswers) {
  expect_the_cpus_answers_on_the_gpu("tiny-deberta");
}

// Outputs that are not finite on the GPU (NaN weights): the run stops naming
// the rows, the precision and the GPU.
TEST_F(CudaEmuCli, OutputsThatAreNotFiniteNameTheGpu) {
  TempDir work;
  const std::string model = work.file("nan");
  fs::copy(dir_->file("tiny"), model, fs::copy_options::recursive);
  testing::edit_tensor(model + "/model.safetensors", "classifier.bias", [](float& v) { v = std::nanf(""); });
  auto bf16 =
      on_emulated_gpu(run_args(model, "--device cuda --precision bf16 --output " + work.file("n.jsonl")));
  EXPECT_EQ(bf16.exit_code, 4) << bf16.output;
  // The first batch's rows (ten named, then how many more).
  EXPECT_TRUE(has(bf16.output, dir_->file("in.jsonl") + ": lines 1, ")) << bf16.output;
  EXPECT_TRUE(
      has(bf16.output,
          " more: the model's outputs are not finite numbers (NaN or infinity) in bf16 on cuda:0; use "
          "--precision fp32"))
      << bf16.output;
  EXPECT_FALSE(fs::exists(work.file("n.jsonl")));
}

// A GPU that fails mid-run (a sticky CUDA error): exit status 4, the
// device named, no output left.
TEST_F(CudaEmuCli, AGpuThatFailsMidRunExitsWithTheDeviceStatus) {
  TempDir work;
  auto failed = on_emulated_gpu(
      run_args(dir_->file("tiny"),
               "--device cuda --precision fp32 --max-batch-tokens 512 --output " + work.file("out.jsonl")),
      "INFERCOST_EMU_STICKY_AFTER_SYNCS=4");
  EXPECT_EQ(failed.exit_code, 4) << failed.output;
  EXPECT_TRUE(has(failed.output, "the CUDA context on cuda:0 is unusable")) << failed.output;
  EXPECT_TRUE(has(failed.output, "cudaErrorIllegalAddress")) << failed.output;
  EXPECT_FALSE(fs::exists(work.file("out.jsonl")));
}

}  // namespace
}  // namespace infercost
