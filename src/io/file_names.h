// Text helpers of the readers and writers: formats told from file names and
// flags, label column names.
#pragma once

#include <string>

namespace infercost::io {

// `text` with its ASCII letters lowercased ("Data.JSONL" -> "data.jsonl").
inline std::string lowercase_ascii(std::string text) {
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

}  // namespace infercost::io
