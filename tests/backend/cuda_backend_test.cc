// The CUDA backend against the CPU backend's fp32, on a GPU: fp32 parity,
// fp16/bf16 label agreement, padding, graphs, fork(), out-of-memory and
// capacity(). Every test skips, saying why, where CUDA sees no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backend/backend.h"
#include "backend/cuda/host.h"
#include "cuda_test_util.h"
#include "golden_util.h"
#include "model/synth.h"
#include "parity_suite.h"
#include "random_weights.h"

namespace infercost::backend {
namespace {

// The module this build made, unless the environment names one (see
// cuda_host_test.cc); read once per process.
const bool module_env_set = [] {
  ::setenv("INFERCOST_CUDA_MODULE", INFERCOST_BINARY_DIR "/libinfercost_cuda.so", 0);
  return true;
}();

// Why there is no GPU to test on, or "".
std::string no_gpu() {
  Result<std::vector<CudaDeviceInfo>> gpus = cuda_devices();
  return gpus.ok() ? "" : gpus.status().message();
}

#define SKIP_WITHOUT_GPU()                                         \
  do {                                                             \
    const std::string why_ = no_gpu();                             \
    if (!why_.empty()) {                                           \
      GTEST_SKIP() << "no GPU to test the CUDA backend: " << why_; \
    }                                                              \
  } while (0)

using testing::batch_of;
using testing::random_rows;
using testing::Rows;

// ForwardOutput per row, `chunk` rows per batch (in the order given).
std::vector<std::vector<float>> logits_of(Backend& backend, const Rows& rows, size_t chunk) {
  std::vector<std::vector<float>> out;
  for (size_t start = 0; start < rows.size(); start += chunk) {
    const size_t end = std::min(rows.size(), start + chunk);
    Result<ForwardOutput> l = backend.forward(batch_of(rows, start, end));
    EXPECT_TRUE(l.ok()) << backend.name() << ": " << l.status().to_string();
    if (!l.ok()) return {};
    EXPECT_EQ(l->rows, int(end - start));
    for (int r = 0; r < l->rows; ++r) {
      out.emplace_back(l->values.begin() + r * l->width, l->values.begin() + (r + 1) * l->width);
    }
  }
  return out;
}

double max_abs_diff(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t r = 0; r < std::min(a.size(), b.size()); ++r) {
    EXPECT_EQ(a[r].size(), b[r].size());
    for (size_t i = 0; i < std::min(a[r].size(), b[r].size()); ++i) {
      worst = std::max(worst, std::abs(double(a[r][i]) - double(b[r][i])));
    }
  }
  return worst;
}

double max_abs_diff(const ForwardOutput& a, const ForwardOutput& b) {
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.width, b.width);
  EXPECT_EQ(a.values.size(), b.values.size());
  double worst = 0;
  for (size_t i = 0; i < std::min(a.values.size(), b.values.size()); ++i) {
    worst = std::max(worst, std::abs(double(a.values[i]) - double(b.values[i])));
  }
  return worst;
}

std::unique_ptr<Backend> prepared(const std::string& device, Precision precision,
                                  const model::ModelConfig& config, const model::EncoderWeights& weights,
                                  bool graphs = true) {
  BackendOptions options;
  options.precision = precision;
  options.cuda_graphs = graphs;
  return testing::prepared_or_null(create_backend(device, options), config, weights);
}

// The GPU in the parity suite: fp32 within 1e-3 of HF, the tolerance of the
// CUDA backend against the CPU (the GPU's GEMMs sum in another order).
testing::ParityTarget gpu_target() {
  testing::ParityTarget t;
  t.name = "cuda";
  t.make = [] { return create_backend("cuda:0", BackendOptions{}); };
  t.tolerance = 1e-3;
  t.unavailable = [] {
    const std::string why = no_gpu();
    return why.empty() ? why : "no GPU to test the CUDA backend: " + why;
  };
  return t;
}

INFERCOST_BACKEND_PARITY(Cuda, gpu_target());
INFERCOST_BACKEND_PARITY_MODERNBERT(Cuda, gpu_target());
INFERCOST_BACKEND_PARITY_DEBERTA(Cuda, gpu_target());

// ---- Small models ------------------------------------------------------------

struct ArchCase {
  model::Architecture arch;
  const char* activation;
};

// A stable test name in CTest (the default prints the bytes, a pointer among them).
void PrintTo(const ArchCase& c, std::ostream* os) {
  *os << testing::arch_name(c.arch) << "/" << c.activation;
}

class CudaSmallModel : public ::testing::TestWithParam<ArchCase> {};

TEST_P(CudaSmallModel, Fp32MatchesTheCpuWithinParityTolerance) {
  SKIP_WITHOUT_GPU();
  const model::ModelConfig config = testing::small_config(GetParam().arch, GetParam().activation);
  const model::EncoderWeights weights = testing::random_weights(config, 21);
  auto cpu = prepared("cpu", Precision::kFp32, config, weights);
  auto gpu = prepared("cuda:0", Precision::kFp32, config, weights);
  ASSERT_TRUE(cpu && gpu);
  EXPECT_EQ(gpu->name(), "cuda:0");
  EXPECT_EQ(gpu->precision(), Precision::kFp32);
  EXPECT_TRUE(gpu->skips_padding());
  const Rows rows = random_rows(67, 1, config.max_positions(), config.vocab_size, 4);
  const auto want = logits_of(*cpu, rows, 16);
  for (size_t chunk : {size_t(1), size_t(16), rows.size()}) {
    const double diff = max_abs_diff(want, logits_of(*gpu, rows, chunk));
    std::printf("[cuda] small %s/%s fp32, %zu rows per batch: max |logit diff| vs CPU %.3g\n",
                config.model_type.c_str(), model::activation_name(config.ffn_activation), chunk, diff);
    EXPECT_LE(diff, 1e-3) << "chunk " << chunk;
  }
}

TEST_P(CudaSmallModel, ComputedPaddingChangesNothing) {
  SKIP_WITHOUT_GPU();
  const model::ModelConfig config = testing::small_config(GetParam().arch, GetParam().activation);
  const model::EncoderWeights weights = testing::random_weights(config, 22);
  const Rows rows = random_rows(19, 1, config.max_positions(), config.vocab_size, 5);
  for (Precision p : {Precision::kFp32, Precision::kFp16}) {
    auto gpu = prepared("cuda:0", p, config, weights);
    ASSERT_TRUE(gpu);
    // Padding ids that are valid but different from any real pad: masked keys.
    Result<ForwardOutput> packed = gpu->forward(batch_of(rows, 0, rows.size(), false, 7));
    Result<ForwardOutput> padded = gpu->forward(batch_of(rows, 0, rows.size(), true, 7));
    ASSERT_TRUE(packed.ok() && padded.ok()) << packed.status().to_string() << padded.status().to_string();
    const double diff = max_abs_diff(*packed, *padded);
    std::printf("[cuda] small %s %s: computed padding vs packed max |logit diff| %.3g\n",
                config.model_type.c_str(), p == Precision::kFp32 ? "fp32" : "fp16", diff);
    EXPECT_LE(diff, p == Precision::kFp32 ? 1e-4 : 2e-2);
  }
}

// With a pooling (embeddings), each row's pooled token vectors as the CPU
// backend pools them: fp32 within the parity tolerance, for a model without a head.
TEST_P(CudaSmallModel, PooledVectorsMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  const model::ModelConfig config = testing::small_config(GetParam().arch, GetParam().activation);
  model::EncoderWeights weights = testing::random_weights(config, 23);
  weights.head = {};
  const Rows rows = random_rows(33, 1, config.max_positions(), config.vocab_size, 6);
  for (Pooling pooling : {Pooling::kCls, Pooling::kMean, Pooling::kMax, Pooling::kLastToken}) {
    BackendOptions options;
    options.pooling = pooling;
    auto cpu = testing::prepared_or_null(create_backend("cpu", options), config, weights);
    auto gpu = testing::prepared_or_null(create_backend("cuda:0", options), config, weights);
    ASSERT_TRUE(cpu && gpu);
    const double diff = max_abs_diff(logits_of(*cpu, rows, 16), logits_of(*gpu, rows, 16));
    std::printf("[cuda] small %s %s pooling fp32: max |diff| vs CPU %.3g\n", config.model_type.c_str(),
                model::pooling_name(pooling), diff);
    EXPECT_LE(diff, 1e-3) << model::pooling_name(pooling);
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, CudaSmallModel,
                         ::testing::Values(ArchCase{model::Architecture::kDistilBert, "gelu"},
                                           ArchCase{model::Architecture::kDistilBert, "relu"},
                                           ArchCase{model::Architecture::kBert, "gelu"},
                                           ArchCase{model::Architecture::kRoberta, "gelu"}),
                         [](const auto& info) {
                           return std::string(testing::arch_name(info.param.arch)) + "_" +
                                  info.param.activation;
                         });

// A small BERT on the GPU twice: with CUDA graphs, and eagerly (the reference).
class CudaGraphs : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_GPU();
    graphs_ = prepared("cuda:0", Precision::kFp32, config_, weights_, true);
    eager_ = prepared("cuda:0", Precision::kFp32, config_, weights_, false);
    ASSERT_TRUE(graphs_ && eager_);
  }
  const model::ModelConfig config_ = testing::small_config(model::Architecture::kBert, "gelu");
  const model::EncoderWeights weights_ = testing::random_weights(config_, 23);
  std::unique_ptr<Backend> graphs_, eager_;
};

TEST_F(CudaGraphs, ReplayGivesTheEagerLogits) {
  const model::ModelConfig& config = config_;
  Backend& graphs = *graphs_;
  Backend& eager = *eager_;
  // Two batches with one shape key (rows, tokens, longest row) but other ids
  // and lengths: a replayed graph must read the new batch, not the captured one.
  Rows a = random_rows(6, 1, 30, config.vocab_size, 6);
  Rows b = a;
  std::reverse(b.begin(), b.end());
  for (auto& r : b) {
    for (int32_t& id : r) id = (id * 7 + 3) % config.vocab_size;
  }
  const TokenBatch ba = batch_of(a, 0, a.size()), bb = batch_of(b, 0, b.size());
  Result<ForwardOutput> want_a = eager.forward(ba), want_b = eager.forward(bb);
  ASSERT_TRUE(want_a.ok() && want_b.ok());
  ASSERT_GT(max_abs_diff(*want_a, *want_b), 1e-3) << "the two batches must differ";
  // First sight eager, second captured and replayed, then replayed.
  for (int round = 0; round < 4; ++round) {
    Result<ForwardOutput> got_a = graphs.forward(ba);
    Result<ForwardOutput> got_b = graphs.forward(bb);
    ASSERT_TRUE(got_a.ok() && got_b.ok()) << got_a.status().to_string() << got_b.status().to_string();
    EXPECT_LE(max_abs_diff(*want_a, *got_a), 1e-5) << "round " << round;
    EXPECT_LE(max_abs_diff(*want_b, *got_b), 1e-5) << "round " << round;
  }
  // A larger batch regrows the buffers (dropping the graphs); the old shape still works.
  const Rows big = random_rows(200, 20, config.max_positions(), config.vocab_size, 8);
  ASSERT_TRUE(graphs.forward(batch_of(big, 0, big.size())).ok());
  for (int round = 0; round < 3; ++round) {
    Result<ForwardOutput> got_a = graphs.forward(ba);
    ASSERT_TRUE(got_a.ok());
    EXPECT_LE(max_abs_diff(*want_a, *got_a), 1e-5) << "after regrowth, round " << round;
  }
}

// Two streams of one GPU on two threads: one captures and replays graphs
// while the other keeps growing its memory (cudaMalloc and cudaFree, which
// synchronize the device and would break a capture in progress; the backends
// of a GPU share a lock for that). Every batch must give the eager logits.
TEST_F(CudaGraphs, CaptureBesideAnotherStreamsAllocations) {
  const model::ModelConfig& config = config_;
  Result<std::unique_ptr<Backend>> twin = graphs_->fork();
  ASSERT_TRUE(twin.ok()) << twin.status().to_string();
  std::vector<Rows> shapes, growing;
  for (int i = 0; i < 12; ++i) shapes.push_back(random_rows(2 + i, 1, 30, config.vocab_size, 70 + i));
  for (int i = 1; i <= 30; ++i) growing.push_back(random_rows(8 * i, 20, 40, config.vocab_size, 100 + i));
  std::vector<std::vector<std::vector<float>>> want_shapes, want_growing;
  for (const Rows& r : shapes) want_shapes.push_back(logits_of(*eager_, r, r.size()));
  for (const Rows& r : growing) want_growing.push_back(logits_of(*eager_, r, r.size()));
  double worst_shapes = 0, worst_growing = 0;
  std::thread capturing([&] {
    for (int round = 0; round < 3; ++round) {  // the second sighting of a shape captures it
      for (size_t i = 0; i < shapes.size(); ++i) {
        worst_shapes =
            std::max(worst_shapes, max_abs_diff(want_shapes[i], logits_of(*graphs_, shapes[i], 64)));
      }
    }
  });
  std::thread allocating([&] {
    for (size_t i = 0; i < growing.size(); ++i) {
      worst_growing = std::max(
          worst_growing, max_abs_diff(want_growing[i], logits_of(**twin, growing[i], growing[i].size())));
    }
  });
  capturing.join();
  allocating.join();
  EXPECT_LE(worst_shapes, 1e-5);
  EXPECT_LE(worst_growing, 1e-5);
}

TEST(CudaBackend, ErrorsAndEdgeCases) {
  SKIP_WITHOUT_GPU();
  const model::ModelConfig config = testing::small_config(model::Architecture::kDistilBert, "gelu");
  const model::EncoderWeights weights = testing::random_weights(config, 24);
  BackendOptions options;
  Result<std::unique_ptr<Backend>> made = create_backend("cuda:0", options);
  ASSERT_TRUE(made.ok()) << made.status().to_string();
  std::unique_ptr<Backend> gpu = std::move(made).value();
  Result<ForwardOutput> early = gpu->forward(batch_of({{1, 2}}, 0, 1));
  EXPECT_EQ(early.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(gpu->capacity(128).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(gpu->fork().status().code(), StatusCode::kInvalidArgument);
  model::EncoderWeights bad = weights;
  bad.layers[1].ffn_out.in = 5;
  const Status refused = gpu->prepare(config, bad);
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("cuda:0: prepare test-distilbert: layer 1: ffn out: shape [32, 5]"),
            std::string::npos)
      << refused.message();
  ASSERT_TRUE(gpu->prepare(config, weights).ok());
  Result<ForwardOutput> empty = gpu->forward(TokenBatch{});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->rows, 0);
  EXPECT_EQ(empty->width, 3);
  Result<ForwardOutput> bad_id = gpu->forward(batch_of({{1, config.vocab_size}}, 0, 1));
  EXPECT_EQ(bad_id.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_id.status().message().find("cuda:0: classify: token batch: row 0 position 1 has id 97"),
            std::string::npos)
      << bad_id.status().message();

  Result<std::vector<CudaDeviceInfo>> gpus = cuda_devices();
  ASSERT_TRUE(gpus.ok());
  const std::string beyond = "cuda:" + std::to_string(gpus->size());
  Result<std::unique_ptr<Backend>> none = create_backend(beyond, options);
  EXPECT_EQ(none.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(none.status().message().find("there is no GPU " + beyond), std::string::npos)
      << none.status().message();
  BackendOptions int8;
  int8.precision = Precision::kInt8;
  EXPECT_EQ(create_backend("cuda:0", int8).status().code(), StatusCode::kUnsupported);

  // bf16: native from compute capability 8.0; below it "auto" falls back to
  // fp16 and an explicit bf16 is refused.
  BackendOptions bf16;
  bf16.precision = Precision::kBf16;
  Result<std::unique_ptr<Backend>> explicit_bf16 = create_backend("cuda:0", bf16);
  bf16.precision_is_default = true;
  Result<std::unique_ptr<Backend>> auto_bf16 = create_backend("cuda:0", bf16);
  ASSERT_TRUE(auto_bf16.ok()) << auto_bf16.status().to_string();
  if ((*gpus)[0].compute_major >= 8) {
    ASSERT_TRUE(explicit_bf16.ok()) << explicit_bf16.status().to_string();
    EXPECT_EQ((*explicit_bf16)->precision(), Precision::kBf16);
    EXPECT_EQ((*auto_bf16)->precision(), Precision::kBf16);
  } else {
    EXPECT_EQ(explicit_bf16.status().code(), StatusCode::kUnsupported);
    EXPECT_NE(explicit_bf16.status().message().find("compute capability 8.0"), std::string::npos);
    EXPECT_EQ((*auto_bf16)->precision(), Precision::kFp16);
  }
}

// ---- DistilBERT-base (synthesized, as the benchmarks use) ----------------------

class CudaDistilBertBase : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!no_gpu().empty() || loaded_) return;
    const std::string dir = std::string(INFERCOST_BINARY_DIR) + "/cuda_backend_test/distilbert-base";
    config_ = new model::ModelConfig;
    weights_ = new model::EncoderWeights;
    testing::synthesize_and_load("distilbert-base", dir, *config_, *weights_);
    if (::testing::Test::HasFatalFailure()) return;
    // Tweet-like lengths, plus some rows of the model's 512.
    *rows_ = random_rows(384, 1, 128, config_->vocab_size, 31);
    const Rows longest = random_rows(16, 512, 512, config_->vocab_size, 32);
    rows_->insert(rows_->end(), longest.begin(), longest.end());
    auto cpu = prepared("cpu", Precision::kFp32, *config_, *weights_);
    ASSERT_TRUE(cpu);
    *cpu_logits_ = logits_of(*cpu, *rows_, 32);
    loaded_ = true;
  }

  void SetUp() override {
    SKIP_WITHOUT_GPU();
    ASSERT_TRUE(loaded_) << "the synthesized model or its CPU logits could not be made";
  }

  static std::vector<std::vector<double>> probs(const std::vector<std::vector<float>>& logits) {
    std::vector<std::vector<double>> out;
    for (const auto& l : logits) {
      const double mx = *std::max_element(l.begin(), l.end());
      std::vector<double> p;
      double sum = 0;
      for (float x : l) sum += p.emplace_back(std::exp(double(x) - mx));
      for (double& x : p) x /= sum;
      out.push_back(std::move(p));
    }
    return out;
  }

  static inline bool loaded_ = false;
  static inline model::ModelConfig* config_ = nullptr;
  static inline model::EncoderWeights* weights_ = nullptr;
  static inline Rows* rows_ = new Rows;
  static inline std::vector<std::vector<float>>* cpu_logits_ = new std::vector<std::vector<float>>;
};

TEST_F(CudaDistilBertBase, Fp32MatchesTheCpu) {
  auto gpu = prepared("cuda:0", Precision::kFp32, *config_, *weights_);
  ASSERT_TRUE(gpu);
  const double diff = max_abs_diff(*cpu_logits_, logits_of(*gpu, *rows_, 32));
  std::printf("[cuda] distilbert-base fp32: %zu rows, max |logit diff| vs CPU fp32 %.3g\n", rows_->size(),
              diff);
  EXPECT_LE(diff, 1e-3);
}

TEST_F(CudaDistilBertBase, HalfPrecisionsAgreeWithCpuFp32) {
  Result<std::vector<CudaDeviceInfo>> gpus = cuda_devices();
  ASSERT_TRUE(gpus.ok());
  std::vector<Precision> precisions = {Precision::kFp16};
  if ((*gpus)[0].compute_major >= 8) precisions.push_back(Precision::kBf16);
  const auto want = probs(*cpu_logits_);
  for (Precision p : precisions) {
    auto gpu = prepared("cuda:0", p, *config_, *weights_);
    ASSERT_TRUE(gpu);
    ASSERT_EQ(gpu->precision(), p);
    const auto got = probs(logits_of(*gpu, *rows_, 32));
    ASSERT_EQ(got.size(), want.size());
    int same = 0;
    double worst = 0;
    for (size_t r = 0; r < want.size(); ++r) {
      const auto wl = std::max_element(want[r].begin(), want[r].end()) - want[r].begin();
      const auto gl = std::max_element(got[r].begin(), got[r].end()) - got[r].begin();
      same += wl == gl;
      for (size_t i = 0; i < want[r].size(); ++i) worst = std::max(worst, std::abs(want[r][i] - got[r][i]));
    }
    const double agreement = double(same) / double(want.size());
    const char* name = p == Precision::kFp16 ? "fp16" : "bf16";
    std::printf(
        "[cuda] distilbert-base %s: %zu rows, label agreement with CPU fp32 %.2f%%, max |prob diff| %.4f\n",
        name, want.size(), 100 * agreement, worst);
    ::testing::Test::RecordProperty(std::string(name) + "_agreement", std::to_string(agreement));
    ::testing::Test::RecordProperty(std::string(name) + "_max_prob_diff", std::to_string(worst));
    EXPECT_GE(agreement, 0.995) << name;
  }
}

TEST_F(CudaDistilBertBase, ForkSharesTheWeightsAndRunsBesideTheOriginal) {
  auto gpu = prepared("cuda:0", Precision::kFp32, *config_, *weights_);
  ASSERT_TRUE(gpu);
  Result<std::unique_ptr<Backend>> twin = gpu->fork();
  ASSERT_TRUE(twin.ok()) << twin.status().to_string();
  EXPECT_EQ((*twin)->name(), "cuda:0");
  EXPECT_EQ((*twin)->precision(), Precision::kFp32);
  const Rows first(rows_->begin(), rows_->begin() + 200), second(rows_->begin() + 200, rows_->end());
  const auto want_first = logits_of(*gpu, first, 32);
  const auto want_second = logits_of(*gpu, second, 32);
  EXPECT_LE(max_abs_diff(want_first, logits_of(**twin, first, 32)), 1e-5);
  // Both at once, on two threads and two streams.
  std::vector<std::vector<float>> got_first, got_second;
  std::thread a([&] { got_first = logits_of(*gpu, first, 16); });
  std::thread b([&] { got_second = logits_of(**twin, second, 16); });
  a.join();
  b.join();
  EXPECT_LE(max_abs_diff(want_first, got_first), 1e-4);  // other batch sizes: other GEMM algorithms
  EXPECT_LE(max_abs_diff(want_second, got_second), 1e-4);
  // The fork outlives the original: the weights are shared, not borrowed.
  gpu.reset();
  EXPECT_LE(max_abs_diff(want_second, logits_of(**twin, second, 32)), 1e-5);
}

TEST_F(CudaDistilBertBase, ImpossibleBatchIsResourceExhaustedAndTheBackendRecovers) {
  auto gpu = prepared("cuda:0", Precision::kFp32, *config_, *weights_);
  ASSERT_TRUE(gpu);
  Result<BatchCapacity> cap = gpu->capacity(512);
  ASSERT_TRUE(cap.ok()) << cap.status().to_string();
  const Rows some(rows_->begin(), rows_->begin() + 32);
  const auto before = logits_of(*gpu, some, 32);
  // Rows of 512 whose activations alone exceed the whole device memory.
  const cuda::ModelDims dims{config_->hidden_size, config_->intermediate_size, config_->num_labels()};
  int rows = 1;
  while (cuda::activation_bytes(dims, Precision::kFp32, int64_t(rows) * 512, rows) <
         cap->total_bytes * 5 / 4) {
    rows *= 2;
  }
  TokenBatch huge;
  huge.batch = rows;
  huge.seq_len = 512;
  huge.ids.assign(size_t(rows) * 512, 101);
  huge.lengths.assign(size_t(rows), 512);
  Result<ForwardOutput> refused = gpu->forward(huge);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted) << refused.status().to_string();
  EXPECT_NE(refused.status().message().find("batch of " + std::to_string(rows) + " rows"), std::string::npos)
      << refused.status().message();
  std::printf("[cuda] %d x 512 tokens: %s\n", rows, refused.status().message().c_str());
  huge = TokenBatch{};
  EXPECT_LE(max_abs_diff(before, logits_of(*gpu, some, 32)), 1e-5) << "the backend must still work";
  Result<BatchCapacity> after = gpu->capacity(512);
  ASSERT_TRUE(after.ok());
  EXPECT_GE(after->max_tokens, cap->max_tokens / 2) << "the failed batch must not leak memory";
}

TEST_F(CudaDistilBertBase, CapacityFitsAndTheBatchItAllowsRuns) {
  for (Precision p : {Precision::kFp32, Precision::kFp16}) {
    auto gpu = prepared("cuda:0", p, *config_, *weights_);
    ASSERT_TRUE(gpu);
    const int max_length = 128;
    Result<BatchCapacity> cap = gpu->capacity(max_length);
    ASSERT_TRUE(cap.ok()) << cap.status().to_string();
    std::printf("[cuda] capacity %s, rows of %d: %d rows, %lld tokens (%s)\n", cuda::dtype_name(p),
                max_length, cap->max_rows, static_cast<long long>(cap->max_tokens), cap->basis.c_str());
    EXPECT_GT(cap->max_rows, 0);
    EXPECT_GE(cap->max_tokens, int64_t(cap->max_rows) * max_length);
    EXPECT_LE(cap->max_tokens, cuda::kMaxBatchTokens);
    EXPECT_GT(cap->free_bytes, 0);
    EXPECT_LE(cap->free_bytes, cap->total_bytes);
    const cuda::ModelDims dims{config_->hidden_size, config_->intermediate_size, config_->num_labels()};
    EXPECT_LE(
        cuda::activation_bytes(dims, p, cap->max_tokens, std::min<int64_t>(cap->max_tokens, cap->max_rows)),
        cap->free_bytes - cuda::reserve_bytes(cap->total_bytes));
    // The batch it allows runs: max_rows rows of max_length tokens.
    const Rows full = random_rows(cap->max_rows, max_length, max_length, config_->vocab_size, 33);
    Result<ForwardOutput> ran = gpu->forward(batch_of(full, 0, full.size()));
    ASSERT_TRUE(ran.ok()) << ran.status().to_string();
    EXPECT_EQ(ran->rows, cap->max_rows);
    for (float x : ran->values) ASSERT_TRUE(std::isfinite(x));
  }
}

}  // namespace
}  // namespace infercost::backend
