// The inference workers: batches classified on the classifier's workers
// (EncoderWorkers::infer_batch), windows handed to the writer in order
// (pipeline.h).
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/encoder_workers.h"
#include "run/pipeline.h"

namespace infercost::run {

// Workers pop batches and window markers from infer_ in queue order (a
// sequence number taken under pop_mu_), classify batches concurrently, and
// hand a window to the writer once no batch popped before its marker is
// still running.
void Pipeline::infer_stage(size_t w) {
  if (!infer_batches(w)) return;
  // The last worker out: every batch has finished, so every marker is released.
  if (workers_left_.fetch_sub(1) == 1 && release_done()) written_.close();
}

bool Pipeline::infer_batches(size_t w) {
  for (;;) {
    std::optional<InferItem> item;
    uint64_t seq = 0;
    {
      std::lock_guard<std::mutex> pop(pop_mu_);
      item = infer_.pop();
      if (!item) break;
      std::lock_guard<std::mutex> lock(order_mu_);
      seq = next_seq_++;
      if (item->batch) {
        in_flight_.insert(seq);
      } else {
        held_.emplace_back(seq, std::move(item->done));
      }
    }
    if (item->batch) {
      Status s = infer_batch(w, *item->batch);
      if (!s.ok()) {
        fail(std::move(s));
        return false;
      }
      std::lock_guard<std::mutex> lock(order_mu_);
      in_flight_.erase(seq);
    }
    if (!release_done()) return false;
  }
  std::lock_guard<std::mutex> lock(mu_);
  return !cancelled_;
}

// Pushes to the writer, in order, the held markers no running batch precedes.
bool Pipeline::release_done() {
  std::lock_guard<std::mutex> release(release_mu_);  // keeps the pushes in marker order
  std::vector<std::shared_ptr<Window>> ready;
  {
    std::lock_guard<std::mutex> lock(order_mu_);
    while (!held_.empty() && (in_flight_.empty() || held_.front().first < *in_flight_.begin())) {
      ready.push_back(std::move(held_.front().second));
      held_.pop_front();
    }
  }
  for (std::shared_ptr<Window>& window : ready) {
    if (!written_.push(std::move(window))) return false;
  }
  return true;
}

// Classifies `batch` on worker `w` into its windows' probs (out of memory:
// EncoderWorkers::infer_batch splits and retries).
Status Pipeline::infer_batch(size_t w, Batch& batch) {
  const backend::TokenBatch& t = batch.tokens;
  const size_t labels = static_cast<size_t>(classifier_.outputs());
  std::vector<float>& out = scratch_[w];
  out.resize(static_cast<size_t>(t.batch) * labels);
  std::vector<int32_t> bad;
  INFERCOST_RETURN_IF_ERROR(workers_.infer_batch(w, t, out, &bad));
  if (!bad.empty()) INFERCOST_RETURN_IF_ERROR(drop_non_finite(w, batch, bad));
  for (size_t k = 0; k < batch.targets.size(); ++k) {
    const Batch::Target& target = batch.targets[k];
    std::copy_n(
        out.begin() + static_cast<ptrdiff_t>(k * labels), labels,
        target.window->probs.begin() + static_cast<ptrdiff_t>(static_cast<size_t>(target.row) * labels));
  }
  if (RunProgress* p = c_.options->progress) {
    p->rows_done.fetch_add(t.batch);
    p->tokens_done.fetch_add(t.real_tokens());
  }
  return Status();
}

// Rows whose outputs are not finite: an error naming them (the first in
// input order), or, with --on-error skip, dropped as bad rows are.
Status Pipeline::drop_non_finite(size_t w, const Batch& batch, const std::vector<int32_t>& bad) {
  std::vector<std::pair<int, int64_t>> at;  // (file, line) of each
  for (int32_t k : bad) {
    const Batch::Target& target = batch.targets[static_cast<size_t>(k)];
    at.emplace_back(target.window->file_index, target.window->rows.lines[static_cast<size_t>(target.row)]);
  }
  std::sort(at.begin(), at.end());
  std::vector<int64_t> lines;  // of the first file named
  const Window* first = nullptr;
  for (size_t i = 0; i < bad.size(); ++i) {
    const Batch::Target& target = batch.targets[static_cast<size_t>(bad[i])];
    if (target.window->file_index == at[0].first) first = target.window;
  }
  for (const auto& [file, line] : at) {
    if (file == at[0].first) lines.push_back(line);
  }
  const std::string rows = fmt::format("{}: {}", (*c_.inputs)[static_cast<size_t>(at[0].first)],
                                       name_rows(first->location_unit, lines));
  // A skipped row's reason is recorded (metrics, summary), not read now: no advice.
  Status error = workers_.non_finite_error(rows, w, c_.options->on_bad_row == OnBadRow::kFail);
  if (c_.options->on_bad_row == OnBadRow::kFail) return error;
  std::lock_guard<std::mutex> lock(mu_);
  for (int32_t k : bad) {
    const Batch::Target& target = batch.targets[static_cast<size_t>(k)];
    target.window->dropped[static_cast<size_t>(target.row)] = 1;
    if (target.window->first_drop_reason.empty()) target.window->first_drop_reason = error.to_string();
  }
  non_finite_skipped_ += static_cast<int64_t>(bad.size());
  if (non_finite_first_.empty()) non_finite_first_ = error.to_string();
  return Status();
}

}  // namespace infercost::run
