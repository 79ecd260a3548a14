#include "infercost/io/jsonl_reader.h"

#include <simdjson.h>

#include <cstring>

#include "infercost/core/file.h"

namespace infercost::io {

namespace {

bool is_blank(std::string_view s) {
  for (char c : s) {
    if (c != ' ' && c != '\t' && c != '\r') return false;
  }
  return true;
}

class SimdJsonlReader final : public JsonlReader {
 public:
  SimdJsonlReader(MappedFile file, std::string column, OnBadRow on_bad_row)
      : file_(std::move(file)), column_(std::move(column)), on_bad_row_(on_bad_row) {}

  Result<size_t> next(size_t max_rows, RowBatch& out) override {
    std::string_view all = file_.view();
    size_t appended = 0;
    while (appended < max_rows && pos_ < all.size()) {
      size_t end = all.find('\n', pos_);
      if (end == std::string_view::npos) end = all.size();
      std::string_view line = all.substr(pos_, end - pos_);
      pos_ = end + 1;
      ++line_no_;
      if (is_blank(line)) continue;
      std::string text;
      Status s = parse_line(line, text);
      if (!s.ok()) {
        Status located = s.with_context(file_.path() + ": line " + std::to_string(line_no_));
        if (on_bad_row_ == OnBadRow::kFail) return located;
        if (rows_skipped_ == 0) first_skip_ = located;
        ++rows_skipped_;
        continue;
      }
      out.texts.push_back(std::move(text));
      out.lines.push_back(line_no_);
      ++appended;
    }
    if (pos_ > all.size()) pos_ = all.size();
    return appended;
  }

  int64_t rows_skipped() const override { return rows_skipped_; }
  const Status& first_skip_reason() const override { return first_skip_; }
  uint64_t bytes_total() const override { return file_.size(); }
  uint64_t bytes_read() const override { return pos_; }

 private:
  Status parse_line(std::string_view line, std::string& text) {
    // simdjson reads up to SIMDJSON_PADDING bytes past the end; the mapping
    // ends at the file's last byte, so each line is copied into a padded buffer.
    if (buffer_.size() < line.size() + simdjson::SIMDJSON_PADDING) {
      buffer_.resize(line.size() + simdjson::SIMDJSON_PADDING);
    }
    std::memcpy(buffer_.data(), line.data(), line.size());
    // The DOM parser validates the whole line (structure and UTF-8), so a
    // truncated or garbled row is caught even when the text field comes first.
    simdjson::dom::element doc;
    auto err = parser_.parse(buffer_.data(), line.size(), false).get(doc);
    if (err == simdjson::UTF8_ERROR) return corruption("invalid UTF-8");
    if (err) return corruption(std::string("malformed JSON: ") + simdjson::error_message(err));
    simdjson::dom::object obj;
    if (doc.get_object().get(obj)) return corruption("expected a JSON object");
    simdjson::dom::element value;
    err = obj.at_key(column_).get(value);
    if (err) return invalid_argument("no column '" + column_ + "'");
    if (!value.is_string()) {
      return invalid_argument("column '" + column_ + "' is " + type_name(value.type()) +
                              ", expected a string");
    }
    std::string_view sv = value.get_string().value_unsafe();
    text.assign(sv.data(), sv.size());
    return Status();
  }

  static std::string type_name(simdjson::dom::element_type t) {
    using T = simdjson::dom::element_type;
    switch (t) {
      case T::ARRAY: return "an array";
      case T::OBJECT: return "an object";
      case T::INT64:
      case T::UINT64:
      case T::DOUBLE: return "a number";
      case T::BOOL: return "a boolean";
      case T::NULL_VALUE: return "null";
      default: return "a string";
    }
  }

  MappedFile file_;
  std::string column_;
  OnBadRow on_bad_row_;
  simdjson::dom::parser parser_;
  std::string buffer_;
  size_t pos_ = 0;
  int64_t line_no_ = 0;
  int64_t rows_skipped_ = 0;
  Status first_skip_;
};

}  // namespace

Result<std::unique_ptr<JsonlReader>> JsonlReader::open(const std::string& path, const std::string& column,
                                                       OnBadRow on_bad_row) {
  INFERCOST_ASSIGN_OR_RETURN(MappedFile file, MappedFile::open(path));
  return std::unique_ptr<JsonlReader>(new SimdJsonlReader(std::move(file), column, on_bad_row));
}

}  // namespace infercost::io
