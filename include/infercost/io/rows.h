// Rows as they leave the readers: the text column plus where each row came
// from, so errors and outputs can name the file and line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace infercost::io {

struct RowBatch {
  std::vector<std::string> texts;
  std::vector<int64_t> lines;  // 1-based line (JSON lines) of each row
  void clear() {
    texts.clear();
    lines.clear();
  }
  size_t size() const { return texts.size(); }
};

// What a reader does with a bad row (malformed JSON, missing or non-string
// column, invalid UTF-8): stop with an error, or skip it and count it.
enum class OnBadRow { kFail, kSkip };

}  // namespace infercost::io
