#include "report/format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/numbers.h"

namespace infercost::report {

std::string sig(double value, int digits) {
  if (!std::isfinite(value)) return "n/a";
  if (value == 0) return "0";
  const int exponent = int(std::floor(std::log10(std::fabs(value))));
  int decimals = std::clamp(digits - 1 - exponent, 0, 9);
  std::string s = fmt::format("{:.{}f}", value, decimals);
  // Rounding up may add a digit (9.996 -> "10.00"): drop one decimal then.
  if (decimals > 0 && std::fabs(std::strtod(s.c_str(), nullptr)) >= std::pow(10.0, exponent + 1)) {
    s = fmt::format("{:.{}f}", value, decimals - 1);
  }
  if (s.find_first_not_of("-0.") == std::string::npos) return "0";
  return s;
}

std::string count(int64_t value) {
  return group_thousands(value);
}

std::string duration(double seconds) {
  if (!std::isfinite(seconds)) return "n/a";
  if (seconds < 60) return sig(seconds) + " s";
  if (seconds < 3600) return sig(seconds / 60) + " min";
  if (seconds < 48 * 3600) return sig(seconds / 3600) + " h";
  return sig(seconds / 86400) + " days";
}

std::string usd(double value) {
  return fmt::format("${}", sig(value, 3));
}

std::string percent(double fraction) {
  if (!std::isfinite(fraction)) return "n/a";
  const double p = fraction * 100;
  return fmt::format("{:.1f}%", std::fabs(p) < 0.05 ? 0.0 : p);
}

std::string gib(double bytes) {
  return sig(bytes / (1024.0 * 1024.0 * 1024.0)) + " GiB";
}

std::string times(double ratio) {
  return fmt::format("{:.1f}x", ratio);
}

std::string plus_minus(const record::Spread& spread) {
  if (spread.median == 0 || !std::isfinite(spread.median)) return "";
  const double half = (spread.max - spread.min) / 2 / std::fabs(spread.median) * 100;
  return fmt::format("± {:.1f}%", std::fabs(half) < 0.05 ? 0.0 : half);
}

std::string trimmed(double value, int digits) {
  std::string s = sig(value, digits);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

std::string hourly(double usd_per_hour) {
  return fmt::format("${}/h", trimmed(usd_per_hour, 4));
}

std::string tick_label(double value, int decimals) {
  if (std::fabs(value) >= 1e6) return trimmed(value / 1e6, 4) + "M";
  if (std::fabs(value) >= 1e4) return trimmed(value / 1e3, 4) + "k";
  std::string s = fmt::format("{:.{}f}", value, std::clamp(decimals, 0, 9));
  if (s.find_first_not_of("-0.") == std::string::npos) return decimals > 0 ? s.substr(s[0] == '-') : "0";
  return s;
}

std::string join(const std::vector<std::string>& items, const std::string& sep, const std::string& last_sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += (i + 1 == items.size()) ? last_sep : sep;
    out += items[i];
  }
  return out;
}

std::string xml_escape(std::string_view text) {
  // kSpecial[i] is written as kEntity[i].
  static constexpr std::string_view kSpecial = "&<>\"'";
  static constexpr const char* kEntity[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;"};
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const size_t k = kSpecial.find(c);
    if (k == std::string_view::npos) {
      out += c;
    } else {
      out += kEntity[k];
    }
  }
  return out;
}

std::string markdown_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (c) {
      case '\\':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
      case '<':
      case '>':
      case '|': out += '\\'; break;
      case '#':
        if (i == 0) out += '\\';
        break;
      case '\n': out += ' '; continue;
      default: break;
    }
    out += c;
  }
  return out;
}

}  // namespace infercost::report
