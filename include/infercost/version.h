// The infercost version, shown by --version and written into benchmark records.
#pragma once

namespace infercost {

inline constexpr const char* kVersion = "0.1.0";

}  // namespace infercost
