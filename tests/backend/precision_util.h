// Accuracy of the CPU backend's int8 and bf16 precisions against its fp32:
// the same random token rows through each, softmax probabilities compared.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "model/config.h"
#include "model/weights.h"

namespace infercost::backend::testing {

struct Agreement {
  int rows = 0;
  int same_label = 0;
  double max_prob_diff = 0;
  double fraction() const { return rows == 0 ? 0.0 : double(same_label) / rows; }
};

inline std::unique_ptr<Backend> prepared_backend(Precision precision, const model::ModelConfig& config,
                                                 const model::EncoderWeights& weights) {
  BackendOptions options;
  options.precision = precision;
  options.emulate_bf16 = true;
  options.threads = 1;
  auto created = create_backend("cpu", options);
  EXPECT_TRUE(created.ok()) << created.status().to_string();
  if (!created.ok()) return nullptr;
  auto backend = std::move(created).value();
  const Status st = backend->prepare(config, weights);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return st.ok() ? std::move(backend) : nullptr;
}

// Softmax probabilities of `rows` random rows (lengths 1..max_len, ids below
// the vocabulary size), classified `chunk` rows per padded batch.
inline std::vector<std::vector<double>> random_row_probs(Backend& backend, const model::ModelConfig& config,
                                                         int rows, int max_len, uint32_t seed,
                                                         int chunk = 32) {
  std::mt19937 rng(seed);
  std::vector<std::vector<double>> probs;
  for (int start = 0; start < rows; start += chunk) {
    TokenBatch b;
    b.batch = std::min(chunk, rows - start);
    b.seq_len = max_len;
    for (int r = 0; r < b.batch; ++r) {
      const int len = 1 + int(rng() % uint32_t(max_len));
      b.lengths.push_back(len);
      for (int p = 0; p < max_len; ++p) {
        b.ids.push_back(p < len ? int32_t(rng() % uint32_t(config.vocab_size)) : 0);
      }
    }
    auto logits = backend.forward(b);
    EXPECT_TRUE(logits.ok()) << logits.status().to_string();
    if (!logits.ok()) return {};
    for (int r = 0; r < b.batch; ++r) {
      const float* l = logits->values.data() + size_t(r) * size_t(logits->width);
      const double mx = *std::max_element(l, l + logits->width);
      std::vector<double> p(size_t(logits->width));
      double sum = 0;
      for (int i = 0; i < logits->width; ++i) sum += p[size_t(i)] = std::exp(double(l[i]) - mx);
      for (double& x : p) x /= sum;
      probs.push_back(std::move(p));
    }
  }
  return probs;
}

inline Agreement compare(const std::vector<std::vector<double>>& want,
                         const std::vector<std::vector<double>>& got) {
  Agreement a;
  EXPECT_EQ(want.size(), got.size());
  for (size_t r = 0; r < std::min(want.size(), got.size()); ++r) {
    const auto& w = want[r];
    const auto& g = got[r];
    ++a.rows;
    const auto wl = std::max_element(w.begin(), w.end()) - w.begin();
    const auto gl = std::max_element(g.begin(), g.end()) - g.begin();
    a.same_label += wl == gl;

    for (size_t i = 0; i < w.size() && i < g.size(); ++i) {
      a.max_prob_diff = std::max(a.max_prob_diff, std::abs(w[i] - g[i]));
    }
  }
  return a;
}

struct Bounds {
  double int8_min_agreement, int8_max_prob_diff, bf16_min_agreement, bf16_max_prob_diff;
};

// fp32 vs int8 and vs bf16 (emulated where the CPU has no bf16) on the same
// rows: label agreement and max |probability difference| within the bounds.
// Prints the figures. One thread: the tests run beside others on few cores.
inline void check_precisions(const std::string& name, const model::ModelConfig& config,
                             const model::EncoderWeights& weights, int rows, int max_len,
                             const Bounds& bounds) {
  auto fp32 = prepared_backend(Precision::kFp32, config, weights);
  auto int8 = prepared_backend(Precision::kInt8, config, weights);
  auto bf16 = prepared_backend(Precision::kBf16, config, weights);
  ASSERT_TRUE(fp32 && int8 && bf16);
  EXPECT_EQ(int8->precision(), Precision::kInt8);
  EXPECT_EQ(bf16->precision(), Precision::kBf16);
  const uint32_t seed = 12345;
  auto t0 = std::chrono::steady_clock::now();
  auto lap = [&] {
    const auto t1 = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    t0 = t1;
    return ms;
  };
  const auto want = random_row_probs(*fp32, config, rows, max_len, seed);
  const double fp32_ms = lap();
  const Agreement i8 = compare(want, random_row_probs(*int8, config, rows, max_len, seed));
  const double int8_ms = lap();
  const Agreement b16 = compare(want, random_row_probs(*bf16, config, rows, max_len, seed));
  const double bf16_ms = lap();
  std::printf("[precision] %s: fp32 %.0f ms, int8 %.0f ms, bf16 %.0f ms\n", name.c_str(), fp32_ms, int8_ms,
              bf16_ms);
  std::printf(
      "[precision] %s: %d rows; int8 agreement %.2f%% max |prob diff| %.4f; "
      "bf16 agreement %.2f%% max |prob diff| %.4f\n",
      name.c_str(), rows, 100 * i8.fraction(), i8.max_prob_diff, 100 * b16.fraction(), b16.max_prob_diff);
  EXPECT_EQ(i8.rows, rows);
  EXPECT_GE(i8.fraction(), bounds.int8_min_agreement);
  EXPECT_LE(i8.max_prob_diff, bounds.int8_max_prob_diff);
  EXPECT_GE(b16.fraction(), bounds.bf16_min_agreement);
  EXPECT_LE(b16.max_prob_diff, bounds.bf16_max_prob_diff);
}

}  // namespace infercost::backend::testing
