// Reading a whole RowSource in small batches, for the io tests.
#pragma once

#include <string>

#include "infercost/io/row_source.h"

namespace infercost::io::test {

struct ReadResult {
  RowBatch rows;
  int64_t skipped = 0;
  Status first_skip;
  uint64_t bytes_read = 0;
  uint64_t bytes_total = 0;
};

inline Result<ReadResult> read_all(const std::string& path, InputFormat format, SourceOptions options = {},
                                   size_t chunk = 3) {
  INFERCOST_ASSIGN_OR_RETURN(auto source, open_row_source(path, format, options));
  ReadResult r;
  for (;;) {
    INFERCOST_ASSIGN_OR_RETURN(size_t n, source->next(chunk, r.rows));
    if (n == 0) break;
    if (r.rows.texts.size() != r.rows.is_null.size() || r.rows.texts.size() != r.rows.lines.size()) {
      return internal_error("RowBatch vectors differ in length");
    }
  }
  // At the end, next() keeps returning 0.
  INFERCOST_ASSIGN_OR_RETURN(size_t again, source->next(chunk, r.rows));
  if (again != 0) return internal_error("rows after the end");
  r.skipped = source->rows_skipped();
  r.first_skip = source->first_skip_reason();
  r.bytes_read = source->bytes_read();
  r.bytes_total = source->bytes_total();
  return r;
}

inline SourceOptions skip_options() {
  SourceOptions o;
  o.on_bad_row = OnBadRow::kSkip;
  return o;
}

inline SourceOptions json_options() {
  SourceOptions o;
  o.values_as_json = true;
  return o;
}

}  // namespace infercost::io::test
