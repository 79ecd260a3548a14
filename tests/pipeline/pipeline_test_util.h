// Helpers shared by the pipeline test suites.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <string>

#include "model/synth.h"
#include "run/runner.h"
#include "test_utils.h"

namespace infercost::run {

// Synthesizes the tiny preset with `seed` into dir/tiny (deterministic).
inline void make_tiny_model(const testing::TempDir& dir, uint64_t seed) {
  model::SynthOptions synth;
  synth.out_dir = dir.file("tiny");
  synth.preset = "tiny";
  synth.seed = seed;
  Status s = model::synthesize_model(synth);
  ASSERT_TRUE(s.ok()) << s.to_string();
}

// run_files on its own thread. A run still going after 5 minutes
// (a guard against a hang, far beyond these runs on a slow, busy machine
// under ASan) hangs: the test binary then stops at once with that message,
// since the stuck threads could never be joined.
inline Result<RunMetrics> run_or_abort_on_hang(const RunOptions& options,
                                               const BackendFactory& factory = {}) {
  auto future = std::async(std::launch::async, [options, factory] { return run_files(options, factory); });
  if (future.wait_for(std::chrono::minutes(5)) != std::future_status::ready) {
    std::fprintf(stderr, "FATAL: run_files did not finish within 5 minutes: the run hangs\n");
    std::fflush(stderr);
    std::abort();
  }
  return future.get();
}

}  // namespace infercost::run
