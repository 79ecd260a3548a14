// Writes a small output (metrics, a plan) whole through AtomicOutputFile:
// the file appears at its path complete, or not at all.
#pragma once

#include <string>
#include <string_view>

#include "infercost/status.h"

namespace infercost::io {

Status write_whole_file(const std::string& path, std::string_view text);

}  // namespace infercost::io
