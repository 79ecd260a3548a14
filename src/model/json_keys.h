// Reading optional keys of a model directory's JSON files, with errors that
// name the file and the key. Private to src/model.
#pragma once

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "infercost/status.h"

namespace infercost::model {

// doc[key] as a bool; `fallback` where it is absent or null.
inline Result<bool> bool_key(const nlohmann::json& doc, const char* key, bool fallback,
                             const std::string& source) {
  auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) return fallback;
  if (!it->is_boolean())
    return corruption(fmt::format("{}: '{}' must be true or false, got {}", source, key, it->dump()));
  return it->get<bool>();
}

}  // namespace infercost::model
