// Per-code-point properties for the BERT normalizer and pre-tokenizer, as the
// Hugging Face `tokenizers` library (0.20.x) sees them. Internal to
// infercost_text; tests include it to check every code point against HF.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace infercost::text::detail {

enum CharFlag : uint8_t {
  kDrop = 1,         // removed by clean_text: NUL, U+FFFD, Cc/Cf/Co/Cs except \t \n \r
  kSpace = 2,        // Rust char::is_whitespace (clean_text maps it to ' '; pre-tokenizer splits)
  kPunct = 4,        // ASCII punctuation or Unicode P* (pre-tokenizer isolates it)
  kCjk = 8,          // padded with spaces when handle_chinese_chars
  kMn = 16,          // nonspacing mark: removed by strip_accents after NFD
  kDecomp = 32,      // has a canonical (NFD) decomposition
  kLower = 64,       // full lowercase differs from the code point
  kCombining = 128,  // nonzero canonical combining class (NFD reorders these)
};

// Flags of `cp` (0..0x10FFFF). Cheap: two table loads after the first call.
uint8_t char_flags(char32_t cp);

// Canonical combining class, 0 for code points HF's tables do not know.
int combining_class(char32_t cp);

// Writes the NFD decomposition of `cp` (at most kMaxDecomp code points) into
// `out`; returns the count (1 and `cp` itself when kDecomp is not set).
constexpr int kMaxDecomp = 8;
int nfd_decompose(char32_t cp, char32_t* out);

// Decodes one UTF-8 code point at p[0..n) (n >= 1) strictly: no overlong
// forms, surrogates or values past U+10FFFF. Returns its length in bytes, or
// 0 when the bytes are not valid UTF-8.
inline int decode_utf8(const unsigned char* p, size_t n, char32_t* cp) {
  const unsigned b0 = p[0];
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  }
  if (b0 < 0xC2) return 0;
  if (b0 < 0xE0) {
    if (n < 2 || (p[1] & 0xC0) != 0x80) return 0;
    *cp = ((b0 & 0x1F) << 6) | (p[1] & 0x3F);
    return 2;
  }
  if (b0 < 0xF0) {
    if (n < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
    if (b0 == 0xE0 && p[1] < 0xA0) return 0;   // overlong
    if (b0 == 0xED && p[1] >= 0xA0) return 0;  // surrogate
    *cp = ((b0 & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F);
    return 3;
  }
  if (b0 > 0xF4) return 0;
  if (n < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return 0;
  if (b0 == 0xF0 && p[1] < 0x90) return 0;   // overlong
  if (b0 == 0xF4 && p[1] >= 0x90) return 0;  // past U+10FFFF
  *cp = ((b0 & 0x07) << 18) | ((p[1] & 0x3F) << 12) | ((p[2] & 0x3F) << 6) | (p[3] & 0x3F);
  return 4;
}

// Byte offset of the first invalid UTF-8 sequence in p[0..n), or n.
size_t find_invalid_utf8(const unsigned char* p, size_t n);

// Writes `cp` as UTF-8 to `out` (room for 4 bytes); returns the length.
inline int encode_utf8(char32_t cp, char* out) {
  if (cp < 0x80) {
    out[0] = static_cast<char>(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = static_cast<char>(0xC0 | (cp >> 6));
    out[1] = static_cast<char>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = static_cast<char>(0xE0 | (cp >> 12));
    out[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = static_cast<char>(0xF0 | (cp >> 18));
  out[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
  out[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  out[3] = static_cast<char>(0x80 | (cp & 0x3F));
  return 4;
}

// Full lowercase (Rust char::to_lowercase): 1 or 2 code points into `out`.
int to_lower_full(char32_t cp, char32_t* out);

// A Unicode normalization form, as tokenizer.json's NFC / NFD / NFKC / NFKD
// normalizers name them.
enum class UnicodeForm { kNfc, kNfd, kNfkc, kNfkd };

// Appends `text` (valid UTF-8; anything else is appended as it is) in
// `form`, by utf8proc (stable: unassigned code points are left alone).
void append_normalized(std::string_view text, UnicodeForm form, std::string& out);

}  // namespace infercost::text::detail
