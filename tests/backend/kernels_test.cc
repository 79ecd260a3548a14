#include "backend/cpu/kernels.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <random>
#include <vector>

#include "backend/cpu/gemm_onednn.h"
#include "backend/rotary.h"
#include "model/reference_encoder.h"
#include "random_weights.h"

namespace infercost::backend::cpu {
namespace {

std::vector<float> randn(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

TEST(Kernels, LayerNormMatchesNaive) {
  const int rows = 37, cols = 77;
  std::vector<float> x = randn(size_t(rows) * cols, 1, 3.0f);
  for (int i = 0; i < cols; ++i) x[size_t(i)] += 50.0f;  // a large mean must not hurt precision
  std::vector<float> gamma = randn(cols, 2), beta = randn(cols, 3);
  std::vector<float> y(x.size());
  layer_norm(x.data(), y.data(), rows, cols, gamma.data(), beta.data(), 1e-12f);
  model::LayerNormWeights ln{gamma, beta};
  for (int r = 0; r < rows; ++r) {
    std::vector<float> row(x.begin() + r * cols, x.begin() + (r + 1) * cols);
    model::reference_layer_norm(row.data(), 1, cols, ln, 1e-12f);
    for (int i = 0; i < cols; ++i)
      ASSERT_NEAR(y[size_t(r) * cols + i], row[size_t(i)], 2e-5) << r << "," << i;
  }
  // In place gives the same result.
  layer_norm(x.data(), x.data(), rows, cols, gamma.data(), beta.data(), 1e-12f);
  EXPECT_EQ(x, y);
}

TEST(Kernels, EmbedLayerNormAddsWordPositionAndTokenType) {
  const int hidden = 24, vocab = 10, positions = 8;
  std::vector<float> word = randn(size_t(vocab) * hidden, 4), pos = randn(size_t(positions) * hidden, 5);
  std::vector<float> type0 = randn(hidden, 6), gamma = randn(hidden, 7), beta = randn(hidden, 8);
  const std::vector<int32_t> ids = {3, 9, 0, 4}, ps = {0, 1, 7, 2};
  for (bool with_type : {false, true}) {
    std::vector<float> out(ids.size() * hidden);
    embed_layer_norm(ids.data(), ps.data(), int64_t(ids.size()), hidden, word.data(), pos.data(),
                     with_type ? type0.data() : nullptr, gamma.data(), beta.data(), 1e-5f, out.data());
    for (size_t t = 0; t < ids.size(); ++t) {
      std::vector<float> row(size_t(hidden), 0.0f);
      for (int i = 0; i < hidden; ++i) {
        row[size_t(i)] = word[size_t(ids[t]) * hidden + i] + pos[size_t(ps[t]) * hidden + i] +
                         (with_type ? type0[size_t(i)] : 0.0f);
      }
      model::reference_layer_norm(row.data(), 1, hidden, {gamma, beta}, 1e-5f);
      for (int i = 0; i < hidden; ++i) ASSERT_NEAR(out[t * hidden + i], row[size_t(i)], 2e-5);
    }
  }
}

TEST(Kernels, ExpApproxIsAccurate) {
  for (float x = -87.0f; x <= 88.0f; x += 0.0137f) {
    const double want = std::exp(double(x));
    ASSERT_NEAR(exp_approx(x) / want, 1.0, 3e-7) << "x=" << x;
  }
  EXPECT_GT(exp_approx(-1000.0f), 0.0f);  // clamped, never NaN or negative
  EXPECT_LT(exp_approx(-1000.0f), 1e-37f);
}

TEST(Kernels, SoftmaxRowMatchesNaive) {
  for (int n : {1, 2, 7, 8, 9, 64, 129, 300}) {
    std::vector<float> x = randn(size_t(n), uint32_t(n), 5.0f);
    x[0] = 80.0f;  // large values must not overflow
    std::vector<double> ref(x.begin(), x.end());
    double mx = *std::max_element(ref.begin(), ref.end()), sum = 0;
    for (double& v : ref) sum += (v = std::exp(v - mx));
    softmax_row(x.data(), n);
    for (int i = 0; i < n; ++i)
      ASSERT_NEAR(x[size_t(i)], ref[size_t(i)] / sum, 1e-6) << "n=" << n << " i=" << i;
  }
}

// Packed per-sequence attention against padded attention with an additive
// mask over the padding keys, the way HF computes it.
TEST(Kernels, AttentionOverRealTokensMatchesMaskedPaddedAttention) {
  const int heads = 3, dh = 8, hidden = heads * dh;
  const std::vector<int32_t> lengths = {5, 1, 12, 7};
  const int seq_len = 12;
  std::vector<int64_t> offsets;
  int64_t total = 0;
  for (int32_t len : lengths) {
    offsets.push_back(total);
    total += len;
  }
  // Padded [batch, seq_len, 3*hidden]; the packed copy keeps the real rows.
  std::vector<float> padded = randn(lengths.size() * seq_len * 3 * hidden, 11, 1.5f);
  std::vector<float> qkv(size_t(total) * 3 * hidden);
  for (size_t s = 0; s < lengths.size(); ++s) {
    std::copy_n(padded.begin() + int64_t(s) * seq_len * 3 * hidden, lengths[s] * 3 * hidden,
                qkv.begin() + offsets[s] * 3 * hidden);
  }
  std::vector<float> ctx(size_t(total) * hidden, -1.0f);
  const int threads = omp_get_max_threads();
  std::vector<float> scratch(size_t(threads) * seq_len * seq_len);
  attention(qkv.data(), ctx.data(), offsets.data(), lengths.data(), nullptr, int(lengths.size()), heads, dh,
            1.0f / std::sqrt(float(dh)), scratch.data(), seq_len * seq_len);

  for (size_t s = 0; s < lengths.size(); ++s) {
    const float* base = padded.data() + int64_t(s) * seq_len * 3 * hidden;
    for (int h = 0; h < heads; ++h) {
      for (int i = 0; i < lengths[s]; ++i) {
        std::vector<double> sc(seq_len);
        double mx = -1e300, sum = 0;
        for (int j = 0; j < seq_len; ++j) {
          double dot = 0;
          for (int d = 0; d < dh; ++d) {
            dot += double(base[i * 3 * hidden + h * dh + d]) * base[j * 3 * hidden + hidden + h * dh + d];
          }
          sc[size_t(j)] = dot / std::sqrt(double(dh)) + (j < lengths[s] ? 0.0 : -1e9);
          mx = std::max(mx, sc[size_t(j)]);
        }
        for (double& v : sc) sum += (v = std::exp(v - mx));
        for (int d = 0; d < dh; ++d) {
          double acc = 0;
          for (int j = 0; j < seq_len; ++j)
            acc += sc[size_t(j)] / sum * base[j * 3 * hidden + 2 * hidden + h * dh + d];
          ASSERT_NEAR(ctx[size_t(offsets[s] + i) * hidden + h * dh + d], acc, 1e-5)
              << "seq " << s << " head " << h << " query " << i << " dim " << d;
        }
      }
    }
  }
}

// Local attention (a window of w tokens each side) and rows longer than a
// query block, against a naive attention that masks |i - j| > w out of the
// whole row; the scratch is what attention_scratch_floats asks, no more.
TEST(Kernels, LocalAndBlockedAttentionMatchNaiveMaskedAttention) {
  const int heads = 2, dh = 8, hidden = heads * dh;
  const std::vector<int32_t> lengths = {300, 3, int32_t(kAttentionQueryBlock) + 1, 40};
  std::vector<int64_t> offsets;
  int64_t total = 0;
  for (int32_t len : lengths) {
    offsets.push_back(total);
    total += len;
  }
  const std::vector<float> qkv = randn(size_t(total) * 3 * hidden, 12, 1.5f);
  for (int window : {0, 1, 16, 70}) {
    SCOPED_TRACE("window " + std::to_string(window));
    std::vector<float> ctx(size_t(total) * hidden, -1.0f);
    const int64_t per_thread = attention_scratch_floats(300, window);
    EXPECT_LE(per_thread, kAttentionQueryBlock * 300);
    std::vector<float> scratch(size_t(omp_get_max_threads()) * size_t(per_thread));
    attention(qkv.data(), ctx.data(), offsets.data(), lengths.data(), nullptr, int(lengths.size()), heads, dh,
              1.0f / std::sqrt(float(dh)), scratch.data(), per_thread, window);
    for (size_t s = 0; s < lengths.size(); ++s) {
      const float* base = qkv.data() + offsets[s] * 3 * hidden;
      for (int h = 0; h < heads; ++h) {
        for (int i = 0; i < lengths[s]; i += (i < 140 ? 1 : 7)) {
          std::vector<double> sc(size_t(lengths[s]));
          double mx = -1e300, sum = 0;
          for (int j = 0; j < lengths[s]; ++j) {
            double dot = 0;
            for (int d = 0; d < dh; ++d) {
              dot += double(base[i * 3 * hidden + h * dh + d]) * base[j * 3 * hidden + hidden + h * dh + d];
            }
            const bool seen = window == 0 || std::abs(i - j) <= window;
            sc[size_t(j)] = seen ? dot / std::sqrt(double(dh)) : -1e300;
            mx = std::max(mx, sc[size_t(j)]);
          }
          for (double& v : sc) sum += (v = v == -1e300 ? 0.0 : std::exp(v - mx));
          for (int d = 0; d < dh; ++d) {
            double acc = 0;
            for (int j = 0; j < lengths[s]; ++j)
              acc += sc[size_t(j)] / sum * base[j * 3 * hidden + 2 * hidden + h * dh + d];
            ASSERT_NEAR(ctx[size_t(offsets[s] + i) * hidden + h * dh + d], acc, 1e-5)
                << "seq " << s << " head " << h << " query " << i << " dim " << d;
          }
        }
      }
    }
  }
}

// Rotary embeddings: each pair (x_i, x_{i+d/2}) of every query and key head
// turned by position * theta^(-2i/d); values untouched.
TEST(Kernels, RotaryTurnsQueriesAndKeysByTheirPositions) {
  const int heads = 2, dh = 6, hidden = heads * dh;
  const double theta = 10000.0;
  std::vector<float> table;
  rotary_table(theta, dh, 50, table);
  ASSERT_EQ(table.size(), size_t(50 * dh));
  const std::vector<int32_t> positions = {0, 1, 49, 7};
  const std::vector<float> before = randn(positions.size() * 3 * hidden, 13);
  std::vector<float> qkv = before;
  apply_rotary(qkv.data(), int64_t(positions.size()), positions.data(), heads, dh, table.data());
  for (size_t t = 0; t < positions.size(); ++t) {
    for (int x = 0; x < 3 * heads; ++x) {
      for (int i = 0; i < dh / 2; ++i) {
        const size_t a = t * 3 * hidden + size_t(x) * dh + size_t(i), b = a + dh / 2;
        if (x >= 2 * heads) {  // values
          EXPECT_EQ(qkv[a], before[a]);
          EXPECT_EQ(qkv[b], before[b]);
          continue;
        }
        const double angle = positions[t] * std::pow(theta, -2.0 * i / dh);
        EXPECT_NEAR(qkv[a], before[a] * std::cos(angle) - before[b] * std::sin(angle), 1e-4) << t << " " << x;
        EXPECT_NEAR(qkv[b], before[b] * std::cos(angle) + before[a] * std::sin(angle), 1e-4) << t << " " << x;
      }
    }
  }
}

TEST(Kernels, GeluGluGatesTheActivatedHalf) {
  const int rows = 3, cols = 5;
  const std::vector<float> x = randn(size_t(rows) * 2 * cols, 14);
  std::vector<float> y(size_t(rows) * cols);
  gelu_glu(x.data(), y.data(), rows, cols);
  for (int r = 0; r < rows; ++r) {
    for (int i = 0; i < cols; ++i) {
      const double in = x[size_t(r) * 2 * cols + i], gate = x[size_t(r) * 2 * cols + cols + i];
      EXPECT_NEAR(y[size_t(r) * cols + i], 0.5 * in * (1 + std::erf(in / std::sqrt(2.0))) * gate, 1e-5);
    }
  }
}

struct LinearCase {
  Activation act;
  bool accumulate;
};

class LinearTest : public ::testing::TestWithParam<LinearCase> {};

// Bias, the fused activation (exact-erf GELU included) and the residual
// accumulation of the oneDNN linear against naive loops, for several M with
// the one runtime-M primitive.
TEST_P(LinearTest, MatchesNaive) {
  const LinearCase c = GetParam();
  std::mt19937 rng(21);
  const model::Linear a = testing::random_linear(19, 33, rng, 0.6f);
  const model::Linear b = testing::random_linear(6, 33, rng, 0.6f);
  OnednnLinear lin;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  ASSERT_TRUE(lin.init(engine, {&a, &b}, c.act, c.accumulate, "test").ok());
  ASSERT_EQ(lin.out(), 25);
  for (int64_t rows : {1, 3, 64, 257}) {
    std::vector<float> x = randn(size_t(rows) * 33, uint32_t(rows));
    std::vector<float> y = randn(size_t(rows) * 25, 99);
    const std::vector<float> y0 = y;
    lin.run(stream, x.data(), rows, y.data());
    stream.wait();
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<float> ya(25);
      model::reference_linear(a, x.data() + r * 33, 1, ya.data());
      model::reference_linear(b, x.data() + r * 33, 1, ya.data() + 19);
      for (int o = 0; o < 25; ++o) {
        float v = ya[size_t(o)];
        switch (c.act) {
          case Activation::kNone: break;
          case Activation::kGelu: v = model::reference_gelu(v); break;
          case Activation::kRelu: v = std::max(v, 0.0f); break;
          case Activation::kTanh: v = std::tanh(v); break;
        }
        if (c.accumulate) v += y0[size_t(r) * 25 + o];
        ASSERT_NEAR(y[size_t(r) * 25 + o], v, 2e-5) << "rows " << rows << " r " << r << " o " << o;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Activations, LinearTest,
                         ::testing::Values(LinearCase{Activation::kNone, false},
                                           LinearCase{Activation::kGelu, false},
                                           LinearCase{Activation::kRelu, false},
                                           LinearCase{Activation::kTanh, false},
                                           LinearCase{Activation::kNone, true}));

TEST(Linear, RejectsMismatchedParts) {
  std::mt19937 rng(1);
  const model::Linear a = testing::random_linear(4, 8, rng, 1.0f);
  const model::Linear b = testing::random_linear(4, 9, rng, 1.0f);
  OnednnLinear lin;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  const Status st = lin.init(engine, {&a, &b}, Activation::kNone, false, "layer 0: qkv");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("layer 0: qkv"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace infercost::backend::cpu
