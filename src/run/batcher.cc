#include "run/batcher.h"

#include <algorithm>

namespace infercost::run {

void Batcher::begin_file(int seq_len) {
  pending_.clear();
  file_seq_len_ = seq_len;
}

void Batcher::emit(const std::vector<Pending>& rows, int seq_len, bool compute_padding,
                   std::vector<Batch>& out) const {
  Batch batch;
  std::vector<std::span<const int32_t>> ids;
  ids.reserve(rows.size());
  batch.targets.reserve(rows.size());
  for (const Pending& p : rows) {
    ids.emplace_back(p.window->ids[p.row]);
    batch.targets.push_back({p.window.get(), p.row});
    if (batch.windows.empty() || batch.windows.back() != p.window) batch.windows.push_back(p.window);
  }
  // A row longer than the file's scanned maximum cannot happen (same texts,
  // same tokenizer), but make_token_batch never lets seq_len cut a row.
  batch.tokens = make_token_batch(ids, seq_len, compute_padding, policy_.pad_id);
  out.push_back(std::move(batch));
}

void Batcher::add(const std::shared_ptr<Window>& window, const std::vector<int32_t>& rows,
                  std::vector<Batch>& out) {
  if (policy_.batching == Batching::kSeed) {
    // Whole batches go now; a short last one waits for the file's next rows.
    for (int32_t row : rows) pending_.push_back({window, row});
    std::vector<Pending> batch, rest;
    for (std::span<const Pending> rows_of : batches_in_order<Pending>(policy_, pending_)) {
      if (rows_of.size() < seed_batch_rows(policy_)) {
        rest.assign(rows_of.begin(), rows_of.end());
        break;
      }
      batch.assign(rows_of.begin(), rows_of.end());
      emit(batch, file_seq_len_, true, out);
    }
    pending_ = std::move(rest);
    return;
  }
  std::vector<Pending> batch;
  for (const std::vector<int32_t>& packed : pack_by_tokens(policy_, window->ids, rows)) {
    batch.clear();
    for (int32_t row : packed) batch.push_back({window, row});
    emit(batch, 0, false, out);
  }
}

void Batcher::end_file(std::vector<Batch>& out) {
  if (!pending_.empty()) emit(pending_, file_seq_len_, true, out);
  pending_.clear();
}

}  // namespace infercost::run
