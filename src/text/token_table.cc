#include "text/token_table.h"

namespace infercost::text::detail {

bool TokenTable::build(const std::vector<std::pair<std::string_view, int32_t>>& entries) {
  size_t capacity = 16;
  while (capacity < entries.size() * 2) capacity *= 2;
  slots_.assign(capacity, Slot{});
  mask_ = capacity - 1;
  arena_.clear();
  int filter_bits_log2 = 10;
  while ((size_t{1} << filter_bits_log2) < entries.size() * 16) ++filter_bits_log2;
  filter_.assign((size_t{1} << filter_bits_log2) / 64, 0);
  filter_shift_ = 64 - filter_bits_log2;
  max_key_bytes_ = 0;
  for (const auto& [key, id] : entries) {
    Probe p = probe(key);
    const bool is_long = key.size() > kInline;
    const uint64_t bit = p.hash >> filter_shift_;
    filter_[bit >> 6] |= uint64_t{1} << (bit & 63);
    size_t i = static_cast<size_t>(p.hash) & mask_;
    for (;;) {
      Slot& s = slots_[i];
      if (s.id < 0) {
        s.k0 = p.k0;
        s.k1 = p.k1;
        if (is_long) {
          if (arena_.size() + 4 + key.size() >= (1u << 24)) return false;
          s.k1 |= static_cast<uint32_t>(arena_.size());
          const auto len = static_cast<uint32_t>(key.size());
          arena_.append(reinterpret_cast<const char*>(&len), 4);
          arena_.append(key);
        }
        s.id = id;
        break;
      }
      const bool same = is_long ? (s.k0 == p.k0 && s.k1 >> 24 == kLongKey && long_key_equals(s, key))
                                : (s.k0 == p.k0 && s.k1 == p.k1);
      if (same) {
        s.id = id;
        break;
      }
      i = (i + 1) & mask_;
    }
    if (key.size() > max_key_bytes_) max_key_bytes_ = key.size();
  }
  return true;
}

}  // namespace infercost::text::detail
