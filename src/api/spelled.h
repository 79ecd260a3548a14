// The API's errors name settings as ModelOptions / RunOptions members: the
// engine's "{max_length}" spelled "max_length" (pipeline/settings.h).
#pragma once

#include <utility>

#include "infercost/status.h"
#include "pipeline/settings.h"

namespace infercost::api {

inline Status spelled(const Status& status) {
  return pipeline::spell_settings(status, pipeline::Spelling::kName);
}

template <typename T>
Result<T> spelled(Result<T> result) {
  if (result.ok()) return result;
  return spelled(result.status());
}

}  // namespace infercost::api
