// The batcher: windows in input order, their rows sorted out (null, bad, to
// classify) and packed into batches for the inference workers (pipeline.h).
#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "run/pipeline.h"
#include "run/run_input.h"

namespace infercost::run {

void Pipeline::batch_stage() {
  if (batch_windows()) infer_.close();
}

bool Pipeline::batch_windows() {
  const bool seed = policy_.batching == Batching::kSeed;
  Batcher batcher(policy_);
  int current_file = -1, scan_file = -1;
  int scan_max = 0;
  std::vector<std::shared_ptr<Window>> waiting;  // windows whose rows may sit in a partial batch
  std::vector<int32_t> classify;
  std::vector<Batch> batches;
  while (std::optional<std::shared_ptr<Window>> popped = ordered_.pop()) {
    const std::shared_ptr<Window>& window = *popped;
    Window& w = *window;
    {
      std::unique_lock<std::mutex> lock(mu_);
      tokenized_.wait(lock, [&] { return w.tasks_left == 0 || cancelled_; });
      if (cancelled_) return false;
    }
    // Busy time only: the timer stops before the (blocking) pushes below.
    std::optional<BusyTimer> timer;
    timer.emplace(counts_.batch_s);
    if (!sort_out(w, classify)) return false;
    if (w.scan) {
      if (w.file_index != scan_file) {
        scan_file = w.file_index;
        scan_max = 0;
      }
      for (int32_t i : classify) scan_max = std::max<int>(scan_max, static_cast<int>(w.ids[i].size()));
      continue;
    }
    if (w.file_index != current_file) {
      current_file = w.file_index;
      batcher.begin_file(seed ? scan_max : 0);
    }
    w.probs.assign(w.rows.size() * static_cast<size_t>(classifier_.outputs()), 0.0f);
    batches.clear();
    batcher.add(window, classify, batches);
    if (w.last_in_file) {
      batcher.end_file(batches);
      count_source_skips(w);
    }
    timer.reset();
    for (Batch& batch : batches) {
      if (!infer_.push(InferItem{std::move(batch), nullptr})) return false;
    }
    waiting.push_back(window);
    if (!batcher.holds_rows()) {
      for (std::shared_ptr<Window>& done : waiting) {
        if (!infer_.push(InferItem{std::nullopt, std::move(done)})) return false;
      }
      waiting.clear();
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  return !cancelled_;
}

bool Pipeline::sort_out(Window& w, std::vector<int32_t>& classify) {
  const RunOptions& options = *c_.options;
  SortedRows sorted;
  Status bad =
      sort_window_rows(w, (*c_.inputs)[static_cast<size_t>(w.file_index)], options.on_bad_row, sorted);
  if (!bad.ok()) {
    fail(std::move(bad));
    return false;
  }
  if (!w.read_status.ok()) {
    fail(w.read_status);
    return false;
  }
  classify = std::move(sorted.classify);
  if (w.scan) return true;  // counted in the real pass
  w.dropped = std::move(sorted.skipped);
  counts_.rows_null += sorted.rows_null;
  counts_.rows_skipped += sorted.rows_skipped;
  if (!sorted.first_skip.ok()) {
    if (counts_.first_skip_reason.empty()) counts_.first_skip_reason = sorted.first_skip.to_string();
    if (w.first_drop_reason.empty()) w.first_drop_reason = sorted.first_skip.to_string();
  }
  if (RunProgress* p = options.progress) {
    p->rows_done.fetch_add(static_cast<int64_t>(w.rows.size() - classify.size()));  // null and skipped rows
  }
  return true;
}

// The rows the file's source skipped as bad (unreadable), at its last window.
void Pipeline::count_source_skips(const Window& w) {
  if (w.source_rows_skipped > 0 && counts_.first_skip_reason.empty()) {
    counts_.first_skip_reason = w.source_first_skip.to_string();
  }
  counts_.rows_skipped += w.source_rows_skipped;
  if (RunProgress* p = c_.options->progress) p->rows_done.fetch_add(w.source_rows_skipped);
}

}  // namespace infercost::run
