#include "text/bpe_json.h"

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/file.h"
#include "core/json_text.h"
#include "text/added_tokens.h"

namespace infercost::text {
namespace {

using nlohmann::json;

// model.vocab / vocab.json: an object of token -> non-negative id.
Result<std::vector<std::pair<std::string, int32_t>>> read_bpe_vocab(const json& j, const std::string& where) {
  if (!j.is_object()) return corruption(where + ": not an object of token -> id");
  std::vector<std::pair<std::string, int32_t>> vocab;
  vocab.reserve(j.size());
  for (auto it = j.begin(); it != j.end(); ++it) {
    const json& id = it.value();
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
      return corruption(where + ": token '" + it.key() + "': id " + id.dump() +
                        " is not a non-negative integer");
    }
    vocab.emplace_back(it.key(), static_cast<int32_t>(id.get<int64_t>()));
  }
  return vocab;
}

// One merge written "a b" (merges.txt, older tokenizer.json): exactly one space.
bool split_merge(std::string_view line, std::pair<std::string, std::string>& out) {
  const size_t space = line.find(' ');
  if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos) return false;
  out = {std::string(line.substr(0, space)), std::string(line.substr(space + 1))};
  return true;
}

Result<std::vector<std::pair<std::string, std::string>>> read_json_merges(const json& j) {
  if (!j.is_array()) return corruption("model.merges: not an array");
  std::vector<std::pair<std::string, std::string>> merges(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    const json& m = j[i];
    bool ok = false;
    if (m.is_string()) {
      ok = split_merge(m.get_ref<const std::string&>(), merges[i]);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      merges[i] = {m[0].get<std::string>(), m[1].get<std::string>()};
      ok = true;
    }
    if (!ok)
      return corruption("model.merges: entry " + std::to_string(i) + ": " + m.dump() +
                        " is not a pair of tokens");
  }
  return merges;
}

// A string field that may be absent or null (-> empty).
Result<std::string> optional_string(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::string();
  if (!it->is_string()) return corruption(where + "." + key + ": not a string");
  return it->get<std::string>();
}

Result<bool> optional_bool(const json& j, const char* key, bool fallback, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) return corruption(where + "." + key + ": not true or false");
  return it->get<bool>();
}

std::string type_of(const json& j) {
  auto it = j.find("type");
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Status read_model(const json& model, BpeConfig& c) {
  if (!model.is_object()) return corruption("model: not an object");
  const std::string type = type_of(model);
  if (type != "BPE") return unsupported("model type '" + type + "' (this loader reads BPE)");
  if (auto d = model.find("dropout");
      d != model.end() && !d->is_null() && !(d->is_number() && d->get<double>() == 0)) {
    return unsupported("model.dropout " + d->dump() + " (only null)");
  }
  INFERCOST_ASSIGN_OR_RETURN(const bool byte_fallback, optional_bool(model, "byte_fallback", false, "model"));
  if (byte_fallback) return unsupported("model.byte_fallback true");
  INFERCOST_ASSIGN_OR_RETURN(const bool ignore_merges, optional_bool(model, "ignore_merges", false, "model"));
  if (ignore_merges) return unsupported("model.ignore_merges true");
  INFERCOST_ASSIGN_OR_RETURN(c.fuse_unk, optional_bool(model, "fuse_unk", false, "model"));
  INFERCOST_ASSIGN_OR_RETURN(c.continuing_subword_prefix,
                             optional_string(model, "continuing_subword_prefix", "model"));
  INFERCOST_ASSIGN_OR_RETURN(c.end_of_word_suffix, optional_string(model, "end_of_word_suffix", "model"));
  INFERCOST_ASSIGN_OR_RETURN(const std::string unk, optional_string(model, "unk_token", "model"));
  if (!unk.empty()) c.unk_token = unk;
  auto vocab = model.find("vocab");
  if (vocab == model.end()) return corruption("model.vocab: missing");
  INFERCOST_ASSIGN_OR_RETURN(c.vocab, read_bpe_vocab(*vocab, "model.vocab"));
  auto merges = model.find("merges");
  if (merges == model.end()) return corruption("model.merges: missing");
  INFERCOST_ASSIGN_OR_RETURN(c.merges, read_json_merges(*merges));
  return Status::ok_status();
}

Status read_pre_tokenizer(const json& j, BpeConfig& c) {
  const json* p = &j;
  if (type_of(j) == "Sequence") {
    auto list = j.find("pretokenizers");
    if (list == j.end() || !list->is_array() || list->size() != 1) {
      return unsupported("pre_tokenizer Sequence other than one ByteLevel");
    }
    p = &(*list)[0];
  }
  const std::string type = p->is_object() ? type_of(*p) : "null";
  if (type != "ByteLevel") return unsupported("pre_tokenizer '" + type + "' (only ByteLevel)");
  INFERCOST_ASSIGN_OR_RETURN(c.add_prefix_space,
                             optional_bool(*p, "add_prefix_space", true, "pre_tokenizer"));
  INFERCOST_ASSIGN_OR_RETURN(c.use_regex, optional_bool(*p, "use_regex", true, "pre_tokenizer"));
  INFERCOST_ASSIGN_OR_RETURN(c.trim_offsets, optional_bool(*p, "trim_offsets", true, "pre_tokenizer"));
  return Status::ok_status();
}

// ["token", id] of RobertaProcessing / BertProcessing.
Result<int32_t> special_pair_id(const json& p, const char* key) {
  auto it = p.find(key);
  if (it == p.end() || !it->is_array() || it->size() != 2 || !(*it)[1].is_number_integer()) {
    return corruption(std::string("post_processor.") + key + ": not a [token, id] pair");
  }
  return (*it)[1].get<int32_t>();
}

// Adds one post-processor's ids around those of the ones before it.
Status read_post_processor(const json& p, BpeConfig& c) {
  if (p.is_null()) return Status::ok_status();
  const std::string type = type_of(p);
  if (type == "ByteLevel") return Status::ok_status();  // offsets only
  if (type == "Sequence") {
    auto list = p.find("processors");
    if (list == p.end() || !list->is_array()) return corruption("post_processor.processors: not an array");
    for (const json& q : *list) INFERCOST_RETURN_IF_ERROR(read_post_processor(q, c));
    return Status::ok_status();
  }
  std::vector<int32_t> before, after;
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    INFERCOST_ASSIGN_OR_RETURN(const int32_t cls, special_pair_id(p, "cls"));
    INFERCOST_ASSIGN_OR_RETURN(const int32_t sep, special_pair_id(p, "sep"));
    before = {cls};
    after = {sep};
  } else if (type == "TemplateProcessing") {
    auto single = p.find("single");
    auto specials = p.find("special_tokens");
    if (single == p.end() || !single->is_array()) return corruption("post_processor.single: not an array");
    int sequences = 0;
    for (size_t i = 0; i < single->size(); ++i) {
      const json& piece = (*single)[i];
      const std::string where = "post_processor.single[" + std::to_string(i) + "]";
      if (piece.contains("Sequence")) {
        const json& s = piece.at("Sequence");
        if (!s.is_object() || s.value("id", "") != "A")
          return unsupported(where + ": a sequence other than $A");
        ++sequences;
        continue;
      }
      auto tok = piece.find("SpecialToken");
      if (tok == piece.end() || !tok->is_object() || !tok->contains("id") || !tok->at("id").is_string()) {
        return corruption(where + ": neither a Sequence nor a SpecialToken");
      }
      const std::string name = tok->at("id").get<std::string>();
      if (specials == p.end() || !specials->is_object() || !specials->contains(name)) {
        return corruption(where + ": special token '" + name + "' is not in post_processor.special_tokens");
      }
      const json& ids = specials->at(name).value("ids", json::array());
      if (!ids.is_array())
        return corruption("post_processor.special_tokens['" + name + "'].ids: not an array");
      for (const json& id : ids) {
        if (!id.is_number_integer() || id.get<int64_t>() < 0) {
          return corruption("post_processor.special_tokens['" + name + "'].ids: " + id.dump() +
                            " is not an id");
        }
        (sequences == 0 ? before : after).push_back(id.get<int32_t>());
      }
    }
    if (sequences != 1) return unsupported("post_processor.single: a template without exactly one $A");
  } else {
    return unsupported("post_processor type '" + type + "'");
  }
  c.prefix_ids.insert(c.prefix_ids.begin(), before.begin(), before.end());
  c.suffix_ids.insert(c.suffix_ids.end(), after.begin(), after.end());
  return Status::ok_status();
}

int32_t id_of(const BpeConfig& c, std::string_view token) {
  for (const AddedToken& a : c.added_tokens) {
    if (a.content == token) return a.id;
  }
  for (const auto& [t, id] : c.vocab) {
    if (t == token) return id;
  }
  return -1;
}

Result<std::unique_ptr<BpeTokenizer>> from_json(const json& root, int max_length) {
  if (!root.is_object()) return corruption("not a JSON object");
  BpeConfig c;
  auto model = root.find("model");
  if (model == root.end()) return corruption("model: missing");
  INFERCOST_RETURN_IF_ERROR(read_model(*model, c));

  if (auto n = root.find("normalizer"); n != root.end() && !n->is_null()) {
    // null, NFC, or a Sequence of at most one NFC.
    const json* one = &*n;
    if (type_of(*n) == "Sequence") {
      auto list = n->find("normalizers");
      if (list == n->end() || !list->is_array() || list->size() > 1)
        return unsupported("normalizer Sequence other than none or one NFC");
      one = list->empty() ? nullptr : &(*list)[0];
    }
    if (one != nullptr) {
      if (type_of(*one) != "NFC") return unsupported("normalizer '" + type_of(*one) + "' (only NFC or none)");
      c.nfc = true;
    }
  }
  auto pre = root.find("pre_tokenizer");
  INFERCOST_RETURN_IF_ERROR(read_pre_tokenizer(pre == root.end() ? json() : *pre, c));
  if (auto p = root.find("post_processor"); p != root.end())
    INFERCOST_RETURN_IF_ERROR(read_post_processor(*p, c));

  if (auto a = root.find("added_tokens"); a != root.end() && !a->is_null()) {
    INFERCOST_ASSIGN_OR_RETURN(c.added_tokens, detail::read_added_tokens(*a));
  }

  c.max_length = max_length;
  if (auto t = root.find("truncation"); max_length <= 0 && t != root.end() && !t->is_null()) {
    if (t->value("direction", "Right") != "Right")
      return unsupported("truncation.direction other than Right");
    auto m = t->find("max_length");
    if (m == t->end() || !m->is_number_integer()) return corruption("truncation.max_length: not an integer");
    c.max_length = m->get<int>();
  }

  int32_t pad = id_of(c, "<pad>");
  if (pad < 0) pad = id_of(c, "[PAD]");  // ModernBERT's
  c.pad_id = pad >= 0 ? pad : 0;
  if (auto p = root.find("padding"); p != root.end() && p->is_object() && p->contains("pad_id")) {
    if (!p->at("pad_id").is_number_integer()) return corruption("padding.pad_id: not an integer");
    c.pad_id = p->at("pad_id").get<int32_t>();
  }
  return BpeTokenizer::create(std::move(c));
}

}  // namespace

Result<std::unique_ptr<BpeTokenizer>> bpe_from_tokenizer_json(const json& root, const std::string& source,
                                                              int max_length) {
  try {
    auto r = from_json(root, max_length);
    if (!r.ok()) return r.status().with_context(source);
    return r;
  } catch (const json::exception& e) {
    return corruption(source + ": " + e.what());
  }
}

Result<std::unique_ptr<BpeTokenizer>> BpeTokenizer::load_files(const std::string& vocab_json_path,
                                                               const std::string& merges_txt_path,
                                                               int max_length) {
  BpeConfig c;
  {
    INFERCOST_ASSIGN_OR_RETURN(const std::string text, read_file(vocab_json_path));
    INFERCOST_RETURN_IF_ERROR(check_json_nesting(text, vocab_json_path));
    const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return corruption(vocab_json_path + ": not valid JSON");
    auto vocab = read_bpe_vocab(j, vocab_json_path);
    if (!vocab.ok()) return vocab.status();
    c.vocab = std::move(*vocab);
  }
  {
    INFERCOST_ASSIGN_OR_RETURN(const std::string text, read_file(merges_txt_path));
    size_t line_no = 0;
    for (size_t pos = 0; pos < text.size();) {
      size_t end = text.find('\n', pos);
      if (end == std::string::npos) end = text.size();
      std::string_view line(text.data() + pos, end - pos);
      pos = end + 1;
      ++line_no;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.starts_with("#version")) continue;
      std::pair<std::string, std::string> merge;
      if (!split_merge(line, merge)) {
        return corruption(merges_txt_path + ": line " + std::to_string(line_no) +
                          ": not two tokens separated by one space");
      }
      c.merges.push_back(std::move(merge));
    }
  }
  const char* specials[] = {"<s>", "<pad>", "</s>", "<unk>", "<mask>"};
  int32_t ids[5];
  for (int i = 0; i < 5; ++i) {
    ids[i] = id_of(c, specials[i]);
    if (ids[i] < 0) return not_found(vocab_json_path + ": special token '" + specials[i] + "' is missing");
    c.added_tokens.push_back(AddedToken{specials[i], ids[i], false, /*lstrip=*/i == 4, false,
                                        /*normalized=*/false, /*special=*/true});
  }
  c.prefix_ids = {ids[0]};
  c.suffix_ids = {ids[2]};
  c.pad_id = ids[1];
  c.max_length = max_length;
  auto r = create(std::move(c));
  if (!r.ok()) return r.status().with_context(merges_txt_path);
  return r;
}

}  // namespace infercost::text
