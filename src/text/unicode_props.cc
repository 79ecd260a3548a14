#include "text/unicode_props.h"

#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace infercost::text::detail {
namespace {

// `tokenizers` takes general categories from the `unicode_categories` crate
// and NFD from `unicode-normalization-alignments`, both frozen at an older
// Unicode version than utf8proc 2.8 (Unicode 15), while lowercase and
// whitespace come from Rust's std (current Unicode). These ranges are where
// utf8proc's answer differs from what tokenizers 0.20.3 does; they were found
// by running every code point through the HF normalizer and pre-tokenizer
// (tools/gen_tokenizer_golden.py writes that per-code-point table and
// tests/text/unicode_props_test.cc checks all of it). kUnassigned: code
// points newer than HF's tables, which therefore have no category (not
// dropped, not punctuation, not stripped, no decomposition, combining class
// 0). Gaps inside a range hold only code points where the distinction does
// not matter.
enum class Legacy : uint8_t { kNone, kUnassigned, kPunctuation, kNonspacingMark };

struct LegacyRange {
  char32_t first, last;
  Legacy kind;
};

constexpr Legacy kUnassigned = Legacy::kUnassigned;
constexpr Legacy kPunctuation = Legacy::kPunctuation;
constexpr Legacy kNonspacingMark = Legacy::kNonspacingMark;

constexpr LegacyRange kLegacyRanges[] = {
    {0x61D, 0x61D, kUnassigned},     {0x7FD, 0x7FD, kUnassigned},       {0x890, 0x8E2, kUnassigned},
    {0x9FD, 0x9FE, kUnassigned},     {0xA76, 0xA76, kUnassigned},       {0xAFA, 0xAFF, kUnassigned},
    {0xB55, 0xB55, kUnassigned},     {0xC04, 0xC3C, kUnassigned},       {0xC77, 0xC77, kUnassigned},
    {0xC84, 0xC84, kUnassigned},     {0xD00, 0xD00, kUnassigned},       {0xD3B, 0xD3C, kUnassigned},
    {0xD81, 0xD81, kUnassigned},     {0xEBA, 0xEBA, kUnassigned},       {0xECE, 0xECE, kUnassigned},
    {0x166D, 0x166D, kPunctuation},  {0x1734, 0x1734, kNonspacingMark}, {0x180F, 0x1886, kUnassigned},
    {0x1ABF, 0x1ACE, kUnassigned},   {0x1B7D, 0x1B7E, kUnassigned},     {0x1DF6, 0x1DFB, kUnassigned},
    {0x2E43, 0x2E5D, kUnassigned},   {0xA82C, 0xA82C, kUnassigned},     {0xA8C5, 0xA8C5, kUnassigned},
    {0xA8FF, 0xA8FF, kUnassigned},   {0xA9BD, 0xA9BD, kUnassigned},     {0x10D24, 0x10F89, kUnassigned},
    {0x11070, 0x11074, kUnassigned}, {0x110C2, 0x110CD, kUnassigned},   {0x111C9, 0x111C9, kPunctuation},
    {0x111CF, 0x111CF, kUnassigned}, {0x1123E, 0x11241, kUnassigned},   {0x1133B, 0x1133B, kUnassigned},
    {0x11438, 0x1145E, kUnassigned}, {0x11660, 0x1166C, kUnassigned},   {0x116B9, 0x116B9, kUnassigned},
    {0x1182F, 0x11FFF, kUnassigned}, {0x12FF1, 0x13455, kUnassigned},   {0x16E97, 0x16F4F, kUnassigned},
    {0x16FE2, 0x16FE4, kUnassigned}, {0x1CF00, 0x1CF46, kUnassigned},   {0x1E000, 0x1E4EF, kUnassigned},
    {0x1E944, 0x1E95F, kUnassigned},
};

Legacy legacy_kind(char32_t cp) {
  const auto* end = std::end(kLegacyRanges);
  const auto* it = std::upper_bound(std::begin(kLegacyRanges), end, cp,
                                    [](char32_t c, const LegacyRange& r) { return c < r.first; });
  if (it == std::begin(kLegacyRanges)) return Legacy::kNone;
  --it;
  return cp <= it->last ? it->kind : Legacy::kNone;
}

bool is_rust_whitespace(char32_t cp) {
  switch (cp) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x20:
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000: return true;
    default: return cp >= 0x2000 && cp <= 0x200A;
  }
}

// The ranges HF's BertNormalizer treats as CJK. The Rust code starts the
// Extension C-F block at U+2B920, where Google's original Python starts it
// at U+2B820; we follow Rust (the fast tokenizer).
bool is_cjk(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool is_ascii_punct(char32_t cp) {
  return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
         (cp >= 123 && cp <= 126);
}

uint8_t compute_flags(char32_t cp) {
  if (cp >= 0xD800 && cp <= 0xDFFF) return kDrop;
  const Legacy legacy = legacy_kind(cp);
  const auto* prop = utf8proc_get_property(static_cast<utf8proc_int32_t>(cp));
  int cat = prop->category;
  if (legacy == Legacy::kUnassigned) cat = UTF8PROC_CATEGORY_CN;
  if (legacy == Legacy::kPunctuation) cat = UTF8PROC_CATEGORY_PO;
  if (legacy == Legacy::kNonspacingMark) cat = UTF8PROC_CATEGORY_MN;

  uint8_t flags = 0;
  const bool other = cat == UTF8PROC_CATEGORY_CC || cat == UTF8PROC_CATEGORY_CF ||
                     cat == UTF8PROC_CATEGORY_CO || cat == UTF8PROC_CATEGORY_CS;
  if (cp == 0 || cp == 0xFFFD || (other && cp != '\t' && cp != '\n' && cp != '\r')) flags |= kDrop;
  if (is_rust_whitespace(cp)) flags |= kSpace;
  if (is_ascii_punct(cp) || (cat >= UTF8PROC_CATEGORY_PC && cat <= UTF8PROC_CATEGORY_PO)) flags |= kPunct;
  if (is_cjk(cp)) flags |= kCjk;
  if (cat == UTF8PROC_CATEGORY_MN) flags |= kMn;
  if (legacy != Legacy::kUnassigned) {
    utf8proc_int32_t buf[kMaxDecomp];
    int last = 0;
    const auto n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), buf, kMaxDecomp,
                                           UTF8PROC_DECOMPOSE, &last);
    if (n != 1 || buf[0] != static_cast<utf8proc_int32_t>(cp)) flags |= kDecomp;
    if (prop->combining_class != 0) flags |= kCombining;
  }
  if (cp == 0x130 ||
      utf8proc_tolower(static_cast<utf8proc_int32_t>(cp)) != static_cast<utf8proc_int32_t>(cp)) {
    flags |= kLower;
  }
  return flags;
}

// Two-stage table: 256-code-point blocks, identical blocks shared.
struct FlagTable {
  std::array<uint16_t, 0x110000 / 256> block_of{};
  std::vector<uint8_t> blocks;

  FlagTable() {
    std::vector<uint8_t> block(256);
    for (char32_t hi = 0; hi < 0x110000 / 256; ++hi) {
      for (char32_t lo = 0; lo < 256; ++lo) block[lo] = compute_flags(hi * 256 + lo);
      size_t found = blocks.size() / 256;
      for (size_t b = 0; b < blocks.size() / 256; ++b) {
        if (std::equal(block.begin(), block.end(), blocks.begin() + static_cast<std::ptrdiff_t>(b * 256))) {
          found = b;
          break;
        }
      }
      if (found == blocks.size() / 256) blocks.insert(blocks.end(), block.begin(), block.end());
      block_of[hi] = static_cast<uint16_t>(found);
    }
  }
};

const FlagTable& flag_table() {
  static const FlagTable* table = new FlagTable();  // never destroyed: used from any thread until exit
  return *table;
}

}  // namespace

uint8_t char_flags(char32_t cp) {
  if (cp >= 0x110000) return kDrop;
  const FlagTable& t = flag_table();
  return t.blocks[static_cast<size_t>(t.block_of[cp >> 8]) * 256 + (cp & 0xFF)];
}

int combining_class(char32_t cp) {
  if (!(char_flags(cp) & kCombining)) return 0;
  return utf8proc_get_property(static_cast<utf8proc_int32_t>(cp))->combining_class;
}

int nfd_decompose(char32_t cp, char32_t* out) {
  if (!(char_flags(cp) & kDecomp)) {
    out[0] = cp;
    return 1;
  }
  utf8proc_int32_t buf[kMaxDecomp];
  int last = 0;
  const auto n =
      utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), buf, kMaxDecomp, UTF8PROC_DECOMPOSE, &last);
  for (utf8proc_ssize_t i = 0; i < n; ++i) out[i] = static_cast<char32_t>(buf[i]);
  return static_cast<int>(n);
}

size_t find_invalid_utf8(const unsigned char* p, size_t n) {
  size_t i = 0;
  while (i < n) {
    // Eight ASCII bytes at a time.
    while (i + 8 <= n) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      if (w & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i >= n) break;
    char32_t cp;
    const int len = decode_utf8(p + i, n - i, &cp);
    if (len == 0) return i;
    i += static_cast<size_t>(len);
  }
  return n;
}

int to_lower_full(char32_t cp, char32_t* out) {
  // The only unconditional multi-code-point lowercase mapping in
  // SpecialCasing.txt; utf8proc has simple mappings only.
  if (cp == 0x130) {
    out[0] = U'i';
    out[1] = 0x307;
    return 2;
  }
  out[0] = static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp)));
  return 1;
}

void append_normalized(std::string_view text, UnicodeForm form, std::string& out) {
  int options = UTF8PROC_STABLE;
  switch (form) {
    case UnicodeForm::kNfc: options |= UTF8PROC_COMPOSE; break;
    case UnicodeForm::kNfd: options |= UTF8PROC_DECOMPOSE; break;
    case UnicodeForm::kNfkc: options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT; break;
    case UnicodeForm::kNfkd: options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT; break;
  }
  utf8proc_uint8_t* mapped = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                          static_cast<utf8proc_ssize_t>(text.size()), &mapped,
                                          static_cast<utf8proc_option_t>(options));
  if (n < 0) {
    out.append(text);
  } else {
    out.append(reinterpret_cast<const char*>(mapped), static_cast<size_t>(n));
  }
  std::free(mapped);
}

}  // namespace infercost::text::detail
