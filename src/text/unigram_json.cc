#include "text/unigram_json.h"

#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

#include "text/unicode_props.h"
#include "text/unigram_pipeline.h"

namespace infercost::text {
// A named namespace around the helpers: in a unity build they share a unit
// with the other tokenizer.json readers, whose helpers have the same names.
namespace unigram_json {
namespace {

using detail::CharSet;
using detail::NormalizerStep;
using detail::PreTokenizerStep;
using nlohmann::json;

std::string type_of(const json& j) {
  if (!j.is_object()) return "";
  const auto it = j.find("type");
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

Result<bool> optional_bool(const json& j, const char* key, bool fallback, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) return corruption(where + "." + key + " is not a boolean");
  return it->get<bool>();
}

Result<std::string> required_string(const json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return corruption(where + "." + key + " is missing or not a string");
  return it->get<std::string>();
}

// One atom of a Replace regex at r[i..]: a character (itself, or escaped
// when a metacharacter), \s, \n, \r, \t, or a class [...] of those.
// Advances i; false for anything else.
bool parse_regex_atom(const std::string& r, size_t& i, CharSet& set) {
  static constexpr std::string_view kMeta = "\\.^$|?*+()[]{}";
  const auto escaped = [&](char c) {
    switch (c) {
      case 's': set.space = true; return true;
      case 'n': set.chars.push_back(U'\n'); return true;
      case 'r': set.chars.push_back(U'\r'); return true;
      case 't': set.chars.push_back(U'\t'); return true;
      default:
        if (kMeta.find(c) == std::string_view::npos) return false;
        set.chars.push_back(static_cast<char32_t>(c));
        return true;
    }
  };
  const auto literal = [&](size_t& at) {
    char32_t cp = 0;
    const int len =
        detail::decode_utf8(reinterpret_cast<const unsigned char*>(r.data() + at), r.size() - at, &cp);
    if (len == 0 || kMeta.find(r[at]) != std::string_view::npos) return false;
    set.chars.push_back(cp);
    at += static_cast<size_t>(len);
    return true;
  };
  if (i >= r.size()) return false;
  if (r[i] == '\\') {
    if (i + 1 >= r.size() || !escaped(r[i + 1])) return false;
    i += 2;
    return true;
  }
  if (r[i] != '[') return literal(i);
  size_t at = i + 1;
  if (at < r.size() && r[at] == '^') return false;  // a negated class
  while (at < r.size() && r[at] != ']') {
    if (r[at] == '\\') {
      if (at + 1 >= r.size() || !escaped(r[at + 1])) return false;
      at += 2;
    } else if (r[at] == '-' || !literal(at)) {
      return false;  // ranges are not read
    }
  }
  if (at >= r.size() || set.empty()) return false;
  i = at + 1;
  return true;
}

// Replace's regex: a literal (no metacharacters); or an atom
// (parse_regex_atom) repeated by +, {m}, {m,} or {m,n}, optionally followed
// by `|` and one more atom that matches one character. False for anything
// else.
bool parse_replace_regex(const std::string& r, NormalizerStep& step) {
  static constexpr std::string_view kMeta = "\\.^$|?*+()[]{}";
  if (r.find_first_of(kMeta) == std::string::npos) {
    step.pattern = r;
    return !r.empty();
  }
  size_t i = 0;
  if (!parse_regex_atom(r, i, step.run_set)) return false;
  const size_t bar = r.find('|', i);
  const std::string q = r.substr(i, bar == std::string::npos ? std::string::npos : bar - i);
  if (bar != std::string::npos) {
    size_t j = bar + 1;
    if (!parse_regex_atom(r, j, step.single_set) || j != r.size()) return false;
  }
  if (q.empty()) {
    step.run_min = step.run_max = 1;
    return true;
  }
  if (q == "+") {
    step.run_min = 1;
    step.run_max = 0;
    return true;
  }
  if (q.size() < 3 || q.front() != '{' || q.back() != '}') return false;
  const std::string body = q.substr(1, q.size() - 2);
  const size_t comma = body.find(',');
  const auto number = [](const std::string& s, size_t* v) {
    if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos) return false;
    *v = std::stoul(s);
    return true;
  };
  if (comma == std::string::npos) {
    if (!number(body, &step.run_min)) return false;
    step.run_max = step.run_min;
  } else {
    if (!number(body.substr(0, comma), &step.run_min)) return false;
    const std::string hi = body.substr(comma + 1);
    step.run_max = 0;
    if (!hi.empty() && (!number(hi, &step.run_max) || step.run_max < step.run_min)) return false;
  }
  return step.run_min >= 1;
}

// A normalizer or pre-tokenizer (`what`), its steps appended in order: none
// for null, each element's of j[sequence_key] for a Sequence, else the one
// step that `read_type` reads from j of its type (false: a type it does not
// know, kUnsupported).
template <typename Step>
Status read_steps(const json& j, const char* sequence_key, const char* what, const std::string& where,
                  std::vector<Step>& steps,
                  Result<bool> (*read_type)(const json&, const std::string& type, const std::string& where,
                                            Step&)) {
  if (j.is_null()) return Status::ok_status();
  const std::string type = type_of(j);
  if (type == "Sequence") {
    const auto it = j.find(sequence_key);
    if (it == j.end() || !it->is_array()) {
      return corruption(where + "." + sequence_key + " is missing or not an array");
    }
    for (size_t i = 0; i < it->size(); ++i) {
      const std::string at = where + "." + sequence_key + "[" + std::to_string(i) + "]";
      INFERCOST_RETURN_IF_ERROR(read_steps((*it)[i], sequence_key, what, at, steps, read_type));
    }
    return Status::ok_status();
  }
  Step step;
  INFERCOST_ASSIGN_OR_RETURN(bool known, read_type(j, type, where, step));
  if (!known) return unsupported(where + ": " + what + " '" + type + "'");
  steps.push_back(std::move(step));
  return Status::ok_status();
}

// The step of a normalizer of `type` (not a Sequence); false for a type it
// does not know.
Result<bool> read_normalizer_step(const json& j, const std::string& type, const std::string& where,
                                  NormalizerStep& step) {
  // The normalizers that have no parameters.
  static constexpr std::pair<std::string_view, NormalizerStep::Kind> kPlain[] = {
      {"NFC", NormalizerStep::Kind::kNfc},
      {"NFD", NormalizerStep::Kind::kNfd},
      {"NFKC", NormalizerStep::Kind::kNfkc},
      {"NFKD", NormalizerStep::Kind::kNfkd},
      {"Lowercase", NormalizerStep::Kind::kLowercase}};
  for (const auto& [name, kind] : kPlain) {
    if (type == name) {
      step.kind = kind;
      return true;
    }
  }
  if (type == "Precompiled") {
    INFERCOST_ASSIGN_OR_RETURN(std::string b64, required_string(j, "precompiled_charsmap", where));
    Result<std::string> blob = detail::decode_base64(b64);
    if (!blob.ok()) return blob.status().with_context(where + ".precompiled_charsmap");
    Result<detail::PrecompiledCharsmap> map = detail::PrecompiledCharsmap::parse(blob.value());
    if (!map.ok()) return map.status().with_context(where + ".precompiled_charsmap");
    step.kind = NormalizerStep::Kind::kPrecompiled;
    step.charsmap = std::make_shared<const detail::PrecompiledCharsmap>(std::move(map).value());
  } else if (type == "Replace") {
    step.kind = NormalizerStep::Kind::kReplace;
    INFERCOST_ASSIGN_OR_RETURN(step.content, required_string(j, "content", where));
    const auto it = j.find("pattern");
    if (it == j.end() || !it->is_object() || it->size() != 1) {
      return corruption(where + ".pattern is not {\"String\": ...} or {\"Regex\": ...}");
    }
    if (it->contains("String") && it->at("String").is_string()) {
      step.pattern = it->at("String").get<std::string>();
      if (step.pattern.empty()) return unsupported(where + ": Replace of the empty string");
    } else if (it->contains("Regex") && it->at("Regex").is_string()) {
      const std::string regex = it->at("Regex").get<std::string>();
      if (!parse_replace_regex(regex, step)) {
        return unsupported(where + ": Replace regex '" + regex +
                           "' (only a literal, or a character, \\s or a class [...] repeated by +, {m}, {m,} "
                           "or {m,n}, or that and '|' one more)");
      }
    } else {
      return corruption(where + ".pattern is not {\"String\": ...} or {\"Regex\": ...}");
    }
  } else if (type == "Strip") {
    step.kind = NormalizerStep::Kind::kStrip;
    INFERCOST_ASSIGN_OR_RETURN(step.strip_left, optional_bool(j, "strip_left", false, where));
    INFERCOST_ASSIGN_OR_RETURN(step.strip_right, optional_bool(j, "strip_right", false, where));
  } else if (type == "Prepend") {
    step.kind = NormalizerStep::Kind::kPrepend;
    INFERCOST_ASSIGN_OR_RETURN(step.content, required_string(j, "prepend", where));
  } else {
    return false;
  }
  return true;
}

// The step of a pre-tokenizer of `type` (not a Sequence); false for a type
// it does not know.
Result<bool> read_pre_tokenizer_step(const json& j, const std::string& type, const std::string& where,
                                     PreTokenizerStep& step) {
  if (type == "WhitespaceSplit") {
    step.kind = PreTokenizerStep::Kind::kWhitespaceSplit;
  } else if (type == "Metaspace") {
    step.kind = PreTokenizerStep::Kind::kMetaspace;
    INFERCOST_ASSIGN_OR_RETURN(step.replacement, required_string(j, "replacement", where));
    char32_t cp = 0;
    const auto* r = reinterpret_cast<const unsigned char*>(step.replacement.data());
    if (step.replacement.empty() ||
        detail::decode_utf8(r, step.replacement.size(), &cp) != static_cast<int>(step.replacement.size())) {
      return corruption(where + ".replacement is not one character");
    }
    const auto scheme = j.find("prepend_scheme");
    if (scheme != j.end() && !scheme->is_null()) {
      const std::string s = scheme->is_string() ? scheme->get<std::string>() : "";
      if (s == "always") {
        step.prepend = PreTokenizerStep::Prepend::kAlways;
      } else if (s == "first") {
        step.prepend = PreTokenizerStep::Prepend::kFirst;
      } else if (s == "never") {
        step.prepend = PreTokenizerStep::Prepend::kNever;
      } else {
        return corruption(where + ".prepend_scheme is not \"always\", \"first\" or \"never\"");
      }
    }
    // The older serialization: add_prefix_space false means never, and HF
    // refuses it beside any other declared (or defaulted) scheme.
    const auto add = j.find("add_prefix_space");
    if (add != j.end() && !add->is_null()) {
      if (!add->is_boolean()) return corruption(where + ".add_prefix_space is not a boolean");
      if (!add->get<bool>()) {
        if (step.prepend != PreTokenizerStep::Prepend::kNever) {
          return corruption(where + ": add_prefix_space false does not match prepend_scheme");
        }
      }
    }
    INFERCOST_ASSIGN_OR_RETURN(step.split, optional_bool(j, "split", true, where));
  } else {
    return false;
  }
  return true;
}

// The special token `name`'s ids in a TemplateProcessing's special_tokens.
Status template_ids(const json& specials, const std::string& name, const std::string& where,
                    std::vector<int32_t>& out) {
  const auto it = specials.is_object() ? specials.find(name) : specials.end();
  if (it == specials.end() || !it->is_object() || !it->contains("ids") || !it->at("ids").is_array()) {
    return corruption(where + ".special_tokens has no ids for '" + name + "'");
  }
  for (const json& id : it->at("ids")) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
      return corruption(where + ".special_tokens['" + name +
                        "'] has an id that is not a non-negative integer");
    }
    out.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  return Status::ok_status();
}

Status read_post_processor(const json& j, const std::string& where, detail::UnigramTables& t) {
  if (j.is_null()) return Status::ok_status();
  const std::string type = type_of(j);
  if (type == "TemplateProcessing") {
    const auto single = j.find("single");
    if (single == j.end() || !single->is_array())
      return corruption(where + ".single is missing or not an array");
    const json specials = j.value("special_tokens", json::object());
    bool seen_a = false;
    for (size_t i = 0; i < single->size(); ++i) {
      const json& item = (*single)[i];
      const std::string at = where + ".single[" + std::to_string(i) + "]";
      if (item.is_object() && item.contains("Sequence")) {
        if (seen_a || item["Sequence"].value("id", "") != "A") {
          return unsupported(at + ": a template sequence other than one $A");
        }
        seen_a = true;
      } else if (item.is_object() && item.contains("SpecialToken") && item["SpecialToken"].is_object() &&
                 item["SpecialToken"].contains("id") && item["SpecialToken"]["id"].is_string()) {
        INFERCOST_RETURN_IF_ERROR(template_ids(specials, item["SpecialToken"]["id"].get<std::string>(), where,
                                               seen_a ? t.suffix_ids : t.prefix_ids));
      } else {
        return corruption(at + " is neither a Sequence nor a SpecialToken");
      }
    }
    if (!seen_a) return unsupported(where + ": a single template without $A");
    return Status::ok_status();
  }
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    for (const char* key : {"cls", "sep"}) {
      const auto it = j.find(key);
      if (it == j.end() || !it->is_array() || it->size() != 2 || !(*it)[1].is_number_integer() ||
          (*it)[1].get<int64_t>() < 0 || (*it)[1].get<int64_t>() > INT32_MAX) {
        return corruption(where + "." + key + " is not [token, id]");
      }
      (key[0] == 'c' ? t.prefix_ids : t.suffix_ids).push_back(static_cast<int32_t>((*it)[1].get<int64_t>()));
    }
    return Status::ok_status();
  }
  return unsupported(where + ": post-processor '" + type + "'");
}

Result<detail::UnigramModel> read_model(const json& model) {
  const auto vocab = model.find("vocab");
  if (vocab == model.end() || !vocab->is_array()) return corruption("model.vocab is missing or not an array");
  std::vector<detail::UnigramModel::Piece> pieces(vocab->size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    const json& entry = (*vocab)[i];
    if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_number()) {
      return corruption("model.vocab[" + std::to_string(i) + "] is not [piece, score]");
    }
    pieces[i].text = entry[0].get_ref<const std::string&>();
    pieces[i].score = entry[1].get<double>();
    const auto* p = reinterpret_cast<const unsigned char*>(pieces[i].text.data());
    if (detail::find_invalid_utf8(p, pieces[i].text.size()) != pieces[i].text.size()) {
      return corruption("model.vocab[" + std::to_string(i) + "] is not UTF-8");
    }
  }
  const auto unk = model.find("unk_id");
  if (unk == model.end() || unk->is_null())
    return unsupported("model.unk_id is null (a model without <unk>)");
  if (!unk->is_number_integer() || unk->get<int64_t>() < 0 ||
      static_cast<uint64_t>(unk->get<int64_t>()) >= pieces.size()) {
    return corruption("model.unk_id " + unk->dump() + " is out of range (" + std::to_string(pieces.size()) +
                      " pieces)");
  }
  INFERCOST_ASSIGN_OR_RETURN(bool byte_fallback, optional_bool(model, "byte_fallback", false, "model"));
  Result<detail::UnigramModel> m = detail::UnigramModel::create(
      std::move(pieces), static_cast<int32_t>(unk->get<int64_t>()), byte_fallback);
  if (!m.ok()) return corruption("model: " + m.status().message());
  return m;
}

Result<std::shared_ptr<detail::UnigramTables>> read_tables(const json& root, int max_length,
                                                           bool add_special_tokens) {
  if (!root.is_object()) return corruption("not a JSON object");
  const auto model = root.find("model");
  if (model == root.end() || type_of(*model) != "Unigram")
    return invalid_argument("model.type is not \"Unigram\"");
  auto t = std::make_shared<detail::UnigramTables>();
  INFERCOST_ASSIGN_OR_RETURN(t->model, read_model(*model));
  const json null;
  const auto field = [&](const char* key) -> const json& {
    const auto it = root.find(key);
    return it == root.end() ? null : *it;
  };
  INFERCOST_RETURN_IF_ERROR(read_steps(field("normalizer"), "normalizers", "normalizer", "normalizer",
                                       t->normalizer.steps, read_normalizer_step));
  INFERCOST_RETURN_IF_ERROR(read_steps(field("pre_tokenizer"), "pretokenizers", "pre-tokenizer",
                                       "pre_tokenizer", t->pre_tokenizer, read_pre_tokenizer_step));
  INFERCOST_RETURN_IF_ERROR(read_post_processor(field("post_processor"), "post_processor", *t));
  if (!add_special_tokens) {
    t->prefix_ids.clear();
    t->suffix_ids.clear();
  }

  std::vector<detail::AddedToken> added;
  if (!field("added_tokens").is_null()) {
    Result<std::vector<detail::AddedToken>> r = detail::read_added_tokens(field("added_tokens"));
    if (!r.ok()) return r.status().with_context("added_tokens");
    added = std::move(r).value();
  }
  std::vector<detail::AddedToken> raw, normalized;
  t->vocab_size = t->model.size();
  // XLM-R's <pad>, or DeBERTa's [PAD].
  int32_t pad_id = t->model.find("<pad>");
  if (pad_id < 0) pad_id = t->model.find("[PAD]");
  for (const detail::AddedToken& a : added) {
    if (a.content == "<pad>" || (a.content == "[PAD]" && pad_id < 0)) pad_id = a.id;
    t->vocab_size = std::max(t->vocab_size, static_cast<size_t>(a.id) + 1);
  }
  t->extra_pieces.resize(t->vocab_size - t->model.size());
  for (detail::AddedToken& a : added) {
    if (static_cast<size_t>(a.id) >= t->model.size()) t->extra_pieces[a.id - t->model.size()] = a.content;
    if (!a.normalized) {
      raw.push_back(std::move(a));
      continue;
    }
    std::string x, y;
    bool at_origin = true;
    a.content = std::string(t->normalizer.apply(a.content, x, y, &at_origin));
    normalized.push_back(std::move(a));
  }
  t->raw_tokens = detail::AddedTokenSplitter(std::move(raw));
  t->normalized_tokens = detail::AddedTokenSplitter(std::move(normalized));
  for (int32_t id : t->prefix_ids) {
    if (static_cast<size_t>(id) >= t->vocab_size)
      return corruption("post_processor: id " + std::to_string(id) + " is past the vocabulary");
  }
  for (int32_t id : t->suffix_ids) {
    if (static_cast<size_t>(id) >= t->vocab_size)
      return corruption("post_processor: id " + std::to_string(id) + " is past the vocabulary");
  }

  if (pad_id < 0) {
    const json& padding = field("padding");
    if (padding.is_object() && padding.contains("pad_id") && padding["pad_id"].is_number_integer()) {
      pad_id = static_cast<int32_t>(padding["pad_id"].get<int64_t>());
    } else {
      return unsupported("no <pad> or [PAD] token and no padding.pad_id");
    }
  }
  t->pad_id = pad_id;
  const size_t specials = t->prefix_ids.size() + t->suffix_ids.size();
  if (max_length > 0 && static_cast<size_t>(max_length) < specials) {
    return invalid_argument("max_length " + std::to_string(max_length) + " is below the " +
                            std::to_string(specials) + " special tokens");
  }
  t->max_length = max_length;
  return t;
}

}  // namespace
}  // namespace unigram_json

Result<std::unique_ptr<UnigramTokenizer>> unigram_from_tokenizer_json(const nlohmann::json& root,
                                                                      const std::string& source,
                                                                      int max_length,
                                                                      bool add_special_tokens) {
  Result<std::shared_ptr<detail::UnigramTables>> t =
      unigram_json::read_tables(root, max_length, add_special_tokens);
  if (!t.ok()) return t.status().with_context(source);
  return std::make_unique<UnigramTokenizer>(std::move(t).value());
}

}  // namespace infercost::text
