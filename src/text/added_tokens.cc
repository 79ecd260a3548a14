#include "text/added_tokens.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "text/unicode_props.h"

namespace infercost::text::detail {
namespace {

// Rust regex's \w (what HF's single_word tests): alphabetic, marks, decimal
// digits, connector punctuation, and the joiners. Alphabetic is taken as the
// letters, letter numbers and the Other_Alphabetic symbols (circled and
// squared Latin letters); the marks cover the rest of Other_Alphabetic.
bool is_word_char(char32_t cp) {
  if (cp < 0x80)
    return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || cp == '_';
  if (cp == 0x200C || cp == 0x200D) return true;
  if ((cp >= 0x24B6 && cp <= 0x24E9) || (cp >= 0x1F130 && cp <= 0x1F149) ||
      (cp >= 0x1F150 && cp <= 0x1F169) || (cp >= 0x1F170 && cp <= 0x1F189)) {
    return true;
  }
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_PC: return true;
    default: return false;
  }
}

const unsigned char* bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

// The code point that ends at `end` (> 0) in valid UTF-8, and where it starts.
char32_t code_point_before(std::string_view text, size_t end, size_t* start) {
  size_t i = end - 1;
  while (i > 0 && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) --i;
  char32_t cp = 0;
  if (decode_utf8(bytes(text) + i, end - i, &cp) == 0) cp = 0xFFFD;
  *start = i;
  return cp;
}

char32_t code_point_at(std::string_view text, size_t start, size_t* end) {
  char32_t cp = 0;
  const int n = decode_utf8(bytes(text) + start, text.size() - start, &cp);
  *end = start + static_cast<size_t>(n > 0 ? n : 1);
  return n > 0 ? cp : 0xFFFD;
}

bool is_space(char32_t cp) {
  return (char_flags(cp) & kSpace) != 0;
}

}  // namespace

Result<std::vector<AddedToken>> read_added_tokens(const nlohmann::json& added_tokens) {
  if (!added_tokens.is_array()) return corruption("added_tokens is not an array");
  std::vector<AddedToken> out;
  out.reserve(added_tokens.size());
  for (size_t i = 0; i < added_tokens.size(); ++i) {
    const nlohmann::json& a = added_tokens[i];
    const std::string where = "added_tokens[" + std::to_string(i) + "]";
    if (!a.is_object()) return corruption(where + " is not an object");
    AddedToken t;
    auto content = a.find("content");
    if (content == a.end() || !content->is_string() || content->get_ref<const std::string&>().empty())
      return corruption(where + ": 'content' must be a non-empty string");
    t.content = content->get<std::string>();
    auto id = a.find("id");
    if (id == a.end() || !id->is_number_integer() || id->get<int64_t>() < 0 || id->get<int64_t>() > INT32_MAX)
      return corruption(where + " ('" + t.content + "'): 'id' must be a non-negative integer");
    t.id = static_cast<int32_t>(id->get<int64_t>());
    const std::pair<const char*, bool*> flags[] = {{"single_word", &t.single_word},
                                                   {"lstrip", &t.lstrip},
                                                   {"rstrip", &t.rstrip},
                                                   {"normalized", &t.normalized},
                                                   {"special", &t.special}};
    for (const auto& [name, field] : flags) {
      auto f = a.find(name);
      if (f == a.end() || f->is_null()) continue;
      if (!f->is_boolean())
        return corruption(where + " ('" + t.content + "'): '" + name + "' must be true or false");
      *field = f->get<bool>();
    }
    out.push_back(std::move(t));
  }
  return out;
}

AddedTokenSplitter::AddedTokenSplitter(std::vector<AddedToken> tokens) {
  for (AddedToken& t : tokens) {
    if (t.content.empty()) continue;
    const bool seen = std::any_of(tokens_.begin(), tokens_.end(),
                                  [&](const AddedToken& k) { return k.content == t.content; });
    if (!seen) tokens_.push_back(std::move(t));
  }
  std::stable_sort(tokens_.begin(), tokens_.end(), [](const AddedToken& a, const AddedToken& b) {
    return a.content.size() > b.content.size();
  });
  int shared = -1;  // the first byte of every token so far, or -2 once two differ
  for (const AddedToken& t : tokens_) {
    const auto b = static_cast<unsigned char>(t.content[0]);
    first_byte_[b] = true;
    shared = (shared == -1 || shared == b) ? b : -2;
  }
  single_first_byte_ = shared >= 0 ? shared : -1;
}

AddedTokenSplitter::Match AddedTokenSplitter::find(std::string_view text, size_t from) const {
  const unsigned char* p = bytes(text);
  const size_t n = text.size();
  for (size_t pos = from; pos < n; ++pos) {
    if (single_first_byte_ >= 0) {
      const void* hit = std::memchr(p + pos, single_first_byte_, n - pos);
      if (hit == nullptr) break;
      pos = static_cast<size_t>(static_cast<const unsigned char*>(hit) - p);
    } else if (!first_byte_[p[pos]]) {
      continue;
    }
    for (const AddedToken& t : tokens_) {  // longest first
      if (t.content.size() <= n - pos && std::memcmp(p + pos, t.content.data(), t.content.size()) == 0)
        return {pos, pos + t.content.size(), &t};
    }
  }
  return {};
}

bool AddedTokenSplitter::fits(std::string_view text, size_t start, size_t end,
                              const AddedToken& token) const {
  if (!token.single_word) return true;
  size_t at = 0;
  if (start > 0 && is_word_char(code_point_before(text, start, &at))) return false;
  return end >= text.size() || !is_word_char(code_point_at(text, end, &at));
}

size_t AddedTokenSplitter::space_run_before(std::string_view text, size_t end) {
  while (end > 0) {
    size_t start = 0;
    if (!is_space(code_point_before(text, end, &start))) break;
    end = start;
  }
  return end;
}

size_t AddedTokenSplitter::space_run_after(std::string_view text, size_t start) {
  while (start < text.size()) {
    size_t end = 0;
    if (!is_space(code_point_at(text, start, &end))) break;
    start = end;
  }
  return start;
}

}  // namespace infercost::text::detail
