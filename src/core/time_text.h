// The current time as text, for records and checkpoints.
#pragma once

#include <string>

namespace infercost {

// Now, UTC, ISO 8601 to the second: "2026-12-01T20:15:03Z".
std::string utc_now_iso8601();

}  // namespace infercost
