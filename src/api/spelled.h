// The API's errors name settings as ModelOptions / RunOptions members: the
// engine's "{max_length}" spelled "max_length" (engine/settings.h).
#pragma once

#include <utility>

#include "engine/settings.h"
#include "infercost/status.h"

namespace infercost::api {

inline Status spelled(const Status& status) {
  return engine::spell_settings(status, engine::Spelling::kName);
}

template <typename T>
Result<T> spelled(Result<T> result) {
  if (result.ok()) return result;
  return spelled(result.status());
}

}  // namespace infercost::api
