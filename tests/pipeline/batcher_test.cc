#include "run/batcher.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace infercost::run {
namespace {

// A window whose row r has lengths[r] ids, each id = 1000 * r + position.
std::shared_ptr<Window> window_of(const std::vector<int>& lengths) {
  auto w = std::make_shared<Window>();
  for (size_t r = 0; r < lengths.size(); ++r) {
    w->rows.add("x", false, static_cast<int64_t>(r + 1));
    std::vector<int32_t> ids(static_cast<size_t>(lengths[r]));
    std::iota(ids.begin(), ids.end(), static_cast<int32_t>(1000 * r));
    w->ids.push_back(std::move(ids));
  }
  return w;
}

std::vector<int32_t> all_rows(const Window& w) {
  std::vector<int32_t> rows(w.ids.size());
  std::iota(rows.begin(), rows.end(), 0);
  return rows;
}

// The kTokens batches of every row of `w` (pad id -1); the batcher keeps no row.
std::vector<Batch> tokens_batches(const std::shared_ptr<Window>& w, int batch_size, int max_batch_tokens) {
  BatchPolicy policy;
  policy.batch_size = batch_size;
  policy.max_batch_tokens = max_batch_tokens;
  policy.pad_id = -1;
  Batcher batcher(policy);
  std::vector<Batch> out;
  batcher.add(w, all_rows(*w), out);
  EXPECT_FALSE(batcher.holds_rows());
  return out;
}

// Every batch's rows hold their own ids then pad_id up to seq_len.
void expect_well_formed(const Batch& b, int32_t pad_id) {
  const backend::TokenBatch& t = b.tokens;
  ASSERT_EQ(t.ids.size(), static_cast<size_t>(t.batch) * t.seq_len);
  ASSERT_EQ(b.targets.size(), static_cast<size_t>(t.batch));
  for (int r = 0; r < t.batch; ++r) {
    const std::vector<int32_t>& ids = b.targets[r].window->ids[b.targets[r].row];
    ASSERT_EQ(t.lengths[r], static_cast<int32_t>(ids.size()));
    for (int p = 0; p < t.seq_len; ++p) {
      EXPECT_EQ(t.ids[static_cast<size_t>(r) * t.seq_len + p], p < t.lengths[r] ? ids[p] : pad_id);
    }
  }
}

TEST(Batcher, TokensPacksSortedRowsWithinBothLimits) {
  const std::vector<int> lengths = {9, 3, 30, 3, 12, 5, 7, 2, 11, 4, 6, 8, 3, 10, 5};
  auto w = window_of(lengths);
  const std::vector<Batch> out = tokens_batches(w, 4, 24);
  std::vector<int> seen(lengths.size(), 0);
  int previous_longest = 0;
  std::vector<int32_t> order;
  for (const Batch& b : out) {
    expect_well_formed(b, -1);
    EXPECT_FALSE(b.tokens.compute_padding);
    EXPECT_LE(b.tokens.batch, 4);
    const int longest = *std::max_element(b.tokens.lengths.begin(), b.tokens.lengths.end());
    EXPECT_EQ(b.tokens.seq_len, longest);
    if (b.tokens.batch > 1) {
      EXPECT_LE(b.tokens.batch * longest, 24);
    }
    EXPECT_GE(b.tokens.lengths.front(), previous_longest);  // sorted across batches
    previous_longest = longest;
    for (const Batch::Target& t : b.targets) {
      ++seen[t.row];
      order.push_back(t.row);
    }
  }
  for (size_t r = 0; r < seen.size(); ++r) EXPECT_EQ(seen[r], 1) << "row " << r;
  // Stable: the three rows of length 3 keep input order (1, 3, 12).
  auto pos = [&](int32_t row) { return std::find(order.begin(), order.end(), row) - order.begin(); };
  EXPECT_LT(pos(1), pos(3));
  EXPECT_LT(pos(3), pos(12));
  // Greedy over sorted lengths: 2,3,3,3 (row cap) | 4,5,5,6 (4 x 6 = 24) | 7,8
  // (3 x 9 > 24) | 9,10 | 11,12 | 30 (alone: over the budget).
  const std::vector<int> sizes = {4, 4, 2, 2, 2, 1};
  ASSERT_EQ(out.size(), sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) EXPECT_EQ(out[i].tokens.batch, sizes[i]) << i;
  // The 30-token row exceeds the budget and runs alone, last.
  EXPECT_EQ(out.back().tokens.batch, 1);
  EXPECT_EQ(out.back().tokens.seq_len, 30);
}

TEST(Batcher, TokensRowCapAndBudgetEachBind) {
  auto w = window_of(std::vector<int>(10, 8));
  BatchPolicy policy;
  policy.batch_size = 100;
  policy.max_batch_tokens = 24;  // 3 rows of 8
  Batcher batcher(policy);
  std::vector<Batch> out;
  batcher.add(w, all_rows(*w), out);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].tokens.batch, 3);
  EXPECT_EQ(out[3].tokens.batch, 1);
  policy.batch_size = 2;
  policy.max_batch_tokens = 4096;
  Batcher capped(policy);
  out.clear();
  capped.add(w, all_rows(*w), out);
  ASSERT_EQ(out.size(), 5u);
  for (const Batch& b : out) EXPECT_EQ(b.tokens.batch, 2);
}

TEST(Batcher, TokensOnlyGivenRows) {
  auto w = window_of({4, 5, 6, 7});
  BatchPolicy policy;
  Batcher batcher(policy);
  std::vector<Batch> out;
  batcher.add(w, {0, 2}, out);  // rows 1 and 3 are null or dropped
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].targets.size(), 2u);
  EXPECT_EQ(out[0].targets[0].row, 0);
  EXPECT_EQ(out[0].targets[1].row, 2);
}

TEST(Batcher, SeedKeepsInputOrderPadsToTheFileMaxAcrossWindows) {
  BatchPolicy policy;
  policy.batching = Batching::kSeed;
  policy.batch_size = 3;
  policy.pad_id = 0;
  Batcher batcher(policy);
  batcher.begin_file(20);
  auto a = window_of({5, 9, 2, 7});
  auto b = window_of({3, 4, 6});
  std::vector<Batch> out;
  batcher.add(a, all_rows(*a), out);
  ASSERT_EQ(out.size(), 1u);  // rows a0..a2; a3 waits for the next window
  EXPECT_TRUE(batcher.holds_rows());
  batcher.add(b, all_rows(*b), out);
  ASSERT_EQ(out.size(), 2u);  // a3, b0, b1
  batcher.end_file(out);      // b2 alone
  ASSERT_EQ(out.size(), 3u);
  EXPECT_FALSE(batcher.holds_rows());
  const std::vector<std::pair<Window*, int>> expected = {
      {a.get(), 0}, {a.get(), 1}, {a.get(), 2}, {a.get(), 3}, {b.get(), 0}, {b.get(), 1}, {b.get(), 2}};
  size_t k = 0;
  for (const Batch& batch : out) {
    expect_well_formed(batch, 0);
    EXPECT_TRUE(batch.tokens.compute_padding);
    EXPECT_EQ(batch.tokens.seq_len, 20);
    EXPECT_EQ(batch.tokens.padded_tokens(), batch.tokens.batch * 20);
    for (const Batch::Target& t : batch.targets) {
      ASSERT_LT(k, expected.size());
      EXPECT_EQ(t.window, expected[k].first);
      EXPECT_EQ(t.row, expected[k].second);
      ++k;
    }
  }
  EXPECT_EQ(k, expected.size());
  EXPECT_EQ(out[1].windows.size(), 2u);  // keeps both windows alive
  EXPECT_EQ(out[0].tokens.batch, 3);
  EXPECT_EQ(out[2].tokens.batch, 1);
  // A new file restarts the count.
  batcher.begin_file(6);
  out.clear();
  batcher.add(b, {0, 1}, out);
  EXPECT_TRUE(out.empty());
  batcher.end_file(out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tokens.seq_len, 6);
}

// Every row of `t` holds `rows[r]` then pad_id up to seq_len.
void expect_rows(const backend::TokenBatch& t, const std::vector<std::vector<int32_t>>& rows,
                 int32_t pad_id) {
  ASSERT_EQ(t.batch, static_cast<int>(rows.size()));
  ASSERT_EQ(t.ids.size(), static_cast<size_t>(t.batch) * t.seq_len);
  for (int r = 0; r < t.batch; ++r) {
    const std::vector<int32_t>& ids = rows[static_cast<size_t>(r)];
    ASSERT_EQ(t.lengths[r], static_cast<int32_t>(ids.size()));
    for (int p = 0; p < t.seq_len; ++p) {
      EXPECT_EQ(t.ids[static_cast<size_t>(r) * t.seq_len + p], p < t.lengths[r] ? ids[p] : pad_id)
          << r << " " << p;
    }
  }
}

TEST(SplitTokenBatch, HalvesKeepTheirRowsAndShrinkToTheirLongestRow) {
  // Sorted by length, as tokens batching makes them: 2 3 5 | 7 12.
  auto w = window_of({7, 3, 12, 2, 5});
  const std::vector<Batch> out = tokens_batches(w, 8, 1000);
  ASSERT_EQ(out.size(), 1u);
  const backend::TokenBatch& whole = out[0].tokens;
  ASSERT_EQ(whole.seq_len, 12);
  auto [first, second] = split_token_batch(whole);
  expect_rows(first, {w->ids[3], w->ids[1], w->ids[4]}, -1);  // the odd row goes to the first half
  expect_rows(second, {w->ids[0], w->ids[2]}, -1);
  EXPECT_EQ(first.seq_len, 5);
  EXPECT_EQ(second.seq_len, 12);
  EXPECT_FALSE(first.compute_padding);
  EXPECT_EQ(first.real_tokens() + second.real_tokens(), whole.real_tokens());
  // Down to single rows, recursively.
  auto [a, b] = split_token_batch(second);
  expect_rows(a, {w->ids[0]}, -1);
  expect_rows(b, {w->ids[2]}, -1);
  EXPECT_EQ(a.seq_len, 7);
  EXPECT_EQ(b.seq_len, 12);
}

TEST(SplitTokenBatch, ComputedPaddingKeepsTheSeqLen) {
  // A seed batch across two windows, padded to the file's longest row (20).
  auto a = window_of({3, 4});
  auto b = window_of({6, 2, 5});
  BatchPolicy policy;
  policy.batching = Batching::kSeed;
  policy.batch_size = 5;
  Batcher batcher(policy);
  batcher.begin_file(20);
  std::vector<Batch> out;
  batcher.add(a, all_rows(*a), out);
  batcher.add(b, all_rows(*b), out);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].windows.size(), 2u);
  auto [first, second] = split_token_batch(out[0].tokens);
  for (const backend::TokenBatch* half : {&first, &second}) {
    EXPECT_TRUE(half->compute_padding);
    EXPECT_EQ(half->seq_len, 20);
  }
  expect_rows(first, {a->ids[0], a->ids[1], b->ids[0]}, 0);
  expect_rows(second, {b->ids[1], b->ids[2]}, 0);
}

TEST(PackByTokens, IsWhatTheBatcherPacks) {
  const std::vector<int> lengths = {9, 3, 30, 3, 12, 5, 7, 2, 11, 4, 6, 8, 3, 10, 5};
  auto w = window_of(lengths);
  BatchPolicy policy;
  policy.batch_size = 4;
  policy.max_batch_tokens = 24;
  const std::vector<int32_t> rows = all_rows(*w);
  const std::vector<std::vector<int32_t>> packed = pack_by_tokens(policy, w->ids, rows);
  const std::vector<Batch> batches = tokens_batches(w, 4, 24);
  ASSERT_EQ(packed.size(), batches.size());
  for (size_t i = 0; i < packed.size(); ++i) {
    ASSERT_EQ(packed[i].size(), batches[i].targets.size()) << i;
    for (size_t k = 0; k < packed[i].size(); ++k) EXPECT_EQ(packed[i][k], batches[i].targets[k].row);
  }
  EXPECT_TRUE(pack_by_tokens(policy, w->ids, {}).empty());
}

}  // namespace
}  // namespace infercost::run
