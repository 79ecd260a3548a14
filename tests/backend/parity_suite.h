// The parity suite every backend instantiates (backend.h, DEVELOPERS.md):
// Hugging Face transformers' fp32 logits for the committed tiny models
// (DistilBERT with GELU and with ReLU, BERT, RoBERTa with 3 and 5 labels,
// XLM-RoBERTa; tools/gen_model_golden.py wrote them), reached in any batching: every row at once, one by one,
// shuffled in batches of 7, and the same with the padding computed. A backend's test file describes its
// backend as a ParityTarget and instantiates the suite once:
//
//   INFERCOST_BACKEND_PARITY(Cpu, cpu_target());
//
// Include it in one source file per test executable (it defines the test).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <tuple>

#include "backend/backend.h"
#include "golden_util.h"

namespace infercost::backend::testing {

struct ParityTarget {
  std::string name;  // letters, digits and '_' (part of the test names)
  // An fp32 backend, not yet prepared.
  std::function<Result<std::unique_ptr<Backend>>()> make;
  // The most |logit - HF| may be; never less than the golden's own tolerance.
  double tolerance = 0;
  // Whether every row also runs as a batch of its own (slow on an emulator).
  bool one_by_one = true;
  // How many of a model's 60 golden cases run (0: all), evenly spaced through
  // those of at most max_ids ids (0: any): an emulator takes seconds a batch.
  size_t cases = 0;
  size_t max_ids = 0;
  // Why this machine cannot run the target, or "": the tests skip saying so.
  std::function<std::string()> unavailable;
  // Around each test, for a target with state of its own (an emulator).
  std::function<void()> set_up, tear_down;
};

inline void PrintTo(const ParityTarget& t, std::ostream* os) {
  *os << t.name;
}

class BackendParity : public ::testing::TestWithParam<std::tuple<ParityTarget, std::string>> {
 protected:
  const ParityTarget& target() const { return std::get<0>(GetParam()); }
  const std::string& model_name() const { return std::get<1>(GetParam()); }
  void SetUp() override {
    if (target().set_up) target().set_up();
  }
  void TearDown() override {
    if (target().tear_down) target().tear_down();
  }
};

TEST_P(BackendParity, MatchesTransformersLogitsInAnyBatching) {
  const ParityTarget& t = target();
  if (t.unavailable) {
    const std::string why = t.unavailable();
    if (!why.empty()) GTEST_SKIP() << t.name << ": " << why;
  }
  const std::string dir = std::string(INFERCOST_TEST_DATA_DIR) + "/golden/" + model_name();
  model::ModelConfig config;
  model::EncoderWeights weights;
  ASSERT_NO_FATAL_FAILURE(load_model(dir, config, weights));
  const Golden all = load_golden(dir + ".json");
  // 60 cases each (a shorter file is a broken one); the long-row model's 16 rows of up to 2,100 tokens.
  ASSERT_GE(all.cases.size(), model_name().ends_with("-long") ? 16u : 50u) << dir;
  const Golden g = some_cases(all, t.cases, t.max_ids);
  Result<std::unique_ptr<Backend>> made = t.make();
  ASSERT_TRUE(made.ok()) << t.name << ": " << made.status().to_string();
  std::unique_ptr<Backend> backend = std::move(made).value();
  ASSERT_EQ(backend->precision(), Precision::kFp32) << t.name << ": the parity suite checks fp32";
  const Status prepared = backend->prepare(config, weights);
  ASSERT_TRUE(prepared.ok()) << t.name << ": " << prepared.to_string();
  check_all_batchings(t.name + " " + model_name(), *backend, config.num_labels(), g,
                      std::max(t.tolerance, g.tolerance), t.one_by_one);
}

inline std::string parity_test_name(
    const ::testing::TestParamInfo<std::tuple<ParityTarget, std::string>>& info) {
  std::string name = std::get<0>(info.param).name + "_" + std::get<1>(info.param);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

}  // namespace infercost::backend::testing

// Runs the suite for `target` (a ParityTarget) on every tiny golden model;
// at namespace scope, in any namespace.
#define INFERCOST_BACKEND_PARITY(prefix, target)                                                    \
  using ::infercost::backend::testing::BackendParity;                                               \
  INSTANTIATE_TEST_SUITE_P(                                                                         \
      prefix, BackendParity,                                                                        \
      ::testing::Combine(                                                                           \
          ::testing::Values(target),                                                                \
          ::testing::Values("tiny-distilbert", "tiny-distilbert-relu", "tiny-bert", "tiny-roberta", \
                            "tiny-roberta-multilabel", "tiny-xlm-roberta", "tiny-camembert")),      \
      ::infercost::backend::testing::parity_test_name)

// The same on the tiny ModernBERT classifiers (cls and mean pooling,
// multi-label, rows of up to 300 tokens past their local windows, and one
// with a transformers 4 config.json and rows of up to 2,100 tokens;
// tools/gen_modernbert_models.py wrote them): the CPU, the emulated CUDA
// backend and the CUDA backend on a GPU run it.
#define INFERCOST_BACKEND_PARITY_MODERNBERT(prefix, target)                                        \
  using ::infercost::backend::testing::BackendParity;                                              \
  INSTANTIATE_TEST_SUITE_P(                                                                        \
      prefix##ModernBert, BackendParity,                                                           \
      ::testing::Combine(::testing::Values(target),                                                \
                         ::testing::Values("tiny-modernbert", "tiny-modernbert-mean",              \
                                           "tiny-modernbert-multilabel", "tiny-modernbert-long")), \
      ::infercost::backend::testing::parity_test_name)

// The same on the tiny DeBERTa-v2/v3 classifiers (disentangled attention:
// c2p and p2c with shared and separate projections, log buckets, a c2p-only
// model without buckets, an embedding projection; tools/gen_deberta_models.py
// wrote them): the CPU, the emulated CUDA backend and the CUDA backend on a
// GPU run it.
#define INFERCOST_BACKEND_PARITY_DEBERTA(prefix, target)                                                  \
  using ::infercost::backend::testing::BackendParity;                                                     \
  INSTANTIATE_TEST_SUITE_P(                                                                               \
      prefix##Deberta, BackendParity,                                                                     \
      ::testing::Combine(::testing::Values(target),                                                       \
                         ::testing::Values("tiny-deberta", "tiny-deberta-3", "tiny-deberta-multilabel")), \
      ::infercost::backend::testing::parity_test_name)
