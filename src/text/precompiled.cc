#include "text/precompiled.h"

#include <utf8proc.h>

#include <cstring>

#include "text/unicode_props.h"

namespace infercost::text::detail {
namespace {

// -1 for a byte outside the alphabet.
constexpr std::array<int8_t, 256> make_base64_digits() {
  std::array<int8_t, 256> t{};
  for (auto& v : t) v = -1;
  const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(alphabet[i])] = static_cast<int8_t>(i);
  return t;
}
constexpr std::array<int8_t, 256> kBase64Digits = make_base64_digits();

// The double-array unit fields, as sentencepiece's darts-clone lays them out.
inline bool charsmap_has_leaf(uint32_t u) {
  return (u >> 8) & 1;
}
inline uint32_t charsmap_value(uint32_t u) {
  return u & ((1u << 31) - 1);
}
inline uint32_t charsmap_label(uint32_t u) {
  return u & ((1u << 31) | 0xFF);
}
inline uint32_t charsmap_offset(uint32_t u) {
  return (u >> 10) << ((u & (1u << 9)) >> 6);
}

}  // namespace

Result<std::string> decode_base64(std::string_view text) {
  if (text.size() % 4 != 0) {
    return corruption("base64 length " + std::to_string(text.size()) + " is not a multiple of 4");
  }
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    int pad = 0;
    if (last) pad = (text[i + 3] == '=') + (text[i + 2] == '=' && text[i + 3] == '=');
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const unsigned char c = static_cast<unsigned char>(text[i + k]);
      if (k >= 4 - pad) continue;
      const int d = kBase64Digits[c];
      if (d < 0) return corruption("bad base64 character at offset " + std::to_string(i + k));
      v |= static_cast<uint32_t>(d) << (18 - 6 * k);
    }
    const int bytes = 3 - pad;
    // Canonical padding: the bits past the last byte are zero.
    if ((pad == 1 && (v & 0xFF)) || (pad == 2 && (v & 0xFFFF))) {
      return corruption("base64 has trailing bits set at offset " + std::to_string(i + 3 - pad));
    }
    for (int k = 0; k < bytes; ++k) out.push_back(static_cast<char>((v >> (16 - 8 * k)) & 0xFF));
  }
  return out;
}

Result<PrecompiledCharsmap> PrecompiledCharsmap::parse(std::string_view blob) {
  if (blob.size() < 4)
    return corruption("charsmap of " + std::to_string(blob.size()) + " bytes has no trie size");
  uint32_t trie_bytes;
  std::memcpy(&trie_bytes, blob.data(), 4);  // little-endian, as our targets are
  // HF reads trie_bytes / 4 units; a remainder would be taken into the pool.
  if (trie_bytes % 4 != 0)
    return corruption("charsmap trie size " + std::to_string(trie_bytes) + " is not a multiple of 4");
  if (trie_bytes > blob.size() - 4) {
    return corruption("charsmap trie of " + std::to_string(trie_bytes) + " bytes runs past the " +
                      std::to_string(blob.size()) + "-byte charsmap");
  }
  if (trie_bytes == 0) return corruption("charsmap trie is empty");
  PrecompiledCharsmap m;
  m.units_.resize(trie_bytes / 4);
  std::memcpy(m.units_.data(), blob.data() + 4, trie_bytes);
  m.pool_.assign(blob.substr(4 + trie_bytes));
  const size_t bad =
      find_invalid_utf8(reinterpret_cast<const unsigned char*>(m.pool_.data()), m.pool_.size());
  if (bad != m.pool_.size()) {
    return corruption("charsmap string pool is not UTF-8 at pool byte " + std::to_string(bad));
  }
  for (int b = 1; b < 128; ++b) {
    const char c = static_cast<char>(b);
    std::string_view r;
    if (m.transform(std::string_view(&c, 1), &r)) {
      m.ascii_[b].offset = static_cast<uint32_t>(r.data() - m.pool_.data());
      m.ascii_[b].length = static_cast<int32_t>(r.size());
    }
  }
  return m;
}

bool PrecompiledCharsmap::transform(std::string_view chunk, std::string_view* replacement) const {
  const size_t n_units = units_.size();
  size_t pos = charsmap_offset(units_[0]);
  for (const char ch : chunk) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == 0) return false;  // keys end at NUL
    pos ^= c;
    if (pos >= n_units) return false;
    const uint32_t unit = units_[pos];
    if (charsmap_label(unit) != c) return false;
    pos ^= charsmap_offset(unit);
    if (charsmap_has_leaf(unit)) {
      if (pos >= n_units) return false;
      const size_t at = charsmap_value(units_[pos]);
      // A valid charsmap points at the start of a pool string; anything else
      // is treated as no entry rather than read out of bounds.
      if (at >= pool_.size() || (static_cast<unsigned char>(pool_[at]) & 0xC0) == 0x80) return false;
      const size_t end = pool_.find('\0', at);
      *replacement = std::string_view(pool_).substr(at, (end == std::string::npos ? pool_.size() : end) - at);
      return true;
    }
  }
  return false;
}

void PrecompiledCharsmap::normalize_cluster(std::string_view cluster, std::string& out) const {
  std::string_view r;
  if (cluster.size() < 6 && transform(cluster, &r)) {
    out.append(r);
    return;
  }
  const auto* p = reinterpret_cast<const unsigned char*>(cluster.data());
  size_t i = 0;
  while (i < cluster.size()) {
    char32_t cp = 0;
    const int len = decode_utf8(p + i, cluster.size() - i, &cp);
    const std::string_view part = cluster.substr(i, static_cast<size_t>(len));
    if (transform(part, &r)) {
      out.append(r);
    } else {
      out.append(part);
    }
    i += static_cast<size_t>(len);
  }
}

void PrecompiledCharsmap::normalize(std::string_view text, std::string& out) const {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char b = p[i];
    // An ASCII character followed by an ASCII character (or the end) is a
    // cluster of its own, except CR before LF.
    if (b < 0x80 && (i + 1 == n || (p[i + 1] < 0x80 && !(b == '\r' && p[i + 1] == '\n')))) {
      const AsciiEntry& e = ascii_[b];
      if (e.length < 0) {
        out.push_back(static_cast<char>(b));
      } else {
        out.append(pool_, e.offset, static_cast<size_t>(e.length));
      }
      ++i;
      continue;
    }
    // One extended grapheme cluster from i.
    char32_t prev = 0;
    size_t j = i + static_cast<size_t>(decode_utf8(p + i, n - i, &prev));
    utf8proc_int32_t state = 0;
    while (j < n) {
      char32_t cp = 0;
      const int len = decode_utf8(p + j, n - j, &cp);
      if (utf8proc_grapheme_break_stateful(static_cast<utf8proc_int32_t>(prev),
                                           static_cast<utf8proc_int32_t>(cp), &state)) {
        break;
      }
      prev = cp;
      j += static_cast<size_t>(len);
    }
    normalize_cluster(text.substr(i, j - i), out);
    i = j;
  }
}

}  // namespace infercost::text::detail
