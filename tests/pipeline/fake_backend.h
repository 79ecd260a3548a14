// Fake devices and backends for the pipeline suites (BackendFactory): logits
// that depend only on a row's ids, out-of-memory above a token count, failures
// at a given call, capacities, forks, and counters of what each device saw.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backend/backend.h"
#include "engine/encoder.h"

namespace infercost::engine {

// One fake device: its behaviour, and what its backends saw (every stream of
// the device shares it).
struct FakeDevice {
  std::string name;
  bool can_fork = true;
  bool sleeps = true;
  // Batches computing more tokens than this are out of memory; 0: none are.
  int64_t oom_above = 0;
  // The call (1-based, counted over the device) that fails with kInternal; 0: none.
  int64_t fail_at_call = 0;
  // Errors name the device, as the CUDA backend's do ("cuda:0: classify: ...").
  bool names_errors = false;
  // Microseconds each forward() sleeps when `sleeps`; -1: a random 0..399.
  // (Sleeps only mix up the order in which batches end: what a test checks
  // must not depend on how long they are.)
  int sleep_us = -1;
  // Called by each forward() call that classifies (not one that fails or is
  // out of memory) with its number over the device (1-based), before it
  // sleeps, outside the device's lock: a test acts at a given batch.
  std::function<void(int64_t call)> on_call;
  // capacity(max_length): capacity_at[max_length] where given, else
  // `capacity` (max_tokens 0: the Backend default).
  backend::BatchCapacity capacity;
  std::map<int, backend::BatchCapacity> capacity_at;
  Status capacity_error;  // returned by capacity() when set

  std::mutex mu;
  int64_t calls = 0, ooms = 0, streams = 0;
  int64_t smallest_oom = std::numeric_limits<int64_t>::max();
  // Calls made after an out-of-memory error on a batch at least as large:
  // what a runner that keeps the limit it learned never makes.
  int64_t calls_above_learned_limit = 0;
  // forward() calls that began while another call on the same backend was
  // running: what the Backend contract (one batch at a time per object) forbids.
  int64_t overlapping_calls = 0;
  int max_rows_seen = 0;
  int64_t max_computed_seen = 0;
  std::vector<int> capacity_lengths;  // max_length of each capacity() call
  // When `record`: the lengths of each batch classified, and its seq_len and compute_padding.
  bool record = false;
  std::vector<std::vector<int32_t>> lengths_seen;
  std::vector<int> seq_len_seen;
  std::vector<bool> compute_padding_seen;
};

// forward() calls running at once (those of devices that sleep), over every
// fake device.
inline std::atomic<int> g_running{0};
inline std::atomic<int> g_most_running{0};

// A meeting of sleeping forward() calls: after meet_at(n), the first calls
// wait for each other until n of them run at once, then all go on (and later
// calls do not wait). A test that checks that n batches can run at once
// (g_most_running) thus does not depend on how long a batch takes. A call
// stops waiting after minutes, so that a pipeline that never runs n batches
// at once fails that check instead of hanging.
inline std::mutex g_meet_mu;
inline std::condition_variable g_meet_cv;
inline int g_meet_at = 0;
inline void meet_at(int n) {
  std::lock_guard<std::mutex> lock(g_meet_mu);
  g_meet_at = n;
}
inline void meet(int running) {
  std::unique_lock<std::mutex> lock(g_meet_mu);
  if (g_meet_at <= 0) return;
  if (running < g_meet_at &&
      g_meet_cv.wait_for(lock, std::chrono::minutes(2), [] { return g_meet_at <= 0; })) {
    return;
  }
  g_meet_at = 0;  // met (or given up)
  g_meet_cv.notify_all();
}

// ForwardOutput that depend on nothing but the row's own ids and length, so every
// batching and every worker gives bit-identical outputs.
inline void row_logits(const int32_t* ids, int length, int labels, float* out) {
  uint64_t h = 1469598103934665603ull ^ static_cast<uint64_t>(length);
  for (int p = 0; p < length; ++p) h = (h ^ static_cast<uint32_t>(ids[p])) * 1099511628211ull;
  for (int l = 0; l < labels; ++l) {
    h = h * 6364136223846793005ull + 1442695040888963407ull;
    out[l] = static_cast<float>((h >> 33) % 10000) / 1000.0f - 5.0f;
  }
}

class FakeBackend : public backend::Backend {
 public:
  explicit FakeBackend(std::shared_ptr<FakeDevice> device) : device_(std::move(device)) {
    std::lock_guard<std::mutex> lock(device_->mu);
    ++device_->streams;
  }
  std::string name() const override { return "fake"; }
  backend::Precision precision() const override { return backend::Precision::kFp32; }
  bool skips_padding() const override { return true; }
  Status prepare(const model::ModelConfig& config, const model::EncoderWeights&) override {
    labels_ = config.num_labels();
    return Status();
  }
  Result<backend::ForwardOutput> forward(const backend::TokenBatch& batch) override {
    if (batch.ids.size() != static_cast<size_t>(batch.batch) * batch.seq_len ||
        batch.lengths.size() != static_cast<size_t>(batch.batch)) {
      return internal_error("malformed batch");
    }
    const int64_t computed = batch.compute_padding ? batch.padded_tokens() : batch.real_tokens();
    struct InUse {
      std::atomic<bool>& flag;
      ~InUse() { flag.store(false); }
    };
    if (in_use_.exchange(true)) {
      std::lock_guard<std::mutex> lock(device_->mu);
      ++device_->overlapping_calls;
    }
    InUse in_use{in_use_};
    int64_t call = 0;
    std::function<void(int64_t)> on_call;
    {
      FakeDevice& d = *device_;
      std::lock_guard<std::mutex> lock(d.mu);
      call = ++d.calls;
      on_call = d.on_call;
      if (computed >= d.smallest_oom) ++d.calls_above_learned_limit;
      if (d.fail_at_call > 0 && d.calls == d.fail_at_call) {
        return internal_error(d.names_errors ? d.name + ": classify: the fake device broke"
                                             : "the fake device broke");
      }
      if (d.oom_above > 0 && computed > d.oom_above) {
        ++d.ooms;
        d.smallest_oom = std::min(d.smallest_oom, computed);
        return resource_exhausted("fake: out of memory");
      }
      d.max_rows_seen = std::max(d.max_rows_seen, batch.batch);
      if (d.record) {
        d.lengths_seen.push_back(batch.lengths);
        d.seq_len_seen.push_back(batch.seq_len);
        d.compute_padding_seen.push_back(batch.compute_padding);
      }
      d.max_computed_seen = std::max(d.max_computed_seen, computed);
    }
    if (on_call) on_call(call);
    if (device_->sleeps) {
      const int now = ++g_running;
      int most = g_most_running.load();
      while (now > most && !g_most_running.compare_exchange_weak(most, now)) {
      }
      meet(now);
      thread_local std::mt19937 rng(std::hash<std::thread::id>()(std::this_thread::get_id()));
      const int us = device_->sleep_us >= 0 ? device_->sleep_us : static_cast<int>(rng() % 400);
      std::this_thread::sleep_for(std::chrono::microseconds(us));
      --g_running;
    }
    backend::ForwardOutput logits;
    logits.rows = batch.batch;
    logits.width = labels_;
    logits.values.resize(static_cast<size_t>(batch.batch) * labels_);
    for (int r = 0; r < batch.batch; ++r) {
      if (batch.lengths[r] < 1 || batch.lengths[r] > batch.seq_len) return internal_error("bad length");
      row_logits(batch.ids.data() + static_cast<size_t>(r) * batch.seq_len, batch.lengths[r], labels_,
                 logits.values.data() + static_cast<size_t>(r) * labels_);
    }
    return logits;
  }
  Result<backend::BatchCapacity> capacity(int max_length) override {
    std::lock_guard<std::mutex> lock(device_->mu);
    device_->capacity_lengths.push_back(max_length);
    if (!device_->capacity_error.ok()) return device_->capacity_error;
    auto at = device_->capacity_at.find(max_length);
    if (at != device_->capacity_at.end()) return at->second;
    if (device_->capacity.max_tokens == 0) return Backend::capacity(max_length);
    return device_->capacity;
  }
  Result<std::unique_ptr<backend::Backend>> fork() override {
    if (!device_->can_fork) return Backend::fork();
    auto other = std::make_unique<FakeBackend>(device_);
    other->labels_ = labels_;
    return std::unique_ptr<backend::Backend>(std::move(other));
  }

 private:
  std::shared_ptr<FakeDevice> device_;
  int labels_ = 0;
  std::atomic<bool> in_use_{false};
};

// Fake devices "cuda:0".."cuda:N-1" for --device cuda:all.
struct FakeMachine {
  std::vector<std::shared_ptr<FakeDevice>> devices;

  explicit FakeMachine(int n) {
    for (int i = 0; i < n; ++i) {
      devices.push_back(std::make_shared<FakeDevice>());
      devices.back()->name = "cuda:" + std::to_string(i);
    }
  }
  // --device cuda:all: pass factory() to the run or classifier with it.
  void install(ModelOptions& o) const { o.device = "cuda:all"; }
  BackendFactory factory() const {
    BackendFactory f;
    const auto devs = devices;
    f.resolve_devices = [devs](const backend::DeviceSpec& spec) -> Result<std::vector<std::string>> {
      if (spec.kind != "cuda" || !spec.all) return invalid_argument("the fake machine runs cuda:all only");
      std::vector<std::string> names;
      for (const auto& d : devs) names.push_back(d->name);
      return names;
    };
    f.create_backend = [devs](const std::string& name,
                              const backend::BackendOptions&) -> Result<std::unique_ptr<backend::Backend>> {
      for (const auto& d : devs) {
        if (d->name == name) return std::unique_ptr<backend::Backend>(std::make_unique<FakeBackend>(d));
      }
      return not_found("no fake device " + name);
    };
    return f;
  }
};

}  // namespace infercost::engine
