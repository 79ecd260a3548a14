// The file run is written in the engine's terms: within infercost::run the
// engine's names (Encoder, BatchPolicy, check_settings, ...) need no prefix.
#pragma once

namespace infercost::engine {}

namespace infercost::run {
using namespace infercost::engine;
}  // namespace infercost::run
