// Number formatting shared by the human-readable outputs.
#pragma once

#include <cstdint>
#include <string>

namespace infercost {

// 1234567 -> "1,234,567"; -1234 -> "-1,234".
inline std::string group_thousands(int64_t value) {
  const uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  const std::string digits = std::to_string(magnitude);
  std::string out = value < 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace infercost
