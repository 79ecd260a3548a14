// Names of enum values kept as a table indexed by value, instead of a switch
// that lists every value again.
#pragma once

#include <cstddef>

namespace infercost {

// names[value], or `unknown` where `value` is past the table or its entry is
// null (a value the enum skips).
template <typename E, size_t N>
constexpr const char* enum_name(E value, const char* const (&names)[N], const char* unknown = "?") {
  const long long i = static_cast<long long>(value);
  if (i < 0 || i >= static_cast<long long>(N) || names[i] == nullptr) return unknown;
  return names[i];
}

}  // namespace infercost
