// JSON text helpers shared by every writer of JSON.
#pragma once

#include <string>
#include <string_view>

namespace infercost {

// Appends `text` (UTF-8, passed through) to `out` as a quoted JSON string:
// '"' and '\\' escaped with a backslash, \n \r \t as such, other bytes below
// 0x20 as \u00XX.
void append_json_string(std::string& out, std::string_view text);

// As above for bytes that may not be UTF-8 (binary columns): bytes >= 0x80
// are escaped as \u00XX too, so the result is always valid JSON.
void append_json_bytes(std::string& out, std::string_view bytes);

}  // namespace infercost
