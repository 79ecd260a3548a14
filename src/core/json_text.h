// JSON text helpers shared by every writer of JSON.
#pragma once

#include <string>
#include <string_view>

#include "infercost/status.h"

namespace infercost {

// How deep objects and arrays may nest in any JSON document infercost reads
// (tokenizer.json, config.json, modules.json, checkpoints, records, price
// lists, sweeps): real ones nest a few levels; a hostile one 50,000 deep would
// overflow the stack of whatever walks it.
inline constexpr int kMaxJsonNesting = 128;

// kCorruption "<origin>: byte N: JSON nests deeper than 128 levels" where
// `text` opens more objects and arrays than `max_depth` at once, checked
// before anything parses or walks it (strings skipped; the text need not be
// valid JSON: the parser says what else is wrong).
Status check_json_nesting(std::string_view text, const std::string& origin, int max_depth = kMaxJsonNesting);

// Appends `text` (UTF-8, passed through) to `out` as a quoted JSON string:
// '"' and '\\' escaped with a backslash, \n \r \t as such, other bytes below
// 0x20 as \u00XX.
void append_json_string(std::string& out, std::string_view text);

// As above for bytes that may not be UTF-8 (binary columns): bytes >= 0x80
// are escaped as \u00XX too, so the result is always valid JSON.
void append_json_bytes(std::string& out, std::string_view bytes);

}  // namespace infercost
