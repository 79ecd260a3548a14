// Rows as they leave the readers: the text column plus where each row came
// from, so errors and outputs can name the file and line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "infercost/options.h"  // OnBadRow, kDefaultTextColumn

namespace infercost::io {

struct RowBatch {
  std::vector<std::string> texts;  // empty for a null row
  std::vector<uint8_t> is_null;    // 1: the column is null in this row (kept as a row, not an error)
  std::vector<int64_t> lines;      // 1-based line (JSON, CSV) or row (Parquet) of each row in its file
  void add(std::string text, bool null, int64_t line) {
    texts.push_back(std::move(text));
    is_null.push_back(null ? 1 : 0);
    lines.push_back(line);
  }
  void clear() {
    texts.clear();
    is_null.clear();
    lines.clear();
  }
  size_t size() const { return texts.size(); }
};

}  // namespace infercost::io
