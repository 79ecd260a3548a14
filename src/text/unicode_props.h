// Per-code-point properties for the BERT normalizer and pre-tokenizer, as the
// Hugging Face `tokenizers` library (0.20.x) sees them. Internal to
// infercost_text; tests include it to check every code point against HF.
#pragma once

#include <cstdint>

namespace infercost::text::detail {

enum CharFlag : uint8_t {
  kDrop = 1,      // removed by clean_text: NUL, U+FFFD, Cc/Cf/Co/Cs except \t \n \r
  kSpace = 2,     // Rust char::is_whitespace (clean_text maps it to ' '; pre-tokenizer splits)
  kPunct = 4,     // ASCII punctuation or Unicode P* (pre-tokenizer isolates it)
  kCjk = 8,       // padded with spaces when handle_chinese_chars
  kMn = 16,       // nonspacing mark: removed by strip_accents after NFD
  kDecomp = 32,   // has a canonical (NFD) decomposition
  kLower = 64,    // full lowercase differs from the code point
  kCombining = 128,  // nonzero canonical combining class (NFD reorders these)
};

// Flags of `cp` (0..0x10FFFF). Cheap: two table loads after the first call.
uint8_t char_flags(char32_t cp);

// Canonical combining class, 0 for code points HF's tables do not know.
int combining_class(char32_t cp);

// Writes the NFD decomposition of `cp` (1..4 code points... up to kMaxDecomp)
// into `out`; returns the count. Only meaningful when kDecomp is set.
constexpr int kMaxDecomp = 8;
int nfd_decompose(char32_t cp, char32_t* out);

// Full lowercase (Rust char::to_lowercase): 1 or 2 code points into `out`.
int to_lower_full(char32_t cp, char32_t* out);

}  // namespace infercost::text::detail
