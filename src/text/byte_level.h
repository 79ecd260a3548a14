// The byte-level pieces of GPT-2 / RoBERTa tokenization, as Hugging Face
// `tokenizers`' ByteLevel pre-tokenizer has them: the byte-to-unicode
// alphabet, the code point classes of the GPT-2 split pattern, and the split
// itself. Internal to infercost_text; tests include it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "text/unicode_props.h"

namespace infercost::text::detail {

// The code point GPT-2's bytes_to_unicode gives byte `b`: printable Latin-1
// bytes stand for themselves, the others for U+0100 onwards in byte order.
char32_t byte_to_unicode(uint8_t b);
// The byte a code point of that alphabet stands for; -1 for any other.
int unicode_to_byte(char32_t cp);
// The UTF-8 of byte_to_unicode(b) (one or two bytes).
std::string_view byte_to_unicode_utf8(uint8_t b);

// What the pattern `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+|
// ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+` sees of a code point, with HF's regex
// engine (onig) deciding \p{L}, \p{N} and \s.
enum class SplitClass : uint8_t { kOther, kLetter, kNumber, kSpace };
SplitClass split_class(char32_t cp);

// Calls on_word(begin, end) for each match of the pattern above in `text`
// (valid UTF-8), in order; the matches cover the text. A hand-written
// scanner: no regex engine.
template <class OnWord>
void split_gpt2(std::string_view text, OnWord&& on_word);

// ---------------------------------------------------------------- implementation

namespace byte_level_impl {
// Classes of ASCII code points, indexed by the byte.
extern const SplitClass kAsciiClass[128];

inline SplitClass class_at(const unsigned char* p, size_t n, size_t i, size_t* len) {
  if (p[i] < 0x80) {
    *len = 1;
    return kAsciiClass[p[i]];
  }
  char32_t cp = 0;
  *len = static_cast<size_t>(decode_utf8(p + i, n - i, &cp));
  return split_class(cp);
}

// End of the run of `k` code points that starts at `i`.
inline size_t run_end(const unsigned char* p, size_t n, size_t i, SplitClass k) {
  while (i < n) {
    size_t len = 0;
    if (class_at(p, n, i, &len) != k) break;
    i += len;
  }
  return i;
}

// Bytes of a contraction ('s 't 're 've 'm 'll 'd, lowercase only) at p[i],
// which is an apostrophe; 0 for none.
inline size_t contraction_at(const unsigned char* p, size_t n, size_t i) {
  if (i + 1 >= n) return 0;
  const unsigned char c = p[i + 1];
  if (c == 's' || c == 't' || c == 'm' || c == 'd') return 2;
  if (i + 2 >= n) return 0;
  const unsigned char c2 = p[i + 2];
  if ((c == 'r' && c2 == 'e') || (c == 'v' && c2 == 'e') || (c == 'l' && c2 == 'l')) return 3;
  return 0;
}
}  // namespace byte_level_impl

template <class OnWord>
void split_gpt2(std::string_view text, OnWord&& on_word) {
  using namespace byte_level_impl;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    size_t len = 0;
    const SplitClass k = class_at(p, n, i, &len);
    size_t end;
    if (p[i] == '\'' && (end = contraction_at(p, n, i)) != 0) {
      end += i;
    } else if (k != SplitClass::kSpace) {
      end = run_end(p, n, i + len, k);
    } else {
      // " ?X+": a single ASCII space joins the run after it.
      size_t next_len = 0;
      const SplitClass next =
          p[i] == ' ' && i + 1 < n ? class_at(p, n, i + 1, &next_len) : SplitClass::kSpace;
      if (next != SplitClass::kSpace) {
        end = run_end(p, n, i + 1 + next_len, next);
      } else {
        // "\s+(?!\S)" leaves the run's last space to what follows it, unless
        // the run ends the text or is a single space ("\s+" then).
        size_t last = i;  // start of the run's last code point
        end = i + len;
        while (end < n) {
          size_t l = 0;
          if (class_at(p, n, end, &l) != SplitClass::kSpace) break;
          last = end;
          end += l;
        }
        if (end < n && last > i) end = last;
      }
    }
    on_word(i, end);
    i = end;
  }
}

}  // namespace infercost::text::detail
