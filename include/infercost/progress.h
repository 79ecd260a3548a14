// How far a run has got, as counters the run's threads update while it runs
// and anyone may read at any time (a progress line, a notebook widget).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace infercost {

struct RunProgress {
  // Set once the model is loaded and rows start to flow (steady clock, ns
  // since its epoch); 0 before.
  std::atomic<int64_t> started_ns{0};
  // Rows whose outcome is final: classified by a worker, or null / skipped as
  // bad (nothing to compute). Under --batching seed the first pass that scans
  // a file for its longest row counts nothing.
  std::atomic<int64_t> rows_done{0};
  // Rows an earlier run of a resumed job had done (not in rows_done).
  std::atomic<int64_t> rows_resumed{0};
  std::atomic<int64_t> tokens_done{0};  // real tokens of the rows classified
  std::atomic<int64_t> rows_written{0};
  // Rows and input bytes read so far (the real pass), for the bytes a row
  // takes when the total number of rows is not known.
  std::atomic<int64_t> rows_read{0};
  std::atomic<uint64_t> bytes_read{0};
  // Known before the first row is read: the input files' sizes, and their
  // rows where every input states its count (Parquet footers); -1 otherwise.
  std::atomic<uint64_t> bytes_total{0};
  std::atomic<int64_t> rows_total{-1};

  double seconds_running() const {
    const int64_t start = started_ns.load();
    if (start == 0) return 0;
    const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
    return static_cast<double>(now - start) * 1e-9;
  }
  // The rows the run will have done at its end: rows_total where known, else
  // estimated from the bytes a row has taken so far; -1 before any row is read.
  double rows_expected() const {
    const int64_t total = rows_total.load();
    if (total >= 0) return static_cast<double>(total);
    const int64_t rows = rows_read.load();
    const uint64_t bytes = bytes_read.load();
    if (rows <= 0 || bytes == 0) return -1;
    return static_cast<double>(rows) * static_cast<double>(bytes_total.load()) / static_cast<double>(bytes);
  }
};

}  // namespace infercost
