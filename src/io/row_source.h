// Input rows from any supported file: JSON lines, a JSON array of objects,
// CSV (RFC 4180, header row) and Parquet. One RowSource reads one file's text
// column in order, a batch at a time, in memory bounded by the batch (and for
// Parquet by one page), never by the file.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "infercost/status.h"
#include "io/rows.h"

namespace infercost::io {

enum class InputFormat { kJsonl, kJsonArray, kCsv, kParquet };

// "jsonl", "json" (lines or array, decided by the first non-blank byte),
// "csv", "parquet".
std::string input_format_name(InputFormat format);

// From --input-format (jsonl|json|csv|parquet; empty = by extension) or the
// extension: .jsonl/.ndjson -> kJsonl; .json -> kJsonl or kJsonArray by the
// first non-blank byte ('[' = array); .csv -> kCsv; .parquet/.parq/.pq ->
// kParquet. Others: kInvalidArgument naming the path and the choices.
Result<InputFormat> input_format_for(const std::string& path, const std::string& format_flag);

struct SourceOptions {
  std::string column = kDefaultTextColumn;
  OnBadRow on_bad_row = OnBadRow::kFail;
  // false (`run`): the column must hold strings or null; another type is a
  // bad row (JSON/CSV) or kInvalidArgument naming the column's type (Parquet).
  // true (`cat`): every value is rendered as JSON text in RowBatch::texts
  // (strings quoted and escaped, numbers as written, objects/arrays as
  // minified JSON), null rows flagged in is_null.
  bool values_as_json = false;
  // With values_as_json, an empty `column` (`cat` without --column): each
  // row whole, as one JSON object (JSON rows as written, minified; CSV
  // fields by their header names, empty unquoted fields null). Parquet
  // sources read one column: `cat` zips one source per column itself.
};

// Where a source stands in its file: the rows consumed so far (returned, or
// skipped as bad) and, for the text formats, the byte offset and line number
// of what comes next. A resumed run continues from a position an earlier
// reading of the same file reported.
struct SourcePosition {
  int64_t rows = 0;
  uint64_t offset = 0;
  int64_t line = 0;
};

class RowSource {
 public:
  virtual ~RowSource() = default;
  // Appends up to max_rows rows to `out`; returns how many, 0 at the end.
  // Errors under kFail: kCorruption "<path>: line N: ..." (JSON/CSV; CSV
  // lines are the physical line where the record starts) or "<path>: row
  // group G, column C: ..." (Parquet).
  virtual Result<size_t> next(size_t max_rows, RowBatch& out) = 0;
  virtual int64_t rows_skipped() const = 0;
  virtual const Status& first_skip_reason() const = 0;
  virtual uint64_t bytes_total() const = 0;
  virtual uint64_t bytes_read() const = 0;
  // "line" (JSON lines, JSON array, CSV) or "row" (Parquet): what
  // RowBatch::lines counts, for messages.
  virtual const char* location_unit() const = 0;
  virtual SourcePosition position() const = 0;
  // Continues from `at` (a position() of an earlier reading of this same
  // file), before the first next(): JSON lines, JSON arrays and CSV jump to
  // the byte offset; Parquet skips whole row groups by its footer, then rows.
  // rows_skipped() counts only what is skipped after it. kInvalidArgument
  // naming the file when `at` cannot be a position of it.
  virtual Status seek(const SourcePosition& at) = 0;
};

// Opens `path` as `format`. Errors: kNotFound / kIOError naming the path;
// a missing column is kNotFound naming the columns the file has (CSV header,
// Parquet schema, or the first JSON object's keys).
Result<std::unique_ptr<RowSource>> open_row_source(const std::string& path, InputFormat format,
                                                   const SourceOptions& options);

// The rows `path` holds where its format states the count without reading
// the rows (a Parquet footer's num_rows), else -1. Errors: those of opening
// the file (ParquetFile::open).
Result<int64_t> rows_stated(const std::string& path, InputFormat format);

// Expands command-line inputs into files, in a deterministic order: a file
// as given; a folder -> its regular files with a known input extension
// (not recursive, hidden files skipped), sorted by name; a glob pattern
// (*, ?, [..]) -> its matches, sorted. Inputs keep the order given. A
// folder or glob matching nothing, or a missing path, is kNotFound naming it.
Result<std::vector<std::string>> expand_inputs(const std::vector<std::string>& args);

// Sees one batch of an input's rows and returns how many rows it wants in the
// next batch (0: stop reading).
using RowVisitor = std::function<size_t(const std::string& path, const RowSource& source, RowBatch& batch)>;

// Reads `inputs` as `infercost run` reads them (expand_inputs, each file's
// format by `format_flag` or its extension, `options`), in input order, in
// batches of at first `first_batch_rows` rows, each handed to `visit`, until
// the rows end or `visit` wants no more. Returns the bad rows the sources
// skipped (options.on_bad_row kSkip). Errors: the sources', naming the file.
Result<int64_t> read_inputs(const std::vector<std::string>& inputs, const std::string& format_flag,
                            const SourceOptions& options, size_t first_batch_rows, const RowVisitor& visit);

}  // namespace infercost::io
