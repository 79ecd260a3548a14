#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "backend/backend.h"
#include "model/reference_encoder.h"
#include "random_weights.h"

namespace infercost::backend {
namespace {

using model::Architecture;

TokenBatch make_batch(const std::vector<std::vector<int32_t>>& rows, int seq_len, int32_t pad = 0) {
  TokenBatch b;
  b.batch = int(rows.size());
  b.seq_len = seq_len;
  for (const auto& r : rows) {
    b.lengths.push_back(int32_t(r.size()));
    for (int p = 0; p < seq_len; ++p) b.ids.push_back(p < int(r.size()) ? r[size_t(p)] : pad);
  }
  return b;
}

std::unique_ptr<Backend> make_cpu(int threads = 0) {
  BackendOptions options;
  options.threads = threads;
  auto r = create_backend("cpu", options);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return std::move(r).value();
}

TEST(Registry, CpuExistsOthersAreClearErrors) {
  EXPECT_EQ(make_cpu()->name(), "cpu");
  // Where CUDA cannot run (no module, driver or GPU), asking for it says why;
  // where it can, cuda_backend_tests cover it.
  if (!cuda_devices().ok()) {
    auto cuda = create_backend("cuda", BackendOptions{});
    ASSERT_FALSE(cuda.ok());
    EXPECT_EQ(cuda.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(cuda.status().message().find("CUDA"), std::string::npos) << cuda.status().message();
    EXPECT_EQ(cuda.status().message(), cuda_devices().status().message());
  }
  auto tpu = create_backend("tpu", BackendOptions{});
  ASSERT_FALSE(tpu.ok());
  EXPECT_EQ(tpu.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(tpu.status().message().find("'tpu'"), std::string::npos);
  BackendOptions bad;
  bad.threads = -2;
  EXPECT_EQ(create_backend("cpu", bad).status().code(), StatusCode::kInvalidArgument);
}

TEST(TokenBatch, RealTokens) {
  TokenBatch b = make_batch({{1, 2, 3}, {4}}, 5);
  EXPECT_EQ(b.real_tokens(), 4);
  EXPECT_EQ(b.padded_tokens(), 10);
}

struct ArchCase {
  Architecture arch;
  const char* activation;
};

class CpuForwardTest : public ::testing::TestWithParam<ArchCase> {};

// The whole forward pass against the plain reference (one unpadded sequence
// at a time), for rows of mixed length in one padded batch, one by one, and
// shuffled.
TEST_P(CpuForwardTest, MatchesReferenceInAnyBatching) {
  const model::ModelConfig config = testing::small_config(GetParam().arch, GetParam().activation);
  const model::EncoderWeights weights = testing::random_weights(config, 5);
  auto backend = make_cpu();
  ASSERT_TRUE(backend->prepare(config, weights).ok());

  std::mt19937 rng(3);
  std::vector<std::vector<int32_t>> rows;
  for (int len : {1, 2, 9, 17, 40, 33, 5, 40, 3}) {
    std::vector<int32_t> r(size_t(len), 0);
    for (auto& id : r) id = int32_t(rng() % uint32_t(config.vocab_size));
    // The pad id inside the text, where RoBERTa numbers positions around it.
    if (len > 8) r[size_t(len) / 2] = r[size_t(len) / 3] = config.pad_token_id;
    rows.push_back(r);
  }
  std::vector<std::vector<float>> want;
  double max_abs = 0;
  for (const auto& r : rows) {
    want.push_back(model::reference_logits(config, weights, r));
    for (float v : want.back()) max_abs = std::max(max_abs, double(std::abs(v)));
  }
  ASSERT_GT(max_abs, 0.1) << "logits too small for the comparison to mean anything";

  auto check = [&](const std::vector<size_t>& order, int seq_len, const char* what,
                   bool compute_padding = false) {
    std::vector<std::vector<int32_t>> sub;
    for (size_t i : order) sub.push_back(rows[i]);
    TokenBatch batch = make_batch(sub, seq_len, 5);
    batch.compute_padding = compute_padding;
    auto got = backend->forward(batch);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    ASSERT_EQ(got->rows, int(order.size()));
    ASSERT_EQ(got->width, 3);
    for (size_t k = 0; k < order.size(); ++k) {
      for (int l = 0; l < 3; ++l) {
        EXPECT_NEAR(got->values[k * 3 + size_t(l)], want[order[k]][size_t(l)], 2e-4)
            << what << ": row " << order[k] << " label " << l;
      }
    }
  };
  std::vector<size_t> all(rows.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  check(all, 40, "all at once");
  for (size_t i = 0; i < rows.size(); ++i) check({i}, int(rows[i].size()), "one by one");
  std::shuffle(all.begin(), all.end(), rng);
  check(all, 40, "shuffled");
  check(all, 40, "again (scratch reuse)");
  // Computing the padding (as the study's padded PyTorch run does) costs more
  // but must not change a logit: the padded keys are masked out.
  check(all, 40, "padding computed", true);
  check({0, 1, 6}, 12, "padding computed, short batch", true);  // lengths 1, 2, 5
}

// A text pair's token types (0 for the first text, 1 for the second) pick
// rows of the model's type table, in any batching, as the reference does; a
// batch of type 0 everywhere is the batch without types, and a model without
// a type table ignores them (as HF's DistilBERT and DeBERTa-v3 do).
TEST(CpuForward, TokenTypesPickTheirRowsOfTheTypeTable) {
  const model::ModelConfig config = testing::small_config(Architecture::kBert, "gelu");
  ASSERT_EQ(config.type_vocab_size, 2);
  const model::EncoderWeights weights = testing::random_weights(config, 7);
  auto backend = make_cpu();
  ASSERT_TRUE(backend->prepare(config, weights).ok());
  std::mt19937 rng(8);
  std::vector<std::vector<int32_t>> rows, types;
  for (int len : {3, 17, 9, 30}) {
    std::vector<int32_t> r(static_cast<size_t>(len), 0), t(static_cast<size_t>(len), 0);
    for (int i = 0; i < len; ++i) {
      r[size_t(i)] = int32_t(rng() % uint32_t(config.vocab_size));
      t[size_t(i)] = i >= len / 2 ? 1 : 0;
    }
    rows.push_back(r);
    types.push_back(t);
  }
  TokenBatch batch = make_batch(rows, 30, 5);
  const TokenBatch untyped = batch;
  for (const auto& t : types)
    for (int p = 0; p < 30; ++p) batch.type_ids.push_back(p < int(t.size()) ? t[size_t(p)] : 0);
  auto got = backend->forward(batch);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  double moved = 0;
  for (size_t k = 0; k < rows.size(); ++k) {
    const std::vector<float> want = model::reference_logits(config, weights, rows[k], types[k]);
    const std::vector<float> type0 = model::reference_logits(config, weights, rows[k]);
    for (int l = 0; l < 3; ++l) {
      EXPECT_NEAR(got->values[k * 3 + size_t(l)], want[size_t(l)], 2e-4) << "row " << k << " label " << l;
      moved = std::max(moved, double(std::abs(want[size_t(l)] - type0[size_t(l)])));
    }
  }
  EXPECT_GT(moved, 1e-2) << "the second segment's type row changes nothing: the test cannot tell";

  TokenBatch zeros = untyped;
  zeros.type_ids.assign(zeros.ids.size(), 0);
  EXPECT_EQ(backend->forward(zeros)->values, backend->forward(untyped)->values);

  TokenBatch bad = batch;
  bad.type_ids[1] = 2;
  Result<ForwardOutput> refused = backend->forward(bad);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("row 0 position 1 has token type 2, outside 0..1"),
            std::string::npos)
      << refused.status().message();
  bad.type_ids.pop_back();
  EXPECT_EQ(backend->forward(bad).status().code(), StatusCode::kInvalidArgument);

  const model::ModelConfig distil = testing::small_config(Architecture::kDistilBert, "gelu");
  ASSERT_EQ(distil.type_vocab_size, 0);
  const model::EncoderWeights distil_weights = testing::random_weights(distil, 9);
  auto plain = make_cpu();
  ASSERT_TRUE(plain->prepare(distil, distil_weights).ok());
  TokenBatch typed = make_batch(rows, 30, 5);
  typed.type_ids.assign(typed.ids.size(), 1);
  EXPECT_EQ(plain->forward(typed)->values, plain->forward(make_batch(rows, 30, 5))->values);
}

INSTANTIATE_TEST_SUITE_P(
    Archs, CpuForwardTest,
    ::testing::Values(ArchCase{Architecture::kDistilBert, "gelu"},
                      ArchCase{Architecture::kDistilBert, "relu"}, ArchCase{Architecture::kBert, "gelu"},
                      ArchCase{Architecture::kBert, "relu"}, ArchCase{Architecture::kRoberta, "gelu"}),
    [](const auto& info) {
      return std::string(testing::arch_name(info.param.arch)) + "_" + info.param.activation;
    });

// With a pooling, forward() returns each row's pooled last hidden states
// (over its real tokens only), as the reference pools them, for every
// pooling, family, batching and with the padding computed; and it needs no
// classification head.
TEST(CpuBackend, PoolsTheRealTokensOfEachRow) {
  for (Architecture arch : {Architecture::kBert, Architecture::kRoberta, Architecture::kDistilBert}) {
    const model::ModelConfig config = testing::small_config(arch, "gelu");
    model::EncoderWeights weights = testing::random_weights(config, 7);
    weights.head = {};  // an encoder as sentence-transformers ships it: no classifier
    std::mt19937 rng(11);
    std::vector<std::vector<int32_t>> rows;
    for (int len : {1, 2, 9, 17, 40, 5}) {
      std::vector<int32_t> r(size_t(len), 0);
      for (auto& id : r) id = int32_t(rng() % uint32_t(config.vocab_size));
      rows.push_back(r);
    }
    for (Pooling pooling : {Pooling::kCls, Pooling::kMean, Pooling::kMax, Pooling::kLastToken}) {
      const std::string what = std::string(testing::arch_name(arch)) + " " + model::pooling_name(pooling);
      BackendOptions options;
      options.pooling = pooling;
      auto made = create_backend("cpu", options);
      ASSERT_TRUE(made.ok()) << made.status().to_string();
      std::unique_ptr<Backend> backend = std::move(made).value();
      ASSERT_TRUE(backend->prepare(config, weights).ok()) << what;
      for (bool compute_padding : {false, true}) {
        TokenBatch batch = make_batch(rows, 40, 5);
        batch.compute_padding = compute_padding;
        auto got = backend->forward(batch);
        ASSERT_TRUE(got.ok()) << what << ": " << got.status().to_string();
        ASSERT_EQ(got->rows, int(rows.size()));
        ASSERT_EQ(got->width, config.hidden_size) << what;
        for (size_t r = 0; r < rows.size(); ++r) {
          const std::vector<float> want = model::reference_pooled(config, weights, rows[r], pooling);
          for (int i = 0; i < config.hidden_size; ++i) {
            ASSERT_NEAR(got->values[r * size_t(config.hidden_size) + size_t(i)], want[size_t(i)], 2e-4)
                << what << (compute_padding ? ", padding computed" : "") << ": row " << r << " element " << i;
          }
        }
      }
    }
  }
  // Without a pooling, a model without a head is refused at prepare().
  const model::ModelConfig config = testing::small_config(Architecture::kBert, "gelu");
  model::EncoderWeights headless = testing::random_weights(config, 7);
  headless.head = {};
  Status st = make_cpu()->prepare(config, headless);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
  EXPECT_NE(st.message().find("head"), std::string::npos) << st.message();
}

TEST(CpuBackend, OneThreadAndTwoThreadsAgree) {
  const model::ModelConfig config = testing::small_config(Architecture::kBert, "gelu");
  const model::EncoderWeights weights = testing::random_weights(config, 8);
  auto one = make_cpu(1), two = make_cpu(2);
  ASSERT_TRUE(one->prepare(config, weights).ok());
  ASSERT_TRUE(two->prepare(config, weights).ok());
  TokenBatch b = make_batch({{1, 2, 3, 4, 5, 6}, {7, 8}, {9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}}, 11);
  auto a = one->forward(b), c = two->forward(b);
  ASSERT_TRUE(a.ok() && c.ok());
  for (size_t i = 0; i < a->values.size(); ++i) EXPECT_NEAR(a->values[i], c->values[i], 1e-5);
}

class ValidationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = testing::small_config(Architecture::kDistilBert, "gelu");
    weights_ = testing::random_weights(config_, 1);
    backend_ = make_cpu();
    ASSERT_TRUE(backend_->prepare(config_, weights_).ok());
  }
  Status forward(const TokenBatch& b) { return backend_->forward(b).status(); }
  void expect_error(const TokenBatch& b, const std::string& fragment) {
    auto r = backend_->forward(b);
    ASSERT_FALSE(r.ok()) << "expected an error containing: " << fragment;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(fragment), std::string::npos) << r.status().message();
  }
  model::ModelConfig config_;
  model::EncoderWeights weights_;
  std::unique_ptr<Backend> backend_;
};

TEST_F(ValidationTest, RejectsBadBatches) {
  expect_error(make_batch({{1, 2}, {3, 97}}, 3), "row 1 position 1 has id 97");
  expect_error(make_batch({{1, -1}}, 3), "has id -1");
  TokenBatch zero = make_batch({{1, 2}}, 3);
  zero.lengths[0] = 0;
  expect_error(zero, "row 0 has length 0");
  TokenBatch longer = make_batch({{1, 2}}, 3);
  longer.lengths[0] = 4;
  expect_error(longer, "row 0 has length 4");
  std::vector<int32_t> too_long(41, 1);
  expect_error(make_batch({too_long}, 41), "seq_len 41 exceeds the model's 40 positions");
  TokenBatch short_ids = make_batch({{1, 2}}, 3);
  short_ids.ids.pop_back();
  expect_error(short_ids, "2 ids for a batch of 1 x 3");
  TokenBatch few_lengths = make_batch({{1, 2}, {3}}, 3);
  few_lengths.lengths.pop_back();
  expect_error(few_lengths, "1 lengths for a batch of 2 rows");
  TokenBatch no_seq;
  no_seq.batch = 1;
  no_seq.lengths = {1};
  expect_error(no_seq, "seq_len 0");
}

TEST_F(ValidationTest, PaddingIdsAreIgnoredAndEmptyBatchIsEmpty) {
  TokenBatch b = make_batch({{1, 2}}, 4, /*pad=*/123456);  // pad ids outside the vocabulary are fine
  ASSERT_TRUE(forward(b).ok());
  b.compute_padding = true;  // ... unless the padding gets computed
  expect_error(b, "row 0 position 2 has id 123456");
  auto empty = backend_->forward(TokenBatch{});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->rows, 0);
  EXPECT_TRUE(empty->values.empty());
}

TEST(CpuBackend, PrepareRejectsBadWeightsAndClassifyNeedsPrepare) {
  model::ModelConfig config = testing::small_config(Architecture::kBert, "gelu");
  model::EncoderWeights weights = testing::random_weights(config, 2);
  auto backend = make_cpu();
  auto before = backend->forward(make_batch({{1}}, 1));
  ASSERT_FALSE(before.ok());
  EXPECT_NE(before.status().message().find("before a successful prepare"), std::string::npos);

  model::EncoderWeights bad = weights;
  bad.layers[1].ffn_in.out = 47;
  Status st = backend->prepare(config, bad);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("layer 1: ffn in"), std::string::npos) << st.message();

  bad = weights;
  bad.embedding_bias.clear();
  EXPECT_NE(backend->prepare(config, bad).message().find("embedding_bias"), std::string::npos);

  model::ModelConfig tanh_ffn = config;
  tanh_ffn.ffn_activation = model::Activation::kTanh;
  EXPECT_EQ(backend->prepare(tanh_ffn, weights).code(), StatusCode::kUnsupported);

  model::ModelConfig two_labels = config;
  two_labels.labels = {"a", "b"};
  EXPECT_NE(backend->prepare(two_labels, weights).message().find("3 outputs"), std::string::npos);
  // A failed prepare leaves the backend unusable rather than half-prepared.
  EXPECT_FALSE(backend->forward(make_batch({{1}}, 1)).ok());
  ASSERT_TRUE(backend->prepare(config, weights).ok());
  EXPECT_TRUE(backend->forward(make_batch({{1}}, 1)).ok());
}

}  // namespace
}  // namespace infercost::backend
