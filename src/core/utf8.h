// UTF-8 validation shared by the readers and renderers.
#pragma once

#include <cstddef>
#include <string_view>

namespace infercost {

// Offset of the first byte of s that does not start a valid UTF-8 sequence
// (overlong forms, surrogates and code points above U+10FFFF are invalid), or
// std::string_view::npos when all of s is valid.
size_t find_invalid_utf8(std::string_view s);

inline bool is_valid_utf8(std::string_view s) {
  return find_invalid_utf8(s) == std::string_view::npos;
}

}  // namespace infercost
