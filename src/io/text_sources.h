// The text-format RowSources (JSON lines, JSON array, CSV) that
// open_row_source() dispatches to, and what they share.
#pragma once

#include <simdjson.h>

#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "core/file.h"
#include "io/bad_rows.h"
#include "io/row_source.h"

namespace infercost::io {

Result<std::unique_ptr<RowSource>> open_jsonl_source(const std::string& path, const SourceOptions& options);
Result<std::unique_ptr<RowSource>> open_json_array_source(const std::string& path,
                                                          const SourceOptions& options);
Result<std::unique_ptr<RowSource>> open_csv_source(const std::string& path, const SourceOptions& options);

// What the text sources share: a memory-mapped file read from the front,
// their options, their bad rows and how far they have read (pos_, a byte
// offset of the file).
class MappedTextSource : public RowSource {
 public:
  int64_t rows_skipped() const override { return bad_.skipped(); }
  const Status& first_skip_reason() const override { return bad_.first(); }
  uint64_t bytes_total() const override { return file_.size(); }
  uint64_t bytes_read() const override { return pos_; }
  const char* location_unit() const override { return "line"; }

 protected:
  MappedTextSource(MappedFile file, SourceOptions options)
      : file_(std::move(file)), options_(std::move(options)), bad_(options_.on_bad_row) {}

  // "<path>: line N", what messages about a row start with.
  std::string where(int64_t line) const { return file_.path() + ": line " + std::to_string(line); }

  // Reads the value of the row on `line` with parse(text, is_null) and adds
  // it to `out` (true); a row it refuses goes to the bad rows (false, or the
  // error they make of it).
  template <typename Parse>
  Result<bool> add_row(RowBatch& out, int64_t line, Parse&& parse) {
    std::string text;
    bool is_null = false;
    Status s = parse(text, is_null);
    if (!s.ok()) {
      INFERCOST_RETURN_IF_ERROR(bad_.handle(s.with_context(where(line))));
      return false;
    }
    out.add(std::move(text), is_null, line);
    return true;
  }

  // OK when `at` is where reading can continue in a file read line by line:
  // at or after byte `first`, at the start of a line (or the end of the
  // file), on line `min_line` or later; else kInvalidArgument "not the start
  // of a <unit> of this file".
  Status check_line_start(const SourcePosition& at, size_t first, int64_t min_line, const char* unit) const {
    const std::string_view all = file_.view();
    const bool ok = at.offset >= first && at.offset <= all.size() && at.rows >= 0 && at.line >= min_line &&
                    (at.offset == first || at.offset == all.size() || all[at.offset - 1] == '\n');
    if (ok) return Status();
    return invalid_argument(file_.path() + ": cannot continue at byte " + std::to_string(at.offset) +
                            ": not the start of a " + unit + " of this file");
  }

  MappedFile file_;
  SourceOptions options_;
  BadRows bad_;
  size_t pos_ = 0;
};

// Maps the file at `path` into a new Source, which `prepare` (a member
// function of it that reads the file's start) must accept.
template <typename Source>
Result<std::unique_ptr<RowSource>> open_mapped_source(const std::string& path, const SourceOptions& options,
                                                      Status (Source::*prepare)()) {
  INFERCOST_ASSIGN_OR_RETURN(MappedFile file, MappedFile::open(path));
  auto source = std::make_unique<Source>(std::move(file), options);
  INFERCOST_RETURN_IF_ERROR(((*source).*prepare)());
  return std::unique_ptr<RowSource>(std::move(source));
}

// The column of one parsed JSON row (defined in jsonl_source.cc). Sets
// `is_null` for a JSON null; a missing column or (unless values_as_json) a
// value that is not a string is kCorruption without location.
Status json_column_value(simdjson::dom::element row, const SourceOptions& options, std::string& text,
                         bool& is_null);

// kNotFound "<path>: no column 'c' (the first object has: a, b)", or OK when
// `first` (the first object of the file) has the column.
Status check_first_object(const std::string& path, simdjson::dom::element first, const std::string& column);

// Parses one JSON row (a line, or an array element) out of a memory-mapped
// file: simdjson reads up to SIMDJSON_PADDING bytes past the end and the
// mapping ends at the file's last byte, so each row is copied into a padded
// buffer. The DOM parser validates the whole row (structure and UTF-8), so a
// truncated or garbled row is caught even when the text field comes first.
class JsonRowParser {
 public:
  Status parse_row(std::string_view row, const SourceOptions& options, std::string& text, bool& is_null) {
    simdjson::dom::element doc;
    auto err = parse(row).get(doc);
    if (err == simdjson::UTF8_ERROR) return corruption("invalid UTF-8");
    if (err) return corruption(std::string("malformed JSON: ") + simdjson::error_message(err));
    return json_column_value(doc, options, text, is_null);
  }
  simdjson::simdjson_result<simdjson::dom::element> parse(std::string_view row) {
    if (buffer_.size() < row.size() + simdjson::SIMDJSON_PADDING) {
      buffer_.resize(row.size() + simdjson::SIMDJSON_PADDING);
    }
    std::memcpy(buffer_.data(), row.data(), row.size());
    return parser_.parse(buffer_.data(), row.size(), false);
  }

 private:
  simdjson::dom::parser parser_;
  std::string buffer_;
};

// The UTF-8 byte order mark, skipped at the start of text inputs.
inline size_t bom_length(std::string_view data) {
  return data.size() >= 3 && data.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
}

// kCorruption naming `path` when `data` starts with the byte order mark of
// UTF-16 or UTF-32 (a file saved as "Unicode" by some editors): text inputs
// are UTF-8, and such a file would otherwise read as malformed JSON or CSV.
inline Status check_utf8_bom(const std::string& path, std::string_view data) {
  const char* encoding = nullptr;
  if (data.substr(0, 4) == std::string_view("\xFF\xFE\0\0", 4)) {
    encoding = "UTF-32 LE";
  } else if (data.substr(0, 4) == std::string_view("\0\0\xFE\xFF", 4)) {
    encoding = "UTF-32 BE";
  } else if (data.substr(0, 2) == "\xFF\xFE") {
    encoding = "UTF-16 LE";
  } else if (data.substr(0, 2) == "\xFE\xFF") {
    encoding = "UTF-16 BE";
  }
  if (encoding == nullptr) return Status();
  return corruption(path + ": the file is " + encoding +
                    " text (it starts with that byte order mark); infercost reads UTF-8: convert it first, "
                    "e.g. iconv -f " +
                    std::string(std::string_view(encoding).substr(0, 6)) + " -t UTF-8 IN > OUT");
}

}  // namespace infercost::io
