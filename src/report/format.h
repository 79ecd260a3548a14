// Number and text formatting for reports. Every function is deterministic
// (fixed rules, no locale, no clock) so that report goldens are stable, and
// every number it prints carries its unit where the unit is not in a column
// header.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "record/record.h"

namespace infercost::report {

// `value` with `digits` significant digits in plain decimal notation (no
// exponent), at most 9 decimals: sig(0.0012345) = "0.00123",
// sig(1234.6) = "1235" (integer part never rounded away), sig(0) = "0".
std::string sig(double value, int digits = 3);

// 120000 -> "120,000".
std::string count(int64_t value);

// A duration with a unit chosen by its size: "0.412 s", "12.3 s", "4.50 min",
// "2.25 h", "3.10 days".
std::string duration(double seconds);

// "$0.00712", "$1.23", "$1235" (3 significant digits).
std::string usd(double value);

// An hourly price with up to 4 significant digits and no trailing zeros:
// "$4.233/h", "$12.5/h", "$0.2184/h".
std::string hourly(double usd_per_hour);

// `value` with up to `digits` significant digits, trailing zeros dropped:
// 12.50 -> "12.5", 20.0 -> "20".
std::string trimmed(double value, int digits);

// A fraction as a percentage with one decimal: 0.3312 -> "33.1%".
std::string percent(double fraction);

// Bytes in GiB with 3 significant digits: "1.23 GiB".
std::string gib(double bytes);

// A ratio with one decimal and an "x": 3.14 -> "3.1x".
std::string times(double ratio);

// Half the min-max range as a percentage of the median: "± 2.1%"
// ("± 0.0%" for a single repetition, "" when the median is 0).
std::string plus_minus(const record::Spread& spread);

// Tick labels: plain decimals with `decimals` places; values of 10,000 and
// more as "10k", "1.5M".
std::string tick_label(double value, int decimals);

// The items with `sep` between them and `last_sep` before the last:
// join({"a", "b", "c"}, ", ", " and ") = "a, b and c".
std::string join(const std::vector<std::string>& items, const std::string& sep, const std::string& last_sep);

// Escapes &, <, >, " and ' for XML and HTML text and attribute values.
std::string xml_escape(std::string_view text);

// Escapes the Markdown characters that would change the meaning of plain
// text (\ ` * _ [ ] < > | and a leading #).
std::string markdown_escape(std::string_view text);

}  // namespace infercost::report
