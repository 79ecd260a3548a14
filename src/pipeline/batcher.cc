#include "pipeline/batcher.h"

#include <algorithm>

namespace infercost::pipeline {

namespace {

Batch batch_rows(const Batch& batch, int begin, int end) {
  const backend::TokenBatch& from = batch.tokens;
  Batch half;
  backend::TokenBatch& t = half.tokens;
  t.batch = end - begin;
  t.compute_padding = from.compute_padding;
  t.seq_len = 0;
  for (int r = begin; r < end; ++r) t.seq_len = std::max(t.seq_len, from.lengths[static_cast<size_t>(r)]);
  if (from.compute_padding) t.seq_len = from.seq_len;
  t.ids.resize(static_cast<size_t>(t.batch) * static_cast<size_t>(t.seq_len));
  t.lengths.assign(from.lengths.begin() + begin, from.lengths.begin() + end);
  for (int r = begin; r < end; ++r) {
    const auto row = from.ids.begin() + static_cast<ptrdiff_t>(r) * from.seq_len;
    // Real tokens, then the batcher's own padding: seq_len never grows.
    std::copy(row, row + t.seq_len, t.ids.begin() + static_cast<ptrdiff_t>(r - begin) * t.seq_len);
  }
  half.targets.assign(batch.targets.begin() + begin, batch.targets.begin() + end);
  for (const std::shared_ptr<Window>& window : batch.windows) {
    for (const Batch::Target& target : half.targets) {
      if (target.window == window.get()) {
        half.windows.push_back(window);
        break;
      }
    }
  }
  return half;
}

}  // namespace

std::pair<Batch, Batch> split_batch(const Batch& batch) {
  const int n = batch.tokens.batch;
  INFERCOST_CHECK(n >= 2 && batch.targets.size() == static_cast<size_t>(n));
  const int mid = (n + 1) / 2;
  return {batch_rows(batch, 0, mid), batch_rows(batch, mid, n)};
}

void Batcher::begin_file(int seq_len) {
  pending_.clear();
  file_seq_len_ = seq_len;
}

void Batcher::emit(const std::vector<Pending>& rows, size_t begin, size_t end, int seq_len,
                   bool compute_padding, std::vector<Batch>& out) const {
  Batch batch;
  backend::TokenBatch& t = batch.tokens;
  t.batch = static_cast<int>(end - begin);
  // A row longer than the file's scanned maximum cannot happen (same texts,
  // same tokenizer), but never let seq_len cut a row.
  for (size_t k = begin; k < end; ++k) {
    seq_len = std::max<int>(seq_len, static_cast<int>(rows[k].window->ids[rows[k].row].size()));
  }
  t.seq_len = seq_len;
  t.compute_padding = compute_padding;
  t.ids.assign(static_cast<size_t>(t.batch) * static_cast<size_t>(seq_len), policy_.pad_id);
  t.lengths.resize(static_cast<size_t>(t.batch));
  batch.targets.reserve(end - begin);
  for (size_t k = begin; k < end; ++k) {
    const std::vector<int32_t>& ids = rows[k].window->ids[rows[k].row];
    const size_t b = k - begin;
    std::copy(ids.begin(), ids.end(), t.ids.begin() + static_cast<ptrdiff_t>(b * seq_len));
    t.lengths[b] = static_cast<int32_t>(ids.size());
    batch.targets.push_back({rows[k].window.get(), rows[k].row});
    if (batch.windows.empty() || batch.windows.back() != rows[k].window)
      batch.windows.push_back(rows[k].window);
  }
  out.push_back(std::move(batch));
}

void Batcher::add(const std::shared_ptr<Window>& window, const std::vector<int32_t>& rows,
                  std::vector<Batch>& out) {
  const size_t max_rows = static_cast<size_t>(std::max(1, policy_.batch_size));
  if (policy_.batching == Batching::kSeed) {
    for (int32_t row : rows) {
      pending_.push_back({window, row});
      if (pending_.size() == max_rows) {
        emit(pending_, 0, pending_.size(), file_seq_len_, true, out);
        pending_.clear();
      }
    }
    return;
  }
  std::vector<Pending> sorted;
  sorted.reserve(rows.size());
  for (int32_t row : rows) sorted.push_back({window, row});
  std::stable_sort(sorted.begin(), sorted.end(), [&](const Pending& a, const Pending& b) {
    return window->ids[a.row].size() < window->ids[b.row].size();
  });
  const int64_t budget = policy_.max_batch_tokens;
  size_t begin = 0;
  while (begin < sorted.size()) {
    // Ascending lengths: the row being added is the batch's longest.
    size_t end = begin + 1;
    while (end < sorted.size() && end - begin < max_rows &&
           static_cast<int64_t>(end - begin + 1) *
                   static_cast<int64_t>(window->ids[sorted[end].row].size()) <=
               budget) {
      ++end;
    }
    emit(sorted, begin, end, 0, false, out);
    begin = end;
  }
}

void Batcher::end_file(std::vector<Batch>& out) {
  if (!pending_.empty()) emit(pending_, 0, pending_.size(), file_seq_len_, true, out);
  pending_.clear();
}

}  // namespace infercost::pipeline
