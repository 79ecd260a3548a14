// The tokenizers: each window's rows to token ids, in tasks of
// kTokenizeTaskRows rows (pipeline.h, run_input.h).
#include <algorithm>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "run/pipeline.h"
#include "run/run_input.h"

namespace infercost::run {

size_t prepare_window(Window& window) {
  const size_t n = window.rows.size();
  window.rows.is_null.resize(n, 0);
  window.ids.resize(n);
  window.errors.resize(n);
  const size_t tasks = (n + kTokenizeTaskRows - 1) / kTokenizeTaskRows;
  window.tasks_left = static_cast<int>(tasks);
  return tasks;
}

void tokenize_window_rows(const text::Tokenizer& tokenizer, Window& window, size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) {
    if (window.rows.is_null[i]) continue;
    Result<size_t> r = tokenizer.encode_append(window.rows.texts[i], window.ids[i]);
    if (!r.ok()) window.errors[i] = r.status();
  }
}

void tokenize_window(const text::Tokenizer& tokenizer, Window& window, int threads) {
  const size_t n = window.rows.size();
  const size_t tasks = prepare_window(window);
  const size_t parts = std::min<size_t>(tasks, static_cast<size_t>(std::max(1, threads)));
  // Part p takes tasks p, p + parts, ...: as the pipeline's tokenizers take them.
  auto work = [&](size_t part) {
    for (size_t t = part; t < tasks; t += parts) {
      const size_t begin = t * kTokenizeTaskRows;
      tokenize_window_rows(tokenizer, window, begin, std::min(n, begin + kTokenizeTaskRows));
    }
  };
  std::vector<std::thread> pool;
  for (size_t p = 1; p < parts; ++p) pool.emplace_back(work, p);
  if (parts > 0) work(0);
  for (std::thread& t : pool) t.join();
  window.tasks_left = 0;
}

Status sort_window_rows(const Window& window, const std::string& path, OnBadRow on_bad_row, SortedRows& out) {
  const auto locate = [&](size_t i, const Status& error) {
    return error.with_context(path + ": " + window.location_unit + " " +
                              std::to_string(window.rows.lines[i]));
  };
  return sort_rows(window.rows.is_null, window.errors, on_bad_row, locate, out);
}

void Pipeline::tokenize_stage(double& busy) {
  const text::Tokenizer& tokenizer = classifier_.tokenizer();
  while (std::optional<TokenizeTask> task = tasks_.pop()) {
    Window& w = *task->window;
    {
      BusyTimer timer(busy);
      tokenize_window_rows(tokenizer, w, task->begin, task->end);
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (--w.tasks_left == 0) tokenized_.notify_all();
  }
}

}  // namespace infercost::run
