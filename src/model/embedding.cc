#include "model/embedding.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>
#include <vector>

#include "core/file.h"
#include "core/json_text.h"
#include "json_keys.h"

namespace infercost::model {

namespace {

using nlohmann::json;

constexpr std::array<std::pair<Pooling, const char*>, 4> kPoolingNames = {
    {{Pooling::kCls, "cls"},
     {Pooling::kMean, "mean"},
     {Pooling::kMax, "max"},
     {Pooling::kLastToken, "lasttoken"}}};

// 1_Pooling/config.json's modes: the ones the engine pools by, and the ones
// sentence-transformers has that it does not.
constexpr std::array<std::pair<const char*, Pooling>, 4> kPoolingModes = {{
    {"pooling_mode_cls_token", Pooling::kCls},
    {"pooling_mode_mean_tokens", Pooling::kMean},
    {"pooling_mode_max_tokens", Pooling::kMax},
    {"pooling_mode_lasttoken", Pooling::kLastToken},
}};
constexpr std::array<const char*, 2> kUnsupportedPoolingModes = {"pooling_mode_mean_sqrt_len_tokens",
                                                                 "pooling_mode_weightedmean_tokens"};

// A JSON file of the directory, parsed; null where it is absent and
// `required` is false.
Result<json> read_json(const std::string& path, bool required) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    if (required) return not_found(path + ": not found");
    return json();
  }
  INFERCOST_ASSIGN_OR_RETURN(std::string text, read_file(path));
  INFERCOST_RETURN_IF_ERROR(check_json_nesting(text, path));
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return corruption(path + ": not valid JSON");
  if (!doc.is_object() && !doc.is_array()) return corruption(path + ": not a JSON object");
  return doc;
}

// The class a modules.json entry names, without its package
// ("sentence_transformers.models.Pooling" -> "Pooling"); "" for a class
// outside sentence-transformers.
std::string_view module_class(std::string_view type) {
  if (!type.starts_with("sentence_transformers.")) return {};
  return type.substr(type.rfind('.') + 1);
}

// The pooling of a config sentence-transformers 6 writes: "pooling_mode",
// a mode's name or a list of them.
Status read_pooling_mode(const json& mode, const std::string& path, EmbeddingConfig& out) {
  const json* one = &mode;
  if (mode.is_array()) {
    if (mode.size() > 1) {
      return unsupported(path +
                         ": several pooling modes (their vectors concatenated): infercost pools by one");
    }
    if (mode.empty()) return corruption(path + ": 'pooling_mode' is an empty list");
    one = &mode[0];
  }
  if (!one->is_string())
    return corruption(path + ": 'pooling_mode' must be a mode's name, got " + mode.dump());
  Result<Pooling> pooling = parse_pooling(one->get<std::string>());
  if (!pooling.ok()) {
    return unsupported(
        fmt::format("{}: pooling mode '{}' is not one infercost runs (cls, mean, max, lasttoken)", path,
                    one->get<std::string>()));
  }
  out.pooling = *pooling;
  return Status();
}

// The pooling of a config older versions write: one true flag among the
// pooling_mode_* keys.
Status read_pooling_flags(const json& doc, const std::string& path, EmbeddingConfig& out) {
  for (const char* mode : kUnsupportedPoolingModes) {
    INFERCOST_ASSIGN_OR_RETURN(bool on, bool_key(doc, mode, false, path));
    if (on) {
      return unsupported(
          fmt::format("{}: '{}' is not a pooling infercost runs (cls, mean, max, lasttoken)", path, mode));
    }
  }
  int modes = 0;
  for (const auto& [key, pooling] : kPoolingModes) {
    INFERCOST_ASSIGN_OR_RETURN(bool on, bool_key(doc, key, false, path));
    if (!on) continue;
    ++modes;
    out.pooling = pooling;
  }
  if (modes == 0) return corruption(path + ": no pooling mode is true");
  if (modes > 1) {
    return unsupported(
        path + ": several pooling modes are true (their vectors concatenated): infercost pools by one");
  }
  return Status();
}

Status read_pooling(const std::string& path, int hidden, EmbeddingConfig& out) {
  INFERCOST_ASSIGN_OR_RETURN(json doc, read_json(path, true));
  if (!doc.is_object()) return corruption(path + ": not a JSON object");
  if (auto mode = doc.find("pooling_mode"); mode != doc.end()) {
    INFERCOST_RETURN_IF_ERROR(read_pooling_mode(*mode, path, out));
  } else {
    INFERCOST_RETURN_IF_ERROR(read_pooling_flags(doc, path, out));
  }
  for (const char* key : {"embedding_dimension", "word_embedding_dimension"}) {
    auto dim = doc.find(key);
    if (dim == doc.end() || dim->is_null()) continue;
    if (!dim->is_number_integer()) return corruption(fmt::format("{}: '{}' must be an integer", path, key));
    if (dim->get<int64_t>() != hidden) {
      return corruption(fmt::format("{}: '{}' is {}, but the encoder's hidden size is {}", path, key,
                                    dim->get<int64_t>(), hidden));
    }
  }
  INFERCOST_ASSIGN_OR_RETURN(out.include_prompt, bool_key(doc, "include_prompt", true, path));
  return Status();
}

Status read_sentence_config(const std::string& path, EmbeddingConfig& out) {
  INFERCOST_ASSIGN_OR_RETURN(json doc, read_json(path, false));
  if (doc.is_null()) return Status();
  if (!doc.is_object()) return corruption(path + ": not a JSON object");
  INFERCOST_ASSIGN_OR_RETURN(bool lower, bool_key(doc, "do_lower_case", false, path));
  if (lower)
    return unsupported(path +
                       ": 'do_lower_case' is true: infercost does not lowercase texts before tokenizing");
  auto it = doc.find("max_seq_length");
  if (it != doc.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > (1 << 20)) {
      return corruption(path + ": 'max_seq_length' must be a positive integer, got " + it->dump());
    }
    out.max_seq_length = static_cast<int>(it->get<int64_t>());
  }
  return Status();
}

Status read_prompts(const std::string& path, EmbeddingConfig& out) {
  INFERCOST_ASSIGN_OR_RETURN(json doc, read_json(path, false));
  if (doc.is_null()) return Status();
  if (!doc.is_object()) return corruption(path + ": not a JSON object");
  auto prompts = doc.find("prompts");
  if (prompts != doc.end() && !prompts->is_null()) {
    if (!prompts->is_object()) return corruption(path + ": 'prompts' must be an object of strings");
    for (const auto& [name, text] : prompts->items()) {
      if (!text.is_string()) return corruption(fmt::format("{}: prompt '{}' must be a string", path, name));
      out.prompts[name] = text.get<std::string>();
    }
  }
  auto name = doc.find("default_prompt_name");
  if (name != doc.end() && !name->is_null()) {
    if (!name->is_string()) return corruption(path + ": 'default_prompt_name' must be a string");
    out.default_prompt_name = name->get<std::string>();
    if (!out.prompts.contains(out.default_prompt_name)) {
      return corruption(fmt::format("{}: 'default_prompt_name' '{}' is not one of its prompts", path,
                                    out.default_prompt_name));
    }
  }
  return Status();
}

}  // namespace

const char* pooling_name(Pooling pooling) {
  for (const auto& [p, name] : kPoolingNames) {
    if (p == pooling) return name;
  }
  return "?";
}

Result<Pooling> parse_pooling(const std::string& name) {
  for (const auto& [p, n] : kPoolingNames) {
    if (name == n) return p;
  }
  return invalid_argument("pooling '" + name + "': expected cls, mean, max or lasttoken");
}

Result<std::optional<EmbeddingConfig>> read_sentence_transformers(const std::string& dir, int hidden) {
  const std::string modules_path = dir + "/modules.json";
  INFERCOST_ASSIGN_OR_RETURN(json modules, read_json(modules_path, false));
  if (modules.is_null()) return std::optional<EmbeddingConfig>();
  if (!modules.is_array()) return corruption(modules_path + ": not a JSON array of modules");
  EmbeddingConfig out;
  out.dimensions = hidden;
  // The modules in order: the Transformer (this directory's encoder), one
  // Pooling, and at most one Normalize, last.
  std::vector<std::string> seen;
  for (const json& m : modules) {
    auto type = m.is_object() ? m.find("type") : json::const_iterator();
    if (!m.is_object() || type == m.end() || !type->is_string()) {
      return corruption(modules_path + ": every module must be an object with a string 'type'");
    }
    const std::string type_name = type->get<std::string>();
    const std::string_view cls = module_class(type_name);
    std::string path;
    if (auto p = m.find("path"); p != m.end() && p->is_string()) path = p->get<std::string>();
    const std::string expected = seen.empty() ? "Transformer" : seen.size() == 1 ? "Pooling" : "Normalize";
    if (cls != "Transformer" && cls != "Pooling" && cls != "Normalize") {
      return unsupported(
          fmt::format("{}: module '{}' is not one infercost runs (Transformer, Pooling, Normalize)",
                      modules_path, type_name));
    }
    if (cls != expected || seen.size() > 2) {
      return unsupported(
          fmt::format("{}: modules in the order {} then {}: infercost runs Transformer, Pooling "
                      "and an optional Normalize, in that order",
                      modules_path, seen.empty() ? "(start)" : seen.back(), cls));
    }
    if (cls == "Transformer" && !path.empty()) {
      return unsupported(
          fmt::format("{}: the Transformer module is in the subfolder '{}': infercost reads the "
                      "encoder at the directory's top only",
                      modules_path, path));
    }
    if (cls == "Pooling")
      INFERCOST_RETURN_IF_ERROR(read_pooling(dir + "/" + path + "/config.json", hidden, out));
    if (cls == "Normalize") out.normalize = true;
    seen.emplace_back(cls);
  }
  if (seen.size() < 2)
    return unsupported(modules_path +
                       ": no Pooling module: the encoder's token vectors are not one vector per text");
  INFERCOST_RETURN_IF_ERROR(read_sentence_config(dir + "/sentence_bert_config.json", out));
  INFERCOST_RETURN_IF_ERROR(read_prompts(dir + "/config_sentence_transformers.json", out));
  return std::optional<EmbeddingConfig>(std::move(out));
}

int sentence_transformers_max_length(const EmbeddingConfig& st, int positions) {
  return st.max_seq_length > 0 ? std::min(st.max_seq_length, positions) : 0;
}

}  // namespace infercost::model
