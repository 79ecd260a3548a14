#include "text/tokenizer_json.h"

#include <nlohmann/json.hpp>
#include <string>

#include "core/file.h"
#include "core/json_text.h"
#include "text/tokenizer.h"

namespace infercost::text {
namespace {

using nlohmann::json;

// The fields we read; each step names what it looked for so a malformed file
// reports "tokenizer.json: model.vocab: ..." rather than a bare type error.
Status read_normalizer(const json& j, TokenizerOptions& o) {
  if (j.is_null()) {
    // No normalizer: HF leaves the text as it is.
    o.clean_text = false;
    o.tokenize_chinese_chars = false;
    o.lowercase = false;
    o.strip_accents = false;
    return Status::ok_status();
  }
  const std::string type = j.value("type", "");
  if (type != "BertNormalizer") return unsupported("normalizer type '" + type + "' (only BertNormalizer)");
  if (j.contains("clean_text")) o.clean_text = j.at("clean_text").get<bool>();
  if (j.contains("handle_chinese_chars")) o.tokenize_chinese_chars = j.at("handle_chinese_chars").get<bool>();
  if (j.contains("lowercase")) o.lowercase = j.at("lowercase").get<bool>();
  if (j.contains("strip_accents")) {
    const json& s = j.at("strip_accents");
    o.strip_accents = s.is_null() ? std::nullopt : std::optional<bool>(s.get<bool>());
  }
  return Status::ok_status();
}

Status read_post_processor(const json& j, TokenizerOptions& o) {
  if (j.is_null()) {
    o.add_special_tokens = false;
    return Status::ok_status();
  }
  const std::string type = j.value("type", "");
  if (type == "BertProcessing") {
    o.cls_token = j.at("cls").at(0).get<std::string>();
    o.sep_token = j.at("sep").at(0).get<std::string>();
    return Status::ok_status();
  }
  if (type == "TemplateProcessing") {
    // Single-sequence template: [CLS] $A [SEP] is all we support.
    const json& single = j.at("single");
    if (single.size() != 3 || !single.at(0).contains("SpecialToken") || !single.at(1).contains("Sequence") ||
        !single.at(2).contains("SpecialToken")) {
      return unsupported("post_processor template other than '<special> $A <special>'");
    }
    o.cls_token = single.at(0).at("SpecialToken").at("id").get<std::string>();
    o.sep_token = single.at(2).at("SpecialToken").at("id").get<std::string>();
    return Status::ok_status();
  }
  return unsupported("post_processor type '" + type + "'");
}

}  // namespace

Result<TokenizerJson> detail::wordpiece_from_tokenizer_json(const json& root, TokenizerOptions defaults) {
  TokenizerJson out;
  TokenizerOptions& o = defaults;

  const json& model = root.at("model");
  const std::string model_type = model.value("type", "");
  if (model_type != "WordPiece") return unsupported("model type '" + model_type + "' (only WordPiece)");
  if (model.contains("unk_token")) o.unk_token = model.at("unk_token").get<std::string>();
  if (model.contains("continuing_subword_prefix")) {
    o.continuing_subword_prefix = model.at("continuing_subword_prefix").get<std::string>();
  }
  if (model.contains("max_input_chars_per_word")) {
    o.max_input_chars_per_word = model.at("max_input_chars_per_word").get<int>();
  }

  std::vector<std::string> tokens;
  std::vector<bool> present;
  auto place = [&](const std::string& token, int64_t id, const char* where) -> Status {
    if (id < 0 || id > 100'000'000)
      return corruption(std::string(where) + ": id " + std::to_string(id) + " out of range");
    const auto i = static_cast<size_t>(id);
    if (i >= tokens.size()) {
      tokens.resize(i + 1);
      present.resize(i + 1, false);
    }
    if (present[i] && tokens[i] != token) {
      return corruption(std::string(where) + ": id " + std::to_string(id) + " is both '" + tokens[i] +
                        "' and '" + token + "'");
    }
    tokens[i] = token;
    present[i] = true;
    return Status::ok_status();
  };
  const json& vocab = model.at("vocab");
  if (!vocab.is_object()) return corruption("model.vocab is not an object");
  for (const auto& [token, id] : vocab.items()) {
    INFERCOST_RETURN_IF_ERROR(place(token, id.get<int64_t>(), "model.vocab"));
  }

  std::vector<std::string> added;
  if (root.contains("added_tokens")) {
    for (const json& a : root.at("added_tokens")) {
      const std::string content = a.at("content").get<std::string>();
      for (const char* flag : {"normalized", "lstrip", "rstrip", "single_word"}) {
        if (a.value(flag, false)) {
          return unsupported("added token '" + content + "' has " + flag + "=true (only plain added tokens)");
        }
      }
      INFERCOST_RETURN_IF_ERROR(place(content, a.at("id").get<int64_t>(), "added_tokens"));
      added.push_back(content);
    }
    o.added_tokens = added;
  }
  for (size_t i = 0; i < present.size(); ++i) {
    if (!present[i]) return corruption("model.vocab: no token has id " + std::to_string(i));
  }
  if (tokens.empty()) return corruption("model.vocab is empty");

  if (root.contains("normalizer")) INFERCOST_RETURN_IF_ERROR(read_normalizer(root.at("normalizer"), o));
  if (root.contains("pre_tokenizer")) {
    const json& pre = root.at("pre_tokenizer");
    const std::string type = pre.is_null() ? "null" : pre.value("type", "");
    if (type != "BertPreTokenizer")
      return unsupported("pre_tokenizer type '" + type + "' (only BertPreTokenizer)");
  }
  if (root.contains("post_processor"))
    INFERCOST_RETURN_IF_ERROR(read_post_processor(root.at("post_processor"), o));
  if (root.contains("truncation") && !root.at("truncation").is_null()) {
    const json& t = root.at("truncation");
    if (t.value("direction", "Right") != "Right") return unsupported("truncation direction other than Right");
    o.max_length = t.at("max_length").get<int>();
  }
  if (root.contains("padding") && !root.at("padding").is_null()) {
    const json& p = root.at("padding");
    if (p.contains("pad_token")) o.pad_token = p.at("pad_token").get<std::string>();
  }

  out.vocab = Vocab::from_tokens(std::move(tokens));
  out.options = std::move(o);
  return out;
}

Result<TokenizerJson> load_tokenizer_json(const std::string& path, TokenizerOptions defaults) {
  INFERCOST_ASSIGN_OR_RETURN(std::string data, read_file(path));
  INFERCOST_RETURN_IF_ERROR(check_json_nesting(data, path));
  Result<TokenizerJson> result = corruption("unparsed");
  try {
    const json root = json::parse(data, nullptr, /*allow_exceptions=*/false);
    if (root.is_discarded() || !root.is_object()) return corruption(path + ": not a JSON object");
    result = detail::wordpiece_from_tokenizer_json(root, std::move(defaults));
  } catch (const nlohmann::json::exception& e) {
    // Missing keys and wrong types surface as exceptions from at()/get().
    return corruption(path + ": " + e.what());
  }
  if (!result.ok()) return result.status().with_context(path);
  return result;
}

}  // namespace infercost::text
