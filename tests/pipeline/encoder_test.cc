// The engine API below the CLI: Encoder::classify on the tiny committed
// models against run_files's outputs, and with fake backends
// (fake_backend.h, through BackendFactory): input order, nulls, bad rows,
// threads, workers, out-of-memory splits and the counters.
#include "engine/encoder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "corpus/tweets.h"
#include "engine/encoder_workers.h"
#include "engine/settings.h"
#include "fake_backend.h"
#include "pipeline_test_util.h"
#include "run/runner.h"
#include "test_utils.h"

namespace infercost::run {
namespace {

using infercost::testing::slurp;
using infercost::testing::TempDir;

std::vector<std::string_view> views_of(const std::vector<std::string>& texts) {
  return std::vector<std::string_view>(texts.begin(), texts.end());
}

std::unique_ptr<Encoder> open_or_fail(const std::string& model_dir, const ModelOptions& options,
                                      const BackendFactory& factory = {}) {
  Result<std::unique_ptr<Encoder>> c = Encoder::open(model_dir, options, factory);
  EXPECT_TRUE(c.ok()) << c.status().to_string();
  return c.ok() ? std::move(*c) : nullptr;
}

// The texts of a synthetic tweet file of `rows` rows.
std::vector<std::string> tweets(const TempDir& dir, int rows, uint64_t seed) {
  const std::string path = dir.file("tweets-" + std::to_string(seed) + ".jsonl");
  EXPECT_TRUE(corpus::write_tweets_jsonl(path, rows, seed).ok());
  std::vector<std::string> out;
  std::istringstream in(slurp(path));
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line)["full_text"]);
  return out;
}

// What the fake backends give row `text` through `c`: its logits
// (row_logits of its ids), the classifier's head function applied.
std::vector<float> fake_outputs(const Encoder& c, std::string_view text) {
  std::vector<int32_t> ids;
  EXPECT_TRUE(c.tokenizer().encode_append(text, ids).ok());
  std::vector<float> out(static_cast<size_t>(c.labels()));
  row_logits(ids.data(), static_cast<int>(ids.size()), c.labels(), out.data());
  apply_head_function(c.head_function(), out.data(), 1, c.labels());
  return out;
}

std::vector<float> row_of(const Classification& r, size_t row) {
  const size_t labels = static_cast<size_t>(r.labels);
  return std::vector<float>(r.scores.begin() + static_cast<ptrdiff_t>(row * labels),
                            r.scores.begin() + static_cast<ptrdiff_t>((row + 1) * labels));
}

// ---- Against the file runner, on the committed tiny models -----------------

TEST(ClassifierGolden, ClassifyGivesTheRunsOutputsOnTheSameRows) {
  TempDir work;
  std::vector<std::string> texts = tweets(work, 300, 11);
  texts[7] = "";  // an empty text is a row of [CLS] [SEP]
  std::vector<uint8_t> nulls(texts.size(), 0);
  nulls[3] = nulls[200] = 1;
  std::string jsonl;
  for (size_t i = 0; i < texts.size(); ++i) {
    nlohmann::json row;
    row["full_text"] = nulls[i] ? nlohmann::json(nullptr) : nlohmann::json(texts[i]);
    jsonl += row.dump() + "\n";
  }
  const std::string input = work.write("in.jsonl", jsonl);
  for (const char* name : {"tiny-distilbert", "tiny-roberta-multilabel"}) {
    SCOPED_TRACE(name);
    const std::string model = std::string(INFERCOST_TEST_DATA_DIR) + "/golden/" + name;
    RunOptions run;
    run.inputs = {input};
    run.model_dir = model;
    run.output = work.file(std::string(name) + ".jsonl");
    run.threads = 1;
    run.precision = "fp32";
    run.max_length = 128;
    run.window_rows = 64;  // other windows than classify's: the same outputs all the same
    Result<RunMetrics> m = run_files(run);
    ASSERT_TRUE(m.ok()) << m.status().to_string();

    ModelOptions options = run;
    std::unique_ptr<Encoder> c = open_or_fail(model, options);
    ASSERT_NE(c, nullptr);
    std::vector<std::string_view> views = views_of(texts);
    Result<Classification> r = c->classify(views, nulls);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    ASSERT_EQ(r->rows(), texts.size());
    ASSERT_EQ(r->labels, c->config().num_labels());
    std::istringstream out(slurp(run.output));
    size_t row = 0;
    for (std::string line; std::getline(out, line); ++row) {
      ASSERT_LT(row, texts.size());
      const nlohmann::json written = nlohmann::json::parse(line);
      EXPECT_EQ(r->is_null[row], nulls[row]) << row;
      if (nulls[row]) {
        EXPECT_TRUE(written["label"].is_null()) << row;
        EXPECT_EQ(r->label[row], -1);
        continue;
      }
      for (int l = 0; l < r->labels; ++l) {
        std::string column = c->config().labels[static_cast<size_t>(l)];
        for (char& ch : column) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        EXPECT_NEAR(r->scores[row * static_cast<size_t>(r->labels) + static_cast<size_t>(l)],
                    written[column].get<double>(), 1e-6)
            << row << " " << column;
      }
      EXPECT_EQ(c->config().labels[static_cast<size_t>(r->label[row])], written["label"]) << row;
    }
    EXPECT_EQ(row, texts.size());
    // The run's counters and the classifier's agree on the same rows.
    const EncoderStats s = c->stats();
    EXPECT_EQ(s.rows, m->rows);
    EXPECT_EQ(s.rows_null, m->rows_null);
    EXPECT_EQ(s.tokens, m->tokens);
    EXPECT_EQ(s.length_counts, m->length_counts);
    EXPECT_EQ(c->precision(), m->precision);
    EXPECT_EQ(head_function_name(c->head_function()), m->head_function);
    EXPECT_EQ(c->label_set(), m->labels_column);
  }
}

// ---- With fake backends ------------------------------------------------------

class ClassifierTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    make_tiny_model(*dir_, 5);
    texts_ = new std::vector<std::string>(tweets(*dir_, 2000, 21));
  }
  static void TearDownTestSuite() {
    delete texts_;
    texts_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }
  static std::string model() { return dir_->file("tiny"); }
  static ModelOptions options() {
    ModelOptions o;
    o.threads = 1;
    o.tokenizer_threads = 2;
    o.batch_size = 64;
    o.max_batch_tokens = 2048;
    return o;
  }
  // Every row of `r` is what the fake backends give its text.
  static void expect_fake_outputs(const Encoder& c, const std::vector<std::string>& texts,
                                  const Classification& r) {
    ASSERT_EQ(r.rows(), texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
      if (r.is_null[i]) continue;
      const std::vector<float> expected = fake_outputs(c, texts[i]);
      ASSERT_EQ(row_of(r, i), expected) << "row " << i;
      EXPECT_EQ(r.label[i], std::max_element(expected.begin(), expected.end()) - expected.begin()) << i;
    }
  }

  static TempDir* dir_;
  static std::vector<std::string>* texts_;
};

TempDir* ClassifierTest::dir_ = nullptr;
std::vector<std::string>* ClassifierTest::texts_ = nullptr;

TEST_F(ClassifierTest, KeepsInputOrderWhileBatchesAreLengthSorted) {
  FakeMachine machine(1);
  FakeDevice& d = *machine.devices[0];
  d.sleeps = false;
  d.record = true;
  ModelOptions o = options();
  o.streams_per_device = 1;
  machine.install(o);
  std::unique_ptr<Encoder> c = open_or_fail(model(), o, machine.factory());
  ASSERT_NE(c, nullptr);
  const std::vector<std::string>& texts = *texts_;
  Result<Classification> r = c->classify(views_of(texts));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_fake_outputs(*c, texts, *r);
  // One length-sorted pass over the whole call: lengths ascend within and across batches.
  ASSERT_GT(d.lengths_seen.size(), 1u);
  int32_t previous = 0;
  size_t rows = 0;
  for (size_t b = 0; b < d.lengths_seen.size(); ++b) {
    for (int32_t len : d.lengths_seen[b]) {
      EXPECT_GE(len, previous) << "batch " << b;
      previous = len;
    }
    EXPECT_EQ(d.seq_len_seen[b], d.lengths_seen[b].back());
    EXPECT_FALSE(d.compute_padding_seen[b]);
    EXPECT_LE(d.lengths_seen[b].size() * static_cast<size_t>(d.seq_len_seen[b]), 2048u);
    rows += d.lengths_seen[b].size();
  }
  EXPECT_EQ(rows, texts.size());
  EXPECT_GT(d.max_rows_seen, 1);

  // Seed batching: batch_size rows in input order, padded to the call's longest row.
  FakeMachine seed_machine(1);
  FakeDevice& s = *seed_machine.devices[0];
  s.sleeps = false;
  s.record = true;
  o.batching = Batching::kSeed;
  o.batch_size = 300;
  std::unique_ptr<Encoder> seeded = open_or_fail(model(), o, seed_machine.factory());
  ASSERT_NE(seeded, nullptr);
  r = seeded->classify(views_of(texts));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_fake_outputs(*seeded, texts, *r);
  ASSERT_EQ(s.lengths_seen.size(), (texts.size() + 299) / 300);
  std::vector<int32_t> lengths;
  for (const std::string& t : texts) {
    std::vector<int32_t> ids;
    ASSERT_TRUE(seeded->tokenizer().encode_append(t, ids).ok());
    lengths.push_back(static_cast<int32_t>(ids.size()));
  }
  const int32_t longest = *std::max_element(lengths.begin(), lengths.end());
  std::vector<int32_t> seen;
  for (size_t b = 0; b < s.lengths_seen.size(); ++b) {
    seen.insert(seen.end(), s.lengths_seen[b].begin(), s.lengths_seen[b].end());
    EXPECT_EQ(s.seq_len_seen[b], longest);
    EXPECT_TRUE(s.compute_padding_seen[b]);
  }
  EXPECT_EQ(seen, lengths);
}

TEST_F(ClassifierTest, NullsEmptyStringsAndAnEmptyCall) {
  FakeMachine machine(1);
  ModelOptions o = options();
  machine.install(o);
  std::unique_ptr<Encoder> c = open_or_fail(model(), o, machine.factory());
  ASSERT_NE(c, nullptr);
  Result<Classification> empty = c->classify({});
  ASSERT_TRUE(empty.ok()) << empty.status().to_string();
  EXPECT_EQ(empty->rows(), 0u);
  EXPECT_TRUE(empty->scores.empty());
  EXPECT_EQ(empty->labels, 2);

  const std::vector<std::string> texts = {"good", "", "ignored: null", "bad", ""};
  const std::vector<uint8_t> nulls = {0, 0, 1, 0, 1};
  Result<Classification> r = c->classify(views_of(texts), nulls);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->is_null, nulls);
  EXPECT_EQ(r->skipped, std::vector<uint8_t>(5, 0));
  for (size_t i : {2u, 4u}) {
    EXPECT_EQ(r->label[i], -1);
    EXPECT_EQ(row_of(*r, i), std::vector<float>(2, 0.0f));
  }
  expect_fake_outputs(*c, texts, *r);
  EXPECT_EQ(row_of(*r, 1), fake_outputs(*c, ""));  // an empty text is classified, not null
  const EncoderStats s = c->stats();
  EXPECT_EQ(s.rows, 3);
  EXPECT_EQ(s.rows_null, 2);

  Result<Classification> wrong = c->classify(views_of(texts), std::vector<uint8_t>{0, 1});
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find("2 null flags for 5 texts"), std::string::npos)
      << wrong.status().message();
}

TEST_F(ClassifierTest, ABadRowFailsNamingItsIndexOrIsSkipped) {
  const std::vector<std::string> texts = {"fine", "also fine", "bad \xff byte", "last"};
  FakeMachine machine(1);
  ModelOptions o = options();
  machine.install(o);
  std::unique_ptr<Encoder> c = open_or_fail(model(), o, machine.factory());
  ASSERT_NE(c, nullptr);
  Result<Classification> r = c->classify(views_of(texts));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message().rfind("row 2: invalid UTF-8", 0), 0u) << r.status().message();
  // Past the first chunk, the index is still the row's in the call.
  std::vector<std::string> many(Encoder::kClassifyChunkRows + 5, "x");
  many.back() = "\xc3";
  r = c->classify(views_of(many));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("row " + std::to_string(many.size() - 1) + ": ", 0), 0u)
      << r.status().message();

  o.on_bad_row = OnBadRow::kSkip;
  FakeMachine skipping(1);
  std::unique_ptr<Encoder> s = open_or_fail(model(), o, skipping.factory());
  ASSERT_NE(s, nullptr);
  r = s->classify(views_of(texts));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->skipped, (std::vector<uint8_t>{0, 0, 1, 0}));
  EXPECT_EQ(r->is_null, (std::vector<uint8_t>{0, 0, 1, 0}));
  EXPECT_EQ(r->label[2], -1);
  expect_fake_outputs(*s, texts, *r);
  EXPECT_EQ(s->stats().rows_skipped, 1);
  EXPECT_EQ(s->stats().rows, 3);
}

TEST_F(ClassifierTest, SeveralThreadsCallingAtOnceGetTheirOwnResults) {
  FakeMachine machine(2);  // 2 streams each: 4 workers
  for (auto& d : machine.devices) d->sleep_us = 50;
  ModelOptions o = options();
  machine.install(o);
  std::unique_ptr<Encoder> c = open_or_fail(model(), o, machine.factory());
  ASSERT_NE(c, nullptr);
  constexpr int kThreads = 4;
  std::vector<std::vector<std::string>> inputs(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    // Each thread its own rows, in its own order.
    inputs[t].assign(texts_->begin() + t * 300, texts_->begin() + (t + 1) * 300);
    std::shuffle(inputs[t].begin(), inputs[t].end(), std::mt19937(static_cast<uint32_t>(t)));
  }
  std::vector<std::vector<Classification>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int call = 0; call < 3; ++call) {
        Result<Classification> r = c->classify(views_of(inputs[t]));
        if (r.ok()) got[t].push_back(std::move(*r));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) {
    SCOPED_TRACE("thread " + std::to_string(t));
    ASSERT_EQ(got[t].size(), 3u);
    for (const Classification& r : got[t]) expect_fake_outputs(*c, inputs[t], r);
  }
  EXPECT_EQ(c->stats().rows, kThreads * 3 * 300);
  // One call at a time: no backend ever ran two batches at once.
  for (const auto& d : machine.devices) EXPECT_EQ(d->overlapping_calls, 0) << d->name;
}

TEST_F(ClassifierTest, BatchesSpreadOverEveryWorker) {
  FakeMachine machine(2);
  for (auto& d : machine.devices) d->sleep_us = 0;
  ModelOptions o = options();
  o.batch_size = 32;
  machine.install(o);
  std::unique_ptr<Encoder> c = open_or_fail(model(), o, machine.factory());
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(EncoderWorkers(*c).workers(), 4u);
  EXPECT_EQ(c->devices(), (std::vector<std::string>{"cuda:0", "cuda:1"}));
  EXPECT_EQ(EncoderWorkers(*c).worker_device(3), 1u);
  g_most_running = 0;
  meet_at(4);  // the first batches wait until 4 run at once
  Result<Classification> r = c->classify(views_of(*texts_));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_fake_outputs(*c, *texts_, *r);
  EXPECT_EQ(g_most_running.load(), 4);
  const EncoderStats s = c->stats();
  ASSERT_EQ(s.devices.size(), 2u);
  for (const DeviceStats& d : s.devices) {
    EXPECT_EQ(d.streams, 2);
    EXPECT_GT(d.batches, 0) << d.name;
  }
}

TEST_F(ClassifierTest, AStopStartsNoFurtherBatch) {
  FakeMachine machine(1);
  FakeDevice& d = *machine.devices[0];
  d.sleeps = false;
  ModelOptions o = options();
  o.batch_size = 8;
  o.streams_per_device = 1;
  machine.install(o);
  std::unique_ptr<Encoder> c = open_or_fail(model(), o, machine.factory());
  ASSERT_NE(c, nullptr);
  auto calls = [&d] {
    std::lock_guard<std::mutex> lock(d.mu);
    return d.calls;
  };
  std::atomic<int> stop{0};
  // Set before the call: not one batch runs.
  stop = 2;
  Result<Classification> r = c->classify(views_of(*texts_), {}, &stop);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled);
  EXPECT_EQ(r.status().message(), "classify stopped by signal 2 before its 2000 rows were done");
  EXPECT_EQ(calls(), 0);
  // Set while the call runs, during its 5th batch (of 250): its one worker
  // starts no other.
  stop = 0;
  d.on_call = [&stop](int64_t call) {
    if (call == 5) stop = 15;
  };
  r = c->classify(views_of(*texts_), {}, &stop);
  d.on_call = nullptr;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled);
  EXPECT_EQ(r.status().message(), "classify stopped by signal 15 before its 2000 rows were done");
  EXPECT_EQ(calls(), 5);
  // Left unset, the same call classifies every row, and the Encoder is still usable.
  stop = 0;
  const int64_t before = calls();
  r = c->classify(views_of(*texts_), {}, &stop);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_fake_outputs(*c, *texts_, *r);
  EXPECT_GE(calls() - before, 2000 / 8);
}

TEST_F(ClassifierTest, OutOfMemorySplitsBatchesAndKeepsTheLimit) {
  FakeMachine machine(1);
  FakeDevice& d = *machine.devices[0];
  d.sleeps = false;
  d.oom_above = 600;  // above the longest row, below the 2048-token batches
  ModelOptions o = options();
  o.streams_per_device = 1;
  machine.install(o);
  std::unique_ptr<Encoder> c = open_or_fail(model(), o, machine.factory());
  ASSERT_NE(c, nullptr);
  for (int call = 0; call < 2; ++call) {
    Result<Classification> r = c->classify(views_of(*texts_));
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    expect_fake_outputs(*c, *texts_, *r);
  }
  const EncoderStats s = c->stats();
  ASSERT_EQ(s.devices.size(), 1u);
  EXPECT_GT(d.ooms, 0);
  EXPECT_EQ(s.devices[0].oom_retries, d.ooms);
  EXPECT_LT(d.ooms, 10);  // a handful while the limit is found, none in the second call
  EXPECT_EQ(s.devices[0].max_computed_tokens, d.smallest_oom - 1);
  EXPECT_GE(s.devices[0].max_computed_tokens, d.oom_above);
  EXPECT_EQ(d.calls_above_learned_limit, 0);
  EXPECT_LE(d.max_computed_seen, d.oom_above);
  EXPECT_GT(s.devices[0].batches, s.batches);  // split halves count apiece
  EXPECT_EQ(s.devices[0].rows, 2 * static_cast<int64_t>(texts_->size()));

  // A single row that does not fit.
  FakeMachine full(1);
  full.devices[0]->oom_above = 2;
  std::unique_ptr<Encoder> f = open_or_fail(model(), o, full.factory());
  ASSERT_NE(f, nullptr);
  Result<Classification> r = f->classify(views_of(*texts_));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(r.status().message().rfind("cuda:0: a single row of ", 0), 0u) << r.status().message();
}

// A device error names its device once, whether the backend named it (as
// the CUDA backend does: "cuda:0: classify: ...") or not.
TEST_F(ClassifierTest, ADeviceErrorNamesItsDeviceOnce) {
  for (const bool backend_names_it : {true, false}) {
    FakeMachine machine(1);
    machine.devices[0]->sleeps = false;
    machine.devices[0]->fail_at_call = 1;
    machine.devices[0]->names_errors = backend_names_it;
    ModelOptions o = options();
    o.streams_per_device = 1;
    machine.install(o);
    std::unique_ptr<Encoder> c = open_or_fail(model(), o, machine.factory());
    ASSERT_NE(c, nullptr);
    Result<Classification> r = c->classify(views_of(*texts_));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInternal);
    EXPECT_EQ(r.status().message(),
              backend_names_it ? "cuda:0: classify: the fake device broke" : "cuda:0: the fake device broke");
  }
}

TEST_F(ClassifierTest, StatsAddUp) {
  FakeMachine machine(2);
  for (auto& d : machine.devices) d->sleeps = false;
  ModelOptions o = options();
  o.max_length = 24;  // some tweets reach it
  machine.install(o);
  std::unique_ptr<Encoder> c = open_or_fail(model(), o, machine.factory());
  ASSERT_NE(c, nullptr);
  std::vector<std::string> texts(texts_->begin(), texts_->begin() + 500);
  std::vector<uint8_t> nulls(texts.size(), 0);
  for (size_t i = 0; i < nulls.size(); i += 7) nulls[i] = 1;
  int64_t rows = 0, tokens = 0, at_max = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    if (nulls[i]) continue;
    std::vector<int32_t> ids;
    ASSERT_TRUE(c->tokenizer().encode_append(texts[i], ids).ok());
    ++rows;
    tokens += static_cast<int64_t>(ids.size());
    at_max += static_cast<int>(ids.size()) >= 24 ? 1 : 0;
  }
  ASSERT_GT(at_max, 0);
  for (int call = 0; call < 2; ++call) ASSERT_TRUE(c->classify(views_of(texts), nulls).ok());
  const EncoderStats s = c->stats();
  EXPECT_EQ(s.rows, 2 * rows);
  EXPECT_EQ(s.rows_null, 2 * static_cast<int64_t>((texts.size() + 6) / 7));
  EXPECT_EQ(s.tokens, 2 * tokens);
  EXPECT_EQ(s.computed_tokens, s.tokens);  // the fakes skip padding
  EXPECT_GE(s.padded_tokens, s.tokens);
  EXPECT_EQ(s.rows_at_max_length, 2 * at_max);
  int64_t counted = 0, weighted = 0;
  for (size_t L = 0; L < s.length_counts.size(); ++L) {
    counted += s.length_counts[L];
    weighted += s.length_counts[L] * static_cast<int64_t>(L);
  }
  EXPECT_EQ(counted, s.rows);
  EXPECT_EQ(weighted, s.tokens);
  int64_t device_rows = 0, device_batches = 0;
  double device_seconds = 0;
  for (const DeviceStats& d : s.devices) {
    device_rows += d.rows;
    device_batches += d.batches;
    device_seconds += d.infer_seconds;
  }
  EXPECT_EQ(device_rows, s.rows);
  EXPECT_EQ(device_batches, s.batches);  // no split
  EXPECT_DOUBLE_EQ(device_seconds, s.infer_seconds);
  EXPECT_GT(s.tokenize_seconds, 0);
}

TEST_F(ClassifierTest, OpenResolvesThePolicyAndRefusesBadOptions) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  FakeMachine machine(2);
  machine.devices[0]->capacity = {3000, 50, kGiB, 2 * kGiB, "fake memory A"};
  machine.devices[1]->capacity = {5000, 40, kGiB, 2 * kGiB, "fake memory B"};
  ModelOptions o = options();
  o.max_batch_tokens_auto = true;
  o.batch_size_auto = true;
  o.max_length = 128;
  machine.install(o);
  std::unique_ptr<Encoder> c = open_or_fail(model(), o, machine.factory());
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->policy().max_batch_tokens, 1500);  // per stream (2 each): A 1500 tokens / 25 rows, B 2500 / 20
  EXPECT_EQ(c->policy().batch_size, 20);
  EXPECT_EQ(c->capacity().max_tokens, 1500);
  EXPECT_EQ(c->precision(), "fp32");
  EXPECT_EQ(c->head_function(), HeadFunction::kSoftmax);
  EXPECT_FALSE(c->label_set());
  EXPECT_EQ(c->tokenizer_threads(), 2);

  ModelOptions bad = options();
  bad.streams_per_device = kMaxStreamsPerDevice + 1;
  Result<std::unique_ptr<Encoder>> r = Encoder::open(model(), bad);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  // The engine names the setting "{streams_per_device}"; the C++ API and
  // Python spell it as its member, the CLI as its flag.
  EXPECT_EQ(spell_settings(r.status(), Spelling::kName)
                .message()
                .rfind("streams_per_device 17: must be 1 to 16", 0),
            0u)
      << r.status().message();
  EXPECT_NE(spell_settings(r.status(), Spelling::kFlag).message().find("--streams-per-device 17"),
            std::string::npos)
      << r.status().message();
  bad = options();
  bad.max_length = 1000;
  r = Encoder::open(model(), bad);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("exceeds the model's"), std::string::npos) << r.status().message();
  r = Encoder::open(dir_->file("no-such-model"), options());
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace infercost::run
