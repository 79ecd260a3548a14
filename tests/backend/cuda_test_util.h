// Token rows and batches for the CUDA backend's tests (the host, emulated and
// GPU suites), and a backend prepared or the reason it is not.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "backend/backend.h"
#include "model/config.h"
#include "model/weights.h"

namespace infercost::backend::testing {

using Rows = std::vector<std::vector<int32_t>>;

// `n` rows of random ids below `vocab` with lengths drawn from [min_len, max_len].
inline Rows random_rows(int n, int min_len, int max_len, int vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  Rows rows;
  for (int i = 0; i < n; ++i) {
    const int len = min_len + int(rng() % uint32_t(max_len - min_len + 1));
    std::vector<int32_t> r(static_cast<size_t>(len));
    for (int32_t& id : r) id = int32_t(rng() % uint32_t(vocab));
    rows.push_back(std::move(r));
  }
  return rows;
}

// Rows [begin, end) of `rows`, right-padded with `pad` to `seq_len` (0: to
// the longest of them).
inline TokenBatch batch_of(const Rows& rows, size_t begin, size_t end, bool compute_padding = false,
                           int32_t pad = 0, int seq_len = 0) {
  TokenBatch b;
  b.batch = int(end - begin);
  b.seq_len = seq_len;
  for (size_t i = begin; i < end && seq_len == 0; ++i) b.seq_len = std::max(b.seq_len, int(rows[i].size()));
  for (size_t i = begin; i < end; ++i) {
    b.lengths.push_back(int32_t(rows[i].size()));
    b.ids.insert(b.ids.end(), rows[i].begin(), rows[i].end());
    b.ids.insert(b.ids.end(), size_t(b.seq_len) - rows[i].size(), pad);
  }
  b.compute_padding = compute_padding;
  return b;
}

// All of `rows`, padded with `pad` to `seq_len`.
inline TokenBatch make_batch(const Rows& rows, int seq_len, int32_t pad = 0) {
  return batch_of(rows, 0, rows.size(), false, pad, seq_len);
}

// `made`, prepared with the model; null (and a test failure saying why)
// where either step fails.
inline std::unique_ptr<Backend> prepared_or_null(Result<std::unique_ptr<Backend>> made,
                                                 const model::ModelConfig& config,
                                                 const model::EncoderWeights& weights) {
  EXPECT_TRUE(made.ok()) << made.status().to_string();
  if (!made.ok()) return nullptr;
  std::unique_ptr<Backend> backend = std::move(made).value();
  const Status st = backend->prepare(config, weights);
  EXPECT_TRUE(st.ok()) << backend->name() << ": " << st.to_string();
  return st.ok() ? std::move(backend) : nullptr;
}

}  // namespace infercost::backend::testing
