// The bookkeeping of null and bad rows (OnBadRow), written once for the file
// runner's batcher, plan's scan and Encoder::classify.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "infercost/status.h"
#include "io/rows.h"

namespace infercost::engine {

// The rows of a chunk, sorted out: those to classify, the null ones, and
// those the tokenizer refused, skipped under OnBadRow::kSkip.
struct SortedRows {
  std::vector<int32_t> classify;  // rows to classify, in input order
  std::vector<uint8_t> skipped;   // one flag per row: refused and skipped
  int64_t rows_null = 0;
  int64_t rows_skipped = 0;
  Status first_skip;  // the first row skipped, located; OK when none was
};

// Sorts rows 0 .. errors.size() - 1 out into `out` (reset first). `is_null`
// is empty (no row is null) or one flag per row; errors[i] is why the
// tokenizer refused row i (OK: it did not). A refused row fails the call
// under kFail with locate(i, errors[i]), the error as the caller names the
// row; under kSkip it is flagged and counted. On failure `out` holds what
// came before the row.
Status sort_rows(std::span<const uint8_t> is_null, std::span<const Status> errors, OnBadRow on_bad_row,
                 const std::function<Status(size_t row, const Status& error)>& locate, SortedRows& out);

}  // namespace infercost::engine
