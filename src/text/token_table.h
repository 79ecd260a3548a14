// Open-addressing hash table from token bytes to id, probed with string_views
// (no std::string per lookup). Internal to infercost_text. Immutable after
// build(); safe to read from any number of threads.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace infercost::text::detail {

class TokenTable {
 public:
  // Later duplicates win, as in HF's vocab dict. False when the keys longer
  // than 11 bytes add up to 16 MB or more (offsets are 24 bits).
  bool build(const std::vector<std::pair<std::string_view, int32_t>>& entries);

  // -1 when absent.
  int32_t find(std::string_view key) const {
    if (slots_.empty()) return -1;
    const Probe p = probe(key);
    // Most WordPiece probes miss; the bit filter (16 bits per key, small
    // enough to stay in cache) turns away ~94% of them without touching the
    // slot array.
    const uint64_t bit = p.hash >> filter_shift_;
    if (!((filter_[bit >> 6] >> (bit & 63)) & 1)) return -1;
    size_t i = static_cast<size_t>(p.hash) & mask_;
    for (;;) {
      const Slot& s = slots_[i];
      if (s.id < 0) return -1;
      if (s.k0 == p.k0) {
        if ((p.k1 >> 24) != kLongKey) {
          if (s.k1 == p.k1) return s.id;
        } else if ((s.k1 >> 24) == kLongKey && long_key_equals(s, key)) {
          return s.id;
        }
      }
      i = (i + 1) & mask_;
    }
  }

  // Longest key in bytes (0 when empty): probes longer than this cannot hit.
  size_t max_key_bytes() const { return max_key_bytes_; }

 private:
  // Keys of up to kInline bytes live in the slot itself (k0 = bytes 0-7,
  // k1 = bytes 8-10 and the length in the top byte), so a hit costs one
  // cache line. Longer keys keep their 64-bit hash in k0 and an arena offset
  // in k1.
  static constexpr size_t kInline = 11;
  static constexpr uint32_t kLongKey = 0xFF;

  struct Slot {
    uint64_t k0 = 0;
    uint32_t k1 = 0;
    int32_t id = -1;
  };
  struct Probe {
    uint64_t k0;
    uint32_t k1;
    uint64_t hash;
  };

  static uint64_t mix(uint64_t x) {
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 31;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 29);
  }

  static uint64_t hash_bytes(const char* p, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    while (n >= 8) {
      uint64_t w;
      std::memcpy(&w, p, 8);
      h = mix(h ^ w);
      p += 8;
      n -= 8;
    }
    uint64_t w = 0;
    std::memcpy(&w, p, n);
    return mix(h ^ w);
  }

  static Probe probe(std::string_view key) {
    const size_t n = key.size();
    if (n > kInline) {
      const uint64_t h = hash_bytes(key.data(), n);
      return {h, kLongKey << 24, h};
    }
    uint64_t k0 = 0;
    uint32_t k1 = 0;
    std::memcpy(&k0, key.data(), n < 8 ? n : 8);
    if (n > 8) std::memcpy(&k1, key.data() + 8, n - 8);
    k1 |= static_cast<uint32_t>(n) << 24;
    return {k0, k1, mix(k0 ^ (uint64_t{k1} << 32 | k1))};
  }

  bool long_key_equals(const Slot& s, std::string_view key) const {
    const uint32_t offset = s.k1 & 0xFFFFFF;
    uint32_t len;
    std::memcpy(&len, arena_.data() + offset, 4);
    return len == key.size() && std::memcmp(arena_.data() + offset + 4, key.data(), len) == 0;
  }

  std::vector<Slot> slots_;
  std::vector<uint64_t> filter_;
  int filter_shift_ = 63;
  std::string arena_;  // long keys: 4-byte length, then the bytes
  size_t mask_ = 0;
  size_t max_key_bytes_ = 0;
};

}  // namespace infercost::text::detail
