// JSON lines input: one JSON object per line, the text in a string field.
// The file is memory-mapped and read line by line, so memory does not grow
// with the file. Blank lines are ignored. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "infercost/core/status.h"
#include "infercost/io/rows.h"

namespace infercost::io {

class JsonlReader {
 public:
  // Errors: kNotFound / kIOError naming the path.
  static Result<std::unique_ptr<JsonlReader>> open(const std::string& path, const std::string& column,
                                                   OnBadRow on_bad_row);
  virtual ~JsonlReader() = default;

  // Appends up to max_rows rows to `out`; returns how many were appended, 0 at
  // the end. A bad row under kFail returns kCorruption "path: line N: ...".
  virtual Result<size_t> next(size_t max_rows, RowBatch& out) = 0;
  virtual int64_t rows_skipped() const = 0;
  // The first skipped row's error (for the summary); OK when none.
  virtual const Status& first_skip_reason() const = 0;
  virtual uint64_t bytes_total() const = 0;
  virtual uint64_t bytes_read() const = 0;
};

}  // namespace infercost::io
