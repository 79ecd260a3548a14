// The input half of `infercost run`: the inputs read as windows of rows
// (run_reader.cc) and their rows tokenized (run_tokenize.cc), then sorted out
// into rows to classify, null rows and bad rows (bad_rows.h). The file
// runner's reader and tokenizer threads run these; `infercost plan`'s scan
// reads and tokenizes with them too, so both see the same rows.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "engine/bad_rows.h"
#include "infercost/status.h"
#include "io/row_source.h"
#include "io/rows.h"
#include "run/batcher.h"
#include "run/engine.h"
#include "text/tokenizer.h"

namespace infercost::run {

// Rows one tokenizer task covers: small enough that several workers share a
// window, large enough that queueing costs nothing next to tokenizing.
inline constexpr size_t kTokenizeTaskRows = 512;

// Opens input `path` as a row source, positioned at `at` (a resumed run;
// the start when empty). Errors: the source's, as it words them.
Result<std::unique_ptr<io::RowSource>> open_input(const std::string& path, io::InputFormat format,
                                                  const io::SourceOptions& options,
                                                  const io::SourcePosition& at = io::SourcePosition());

// Reads up to `window_rows` next rows of `source` into `window` (rows,
// location_unit, and where the source stands after them: end_position,
// source_rows_skipped). At the file's end (0 rows read) also last_in_file and
// source_first_skip. Returns the rows read.
Result<size_t> read_window(io::RowSource& source, size_t window_rows, Window& window);

// Sizes a window read for its tokenizers: a null flag, ids and an error per
// row. Returns the tokenize tasks it makes (kTokenizeTaskRows rows each).
size_t prepare_window(Window& window);
// Tokenizes rows [begin, end) of a prepared window: its ids, or the
// tokenizer's error. Tasks on disjoint ranges may run at once.
void tokenize_window_rows(const text::Tokenizer& tokenizer, Window& window, size_t begin, size_t end);
// Prepares and tokenizes every row of `window`, its tasks spread over up to
// `threads` threads (the calling thread among them).
void tokenize_window(const text::Tokenizer& tokenizer, Window& window, int threads);

// Sorts a tokenized window's rows out (sort_rows) under `on_bad_row`; a bad
// row's error is located as "<path>: <unit> <line>: ...".
Status sort_window_rows(const Window& window, const std::string& path, OnBadRow on_bad_row, SortedRows& out);

}  // namespace infercost::run
