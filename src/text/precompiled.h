// SentencePiece's precompiled normalization charsmap, the `Precompiled`
// normalizer of a tokenizer.json (XLM-R, mBART, T5), applied as Hugging Face
// `tokenizers` applies it. Private to infercost_text.
//
// The charsmap (base64 in tokenizer.json) is a little-endian u32 byte count of
// a double-array trie, that many bytes of u32 trie units, then a pool of
// NUL-terminated UTF-8 replacement strings the trie's leaves point into.
//
// HF walks the text by extended grapheme cluster. A cluster shorter than 6
// bytes is looked up whole, and on a hit the whole cluster becomes the
// replacement of the *shortest* key that is a prefix of it (so "\r\n" becomes
// the replacement of "\r", and "Ａ" + U+0301 that of "Ａ": the mark is lost).
// Otherwise (a miss, or a cluster of 6 bytes or more) each code point is
// looked up alone and kept as it is on a miss. We reproduce that, quirks
// included; clusters come from utf8proc's grapheme break.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "infercost/status.h"

namespace infercost::text::detail {

// Standard base64 (RFC 4648 alphabet, '=' padding) as the Rust `base64`
// crate's STANDARD engine accepts it: no whitespace, canonical padding.
// kCorruption naming the offending character offset.
Result<std::string> decode_base64(std::string_view text);

class PrecompiledCharsmap {
 public:
  PrecompiledCharsmap() = default;
  // `blob` is the decoded charsmap. kCorruption when the trie size is not a
  // multiple of 4 or runs past the blob, or the pool is not UTF-8.
  static Result<PrecompiledCharsmap> parse(std::string_view blob);

  // The replacement of the shortest key that is a prefix of `chunk`;
  // false when none is (or the entry points outside the pool).
  bool transform(std::string_view chunk, std::string_view* replacement) const;

  // Appends the normalization of `text` (valid UTF-8) to `out`.
  void normalize(std::string_view text, std::string& out) const;

  size_t trie_units() const { return units_.size(); }

 private:
  // Appends the normalization of the grapheme cluster text[0..n).
  void normalize_cluster(std::string_view cluster, std::string& out) const;

  std::vector<uint32_t> units_;
  std::string pool_;
  // Replacement of each ASCII byte looked up alone (an ASCII character
  // between two ASCII characters is a cluster of its own, save CR LF):
  // offset into pool_ and length, or length -1 for "kept as it is".
  struct AsciiEntry {
    uint32_t offset = 0;
    int32_t length = -1;
  };
  std::array<AsciiEntry, 128> ascii_{};
};

}  // namespace infercost::text::detail
