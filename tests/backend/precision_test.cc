// The CPU backend's int8 and bf16 paths: the kernels they add (erf/GELU,
// quantization, the int8 epilogue, bf16 rounding), the int8 linear layer, the
// bf16 capability error, and model-level accuracy against fp32.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu/gemm_int8.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu_info.h"
#include "golden_util.h"
#include "precision_util.h"
#include "random_weights.h"
#include "test_utils.h"

namespace infercost::backend {
namespace {

using cpu::EpilogueOp;

TEST(ErfApprox, WithinOneMillionthOfStdErf) {
  double worst = 0, worst_gelu = 0;
  for (int i = -120000; i <= 120000; ++i) {
    const float x = float(i) * 1e-4f;
    worst = std::max(worst, std::abs(double(cpu::erf_approx(x)) - std::erf(double(x))));
    const double gelu = 0.5 * x * (1.0 + std::erf(double(x) / std::sqrt(2.0)));
    worst_gelu = std::max(worst_gelu,
                          std::abs(double(cpu::gelu_erf_approx(x)) - gelu) / std::max(1.0, std::abs(gelu)));
  }
  for (float x : {0.0f, -0.0f, 1e-30f, 30.0f, -30.0f, 1e30f, -1e30f}) {
    worst = std::max(worst, std::abs(double(cpu::erf_approx(x)) - std::erf(double(x))));
  }
  std::printf("[erf] max |erf_approx - erf| %.3g, GELU max error (relative above 1) %.3g\n", worst,
              worst_gelu);
  EXPECT_LE(worst, 1e-6);
  EXPECT_LE(worst_gelu, 2e-6);
  EXPECT_EQ(cpu::gelu_erf_approx(-1e30f), 0.0f);
}

TEST(QuantizeRows, RoundTripWithinHalfAStep) {
  std::mt19937 rng(1);
  const int cols = 77;
  std::vector<std::vector<float>> rows;
  for (float scale : {1e-3f, 0.5f, 3.0f, 1e4f}) {
    std::normal_distribution<float> d(0.3f * scale, scale);
    std::vector<float> r(cols);
    for (float& x : r) x = d(rng);
    rows.push_back(r);
  }
  rows.push_back(std::vector<float>(cols, 5.0f));   // constant, positive
  rows.push_back(std::vector<float>(cols, -2.5f));  // constant, negative
  rows.push_back(std::vector<float>(cols, 0.0f));   // all zero
  std::vector<float> pos(cols), neg(cols);
  for (int i = 0; i < cols; ++i) {
    pos[size_t(i)] = 1.0f + float(i);
    neg[size_t(i)] = -1.0f - float(i);
  }
  rows.push_back(pos);
  rows.push_back(neg);
  std::vector<float> x;
  for (const auto& r : rows) x.insert(x.end(), r.begin(), r.end());
  const int64_t n = int64_t(rows.size());
  std::vector<uint8_t> q(x.size());
  std::vector<float> scale(static_cast<size_t>(n)), zero(static_cast<size_t>(n));
  cpu::quantize_rows_u8(x.data(), n, cols, q.data(), scale.data(), zero.data());
  for (int64_t r = 0; r < n; ++r) {
    ASSERT_TRUE(std::isfinite(scale[size_t(r)]) && scale[size_t(r)] > 0) << "row " << r;
    ASSERT_GE(zero[size_t(r)], 0.0f);
    ASSERT_LE(zero[size_t(r)], 255.0f);
    ASSERT_EQ(zero[size_t(r)], std::nearbyint(zero[size_t(r)]));
    for (int c = 0; c < cols; ++c) {
      const size_t i = size_t(r * cols + c);
      const float back = scale[size_t(r)] * (float(q[i]) - zero[size_t(r)]);
      EXPECT_LE(std::abs(back - x[i]), 0.5f * scale[size_t(r)] * 1.0001f + 1e-6f * std::abs(x[i]))
          << "row " << r << " col " << c << " x " << x[i];
    }
  }
  // Zero is exact, and a constant row comes back exactly.
  EXPECT_EQ(scale[6], 1.0f);
  for (int c = 0; c < cols; ++c) EXPECT_FLOAT_EQ(scale[4] * (float(q[size_t(4 * cols + c)]) - zero[4]), 5.0f);
}

TEST(QuantizeColumns, SevenBitCodesWithinHalfAStep) {
  std::mt19937 rng(2);
  model::Linear a = testing::random_linear(5, 40, rng, 0.1f);
  model::Linear b = testing::random_linear(3, 40, rng, 2.0f);
  std::fill(b.weight.begin(), b.weight.begin() + 40, 0.0f);  // an all-zero column
  const cpu::ColumnQuantized c = cpu::quantize_columns({&a, &b});
  ASSERT_EQ(c.out, 8);
  ASSERT_EQ(c.in, 40);
  for (int n = 0; n < 8; ++n) {
    const model::Linear& src = n < 5 ? a : b;
    const int o = n < 5 ? n : n - 5;
    int32_t sum = 0, amax = 0;
    for (int k = 0; k < 40; ++k) {
      const int q = c.q[size_t(k * 8 + n)];
      sum += q;
      amax = std::max(amax, std::abs(q));
      const float w = src.weight[size_t(o * 40 + k)];
      EXPECT_LE(std::abs(c.scale[size_t(n)] * float(q) - w), 0.5f * c.scale[size_t(n)] * 1.0001f);
    }
    EXPECT_EQ(amax, n == 5 ? 0 : cpu::int8_weight_max()) << "column " << n;
    EXPECT_FLOAT_EQ(c.colsum_scaled[size_t(n)], c.scale[size_t(n)] * float(sum));
    EXPECT_EQ(c.bias[size_t(n)], src.bias[size_t(o)]);
  }
}

TEST(Int8Epilogue, MatchesScalarReference) {
  std::mt19937 rng(3);
  std::normal_distribution<float> d(0.0f, 20.0f);
  const int rows = 19, cols = 45;
  std::vector<float> acc(rows * cols), y0(rows * cols), scale(rows), zero(rows), cs(cols), bias(cols);
  for (float& v : acc) v = d(rng);
  for (float& v : y0) v = d(rng) * 0.1f;
  for (int r = 0; r < rows; ++r) {
    scale[size_t(r)] = 0.01f + 0.001f * float(r);
    zero[size_t(r)] = float(rng() % 256);
  }
  for (int c = 0; c < cols; ++c) {
    cs[size_t(c)] = d(rng) * 0.01f;
    bias[size_t(c)] = d(rng) * 0.01f;
  }
  for (EpilogueOp op : {EpilogueOp::kStore, EpilogueOp::kGelu, EpilogueOp::kRelu, EpilogueOp::kAccumulate}) {
    std::vector<float> y = op == EpilogueOp::kAccumulate ? y0 : acc;  // in place unless accumulating
    cpu::int8_epilogue(acc.data(), y.data(), rows, cols, scale.data(), zero.data(), cs.data(), bias.data(),
                       op);
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < cols; ++c) {
        const size_t i = size_t(r * cols + c);
        const double v =
            double(scale[size_t(r)]) * (double(acc[i]) - double(zero[size_t(r)]) * cs[size_t(c)]) +
            bias[size_t(c)];
        double want = v;
        if (op == EpilogueOp::kGelu) want = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
        if (op == EpilogueOp::kRelu) want = std::max(v, 0.0);
        if (op == EpilogueOp::kAccumulate) want = double(y0[i]) + v;
        EXPECT_NEAR(y[i], want, 1e-5 * (1.0 + std::abs(want))) << "op " << int(op) << " at " << r << "," << c;
      }
    }
  }
}

// The whole int8 layer (quantize, oneDNN u8 x s8, epilogue) against a double
// reference on the dequantized operands. The inputs fill the uint8 range and
// the weights the 7-bit range, the worst case for int16 pair saturation.
TEST(Int8Linear, MatchesDequantizedReference) {
  std::mt19937 rng(4);
  const int in = 256, out = 48, rows = 37;
  model::Linear l = testing::random_linear(out, in, rng, 0.2f);
  std::vector<float> x(size_t(rows * in));
  std::uniform_real_distribution<float> u(-3.0f, 5.0f);
  for (float& v : x) v = u(rng);
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  for (cpu::Activation act : {cpu::Activation::kNone, cpu::Activation::kGelu}) {
    for (bool accumulate : {false, true}) {
      if (accumulate && act != cpu::Activation::kNone) continue;
      cpu::Int8Linear layer;
      ASSERT_TRUE(layer.init(engine, {&l}, act, accumulate, "test").ok());
      cpu::Int8Scratch scratch;
      std::vector<float> y(size_t(rows * out), accumulate ? 1.5f : 0.0f);
      layer.run(stream, x.data(), rows, y.data(), scratch);
      const cpu::ColumnQuantized c = cpu::quantize_columns({&l});
      std::vector<uint8_t> q(x.size());
      std::vector<float> s(rows), z(rows);
      cpu::quantize_rows_u8(x.data(), rows, in, q.data(), s.data(), z.data());
      double worst = 0;
      for (int r = 0; r < rows; ++r) {
        for (int n = 0; n < out; ++n) {
          double v = l.bias[size_t(n)];
          for (int k = 0; k < in; ++k) {
            v += double(s[size_t(r)]) * (double(q[size_t(r * in + k)]) - z[size_t(r)]) * c.scale[size_t(n)] *
                 c.q[size_t(k * out + n)];
          }
          if (act == cpu::Activation::kGelu) v = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
          if (accumulate) v += 1.5;
          worst = std::max(worst, std::abs(double(y[size_t(r * out + n)]) - v) / (1.0 + std::abs(v)));
        }
      }
      EXPECT_LE(worst, 2e-5) << "act " << int(act) << " accumulate " << accumulate;
    }
  }
}

TEST(Bf16, RoundsToNearestEven) {
  auto f = [](uint32_t bits) { return std::bit_cast<float>(bits); };
  const std::vector<std::pair<float, float>> cases = {
      {1.0f, 1.0f},
      {f(0x3f808000), f(0x3f800000)},  // 1 + 2^-8: a tie, to even (down)
      {f(0x3f818000), f(0x3f820000)},  // 1 + 3 * 2^-8: a tie, to even (up)
      {f(0x3f808001), f(0x3f810000)},  // just above the tie: up
      {f(0xbf807fff), f(0xbf800000)},  // just below the tie, negative: down in magnitude
      {0.0f, 0.0f},
      {f(0x7f7fffff), f(0x7f800000)},  // FLT_MAX rounds to infinity, as bf16 conversion does
  };
  for (const auto& [x, want] : cases) {
    float y = 0;
    uint16_t b = 0;
    cpu::round_to_bf16(&x, &y, 1);
    cpu::convert_to_bf16(&x, &b, 1);
    EXPECT_EQ(std::bit_cast<uint32_t>(y), std::bit_cast<uint32_t>(want)) << x;
    EXPECT_EQ(uint32_t(b) << 16, std::bit_cast<uint32_t>(want)) << x;
  }
}

TEST(Precision, Bf16WithoutNativeSupportIsAClearError) {
  BackendOptions options;
  options.precision = Precision::kBf16;
  auto created = create_backend("cpu", options);
  if (cpu_info().native_bf16()) {
    ASSERT_TRUE(created.ok()) << created.status().to_string();
    EXPECT_EQ((*created)->precision(), Precision::kBf16);
    GTEST_SKIP() << "this CPU has native bf16 (" << cpu_info().isa() << "); the error path does not apply";
  }
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), StatusCode::kUnsupported);
  const std::string& m = created.status().message();
  for (const std::string& part : {cpu_info().isa(), std::string("AVX512_BF16"), std::string("AMX"),
                                  std::string("fp32"), std::string("int8")}) {
    EXPECT_NE(m.find(part), std::string::npos) << "'" << part << "' missing from: " << m;
  }
  options.emulate_bf16 = true;
  auto emulated = create_backend("cpu", options);
  ASSERT_TRUE(emulated.ok()) << emulated.status().to_string();
  EXPECT_EQ((*emulated)->precision(), Precision::kBf16);
  EXPECT_EQ((*emulated)->name(), "cpu");
}

TEST(Precision, ReportedAsConfigured) {
  for (Precision p : {Precision::kFp32, Precision::kInt8}) {
    BackendOptions options;
    options.precision = p;
    auto created = create_backend("cpu", options);
    ASSERT_TRUE(created.ok()) << created.status().to_string();
    EXPECT_EQ((*created)->precision(), p);
    EXPECT_EQ((*created)->name(), "cpu");
  }
}

// Model-level accuracy. The bounds are the measured figures (printed) with a
// little margin. These models have random weights with near-tied labels on
// many rows, and the golden ones (HF initializer_range 0.2) are much sharper
// than trained models, so small errors in Q and K move the attention a lot:
// int8 flips 1-5% of rows here, all with an fp32 top-2 margin below 0.2, and
// bf16 up to 0.75%. No test checks the >= 99.5% int8 target: at real scale,
// synthesized DistilBERT-base weights (precision_synth_test.cc, label slow)
// are checked for int8 >= 97% agreement (max prob diff <= 0.6) and bf16 >= 99%
// (<= 0.15) on 400 rows; random weights miss 99.5% (bench/RESULTS.md).
struct SmallCase {
  model::Architecture arch;
  const char* activation;
};

class SmallConfigPrecisionTest : public ::testing::TestWithParam<SmallCase> {};

TEST_P(SmallConfigPrecisionTest, AgreesWithFp32) {
  const model::ModelConfig config = testing::small_config(GetParam().arch, GetParam().activation);
  const model::EncoderWeights weights = testing::random_weights(config, 5);
  // Measured: int8 99.67-100% agreement, max prob diff <= 0.012; bf16 99.67-100%, <= 0.007.
  testing::check_precisions(config.name + "-" + GetParam().activation, config, weights, 300,
                            config.max_positions(), {0.98, 0.06, 0.995, 0.01});
}

INSTANTIATE_TEST_SUITE_P(Configs, SmallConfigPrecisionTest,
                         ::testing::Values(SmallCase{model::Architecture::kDistilBert, "gelu"},
                                           SmallCase{model::Architecture::kDistilBert, "relu"},
                                           SmallCase{model::Architecture::kBert, "gelu"},
                                           SmallCase{model::Architecture::kRoberta, "gelu"}),
                         [](const auto& info) {
                           return std::string(testing::arch_name(info.param.arch)) + "_" +
                                  info.param.activation;
                         });

// Measured (400 rows; int8 as a CPU with native bf16 runs it: QKV and FFN-in
// GEMMs in bf16, the others int8 with 8-bit weights): tiny-distilbert int8 99.0%
// / 0.030, bf16 99.5% / 0.017; tiny-distilbert-relu int8 100% / 0.011, bf16 100%
// / 0.005; tiny-bert int8 98.75% / 0.029, bf16 99.25% / 0.013; tiny-roberta int8
// 97.75% / 0.017, bf16 99.0% / 0.0045; tiny-roberta-multilabel (argmax of its 5
// logits) int8 99.75% / 0.0085, bf16 99.75% / 0.0036; tiny-xlm-roberta int8
// 96.5% / 0.016, bf16 99.0% / 0.0054; tiny-modernbert int8 100% / 0.0060, bf16
// 100% / 0.0022; -mean int8 100% / 0.0063, bf16 100% / 0.0018; -multilabel int8
// 99.75% / 0.0066, bf16 100% / 0.0029; -long int8 100% / 0.0099, bf16 99.75% /
// 0.0044 (rows of up to 64 tokens, past every local window but -long's);
// tiny-deberta int8 100% / 0.0187, bf16 99.75% / 0.0056; -3 int8 99.75% /
// 0.0094, bf16 100% / 0.0037; -multilabel int8 99.5% / 0.0091, bf16 100% /
// 0.0053 (past the 16- and 32-bucket models' exact range). Random heads leave many rows within
// a hair of a tie (tiny-xlm-roberta flips 14 rows while no output moves more than 0.016), so the agreement
// bounds are loose and the largest move is the tighter check; tests/real checks int8 >= 99.5% on real
// weights.
const std::map<std::string, testing::Bounds> kTinyBounds = {
    {"tiny-distilbert", {0.98, 0.15, 0.99, 0.025}},
    {"tiny-distilbert-relu", {0.995, 0.05, 0.995, 0.01}},
    {"tiny-bert", {0.94, 0.15, 0.99, 0.02}},
    {"tiny-roberta", {0.96, 0.04, 0.985, 0.01}},
    {"tiny-roberta-multilabel", {0.99, 0.04, 0.99, 0.01}},
    {"tiny-xlm-roberta", {0.955, 0.04, 0.985, 0.01}},
    {"tiny-modernbert", {0.985, 0.02, 0.99, 0.01}},
    {"tiny-modernbert-mean", {0.985, 0.02, 0.99, 0.01}},
    {"tiny-modernbert-multilabel", {0.985, 0.02, 0.99, 0.01}},
    {"tiny-modernbert-long", {0.985, 0.02, 0.99, 0.01}},
    {"tiny-deberta", {0.985, 0.03, 0.99, 0.01}},
    {"tiny-deberta-3", {0.985, 0.03, 0.99, 0.01}},
    {"tiny-deberta-multilabel", {0.985, 0.03, 0.99, 0.01}},
};

class TinyGoldenPrecisionTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TinyGoldenPrecisionTest, AgreesWithFp32) {
  const std::string dir = std::string(INFERCOST_TEST_DATA_DIR) + "/golden/" + GetParam();
  model::ModelConfig config;
  model::EncoderWeights weights;
  ASSERT_NO_FATAL_FAILURE(testing::load_model(dir, config, weights));
  testing::check_precisions(GetParam(), config, weights, 400, 64, kTinyBounds.at(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Models, TinyGoldenPrecisionTest,
                         ::testing::Values("tiny-distilbert", "tiny-distilbert-relu", "tiny-bert",
                                           "tiny-roberta", "tiny-roberta-multilabel", "tiny-xlm-roberta",
                                           "tiny-modernbert", "tiny-modernbert-mean",
                                           "tiny-modernbert-multilabel", "tiny-modernbert-long",
                                           "tiny-deberta", "tiny-deberta-3", "tiny-deberta-multilabel"),
                         ::infercost::testing::DashesToUnderscores());

}  // namespace
}  // namespace infercost::backend
