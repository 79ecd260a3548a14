#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/file.h"
#include "text_sources.h"

namespace infercost::io {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

std::string shown(char c) {
  if (static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f)
    return std::string("'") + c + "'";
  char buf[8];
  std::snprintf(buf, sizeof(buf), "0x%02x", static_cast<unsigned char>(c));
  return buf;
}

// Reads the elements of one top-level array without parsing the array as a
// whole: a scanner that knows only strings, escapes and bracket nesting finds
// each element's byte range, and simdjson parses that element alone, so
// memory is bounded by the largest element.
class JsonArraySource final : public MappedTextSource {
 public:
  JsonArraySource(MappedFile file, SourceOptions options)
      : MappedTextSource(std::move(file), std::move(options)) {}

  // Consumes the opening '[' and checks the first element for the column.
  Status start() {
    data_ = file_.view();
    INFERCOST_RETURN_IF_ERROR(check_utf8_bom(file_.path(), data_));
    pos_ = bom_length(data_);
    skip_space(pos_, line_);
    if (pos_ == data_.size()) {  // an empty file holds no rows
      state_ = State::kDone;
      return Status();
    }
    if (data_[pos_] != '[') {
      return located(line_, "expected a JSON array of objects at the top level, found " + shown(data_[pos_]));
    }
    array_line_ = line_;
    ++pos_;
    state_ = State::kFirst;
    // Peek at the first element without consuming it.
    size_t pos = pos_;
    int64_t line = line_;
    skip_space(pos, line);
    if (pos == data_.size() || data_[pos] == ']') return Status();
    size_t end = 0, stop = 0;
    int64_t end_line = line;
    if (!scan_element(pos, end, stop, end_line).ok()) return Status();  // reported when read
    simdjson::dom::element doc;
    if (parser_.parse(data_.substr(pos, end - pos)).get(doc)) return Status();
    return check_first_object(file_.path(), doc, options_.column);
  }

  Result<size_t> next(size_t max_rows, RowBatch& out) override {
    size_t appended = 0;
    while (appended < max_rows && state_ != State::kDone) {
      skip_space(pos_, line_);
      if (pos_ == data_.size()) return unterminated();
      char c = data_[pos_];
      if (state_ == State::kSeparator) {
        if (c == ',') {
          ++pos_;
          state_ = State::kValue;
          continue;
        }
        if (c == ']') {
          INFERCOST_RETURN_IF_ERROR(finish());
          break;
        }
        return located(line_, "expected ',' or ']' after an array element, found " + shown(c));
      }
      if (c == ']') {
        if (state_ == State::kValue) return located(line_, "expected a value after ',', found ']'");
        INFERCOST_RETURN_IF_ERROR(finish());
        break;
      }
      const int64_t element_line = line_;
      size_t end = 0, stop = 0;
      INFERCOST_RETURN_IF_ERROR(scan_element(pos_, end, stop, line_));
      std::string_view element = data_.substr(pos_, end - pos_);
      pos_ = stop;
      state_ = State::kSeparator;
      INFERCOST_ASSIGN_OR_RETURN(bool added,
                                 add_row(out, element_line, [&](std::string& text, bool& is_null) {
                                   return parser_.parse_row(element, options_, text, is_null);
                                 }));
      if (added) ++appended;
    }
    rows_ += static_cast<int64_t>(appended);
    return appended;
  }

  // At the end (the array closed) the offset is the file's size, which no
  // element can end at.
  SourcePosition position() const override {
    return {rows_before_ + rows_ + bad_.skipped(), state_ == State::kDone ? data_.size() : pos_, line_};
  }

  // After start(): a position with rows is just past an element (before its
  // ',' or the closing ']'); what follows is checked as it is read.
  Status seek(const SourcePosition& at) override {
    if (at.rows == 0 && at.offset <= pos_) return Status();
    if (state_ == State::kDone || at.rows < 0 || at.offset <= pos_ || at.offset > data_.size() ||
        at.line < line_) {
      return invalid_argument(file_.path() + ": cannot continue at byte " + std::to_string(at.offset) +
                              ": not a position after an element of this file's array");
    }
    pos_ = at.offset;
    line_ = at.line;
    rows_before_ = at.rows;
    state_ = at.offset == data_.size() ? State::kDone : State::kSeparator;
    return Status();
  }

 private:
  enum class State { kFirst, kValue, kSeparator, kDone };
  // Bracket kinds are remembered this deep; deeper elements fail simdjson's
  // own depth limit anyway, so only their nesting count matters.
  static constexpr size_t kTrackedDepth = 1024;

  Status located(int64_t line, const std::string& message) const {
    return corruption(where(line) + ": " + message);
  }
  Status unterminated() const {
    return located(array_line_, "the JSON array opened here is not closed before the end of the file");
  }

  void skip_space(size_t& pos, int64_t& line) const {
    while (pos < data_.size() && is_space(data_[pos])) {
      if (data_[pos] == '\n') ++line;
      ++pos;
    }
  }

  Status finish() {
    ++pos_;  // the closing ']'
    skip_space(pos_, line_);
    if (pos_ != data_.size()) {
      return located(line_, "unexpected " + shown(data_[pos_]) + " after the end of the JSON array");
    }
    state_ = State::kDone;
    return Status();
  }

  // Finds where the element starting at `begin` ends: at the ',' or ']'
  // that closes it at nesting depth 0: `end` excludes trailing blanks,
  // `stop` is that ',' or ']', and `line` is the line of `stop`.
  Status scan_element(size_t begin, size_t& end, size_t& stop, int64_t& line) {
    const int64_t start_line = line;
    kinds_.clear();
    size_t depth = 0;
    bool in_string = false;
    size_t pos = begin;
    size_t last_nonspace = begin;
    // At depth 0 a value is complete once a closing bracket, a closing
    // quote or a blank ends it; anything but ',' or ']' after that is left
    // for the caller to report as a missing separator.
    bool complete = false;
    for (; pos < data_.size(); ++pos) {
      const char c = data_[pos];
      if (c == '\n') ++line;
      if (in_string) {
        if (c == '\\') {
          if (pos + 1 < data_.size() && data_[pos + 1] == '\n') ++line;
          ++pos;
        } else if (c == '"') {
          in_string = false;
          if (depth == 0) complete = true;
        }
        last_nonspace = pos;
        continue;
      }
      if (depth == 0) {
        if (c == ',' || c == ']') break;
        if (is_space(c)) {
          complete = true;
          continue;
        }
        if (complete) break;
      }
      if (!is_space(c)) last_nonspace = pos;
      if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        if (depth < kTrackedDepth) kinds_.push_back(c);
        ++depth;
      } else if (c == '}' || c == ']') {
        if (depth == 0) return located(line, "unmatched " + shown(c));
        if (depth <= kTrackedDepth) {
          const char open = kinds_.back();
          kinds_.pop_back();
          if ((open == '{') != (c == '}')) {
            return located(line, "mismatched " + shown(c) + " closes " + shown(open) +
                                     " (in the element that starts on line " + std::to_string(start_line) +
                                     ")");
          }
        }
        if (--depth == 0) complete = true;
      }
    }
    if (pos >= data_.size()) {
      if (in_string || depth > 0) {
        return located(start_line,
                       "the array element that starts here is not closed before the end of the file");
      }
      return unterminated();
    }
    end = std::min(pos, last_nonspace + 1);
    stop = pos;
    return Status();
  }

  std::string_view data_;
  JsonRowParser parser_;
  std::vector<char> kinds_;
  State state_ = State::kDone;
  int64_t line_ = 1;
  int64_t rows_ = 0, rows_before_ = 0;
  int64_t array_line_ = 1;
};

}  // namespace

Result<std::unique_ptr<RowSource>> open_json_array_source(const std::string& path,
                                                          const SourceOptions& options) {
  return open_mapped_source(path, options, &JsonArraySource::start);
}

}  // namespace infercost::io
