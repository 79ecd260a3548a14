// How rows become backend batches: the batching policies and their defaults,
// and the tokenize-and-batch half of classification (tokenize_rows,
// pack_by_tokens, make_token_batch) that Encoder::classify, the file
// runner and `infercost plan` share, so their batches are the same.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "infercost/options.h"  // Batching and its defaults
#include "infercost/status.h"
#include "text/tokenizer.h"

namespace infercost::engine {

const char* batching_name(Batching batching);
Result<Batching> parse_batching(const std::string& name);  // "tokens", "seed"

// Resolved batching parameters.
struct BatchPolicy {
  Batching batching = Batching::kTokens;
  int batch_size = kDefaultTokensBatchSize;       // most rows per batch
  int max_batch_tokens = kDefaultMaxBatchTokens;  // kTokens: most rows x longest row per batch
  int32_t pad_id = 0;
};

// Token ids of rows, one entry per row.
struct TokenizedRows {
  std::vector<std::vector<int32_t>> ids;  // empty for a null row and for one the tokenizer refused
  std::vector<Status> errors;             // why the tokenizer refused a row; OK otherwise
};

// Tokenizes every row of `texts` whose is_null flag is 0 (`is_null` empty:
// none is null; otherwise one flag per text) into out.ids / out.errors,
// resized to texts.size(). Spread over up to `threads` threads (0 or 1: the
// calling thread), each with at least a few hundred rows. `tokenizer` is
// const and thread-safe; the views are read during the call only.
void tokenize_rows(const text::Tokenizer& tokenizer, std::span<const std::string_view> texts,
                   std::span<const uint8_t> is_null, int threads, TokenizedRows& out);

// kTokens packing. `rows` (indices into `ids`, none of them empty) are stably
// sorted by token length and packed greedily: a batch grows while its rows
// <= policy.batch_size and rows x longest <= policy.max_batch_tokens; a row
// longer than the budget forms its own batch. Returns each batch's rows in
// batch order (ascending length).
std::vector<std::vector<int32_t>> pack_by_tokens(const BatchPolicy& policy,
                                                 const std::vector<std::vector<int32_t>>& ids,
                                                 std::span<const int32_t> rows);

// Rows per kSeed batch: policy.batch_size, at least 1.
inline size_t seed_batch_rows(const BatchPolicy& policy) {
  return static_cast<size_t>(policy.batch_size > 1 ? policy.batch_size : 1);
}

// kSeed's batches of `rows` (the study's method): in input order,
// seed_batch_rows(policy) rows each, the last one short where they do not
// divide evenly. Views of `rows`.
template <typename Row>
std::vector<std::span<const Row>> batches_in_order(const BatchPolicy& policy, std::span<const Row> rows) {
  const size_t size = seed_batch_rows(policy);
  std::vector<std::span<const Row>> out;
  for (size_t b = 0; b < rows.size(); b += size)
    out.push_back(rows.subspan(b, std::min(size, rows.size() - b)));
  return out;
}

// The right-padded batch of `rows` (batch row k holds rows[k], each 1 or more
// ids), padded with pad_id to seq_len, or to the longest row when that is
// longer (seq_len never cuts a row).
backend::TokenBatch make_token_batch(std::span<const std::span<const int32_t>> rows, int seq_len,
                                     bool compute_padding, int32_t pad_id);

// Splits a batch of two or more rows by rows into its first ceil(n/2) and
// last floor(n/2) rows, for a retry after the device ran out of memory. Each
// half's seq_len is its own longest row, unless compute_padding is set (the
// padded length is then what the policy asked for, and stays).
std::pair<backend::TokenBatch, backend::TokenBatch> split_token_batch(const backend::TokenBatch& batch);

// Tokens a backend computes for `batch` (what its memory holds): the real
// ones when it skips padding and the batch does not ask for it, else all.
inline int64_t computed_tokens(const backend::TokenBatch& batch, bool skips_padding) {
  return skips_padding && !batch.compute_padding ? batch.real_tokens() : batch.padded_tokens();
}

}  // namespace infercost::engine
