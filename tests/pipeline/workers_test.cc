// The run's inference workers, with fake backends (fake_backend.h, through BackendFactory):
// several devices and streams, out-of-memory split-retry, auto batch sizes.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>

#include "backend/backend.h"
#include "corpus/tweets.h"
#include "engine/flops.h"
#include "engine/settings.h"
#include "fake_backend.h"
#include "model/model_dir.h"
#include "pipeline_test_util.h"
#include "run/runner.h"
#include "test_utils.h"

namespace infercost::run {
namespace {

using infercost::testing::count_entries;
using infercost::testing::slurp;
using infercost::testing::TempDir;

class WorkersTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    make_tiny_model(*dir_, 5);
    // Three files of tweets, one empty in between.
    for (int f = 0; f < 3; ++f) {
      const std::string path = dir_->file("in/part" + std::to_string(f) + ".jsonl");
      std::filesystem::create_directories(dir_->file("in"));
      ASSERT_TRUE(corpus::write_tweets_jsonl(path, f == 1 ? 0 : 1500, 40 + f).ok());
    }
  }
  static void TearDownTestSuite() {
    references_.clear();
    delete dir_;
    dir_ = nullptr;
  }

  static RunOptions options(const std::string& output) {
    RunOptions o;
    o.inputs = {dir_->file("in")};
    o.model_dir = dir_->file("tiny");
    o.output = output;
    o.threads = 1;
    o.tokenizer_threads = 2;
    o.window_rows = 256;
    o.batch_size = 64;
    o.max_batch_tokens = 2048;
    return o;
  }

  // The reference: one worker on one device, never out of memory.
  static std::string reference(Batching batching) {
    auto it = references_.find(batching);
    if (it != references_.end()) return it->second;
    const std::string out = dir_->file(std::string("reference-") + batching_name(batching) + "/");
    FakeMachine machine(1);
    machine.devices[0]->sleeps = false;
    RunOptions o = options(out);
    o.batching = batching;
    o.streams_per_device = 1;
    machine.install(o);
    Result<RunMetrics> m = run_files(o, machine.factory());
    EXPECT_TRUE(m.ok()) << m.status().to_string();
    if (m.ok()) {
      EXPECT_EQ(m->workers, 1);
      EXPECT_EQ(m->rows, 3000);
    }
    references_[batching] = out;
    return out;
  }

  // Every part of `out` is byte for byte the reference's.
  static void expect_same_outputs(const std::string& out, const std::string& expected) {
    for (const char* part : {"part0.jsonl", "part1.jsonl", "part2.jsonl"}) {
      ASSERT_TRUE(std::filesystem::exists(out + part)) << out << part;
      EXPECT_EQ(slurp(out + part), slurp(expected + part)) << part;
    }
  }

  static TempDir* dir_;
  static std::map<Batching, std::string> references_;
};

TempDir* WorkersTest::dir_ = nullptr;
std::map<Batching, std::string> WorkersTest::references_;

TEST_F(WorkersTest, ReferenceKeepsInputOrder) {
  const std::string ref = reference(Batching::kTokens);
  for (const char* part : {"part0", "part2"}) {
    const std::string in = slurp(dir_->file(std::string("in/") + part + ".jsonl"));
    const std::string out = slurp(ref + part + ".jsonl");
    std::istringstream ins(in), outs(out);
    std::string a, b;
    int n = 0;
    while (std::getline(ins, a)) {
      ASSERT_TRUE(std::getline(outs, b)) << part << " row " << n;
      EXPECT_EQ(nlohmann::json::parse(b)["text"], nlohmann::json::parse(a)["full_text"])
          << part << " row " << n;
      ++n;
    }
    EXPECT_FALSE(std::getline(outs, b));
    EXPECT_EQ(n, 1500);
  }
  EXPECT_EQ(slurp(ref + "part1.jsonl"), "");
}

TEST_F(WorkersTest, FourWorkersOnTwoDevicesGiveTheSameOutputs) {
  struct Case {
    Batching batching;
    int window_rows, batch_size;
  };
  // Small windows: many window markers between batches that finish out of order.
  for (Case c : {Case{Batching::kTokens, 256, 64}, Case{Batching::kTokens, 16, 5},
                 Case{Batching::kSeed, 256, 40}, Case{Batching::kSeed, 7, 3}}) {
    const Batching batching = c.batching;
    SCOPED_TRACE(std::string(batching_name(batching)) + " window " + std::to_string(c.window_rows));
    TempDir work;
    FakeMachine machine(2);  // forks: 2 streams each by default
    RunOptions o = options(work.file("out/"));
    o.batching = batching;
    o.window_rows = c.window_rows;
    o.batch_size = c.batch_size;
    machine.install(o);
    // The first batches wait until all 4 workers run one, so both devices
    // classify some, however the threads are scheduled.
    meet_at(4);
    Result<RunMetrics> m = run_or_abort_on_hang(o, machine.factory());
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    EXPECT_EQ(m->rows, 3000);
    EXPECT_EQ(m->workers, 4);
    EXPECT_EQ(m->devices, (std::vector<std::string>{"cuda:0", "cuda:1"}));
    ASSERT_EQ(m->per_device.size(), 2u);
    int64_t rows = 0;
    for (const DeviceRunMetrics& d : m->per_device) {
      EXPECT_EQ(d.streams, 2);
      EXPECT_GT(d.batches, 0) << d.name;
      EXPECT_EQ(d.oom_retries, 0);
      EXPECT_EQ(d.max_computed_tokens, 0);
      rows += d.rows;
    }
    EXPECT_EQ(rows, 3000);
    EXPECT_EQ(machine.devices[0]->streams, 2);
    EXPECT_EQ(m->tokenizer_threads, 2);
    expect_same_outputs(work.file("out/"), reference(batching));
    const std::string summary = m->to_summary();
    EXPECT_NE(summary.find("workers         4 over 2 devices"), std::string::npos) << summary;
    auto j = nlohmann::json::parse(m->to_json());
    EXPECT_EQ(j["workers"], 4);
    EXPECT_EQ(j["devices"], nlohmann::json({"cuda:0", "cuda:1"}));
    EXPECT_EQ(j["per_device"].size(), 2u);
    EXPECT_EQ(j["oom_retries"], 0);
  }
}

TEST_F(WorkersTest, OneFileOutputFromManyWorkersIsInOrder) {
  TempDir work;
  FakeMachine machine(4);
  for (auto& d : machine.devices) d->can_fork = false;  // one stream each, silently
  RunOptions o = options(work.file("all.jsonl"));
  machine.install(o);
  Result<RunMetrics> m = run_files(o, machine.factory());
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->workers, 4);
  for (const auto& d : machine.devices) EXPECT_EQ(d->streams, 1);
  const std::string ref = reference(Batching::kTokens);
  EXPECT_EQ(slurp(work.file("all.jsonl")), slurp(ref + "part0.jsonl") + slurp(ref + "part2.jsonl"));
}

TEST_F(WorkersTest, OutOfMemorySplitsBatchesAndKeepsTheLimit) {
  for (int streams : {1, 2}) {
    SCOPED_TRACE(std::to_string(streams) + " streams per device");
    TempDir work;
    FakeMachine machine(2);
    // Above the longest row (512 tokens, truncated), below the 2048-token batches.
    machine.devices[0]->oom_above = 1200;
    machine.devices[1]->oom_above = 600;
    RunOptions o = options(work.file("out/"));
    o.streams_per_device = streams;
    machine.install(o);
    Result<RunMetrics> m = run_or_abort_on_hang(o, machine.factory());
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    EXPECT_EQ(m->rows, 3000);
    expect_same_outputs(work.file("out/"), reference(Batching::kTokens));
    EXPECT_GT(m->oom_retries, 0);
    ASSERT_EQ(m->per_device.size(), 2u);
    int64_t retries = 0;
    for (size_t i = 0; i < 2; ++i) {
      const DeviceRunMetrics& d = m->per_device[i];
      const FakeDevice& fake = *machine.devices[i];
      SCOPED_TRACE(d.name);
      EXPECT_GT(d.oom_retries, 0);
      EXPECT_EQ(d.oom_retries, fake.ooms);
      retries += d.oom_retries;
      // The limit learned: below the smallest batch that failed, at least what fits.
      EXPECT_EQ(d.max_computed_tokens, fake.smallest_oom - 1);
      EXPECT_GE(d.max_computed_tokens, fake.oom_above);
      // A handful of failures while the limit is found, not one per batch.
      EXPECT_LT(fake.ooms, 10 * streams) << fake.ooms;
      // One worker per device: once a size failed, nothing as large is tried again.
      if (streams == 1) {
        EXPECT_EQ(fake.calls_above_learned_limit, 0);
      }
    }
    EXPECT_EQ(retries, m->oom_retries);
    const std::string summary = m->to_summary();
    EXPECT_NE(summary.find("out of memory   "), std::string::npos) << summary;
    EXPECT_NE(summary.find("cuda:1 kept batches to"), std::string::npos) << summary;
    auto j = nlohmann::json::parse(m->to_json());
    EXPECT_EQ(j["oom_retries"], m->oom_retries);
    EXPECT_EQ(j["per_device"][1]["max_computed_tokens"], m->per_device[1].max_computed_tokens);
  }
}

// What a failed run on a device leaves: no output; the job's checkpoint and
// partial where rows were written (a device error can be resumed from: on a
// larger GPU, say), else nothing.
void expect_only_job_files(const std::string& dir, const std::string& message) {
  if (message.find("no rows were checkpointed yet: a rerun starts over") != std::string::npos) {
    EXPECT_EQ(count_entries(dir), 0) << "nothing to resume from, yet files are left";
    return;
  }
  // The engine names the setting "{resume}"; the CLI spells it as its flag.
  EXPECT_NE(spell_settings(message, Spelling::kFlag).find("rerun with --resume to continue"),
            std::string::npos)
      << message;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    EXPECT_NE(name.find(".infercost-"), std::string::npos) << "not a job file: " << name;
    EXPECT_EQ(name.find(".infercost-lock"), std::string::npos) << "the lock outlived the run";
  }
}

TEST_F(WorkersTest, ARowThatDoesNotFitFailsTheRunAndLeavesNoOutput) {
  TempDir work;
  FakeMachine machine(2);
  // No row fits either device (every one has [CLS] text [SEP]), so none can
  // be written before the first failure, whichever worker meets it first.
  machine.devices[0]->oom_above = 2;
  machine.devices[1]->oom_above = 2;
  RunOptions o = options(work.file("out.jsonl"));
  machine.install(o);
  Result<RunMetrics> m = run_or_abort_on_hang(o, machine.factory());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kResourceExhausted) << m.status().to_string();
  const std::string& message = m.status().message();
  EXPECT_TRUE(message.rfind("cuda:0: a single row of ", 0) == 0 ||
              message.rfind("cuda:1: a single row of ", 0) == 0)
      << message;
  EXPECT_NE(message.find(" tokens"), std::string::npos) << message;
  EXPECT_NE(message.find("fake: out of memory"), std::string::npos) << message;
  EXPECT_FALSE(std::filesystem::exists(work.file("out.jsonl")));
  // No row was written, so nothing is left to resume from.
  EXPECT_NE(message.find("no rows were checkpointed yet: a rerun starts over"), std::string::npos) << message;
  EXPECT_EQ(count_entries(work.path()), 0);
}

// Both devices fail at their fifth batch: with far more than 8 batches one of
// them gets there whatever the threads' scheduling (a single failing device
// could be left with fewer than five batches by the other).
void fail_both_at_fifth_call(FakeMachine& machine, bool names_errors) {
  for (const auto& d : machine.devices) {
    d->fail_at_call = 5;
    d->names_errors = names_errors;
  }
}

// Whether the run's error names the device that failed first, `what` after it.
bool names_a_device(const std::string& message, const std::string& what) {
  return message.find("cuda:0: " + what) != std::string::npos ||
         message.find("cuda:1: " + what) != std::string::npos;
}

TEST_F(WorkersTest, AnErrorInOneWorkerStopsEveryStage) {
  TempDir work;
  FakeMachine machine(2);
  fail_both_at_fifth_call(machine, false);
  RunOptions o = options(work.file("out/"));
  machine.install(o);
  Result<RunMetrics> m = run_or_abort_on_hang(o, machine.factory());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInternal);
  EXPECT_TRUE(names_a_device(m.status().message(), "the fake device broke")) << m.status().message();
  expect_only_job_files(work.file("out"), m.status().message());
}

// A backend that names its device in its errors (as the CUDA backend does):
// the run's error names the device once.
TEST_F(WorkersTest, ADeviceErrorNamesItsDeviceOnce) {
  TempDir work;
  FakeMachine machine(2);
  fail_both_at_fifth_call(machine, true);
  RunOptions o = options(work.file("out/"));
  machine.install(o);
  Result<RunMetrics> m = run_or_abort_on_hang(o, machine.factory());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInternal);
  EXPECT_EQ(m.status().message().rfind("cuda:", 0), 0u) << m.status().message();
  EXPECT_TRUE(names_a_device(m.status().message(), "classify: the fake device broke"))
      << m.status().message();
  for (const char* twice : {"cuda:0: cuda:0", "cuda:1: cuda:1", "cuda:0: cuda:1", "cuda:1: cuda:0"}) {
    EXPECT_EQ(m.status().message().find(twice), std::string::npos) << m.status().message();
  }
}

TEST_F(WorkersTest, AutoSizesComeFromTheSmallestStreamCapacity) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  for (Batching batching : {Batching::kTokens, Batching::kSeed}) {
    SCOPED_TRACE(batching_name(batching));
    FakeMachine machine(2);
    machine.devices[0]->capacity = {3000, 50, kGiB, 2 * kGiB, "fake memory A"};
    machine.devices[1]->capacity = {5000, 40, kGiB, 2 * kGiB, "fake memory B"};
    TempDir work;
    RunOptions o = options(work.file("out/"));
    o.batching = batching;
    o.batch_size_auto = true;
    o.max_batch_tokens_auto = true;
    o.max_length = 128;
    machine.install(o);
    Result<RunMetrics> m = run_files(o, machine.factory());
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    // Per stream (2 each): A 1500 tokens / 25 rows, B 2500 / 20.
    EXPECT_EQ(m->capacity_max_tokens, 1500);
    EXPECT_EQ(m->capacity_max_rows, 20);
    EXPECT_NE(m->capacity_basis.find("cuda:0 (shared by 2 streams): fake memory A"), std::string::npos)
        << m->capacity_basis;
    EXPECT_EQ(m->max_batch_tokens, 1500);
    EXPECT_EQ(m->batch_size, batching == Batching::kSeed ? 1500 / 128 : 20);
    EXPECT_TRUE(m->batch_size_auto);
    EXPECT_TRUE(m->max_batch_tokens_auto);
    for (const auto& d : machine.devices) {
      EXPECT_LE(d->max_rows_seen, m->batch_size);
      EXPECT_LE(d->max_computed_seen, batching == Batching::kSeed ? m->batch_size * 128 : 1500);
    }
    EXPECT_EQ(m->rows, 3000);
    // kTokens asks for rows of the shortest length (the budget fits a row of 128).
    EXPECT_EQ(machine.devices[0]->capacity_lengths, std::vector<int>{batching == Batching::kSeed ? 128 : 2});
    auto j = nlohmann::json::parse(m->to_json());
    EXPECT_EQ(j["batch_size_auto"], true);
    EXPECT_EQ(j["capacity"]["max_tokens"], 1500);
    EXPECT_NE(m->to_summary().find("auto sizes      batch "), std::string::npos) << m->to_summary();
  }
  // Nothing fits: a clear error before any row is read.
  FakeMachine machine(2);
  machine.devices[1]->capacity = {1, 0, 0, 2 * kGiB, "full"};
  TempDir work;
  RunOptions o = options(work.file("out.jsonl"));
  o.max_batch_tokens_auto = true;
  machine.install(o);
  Result<RunMetrics> m = run_files(o, machine.factory());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(m.status().message().find("cuda:1: no batch fits"), std::string::npos) << m.status().message();
  EXPECT_FALSE(std::filesystem::exists(work.file("out.jsonl")));
}

TEST_F(WorkersTest, TokensAutoRowsAreCountedAtTheShortestRow) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  struct Case {
    Batching batching;
    bool batch_auto;
    int64_t short_tokens;  // capacity(2).max_tokens
    std::vector<int> lengths_asked;
    int batch_size, max_batch_tokens;
  };
  // As on a GPU: far more rows of 2 tokens fit than rows of 128.
  for (Case c : {Case{Batching::kTokens, true, 8000, {2}, 4000, 8000},
                 // The short-row budget cannot hold one row of 128 tokens: the
                 // figures for rows of 128.
                 Case{Batching::kTokens, true, 100, {2, 128}, 62, 7900},
                 // --max-batch-tokens auto alone, and seed batches: rows of 128.
                 Case{Batching::kTokens, false, 8000, {128}, 64, 7900},
                 Case{Batching::kSeed, true, 8000, {128}, 61, 7900}}) {
    SCOPED_TRACE(std::string(batching_name(c.batching)) + (c.batch_auto ? " batch auto" : "") +
                 " short budget " + std::to_string(c.short_tokens));
    FakeMachine machine(1);
    FakeDevice& d = *machine.devices[0];
    d.capacity_at[2] = {c.short_tokens, 4000, kGiB, 2 * kGiB, "short rows"};
    d.capacity_at[128] = {7900, 62, kGiB, 2 * kGiB, "long rows"};
    TempDir work;
    RunOptions o = options(work.file("out/"));
    o.batching = c.batching;
    o.streams_per_device = 1;
    o.batch_size_auto = c.batch_auto;
    o.max_batch_tokens_auto = true;
    o.max_length = 128;
    machine.install(o);
    Result<RunMetrics> m = run_files(o, machine.factory());
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    EXPECT_EQ(d.capacity_lengths, c.lengths_asked);
    EXPECT_EQ(m->batch_size, c.batch_size);  // seed: min(62 rows, 7900 / 128)
    EXPECT_EQ(m->max_batch_tokens, c.max_batch_tokens);
    EXPECT_EQ(m->rows, 3000);
    EXPECT_LE(d.max_rows_seen, c.batch_size);
    const bool short_rows = c.lengths_asked.size() == 1 && c.lengths_asked[0] == 2;
    EXPECT_EQ(m->capacity_basis.find("short rows; rows counted at 2 tokens") != std::string::npos, short_rows)
        << m->capacity_basis;
    if (short_rows) {
      // Rows beyond what 128-token rows allow: the 256-row windows bound them.
      EXPECT_GT(d.max_rows_seen, 62);
    }
  }
}

TEST_F(WorkersTest, ACapacityErrorFailsTheRunNamingTheDevice) {
  for (bool batch_auto : {true, false}) {
    SCOPED_TRACE(batch_auto ? "batch size auto" : "token budget auto");
    FakeMachine machine(2);
    machine.devices[1]->capacity_error = internal_error("cudaMemGetInfo: the fake driver broke");
    TempDir work;
    RunOptions o = options(work.file("out.jsonl"));
    o.batch_size_auto = batch_auto;
    o.max_batch_tokens_auto = !batch_auto;
    machine.install(o);
    Result<RunMetrics> m = run_files(o, machine.factory());
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.status().code(), StatusCode::kInternal);
    EXPECT_NE(m.status().message().find("cuda:1: batch capacity: cudaMemGetInfo: the fake driver broke"),
              std::string::npos)
        << m.status().message();
    EXPECT_EQ(count_entries(work.path()), 0);
  }
}

TEST_F(WorkersTest, EveryWorkerRunsAtOnceWhenEachWindowMakesOneBatch) {
  // 32-row windows of 32-row batches: one batch and one window marker per
  // window. Batches of later windows must still reach the idle workers.
  TempDir work;
  FakeMachine machine(2);  // 2 streams each: 4 workers
  for (auto& d : machine.devices) d->sleep_us = 0;
  RunOptions o = options(work.file("out/"));
  o.window_rows = 32;
  o.batch_size = 32;
  o.max_batch_tokens = 1 << 20;
  machine.install(o);
  g_most_running = 0;
  meet_at(4);  // the first batches wait until 4 run at once
  Result<RunMetrics> m = run_or_abort_on_hang(o, machine.factory());
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->workers, 4);
  EXPECT_EQ(g_most_running.load(), 4);
  EXPECT_EQ(m->batches, 2 * (1500 / 32 + 1));  // 1500-row files: a partial window each
  for (const DeviceRunMetrics& d : m->per_device) EXPECT_GT(d.batches, 0) << d.name;
  expect_same_outputs(work.file("out/"), reference(Batching::kTokens));
}

TEST_F(WorkersTest, CpuAutoSizesAreTheCpuDefaults) {
  TempDir work;
  RunOptions o = options(work.file("out.jsonl"));
  o.inputs = {dir_->file("in/part1.jsonl")};  // empty: the sizes are what matter
  o.batch_size_auto = true;
  o.max_batch_tokens_auto = true;
  o.precision = "fp32";
  Result<RunMetrics> m = run_files(o);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->batch_size, 256);
  EXPECT_EQ(m->max_batch_tokens, 4096);
  EXPECT_EQ(m->workers, 1);
  EXPECT_EQ(m->devices, std::vector<std::string>{"cpu"});
  EXPECT_NE(m->capacity_basis.find("cpu: the CPU defaults"), std::string::npos) << m->capacity_basis;
}

TEST_F(WorkersTest, ModelFlopsCountEveryRowAtItsRealLength) {
  TempDir work;
  FakeMachine machine(1);
  machine.devices[0]->sleeps = false;
  RunOptions o = options(work.file("out.jsonl"));
  o.batching = Batching::kSeed;  // padding computed: FLOPs still at real lengths
  machine.install(o);
  Result<RunMetrics> m = run_files(o, machine.factory());
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  // The tiny preset's shape, from its config.
  model::LoadOptions load;
  load.load_weights = false;
  auto model = model::load_model_dir(dir_->file("tiny"), load);
  ASSERT_TRUE(model.ok());
  const model::ModelConfig& c = model->config;
  double expected = 0;
  for (size_t L = 0; L < m->length_counts.size(); ++L) {
    const double h = c.hidden_size, f = c.intermediate_size, l = static_cast<double>(L);
    expected += static_cast<double>(m->length_counts[L]) * c.num_layers *
                (2 * l * (4 * h * h + 2 * h * f) + 4 * l * l * h);
  }
  EXPECT_GT(expected, 0);
  EXPECT_NEAR(m->model_flops, expected, expected * 1e-12);
  EXPECT_NEAR(m->model_flops_per_second(), expected / m->wall_seconds, expected / m->wall_seconds * 1e-12);
  auto j = nlohmann::json::parse(m->to_json());
  EXPECT_NEAR(j["model_flops"].get<double>(), expected, expected * 1e-12);
  EXPECT_NE(m->to_summary().find("model FLOPs"), std::string::npos);
}

TEST(EncoderFlops, MatchesTheFormula) {
  // DistilBERT-base, 128 tokens: 6 x (2*128*(4*768^2 + 2*768*3072) + 4*128^2*768).
  EXPECT_DOUBLE_EQ(encoder_row_flops(EncoderShape{6, 768, 3072}, 128),
                   6.0 * (2.0 * 128 * (4.0 * 768 * 768 + 2.0 * 768 * 3072) + 4.0 * 128 * 128 * 768));
  EXPECT_DOUBLE_EQ(encoder_row_flops(EncoderShape{6, 768, 3072}, 0), 0.0);
}

TEST_F(WorkersTest, RejectsBadDevicesAndStreams) {
  TempDir work;
  RunOptions o = options(work.file("out.jsonl"));
  o.device = "gpu";
  Result<RunMetrics> m = run_files(o);
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(m.status().message().find("cuda:N"), std::string::npos) << m.status().message();
  o = options(work.file("out.jsonl"));
  for (int streams : {-1, kMaxStreamsPerDevice + 1}) {
    o.streams_per_device = streams;
    m = run_files(o);
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(spell_settings(m.status(), Spelling::kName)
                  .message()
                  .find("streams_per_device " + std::to_string(streams) + ": must be 1 to 16"),
              std::string::npos)
        << m.status().message();
  }
  EXPECT_EQ(count_entries(work.path()), 0);
}

}  // namespace
}  // namespace infercost::run
