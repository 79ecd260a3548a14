#include "engine/batching.h"

#include <algorithm>
#include <thread>

namespace infercost::engine {

const char* batching_name(Batching batching) {
  switch (batching) {
    case Batching::kTokens: return "tokens";
    case Batching::kSeed: return "seed";
  }
  return "?";
}

Result<Batching> parse_batching(const std::string& name) {
  for (Batching b : {Batching::kTokens, Batching::kSeed}) {
    if (name == batching_name(b)) return b;
  }
  return invalid_argument("unknown batching '" + name + "' (accepted: tokens, seed)");
}

void tokenize_rows(const text::Tokenizer& tokenizer, std::span<const std::string_view> texts,
                   std::span<const uint8_t> is_null, int threads, TokenizedRows& out) {
  const size_t n = texts.size();
  INFERCOST_CHECK(is_null.empty() || is_null.size() == n);
  out.ids.assign(n, {});
  out.errors.assign(n, Status());
  auto work = [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      if (!is_null.empty() && is_null[i]) continue;
      Result<size_t> r = tokenizer.encode_append(texts[i], out.ids[i]);
      if (!r.ok()) {
        out.errors[i] = r.status();
        out.ids[i].clear();
      }
    }
  };
  // Below a few hundred rows per thread, starting threads costs more than it saves.
  constexpr size_t kMinRowsPerThread = 256;
  const size_t parts =
      std::min<size_t>(static_cast<size_t>(std::max(1, threads)), std::max<size_t>(1, n / kMinRowsPerThread));
  if (parts <= 1) {
    work(0, n);
    return;
  }
  std::vector<std::thread> pool;
  const size_t step = (n + parts - 1) / parts;
  for (size_t p = 1; p < parts; ++p) {
    const size_t begin = std::min(n, p * step), end = std::min(n, begin + step);
    pool.emplace_back(work, begin, end);
  }
  work(0, std::min(n, step));
  for (std::thread& t : pool) t.join();
}

std::vector<std::vector<int32_t>> pack_by_tokens(const BatchPolicy& policy,
                                                 const std::vector<std::vector<int32_t>>& ids,
                                                 std::span<const int32_t> rows) {
  std::vector<int32_t> sorted(rows.begin(), rows.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [&](int32_t a, int32_t b) { return ids[a].size() < ids[b].size(); });
  const size_t max_rows = static_cast<size_t>(std::max(1, policy.batch_size));
  const int64_t budget = policy.max_batch_tokens;
  std::vector<std::vector<int32_t>> out;
  size_t begin = 0;
  while (begin < sorted.size()) {
    // Ascending lengths: the row being added is the batch's longest.
    size_t end = begin + 1;
    while (end < sorted.size() && end - begin < max_rows &&
           static_cast<int64_t>(end - begin + 1) * static_cast<int64_t>(ids[sorted[end]].size()) <= budget) {
      ++end;
    }
    out.emplace_back(sorted.begin() + static_cast<ptrdiff_t>(begin),
                     sorted.begin() + static_cast<ptrdiff_t>(end));
    begin = end;
  }
  return out;
}

backend::TokenBatch make_token_batch(std::span<const std::span<const int32_t>> rows, int seq_len,
                                     bool compute_padding, int32_t pad_id) {
  backend::TokenBatch t;
  t.batch = static_cast<int>(rows.size());
  for (std::span<const int32_t> row : rows) seq_len = std::max<int>(seq_len, static_cast<int>(row.size()));
  t.seq_len = seq_len;
  t.compute_padding = compute_padding;
  t.ids.assign(rows.size() * static_cast<size_t>(seq_len), pad_id);
  t.lengths.resize(rows.size());
  for (size_t b = 0; b < rows.size(); ++b) {
    std::copy(rows[b].begin(), rows[b].end(), t.ids.begin() + static_cast<ptrdiff_t>(b * seq_len));
    t.lengths[b] = static_cast<int32_t>(rows[b].size());
  }
  return t;
}

namespace {

backend::TokenBatch token_rows(const backend::TokenBatch& from, int begin, int end) {
  backend::TokenBatch t;
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
  return t;
}

}  // namespace

std::pair<backend::TokenBatch, backend::TokenBatch> split_token_batch(const backend::TokenBatch& batch) {
  const int n = batch.batch;
  INFERCOST_CHECK(n >= 2);
  const int mid = (n + 1) / 2;
  return {token_rows(batch, 0, mid), token_rows(batch, mid, n)};
}

}  // namespace infercost::engine
