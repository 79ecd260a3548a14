#include "engine/bad_rows.h"

namespace infercost::engine {

Status sort_rows(std::span<const uint8_t> is_null, std::span<const Status> errors, OnBadRow on_bad_row,
                 const std::function<Status(size_t row, const Status& error)>& locate, SortedRows& out) {
  const size_t n = errors.size();
  INFERCOST_CHECK(is_null.empty() || is_null.size() == n);
  out.classify.clear();
  out.classify.reserve(n);
  out.skipped.assign(n, 0);
  out.rows_null = 0;
  out.rows_skipped = 0;
  out.first_skip = Status();
  for (size_t i = 0; i < n; ++i) {
    if (!is_null.empty() && is_null[i]) {
      ++out.rows_null;
      continue;
    }
    if (errors[i].ok()) {
      out.classify.push_back(static_cast<int32_t>(i));
      continue;
    }
    if (on_bad_row == OnBadRow::kFail) return locate(i, errors[i]);
    if (out.first_skip.ok()) out.first_skip = locate(i, errors[i]);
    out.skipped[i] = 1;
    ++out.rows_skipped;
  }
  return Status();
}

}  // namespace infercost::engine
