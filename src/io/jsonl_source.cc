// JSON lines input: one JSON object per line, the text in one field (a JSON
// null there is a null row). The file is memory-mapped and read line by line,
// so memory does not grow with the file. Blank lines are ignored. Not
// thread-safe.
#include <simdjson.h>

#include <cstring>
#include <memory>
#include <string>

#include "core/file.h"
#include "text_sources.h"

namespace infercost::io {

namespace {

bool is_blank(std::string_view s) {
  for (char c : s) {
    if (c != ' ' && c != '\t' && c != '\r') return false;
  }
  return true;
}

std::string type_name(simdjson::dom::element_type t) {
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

class JsonlSource final : public MappedTextSource {
 public:
  JsonlSource(MappedFile file, SourceOptions options)
      : MappedTextSource(std::move(file), std::move(options)) {
    pos_ = bom_length(file_.view());
  }

  // The first non-blank line, when it is an object, must have the column.
  Status check_column() {
    INFERCOST_RETURN_IF_ERROR(check_utf8_bom(file_.path(), file_.view()));
    std::string_view all = file_.view();
    size_t pos = pos_;
    while (pos < all.size()) {
      size_t end = all.find('\n', pos);
      if (end == std::string_view::npos) end = all.size();
      std::string_view line = all.substr(pos, end - pos);
      pos = end + 1;
      if (is_blank(line)) continue;
      simdjson::dom::element doc;
      if (parser_.parse(line).get(doc)) return Status();  // reported as a bad row when read
      return check_first_object(file_.path(), doc, options_.column);
    }
    return Status();
  }

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
      INFERCOST_ASSIGN_OR_RETURN(bool added, add_row(out, line_no_, [&](std::string& text, bool& is_null) {
                                   return parser_.parse_row(line, options_, text, is_null);
                                 }));
      if (added) ++appended;
    }
    if (pos_ > all.size()) pos_ = all.size();
    rows_ += static_cast<int64_t>(appended);
    return appended;
  }

  SourcePosition position() const override { return {rows_before_ + rows_ + bad_.skipped(), pos_, line_no_}; }

  Status seek(const SourcePosition& at) override {
    INFERCOST_RETURN_IF_ERROR(check_line_start(at, bom_length(file_.view()), 0, "line"));
    pos_ = at.offset;
    line_no_ = at.line;
    rows_before_ = at.rows;
    return Status();
  }

 private:
  JsonRowParser parser_;
  int64_t line_no_ = 0;
  int64_t rows_ = 0, rows_before_ = 0;
};

}  // namespace

Status json_column_value(simdjson::dom::element row, const SourceOptions& options, std::string& text,
                         bool& is_null) {
  simdjson::dom::object obj;
  if (row.get_object().get(obj)) return corruption("expected a JSON object, found " + type_name(row.type()));
  if (options.values_as_json && options.column.empty()) {  // the whole row
    is_null = false;
    text = simdjson::minify(row);
    return Status();
  }
  simdjson::dom::element value;
  if (obj.at_key(options.column).get(value)) return corruption("no column '" + options.column + "'");
  is_null = value.is_null();
  if (is_null) {
    text.clear();
  } else if (options.values_as_json) {
    text = simdjson::minify(value);
  } else if (value.is_string()) {
    std::string_view sv = value.get_string().value_unsafe();
    text.assign(sv.data(), sv.size());
  } else {
    return corruption("column '" + options.column + "' is " + type_name(value.type()) +
                      ", expected a string or null");
  }
  return Status();
}

Status check_first_object(const std::string& path, simdjson::dom::element first, const std::string& column) {
  if (column.empty()) return Status();  // whole rows
  simdjson::dom::object obj;
  if (first.get_object().get(obj)) return Status();  // not an object: a bad row, reported when read
  simdjson::dom::element value;
  if (!obj.at_key(column).get(value)) return Status();
  std::string keys;
  for (auto field : obj) {
    if (!keys.empty()) keys += ", ";
    keys.append(field.key.data(), field.key.size());
  }
  return not_found(path + ": no column '" + column +
                   "' (the first object has: " + (keys.empty() ? std::string("no fields") : keys) + ")");
}

Result<std::unique_ptr<RowSource>> open_jsonl_source(const std::string& path, const SourceOptions& options) {
  return open_mapped_source(path, options, &JsonlSource::check_column);
}

}  // namespace infercost::io
