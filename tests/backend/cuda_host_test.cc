// The CUDA backend's host-side parts (src/backend/cuda/host.h), which need no
// GPU, and the CUDA module as the CLI sees it on a machine without one.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu/kernels.h"
#include "backend/cuda/host.h"
#include "backend/validate.h"
#include "cuda_test_util.h"
#include "random_weights.h"
#include "test_utils.h"

namespace infercost::backend::cuda {
namespace {

// The loader reads INFERCOST_CUDA_MODULE once per process, at first use: point
// it at the module this build made before any test runs (the test binary does
// not sit beside it), unless the environment names one already.
const bool module_env_set = [] {
  ::setenv("INFERCOST_CUDA_MODULE", INFERCOST_BINARY_DIR "/libinfercost_cuda.so", 0);
  return true;
}();

using testing::make_batch;

// ---- Packing ---------------------------------------------------------------

TEST(PackBatch, OnlyRealTokensWithoutComputePadding) {
  const TokenBatch b = make_batch({{5, 6, 7}, {8}, {9, 10}}, 4, 1);
  const PackedBatch p = pack_batch(b);
  EXPECT_EQ(p.total, 6);
  EXPECT_EQ(p.max_rows, 3);
  EXPECT_EQ(p.sequences(), 3);
  EXPECT_EQ(p.ids, (std::vector<int32_t>{5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(p.positions, (std::vector<int32_t>{0, 1, 2, 0, 0, 1}));
  EXPECT_EQ(p.seq_start, (std::vector<int32_t>{0, 3, 4, 6}));
  EXPECT_EQ(p.key_len, (std::vector<int32_t>{3, 1, 2}));
  EXPECT_EQ(p.cls_rows, (std::vector<int32_t>{0, 3, 4}));
}

TEST(PackBatch, ComputePaddingKeepsEveryPositionAndMasksKeys) {
  TokenBatch b = make_batch({{5, 6, 7}, {8}, {9, 10}}, 4, 1);
  b.compute_padding = true;
  const PackedBatch p = pack_batch(b);
  EXPECT_EQ(p.total, 12);
  EXPECT_EQ(p.max_rows, 4);
  EXPECT_EQ(p.ids, (std::vector<int32_t>{5, 6, 7, 1, 8, 1, 1, 1, 9, 10, 1, 1}));
  EXPECT_EQ(p.positions, (std::vector<int32_t>{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}));
  EXPECT_EQ(p.seq_start, (std::vector<int32_t>{0, 4, 8, 12}));
  EXPECT_EQ(p.key_len, (std::vector<int32_t>{3, 1, 2}));  // padding is never a key
  EXPECT_EQ(p.cls_rows, (std::vector<int32_t>{0, 4, 8}));
}

// RoBERTa's positions (pad id 1): from pad + 1, pad ids inside the text and
// the computed padding at pad itself, as the model's scheme says.
TEST(PackBatch, PositionsFollowTheModelsScheme) {
  TokenBatch b = make_batch({{0, 5, 1, 6, 2}, {1, 7}}, 5, 1);
  const model::PositionScheme roberta{2, 1};
  EXPECT_EQ(pack_batch(b, roberta).positions, (std::vector<int32_t>{2, 3, 1, 4, 5, 1, 2}));
  b.compute_padding = true;
  EXPECT_EQ(pack_batch(b, roberta).positions, (std::vector<int32_t>{2, 3, 1, 4, 5, 1, 2, 1, 1, 1}));
  EXPECT_EQ(pack_batch(b).positions, (std::vector<int32_t>{0, 1, 2, 3, 4, 0, 1, 2, 3, 4}));
}

TEST(PackBatch, ReusedStorageShrinksToTheNewBatch) {
  PackedBatch p;
  pack_batch(make_batch({{1, 2, 3, 4, 5}, {6, 7, 8}, {9}}, 5), {}, p);
  pack_batch(make_batch({{11, 12}}, 3), {}, p);
  EXPECT_EQ(p.total, 2);
  EXPECT_EQ(p.max_rows, 2);
  EXPECT_EQ(p.ids, (std::vector<int32_t>{11, 12}));
  EXPECT_EQ(p.seq_start, (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(p.key_len, (std::vector<int32_t>{2}));
  pack_batch(TokenBatch{}, {}, p);
  EXPECT_EQ(p.total, 0);
  EXPECT_EQ(p.sequences(), 0);
  EXPECT_EQ(p.seq_start, (std::vector<int32_t>{0}));
}

TEST(PackBatch, OneContiguousBlockForTheCopy) {
  const PackedBatch p = pack_batch(make_batch({{5, 6, 7}, {8}}, 3));
  const PackedOffsets o = packed_offsets(p.total, p.sequences());
  EXPECT_EQ(o.ids, 0);
  EXPECT_EQ(o.positions, 4);
  EXPECT_EQ(o.seq_start, 8);
  EXPECT_EQ(o.key_len, 11);
  EXPECT_EQ(o.cls_rows, 13);
  EXPECT_EQ(o.count, 15);
  std::vector<int32_t> block(size_t(o.count) + 1, -99);
  write_packed(p, block.data());
  EXPECT_EQ(block, (std::vector<int32_t>{5, 6, 7, 8, 0, 1, 2, 0, 0, 3, 4, 3, 1, 0, 3, -99}));
}

// Token type ids go last in the block, packed like the ids, and only for a
// model with a type table: the other offsets stay where they were.
TEST(PackBatch, TokenTypesFollowTheOtherArrays) {
  TokenBatch b = make_batch({{5, 6, 7}, {8}}, 3);
  b.type_ids = {0, 1, 1, 1, 9, 9};           // row 1's padding is not packed
  EXPECT_TRUE(pack_batch(b).types.empty());  // a model without a type table
  const PackedBatch p = pack_batch(b, {}, /*types=*/true);
  EXPECT_EQ(p.types, (std::vector<int32_t>{0, 1, 1, 1}));
  const PackedOffsets o = packed_offsets(p.total, p.sequences(), true);
  EXPECT_EQ(o.cls_rows, 13);
  EXPECT_EQ(o.types, 15);
  EXPECT_EQ(o.count, 19);
  std::vector<int32_t> block(size_t(o.count) + 1, -99);
  write_packed(p, block.data());
  EXPECT_EQ(block, (std::vector<int32_t>{5, 6, 7, 8, 0, 1, 2, 0, 0, 3, 4, 3, 1, 0, 3, 0, 1, 1, 1, -99}));
  // The activations keep room for them where the model may get them.
  const ModelDims plain{64, 128, 2}, typed{64, 128, 2, false, true};
  const ActivationLayout with = activation_layout(typed, Precision::kFp32, 100, 4);
  const ActivationLayout without = activation_layout(plain, Precision::kFp32, 100, 4);
  EXPECT_GE(with.cls - with.ints, packed_offsets(100, 4, true).count * 4);
  EXPECT_LT(without.cls - without.ints, packed_offsets(100, 4, true).count * 4);
}

// ---- Validation: the CPU backend's own messages -------------------------------

std::unique_ptr<Backend> cpu_backend(const model::ModelConfig& config, const model::EncoderWeights& weights) {
  BackendOptions options;
  options.threads = 1;
  return testing::prepared_or_null(create_backend("cpu", options), config, weights);
}

TEST(ValidateBatch, SameVerdictAndMessageAsTheCpuBackend) {
  const model::ModelConfig config = testing::small_config(model::Architecture::kDistilBert, "gelu");
  const model::EncoderWeights weights = testing::random_weights(config, 1);
  auto cpu = cpu_backend(config, weights);
  std::vector<std::string> names;
  std::vector<TokenBatch> batches;
  const auto add = [&](const std::string& name, const TokenBatch& batch) {
    names.push_back(name);
    batches.push_back(batch);
  };
  add("good", make_batch({{1, 2, 3}, {4}}, 3));
  add("empty", TokenBatch{});
  TokenBatch b = make_batch({{1, 2}}, 2);
  b.batch = -1;
  add("negative batch", b);
  b = make_batch({{1}}, 1);
  b.seq_len = 0;
  add("seq_len 0", b);
  add("too long",
      make_batch({std::vector<int32_t>(size_t(config.max_positions()) + 1, 1)}, config.max_positions() + 1));
  b = make_batch({{1, 2}}, 2);
  b.ids.pop_back();
  add("ids short", b);
  b = make_batch({{1, 2}}, 2);
  b.lengths.push_back(1);
  add("lengths long", b);
  b = make_batch({{1, 2}, {3}}, 2);
  b.lengths[1] = 3;
  add("length over seq_len", b);
  b.lengths[1] = 0;
  add("length 0", b);
  add("id too big", make_batch({{1, 2}, {3, config.vocab_size}}, 2));
  add("negative id", make_batch({{-1}}, 1));
  b = make_batch({{1}, {2, 3}}, 2, config.vocab_size);  // a bad padding id...
  add("bad padding, not computed", b);                  // ...is never read
  b.compute_padding = true;
  add("bad padding, computed", b);
  int failures = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    const TokenBatch& batch = batches[i];
    const Status ours = validate_batch(config, batch);
    const Result<ForwardOutput> theirs = cpu->forward(batch);
    EXPECT_EQ(ours.ok(), theirs.ok()) << name;
    if (!theirs.ok()) {
      ++failures;
      EXPECT_EQ(ours.code(), theirs.status().code()) << name;
      EXPECT_EQ(ours.message(), theirs.status().message()) << name;
      EXPECT_NE(ours.message().find("token batch: "), std::string::npos) << name << ": " << ours.message();
    }
  }
  EXPECT_EQ(failures, 10);
}

TEST(ValidateModel, SameVerdictAndMessageAsTheCpuBackend) {
  const model::ModelConfig config = testing::small_config(model::Architecture::kBert, "gelu");
  const model::EncoderWeights good = testing::random_weights(config, 2);
  EXPECT_TRUE(validate_gpu_model(config, good).ok()) << validate_gpu_model(config, good).to_string();
  struct Case {
    std::string name;
    model::ModelConfig config;
    model::EncoderWeights weights;
  };
  std::vector<Case> cases;
  const auto add = [&](std::string name, auto change) {
    Case c{std::move(name), config, good};
    change(c.config, c.weights);
    cases.push_back(std::move(c));
  };
  add("heads", [](auto& c, auto&) { c.num_heads = 5; });
  add("activation", [](auto& c, auto&) { c.ffn_activation = model::Activation::kTanh; });
  add("word", [](auto&, auto& w) { w.word_embeddings.pop_back(); });
  add("position", [](auto&, auto& w) { w.position_embeddings.resize(7); });
  add("embedding bias", [](auto&, auto& w) { w.embedding_bias.pop_back(); });
  add("embeddings LN", [](auto&, auto& w) { w.embeddings_ln.beta.pop_back(); });
  add("layer count", [](auto&, auto& w) { w.layers.pop_back(); });
  add("pooler", [](auto&, auto& w) { w.head.pre.out = 3; });
  add("classifier", [](auto&, auto& w) { w.head.classifier.in = 3; });
  add("labels", [](auto& c, auto&) { c.labels.push_back("EXTRA"); });
  add("q", [](auto&, auto& w) { w.layers[1].q.in = 5; });
  add("ffn in", [](auto&, auto& w) { w.layers[0].ffn_in.out = 5; });
  add("output LN", [](auto&, auto& w) { w.layers[1].ffn_ln.gamma.push_back(1); });
  // Value counts that disagree with a right shape (the CPU backend once let these through).
  add("classifier bias", [](auto&, auto& w) { w.head.classifier.bias.pop_back(); });
  add("ffn out weights", [](auto&, auto& w) { w.layers[1].ffn_out.weight.resize(7); });
  for (const Case& c : cases) {
    const Status ours = validate_gpu_model(c.config, c.weights);
    ASSERT_FALSE(ours.ok()) << c.name;
    BackendOptions options;
    options.threads = 1;
    auto cpu = std::move(create_backend("cpu", options)).value();
    const Status theirs = cpu->prepare(c.config, c.weights);
    ASSERT_FALSE(theirs.ok()) << c.name;
    EXPECT_EQ(ours.code(), theirs.code()) << c.name;
    // The CPU adds "cpu backend: prepare <model>: " in front.
    const std::string& t = theirs.message();
    ASSERT_GE(t.size(), ours.message().size()) << c.name;
    EXPECT_EQ(t.substr(t.size() - ours.message().size()), ours.message()) << c.name << ": " << t;
  }
}

TEST(ValidateModel, RefusesShapesTheKernelsDoNotTake) {
  model::ModelConfig config = testing::small_config(model::Architecture::kDistilBert, "relu");
  config.hidden_size = 258;
  config.num_heads = 2;  // head size 129
  Status st = validate_gpu_model(config, testing::random_weights(config, 3));
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_NE(st.message().find("head size 129"), std::string::npos) << st.message();
  config.hidden_size = 15;
  config.num_heads = 5;  // head size 3
  st = validate_gpu_model(config, testing::random_weights(config, 3));
  EXPECT_EQ(st.code(), StatusCode::kUnsupported) << st.to_string();
  config.hidden_size = 1032;
  config.num_heads = 12;  // head size 86, but rows longer than LayerNorm takes
  st = validate_gpu_model(config, testing::random_weights(config, 3));
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_NE(st.message().find("hidden_size 1032"), std::string::npos) << st.message();
  config.hidden_size = 1024;
  config.num_heads = 16;  // BERT-large: fits
  EXPECT_TRUE(validate_gpu_model(config, testing::random_weights(config, 3)).ok());
}

// ---- Conversions -------------------------------------------------------------

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(Fp16, KnownValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<std::pair<float, uint16_t>> cases = {
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {1.0f, 0x3c00},
      {-2.0f, 0xc000},
      {0.1f, 0x2e66},
      {1.0f / 3, 0x3555},
      {65504.0f, 0x7bff},                      // the largest half
      {65519.99f, 0x7bff},                     // below the midpoint to infinity
      {65520.0f, 0x7c00},                      // the midpoint: ties to even = infinity
      {1e10f, 0x7c00},                         //
      {-1e10f, 0xfc00},                        //
      {inf, 0x7c00},                           //
      {-inf, 0xfc00},                          //
      {std::ldexp(1.0f, -14), 0x0400},         // the smallest normal
      {std::ldexp(1.0f, -24), 0x0001},         // the smallest subnormal
      {std::ldexp(1.0f, -25), 0x0000},         // half of it: ties to even = 0
      {std::ldexp(1.5f, -25), 0x0001},         // above the midpoint
      {std::ldexp(3.0f, -25), 0x0002},         // 1.5 units: ties to even = 2
      {std::ldexp(5.0f, -25), 0x0002},         // 2.5 units: ties to even = 2
      {std::ldexp(1023.0f, -24), 0x03ff},      // the largest subnormal
      {std::ldexp(2047.0f, -25), 0x0400},      // rounds up into the normals
      {1e-10f, 0x0000},                        //
      {-1e-10f, 0x8000},                       //
      {1.0f + std::ldexp(1.0f, -11), 0x3c00},  // 1 + half an ulp: ties to even
      {1.0f + std::ldexp(3.0f, -11), 0x3c02},  // 1 + 1.5 ulp: ties to even (up)
  };
  for (const auto& [x, want] : cases) {
    EXPECT_EQ(fp32_to_fp16(x), want) << x;
  }
  const uint16_t nan = fp32_to_fp16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
  const uint16_t snan = fp32_to_fp16(from_bits(0x7f800001u));  // payload only in the low bits
  EXPECT_EQ(snan & 0x7c00, 0x7c00);
  EXPECT_NE(snan & 0x03ff, 0) << "a NaN must not become infinity";
}

TEST(Fp16, EveryHalfRoundTripsExactly) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = fp16_to_fp32(uint16_t(h));
    const bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x03ff) != 0;
    if (nan) {
      ASSERT_TRUE(std::isnan(f)) << h;
      ASSERT_TRUE(std::isnan(fp16_to_fp32(fp32_to_fp16(f)))) << h;
    } else {
      ASSERT_EQ(fp32_to_fp16(f), h) << h << " -> " << f;
    }
  }
  EXPECT_EQ(fp16_to_fp32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(fp16_to_fp32(0x7bff), 65504.0f);
  EXPECT_EQ(fp16_to_fp32(0xfc00), -std::numeric_limits<float>::infinity());
}

#if defined(__FLT16_MAX__)
// GCC's _Float16 conversion rounds to nearest even in software: an
// independent oracle over every exponent.
TEST(Fp16, MatchesTheCompilersConversion) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 2000000; ++i) {
    uint32_t u = bits(rng);
    // Most random patterns are far outside fp16: aim three in four at its range.
    if (i % 4 != 0) u = (u & 0x807fffffu) | (uint32_t(96 + (u >> 23) % 48) << 23);
    const float x = from_bits(u);
    if (std::isnan(x)) continue;
    const _Float16 h = static_cast<_Float16>(x);
    uint16_t want;
    std::memcpy(&want, &h, 2);
    ASSERT_EQ(fp32_to_fp16(x), want) << std::hexfloat << x;
  }
}
#endif

TEST(Bf16, KnownValuesInfinitiesAndNan) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(fp32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(fp32_to_bf16(-2.0f), 0xc000);
  EXPECT_EQ(fp32_to_bf16(from_bits(0x3f808000u)), 0x3f80);  // tie, even stays
  EXPECT_EQ(fp32_to_bf16(from_bits(0x3f818000u)), 0x3f82);  // tie, odd rounds up
  EXPECT_EQ(fp32_to_bf16(from_bits(0x3f808001u)), 0x3f81);  // above the tie
  EXPECT_EQ(fp32_to_bf16(inf), 0x7f80);
  EXPECT_EQ(fp32_to_bf16(-inf), 0xff80);
  EXPECT_EQ(fp32_to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // overflows to infinity
  EXPECT_EQ(fp32_to_bf16(from_bits(0x00000001u)), 0x0000);             // subnormals round too
  const uint16_t nan = fp32_to_bf16(from_bits(0x7fffffffu));
  EXPECT_TRUE(std::isnan(bf16_to_fp32(nan)));
  const uint16_t low_nan = fp32_to_bf16(from_bits(0xff800001u));  // would round to -inf naively
  EXPECT_TRUE(std::isnan(bf16_to_fp32(low_nan)));
  EXPECT_EQ(low_nan & 0x8000, 0x8000);
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float f = bf16_to_fp32(uint16_t(b));
    if (!std::isnan(f)) {
      ASSERT_EQ(fp32_to_bf16(f), b);
    }
  }
}

TEST(Bf16, MatchesTheCpuBackendsConversion) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<uint32_t> bits;
  std::vector<float> x;
  for (int i = 0; i < 1000000; ++i) {
    const float f = from_bits(bits(rng));
    if (std::isfinite(f)) x.push_back(f);  // cpu::convert_to_bf16 takes finite values only
  }
  std::normal_distribution<float> n(0.0f, 3.0f);
  for (int i = 0; i < 100000; ++i) x.push_back(n(rng));
  std::vector<uint16_t> ours(x.size()), theirs(x.size());
  convert_to_bf16(x.data(), ours.data(), int64_t(x.size()));
  cpu::convert_to_bf16(x.data(), theirs.data(), int64_t(x.size()));
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(ours[i], theirs[i]) << std::hexfloat << x[i];
}

// ---- Memory sizing -------------------------------------------------------------

constexpr ModelDims kDistilBert{768, 3072, 2};

int64_t align256(int64_t n) {
  return (n + 255) / 256 * 256;
}

TEST(ActivationLayout, BuffersAreAlignedDisjointAndSizedFromTheShapes) {
  for (Precision p : {Precision::kFp32, Precision::kFp16, Precision::kBf16}) {
    const int64_t es = p == Precision::kFp32 ? 4 : 2;
    const int64_t t = 1001, s = 37;
    const ActivationLayout l = activation_layout(kDistilBert, p, t, s);
    EXPECT_EQ(l.tokens, t);
    EXPECT_EQ(l.sequences, s);
    const std::vector<std::pair<int64_t, int64_t>> parts = {{l.h, t * 768 * es},
                                                            {l.qkv, t * 3 * 768 * es},
                                                            {l.ctx, t * 768 * es},
                                                            {l.ffn, t * 3072 * es},
                                                            {l.ints, (2 * t + 3 * s + 1) * 4},
                                                            {l.cls, s * 768 * 4},
                                                            {l.pooled, s * 768 * 4},
                                                            {l.logits, s * 2 * 4}};
    int64_t at = 0;
    for (const auto& [offset, bytes] : parts) {
      EXPECT_EQ(offset % 256, 0);
      EXPECT_EQ(offset, at);  // in order, each right after the previous one
      at = offset + align256(bytes);
    }
    EXPECT_EQ(l.bytes, at);
    EXPECT_EQ(activation_bytes(kDistilBert, p, t, s), l.bytes);
  }
  // fp16 DistilBERT: (5 x 768 + 3072) x 2 + 8 bytes per token; nothing
  // grows with the square of a length (streaming attention).
  const int64_t per_token = activation_bytes(kDistilBert, Precision::kFp16, 1 << 20, 1) -
                            activation_bytes(kDistilBert, Precision::kFp16, 0, 1);
  EXPECT_NEAR(double(per_token) / (1 << 20), 13832.0, 0.01);
}

// A GLU MLP (ModernBERT-base: hidden 768, intermediate 1,152): the first
// GEMM's [input | gate] takes twice the intermediate width, and its product
// one more, right after it; nothing else changes.
TEST(ActivationLayout, AGluKeepsTheGemmsInputAndGateAndTheirProduct) {
  const ModelDims plain{768, 1152, 2}, glu{768, 1152, 2, true};
  const int64_t t = 1001, s = 37, es = 2;
  const ActivationLayout a = activation_layout(plain, Precision::kBf16, t, s);
  const ActivationLayout b = activation_layout(glu, Precision::kBf16, t, s);
  EXPECT_EQ(a.glu - a.ffn, align256(t * 1152 * es));
  EXPECT_EQ(a.ints, a.glu) << "no GLU: the glu buffer is empty";
  EXPECT_EQ(b.glu - b.ffn, align256(t * 2 * 1152 * es));
  EXPECT_EQ(b.ints - b.glu, align256(t * 1152 * es));
  EXPECT_EQ(b.bytes - a.bytes,
            align256(t * 2 * 1152 * es) + align256(t * 1152 * es) - align256(t * 1152 * es));
}

TEST(BatchCapacity, LargestBatchesThatFitTheMemoryLessTheReserve) {
  const int64_t gib = int64_t(1) << 30;
  const int64_t total = 16 * gib, free = 2 * gib, held = gib / 2;
  for (int max_length : {64, 128, 512}) {
    Result<BatchCapacity> c =
        batch_capacity(kDistilBert, Precision::kFp16, max_length, free, total, held, "cuda:0 (Test GPU)");
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    const int64_t available = free + held - reserve_bytes(total);
    EXPECT_EQ(reserve_bytes(total), total / 10 + (int64_t(64) << 20));
    const auto bytes = [&](int64_t t, int64_t s) {
      return activation_reservation(kDistilBert, Precision::kFp16, t, s).bytes;
    };
    const int64_t rows = c->max_rows, tokens = c->max_tokens;
    EXPECT_LE(bytes(rows * max_length, rows), available);
    EXPECT_GT(bytes((rows + 1) * max_length, rows + 1), available) << "one more row would fit";
    EXPECT_GE(tokens, rows * max_length);
    EXPECT_LE(bytes(tokens, std::min(tokens, rows)), available);
    EXPECT_GT(bytes(tokens + 1, std::min(tokens + 1, rows)), available) << "one more token would fit";
    EXPECT_LT(tokens, kMaxBatchTokens);
    EXPECT_EQ(c->free_bytes, free);
    EXPECT_EQ(c->total_bytes, total);
    EXPECT_NE(c->basis.find("cuda:0 (Test GPU): 2.0 GiB free of 16.0 GiB"), std::string::npos) << c->basis;
    EXPECT_NE(c->basis.find("10% of the total"), std::string::npos) << c->basis;
  }
}

TEST(ActivationReservation, RoundsTheShapeUpAndNothingElse) {
  for (Precision p : {Precision::kFp32, Precision::kBf16}) {
    EXPECT_EQ(activation_reservation(kDistilBert, p, 1, 1).bytes,
              activation_bytes(kDistilBert, p, kTokenGranule, kSequenceGranule));
    EXPECT_EQ(activation_reservation(kDistilBert, p, 130, 17).bytes,
              activation_bytes(kDistilBert, p, 192, 32));
    const ActivationLayout l = activation_reservation(kDistilBert, p, 4096, 64);
    EXPECT_EQ(l.tokens, 4096);
    EXPECT_EQ(l.sequences, 64);
    EXPECT_EQ(l.bytes, activation_bytes(kDistilBert, p, 4096, 64));
  }
}

// The promise the runner builds on: every batch within both limits fits,
// and so does what the backend holds after any two such batches (the larger
// size in each dimension).
TEST(BatchCapacity, EveryBatchWithinTheLimitsFits) {
  const int64_t gib = int64_t(1) << 30;
  const int64_t total = 24 * gib, free = 3 * gib;
  std::mt19937 rng(5);
  for (Precision p : {Precision::kFp32, Precision::kFp16}) {
    for (int max_length : {40, 128, 500}) {
      Result<BatchCapacity> c = batch_capacity(kDistilBert, p, max_length, free, total, 0, "cuda:0");
      ASSERT_TRUE(c.ok()) << c.status().to_string();
      const int64_t available = free - reserve_bytes(total);
      for (int i = 0; i < 200; ++i) {
        const int64_t tokens = 1 + int64_t(rng() % uint64_t(c->max_tokens));
        const int64_t rows = 1 + int64_t(rng() % uint64_t(std::min<int64_t>(tokens, c->max_rows)));
        ASSERT_LE(activation_reservation(kDistilBert, p, tokens, rows).bytes, available)
            << tokens << " tokens in " << rows << " rows, capacity " << c->max_tokens << " / " << c->max_rows;
      }
      EXPECT_LE(activation_reservation(kDistilBert, p, c->max_tokens, c->max_rows).bytes, available);
    }
  }
}

TEST(BatchCapacity, CappedOnBigGpusWithTheReason) {
  const int64_t gib = int64_t(1) << 30;
  Result<BatchCapacity> c =
      batch_capacity(kDistilBert, Precision::kBf16, 128, 130 * gib, 140 * gib, 0, "cuda:0");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->max_tokens, kMaxBatchTokens);
  EXPECT_EQ(c->max_rows, kMaxBatchTokens / 128);
  EXPECT_NE(c->basis.find("capped at 262144 tokens"), std::string::npos) << c->basis;
  Result<BatchCapacity> one =
      batch_capacity(kDistilBert, Precision::kBf16, 1, 130 * gib, 140 * gib, 0, "cuda:0");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->max_rows, kMaxBatchTokens);  // rows of one token
  EXPECT_EQ(one->max_tokens, kMaxBatchTokens);
}

TEST(BatchCapacity, ErrorsWhenNothingFitsOrTheLengthIsBad) {
  const int64_t gib = int64_t(1) << 30;
  Result<BatchCapacity> none =
      batch_capacity(kDistilBert, Precision::kFp32, 512, gib / 8, 16 * gib, 0, "cuda:1 (Small GPU)");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(none.status().message().find("not even one row of 512 tokens fits"), std::string::npos)
      << none.status().message();
  EXPECT_NE(none.status().message().find("cuda:1 (Small GPU)"), std::string::npos);
  EXPECT_EQ(batch_capacity(kDistilBert, Precision::kFp32, 0, 8 * gib, 16 * gib, 0, "x").status().code(),
            StatusCode::kInvalidArgument);
  // What the backend holds counts as available: it would be reused.
  Result<BatchCapacity> without =
      batch_capacity(kDistilBert, Precision::kFp32, 128, 3 * gib, 16 * gib, 0, "x");
  Result<BatchCapacity> with =
      batch_capacity(kDistilBert, Precision::kFp32, 128, 3 * gib, 16 * gib, gib, "x");
  ASSERT_TRUE(without.ok() && with.ok());
  EXPECT_GT(with->max_tokens, without->max_tokens);
}

TEST(FormatBytes, Units) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(int64_t(12) << 20), "12.0 MiB");
  EXPECT_EQ(format_bytes(int64_t(3) << 29), "1.5 GiB");
}

// ---- The module, as the CLI meets it on a machine without a GPU ----------------

// Why CUDA cannot run here, from the module this build made; skips where it can.
std::string no_gpu_reason() {
  Result<std::vector<CudaDeviceInfo>> gpus = cuda_devices();
  if (gpus.ok()) return "";
  return gpus.status().message();
}

TEST(CudaModule, SaysWhyNoGpuCanRunHere) {
  Result<std::vector<CudaDeviceInfo>> gpus = cuda_devices();
  if (gpus.ok()) {
    GTEST_SKIP() << "CUDA sees " << gpus->size()
                 << " GPU(s) here: the no-GPU messages need a machine without one";
  }
  EXPECT_EQ(gpus.status().code(), StatusCode::kUnavailable);
  const std::string& why = gpus.status().message();
  std::printf("[cuda] cuda_devices(): %s\n", why.c_str());
  // The module itself loaded (it is what answers) ...
  EXPECT_EQ(why.find("no CUDA module"), std::string::npos) << why;
  EXPECT_EQ(why.find("could not be loaded"), std::string::npos) << why;
  EXPECT_EQ(why.find("not an infercost CUDA module"), std::string::npos) << why;
  // ... and names the reason, with CUDA's own words.
  EXPECT_EQ(why.rfind("CUDA cannot run here: ", 0), 0u) << why;
  const bool named = why.find("no CUDA driver: libcuda.so.1") != std::string::npos ||
                     why.find("sees no GPU") != std::string::npos ||
                     why.find("update the driver") != std::string::npos;
  EXPECT_TRUE(named) << why;
  EXPECT_NE(why.find("cudaGetDeviceCount: cudaError"), std::string::npos) << why;
}

TEST(CudaModule, CreatingABackendGivesTheSameReason) {
  const std::string why = no_gpu_reason();
  if (why.empty()) {
    GTEST_SKIP() << "a GPU is visible here";
  }
  for (const char* device : {"cuda", "cuda:0", "cuda:3"}) {
    BackendOptions options;
    options.precision = Precision::kBf16;
    Result<std::unique_ptr<Backend>> made = create_backend(device, options);
    ASSERT_FALSE(made.ok()) << device;
    EXPECT_EQ(made.status().code(), StatusCode::kUnavailable) << device;
    std::printf("[cuda] create_backend(%s): %s\n", device, made.status().message().c_str());
    // The module's create() answers without the loader's prefix.
    const std::string reason = why.substr(std::strlen("CUDA cannot run here: "));
    EXPECT_EQ(made.status().message(), reason) << device;
  }
  // int8 is refused before any GPU is looked for.
  BackendOptions int8;
  int8.precision = Precision::kInt8;
  Result<std::unique_ptr<Backend>> refused = create_backend("cuda:0", int8);
  EXPECT_EQ(refused.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(refused.status().message().find("int8 runs on the CPU backend only; on GPUs use bf16 or fp16"),
            std::string::npos)
      << refused.status().message();
  Result<std::vector<std::string>> all = resolve_devices(*parse_device("cuda:all"));
  EXPECT_EQ(all.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(all.status().message(), why);
}

TEST(CudaModule, CliDevicesReportsTheModulesAnswer) {
  const std::string why = no_gpu_reason();
  if (why.empty()) {
    GTEST_SKIP() << "a GPU is visible here";
  }
  const infercost::testing::CommandOutcome run = infercost::testing::run_infercost("devices");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("backends  cpu: available; cuda: " + why), std::string::npos) << run.output;
}

TEST(CudaModule, CliNamesAMissingModuleFile) {
  const infercost::testing::CommandOutcome run = infercost::testing::run_shell(
      "INFERCOST_CUDA_MODULE=/nonexistent/libinfercost_cuda.so " INFERCOST_BINARY_DIR "/infercost devices");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("cuda: INFERCOST_CUDA_MODULE names /nonexistent/libinfercost_cuda.so, which does "
                            "not exist"),
            std::string::npos)
      << run.output;
}

TEST(CudaModule, CliNamesALibraryThatIsNotTheModule) {
  Dl_info info{};
  ASSERT_NE(::dladdr(reinterpret_cast<void*>(&::strlen), &info),
            0);  // the C library: loads, has no entry point
  const std::string libc = info.dli_fname;
  infercost::testing::CommandOutcome run = infercost::testing::run_shell(
      "INFERCOST_CUDA_MODULE=" + libc + " " INFERCOST_BINARY_DIR "/infercost devices");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find(libc + " is not an infercost CUDA module (no symbol infercost_cuda_module_v1)"),
            std::string::npos)
      << run.output;

  infercost::testing::TempDir dir;
  const std::string fake = dir.write("libinfercost_cuda.so", "not an ELF file\n");
  run = infercost::testing::run_shell("INFERCOST_CUDA_MODULE=" + fake +
                                      " " INFERCOST_BINARY_DIR "/infercost devices");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("the CUDA module " + fake + " could not be loaded: "), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("libcublasLt.so.13"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace infercost::backend::cuda
