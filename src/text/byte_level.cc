#include "text/byte_level.h"

#include <utf8proc.h>

#include <algorithm>
#include <iterator>
#include <vector>

namespace infercost::text::detail {

namespace byte_level_impl {
#define O SplitClass::kOther
#define L SplitClass::kLetter
#define N SplitClass::kNumber
#define S SplitClass::kSpace
const SplitClass kAsciiClass[128] = {
    O, O, O, O, O, O, O, O, O, S, S, S, S, S, O, O,  // \t \n \v \f \r
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,  //
    S, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,  // space
    N, N, N, N, N, N, N, N, N, N, O, O, O, O, O, O,  // 0-9
    O, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L,  // A-O
    L, L, L, L, L, L, L, L, L, L, L, O, O, O, O, O,  // P-Z
    O, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L,  // a-o
    L, L, L, L, L, L, L, L, L, L, L, O, O, O, O, O,  // p-z
};
#undef O
#undef L
#undef N
#undef S
}  // namespace byte_level_impl

namespace byte_level_impl {

// onig (in tokenizers 0.23) knows a newer Unicode (16) than utf8proc 2.8
// (15): these code points, unassigned for utf8proc, are letters or numbers
// for HF's split. Found by classing every code point through HF's ByteLevel
// pre-tokenizer (tools/gen_bpe_golden.py writes that table;
// tests/text/bpe_test.cc checks all of it against split_class()).
struct ClassRange {
  char32_t first, last;
  SplitClass cls;
};
constexpr SplitClass kL = SplitClass::kLetter;
constexpr SplitClass kN = SplitClass::kNumber;
constexpr ClassRange kOnigRanges[] = {
    {0x1C89, 0x1C8A, kL},   {0xA7CB, 0xA7CD, kL},   {0xA7DA, 0xA7DC, kL},   {0x105C0, 0x105F3, kL},
    {0x10D40, 0x10D49, kN}, {0x10D4A, 0x10D65, kL}, {0x10D6F, 0x10D85, kL}, {0x10EC2, 0x10EC4, kL},
    {0x11380, 0x11389, kL}, {0x1138B, 0x1138B, kL}, {0x1138E, 0x1138E, kL}, {0x11390, 0x113B5, kL},
    {0x113B7, 0x113B7, kL}, {0x113D1, 0x113D1, kL}, {0x113D3, 0x113D3, kL}, {0x116D0, 0x116E3, kN},
    {0x11BC0, 0x11BE0, kL}, {0x11BF0, 0x11BF9, kN}, {0x13460, 0x143FA, kL}, {0x16100, 0x1611D, kL},
    {0x16130, 0x16139, kN}, {0x16D40, 0x16D6C, kL}, {0x16D70, 0x16D79, kN}, {0x18CFF, 0x18CFF, kL},
    {0x1CCF0, 0x1CCF9, kN}, {0x1E5D0, 0x1E5ED, kL}, {0x1E5F0, 0x1E5F0, kL}, {0x1E5F1, 0x1E5FA, kN},
    {0x2EBF0, 0x2EE5D, kL},
};

SplitClass utf8proc_class(char32_t cp) {
  if (char_flags(cp) & kSpace) return SplitClass::kSpace;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO: return SplitClass::kLetter;
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO: return SplitClass::kNumber;
    default: return SplitClass::kOther;
  }
}

SplitClass compute_class(char32_t cp) {
  if (cp >= 0xD800 && cp <= 0xDFFF) return SplitClass::kOther;
  const auto* end = std::end(kOnigRanges);
  const auto* it = std::upper_bound(std::begin(kOnigRanges), end, cp,
                                    [](char32_t c, const ClassRange& r) { return c < r.first; });
  if (it != std::begin(kOnigRanges) && cp <= (it - 1)->last) return (it - 1)->cls;
  return utf8proc_class(cp);
}

// Every code point's class, two bits each (278 KB), computed on first use.
struct ClassTable {
  std::vector<uint8_t> packed = std::vector<uint8_t>(0x110000 / 4);

  ClassTable() {
    for (char32_t cp = 0; cp < 0x110000; ++cp) {
      packed[cp >> 2] |= static_cast<uint8_t>(static_cast<unsigned>(compute_class(cp)) << ((cp & 3) * 2));
    }
  }
  SplitClass at(char32_t cp) const {
    return static_cast<SplitClass>((packed[cp >> 2] >> ((cp & 3) * 2)) & 3);
  }
};

const ClassTable& class_table() {
  static const ClassTable* table = new ClassTable();  // never destroyed: used from any thread until exit
  return *table;
}

struct ByteAlphabet {
  char32_t cp[256];
  char utf8[256][2];
  uint8_t utf8_len[256];
  int16_t byte_of[512];

  ByteAlphabet() {
    std::fill(std::begin(byte_of), std::end(byte_of), int16_t{-1});
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      cp[b] = printable ? static_cast<char32_t>(b) : next++;
      char buf[4] = {};
      utf8_len[b] = static_cast<uint8_t>(encode_utf8(cp[b], buf));
      utf8[b][0] = buf[0];
      utf8[b][1] = buf[1];
      byte_of[cp[b]] = static_cast<int16_t>(b);
    }
  }
};

const ByteAlphabet& byte_alphabet() {
  static const ByteAlphabet alphabet;
  return alphabet;
}

}  // namespace byte_level_impl

using byte_level_impl::byte_alphabet;
using byte_level_impl::class_table;

char32_t byte_to_unicode(uint8_t b) {
  return byte_alphabet().cp[b];
}

int unicode_to_byte(char32_t cp) {
  return cp < 512 ? byte_alphabet().byte_of[cp] : -1;
}

std::string_view byte_to_unicode_utf8(uint8_t b) {
  const byte_level_impl::ByteAlphabet& a = byte_alphabet();
  return {a.utf8[b], a.utf8_len[b]};
}

SplitClass split_class(char32_t cp) {
  if (cp >= 0x110000) return SplitClass::kOther;
  return class_table().at(cp);
}

}  // namespace infercost::text::detail
