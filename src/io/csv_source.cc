#include <simdjson.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/file.h"
#include "core/json_text.h"
#include "text_sources.h"

namespace infercost::io {

namespace {

// One field of a record as byte offsets into the file; quoted fields span
// their content without the quotes and may hold "" escapes.
struct FieldSpan {
  size_t begin = 0;
  size_t end = 0;
  bool quoted = false;
  bool escapes = false;
};

enum class RecordKind { kRecord, kBlank, kEnd };

// RFC 4180 reader over a memory-mapped file, one record at a time. Lenient
// where common writers are: LF or CRLF line ends, a final line without a
// newline, a '"' inside an unquoted field taken literally, blank lines
// skipped (as pandas does).
class CsvSource final : public MappedTextSource {
 public:
  CsvSource(MappedFile file, SourceOptions options) : MappedTextSource(std::move(file), std::move(options)) {}

  Status start() {
    data_ = file_.view();
    INFERCOST_RETURN_IF_ERROR(check_utf8_bom(file_.path(), data_));
    pos_ = bom_length(data_);
    std::string malformed;
    RecordKind kind;
    do {
      record_line_ = line_;
      INFERCOST_RETURN_IF_ERROR(read_record(kind, malformed));
    } while (kind == RecordKind::kBlank);
    if (kind == RecordKind::kEnd) return Status();  // an empty file holds no rows
    if (!malformed.empty()) return corruption(where(record_line_) + ": header row: " + malformed);
    header_fields_ = fields_.size();
    std::string names;
    for (size_t i = 0; i < fields_.size(); ++i) {
      std::string name = field_text(fields_[i]);
      header_names_.push_back(name);
      if (column_ == SIZE_MAX && name == options_.column) column_ = i;
      if (!names.empty()) names += ", ";
      names += name;
    }
    if (column_ == SIZE_MAX && !whole_rows()) {
      return not_found(file_.path() + ": no column '" + options_.column +
                       "' in the CSV header (columns: " + names + ")");
    }
    return Status();
  }

  Result<size_t> next(size_t max_rows, RowBatch& out) override {
    size_t appended = 0;
    std::string malformed;
    while (appended < max_rows && header_fields_ > 0) {
      record_line_ = line_;
      RecordKind kind;
      INFERCOST_RETURN_IF_ERROR(read_record(kind, malformed));
      if (kind == RecordKind::kEnd) break;
      if (kind == RecordKind::kBlank) continue;
      INFERCOST_ASSIGN_OR_RETURN(bool added,
                                 add_row(out, record_line_, [&](std::string& text, bool& is_null) {
                                   return row_value(malformed, text, is_null);
                                 }));
      if (added) ++appended;
    }
    rows_ += static_cast<int64_t>(appended);
    return appended;
  }

  SourcePosition position() const override { return {rows_before_ + rows_ + bad_.skipped(), pos_, line_}; }

  // After start(): a position is always just past a record's line end.
  Status seek(const SourcePosition& at) override {
    INFERCOST_RETURN_IF_ERROR(check_line_start(at, pos_, line_, "record"));
    pos_ = at.offset;
    line_ = at.line;
    rows_before_ = at.rows;
    return Status();
  }

 private:
  // True at a line end (LF, CRLF, or a CR that is the file's last byte).
  bool at_line_end(size_t pos) const {
    if (data_[pos] == '\n') return true;
    return data_[pos] == '\r' && (pos + 1 == data_.size() || data_[pos + 1] == '\n');
  }
  void consume_line_end() {
    if (data_[pos_] == '\r') ++pos_;
    if (pos_ < data_.size()) ++pos_;  // the '\n'
    ++line_;
  }

  // Reads one record into fields_. `malformed` is set (and the record still
  // consumed to its end) when a closing quote is followed by other text. An
  // unterminated quote is an error: everything after it would be one field.
  Status read_record(RecordKind& kind, std::string& malformed) {
    fields_.clear();
    malformed.clear();
    const size_t n = data_.size();
    if (pos_ >= n) {
      kind = RecordKind::kEnd;
      return Status();
    }
    if (at_line_end(pos_)) {
      consume_line_end();
      kind = RecordKind::kBlank;
      return Status();
    }
    kind = RecordKind::kRecord;
    for (;;) {
      FieldSpan f;
      if (pos_ < n && data_[pos_] == '"') {
        f.quoted = true;
        const int64_t open_line = line_;
        f.begin = ++pos_;
        for (;;) {
          if (pos_ >= n) {
            return corruption(where(record_line_) + ": the quoted field opened on line " +
                              std::to_string(open_line) + " is not closed before the end of the file");
          }
          const char c = data_[pos_];
          if (c == '"') {
            if (pos_ + 1 < n && data_[pos_ + 1] == '"') {
              f.escapes = true;
              pos_ += 2;
              continue;
            }
            break;
          }
          if (c == '\n') ++line_;
          ++pos_;
        }
        f.end = pos_++;
        if (pos_ < n && data_[pos_] != ',' && !at_line_end(pos_)) {
          if (malformed.empty()) {
            malformed = "text after the closing quote of field " + std::to_string(fields_.size() + 1);
          }
          while (pos_ < n && data_[pos_] != ',' && !at_line_end(pos_)) ++pos_;
        }
      } else {
        f.begin = pos_;
        while (pos_ < n && data_[pos_] != ',' && !at_line_end(pos_)) ++pos_;
        f.end = pos_;
      }
      fields_.push_back(f);
      if (pos_ >= n) return Status();
      if (data_[pos_] == ',') {
        ++pos_;
        continue;
      }
      consume_line_end();
      return Status();
    }
  }

  std::string field_text(const FieldSpan& f) const {
    std::string_view raw = data_.substr(f.begin, f.end - f.begin);
    if (!f.escapes) return std::string(raw);
    std::string text;
    text.reserve(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) {
      text += raw[i];
      if (raw[i] == '"') ++i;  // the second quote of a "" pair
    }
    return text;
  }

  Status row_value(const std::string& malformed, std::string& text, bool& is_null) const {
    if (!malformed.empty()) return corruption(malformed);
    if (fields_.size() != header_fields_) {
      return corruption(std::to_string(fields_.size()) + (fields_.size() == 1 ? " field" : " fields") +
                        ", the header has " + std::to_string(header_fields_));
    }
    if (whole_rows()) return whole_row(text, is_null);
    const FieldSpan& f = fields_[column_];
    is_null = !f.quoted && f.begin == f.end;
    if (is_null) {
      text.clear();
      return Status();
    }
    std::string value = field_text(f);
    if (!simdjson::validate_utf8(value.data(), value.size())) {
      return corruption("invalid UTF-8 in column '" + options_.column + "'");
    }
    if (options_.values_as_json) {
      text.clear();
      append_json_string(text, value);
    } else {
      text = std::move(value);
    }
    return Status();
  }

  bool whole_rows() const { return options_.values_as_json && options_.column.empty(); }

  // The record as {"name": "value", ...}: an empty unquoted field is null.
  Status whole_row(std::string& text, bool& is_null) const {
    is_null = false;
    text = "{";
    for (size_t i = 0; i < fields_.size(); ++i) {
      if (i > 0) text += ',';
      append_json_string(text, header_names_[i]);
      text += ':';
      const FieldSpan& f = fields_[i];
      if (!f.quoted && f.begin == f.end) {
        text += "null";
        continue;
      }
      const std::string value = field_text(f);
      if (!simdjson::validate_utf8(value.data(), value.size())) {
        return corruption("invalid UTF-8 in column '" + header_names_[i] + "'");
      }
      append_json_string(text, value);
    }
    text += '}';
    return Status();
  }

  std::string_view data_;
  std::vector<std::string> header_names_;
  std::vector<FieldSpan> fields_;
  size_t header_fields_ = 0;  // 0 until a header was read: no rows then
  size_t column_ = SIZE_MAX;
  int64_t line_ = 1;
  int64_t record_line_ = 1;
  int64_t rows_ = 0, rows_before_ = 0;
};

}  // namespace

Result<std::unique_ptr<RowSource>> open_csv_source(const std::string& path, const SourceOptions& options) {
  return open_mapped_source(path, options, &CsvSource::start);
}

}  // namespace infercost::io
