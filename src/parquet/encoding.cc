#include "parquet/encoding.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

namespace infercost::parquet {
namespace {

// Every multi-byte load below is a memcpy of little-endian bytes.
static_assert(std::endian::native == std::endian::little, "encoding.cc assumes a little-endian host");

// A bigger DELTA_BYTE_ARRAY page is certainly hostile: prefixes let a few
// bytes of input name gigabytes of output.
constexpr uint64_t kMaxDeltaByteArrayOutput = uint64_t{1} << 31;
// Parquet run and block sizes fit in an int32; refusing more keeps all size
// arithmetic far from overflow.
constexpr uint64_t kMaxBlockSize = uint64_t{1} << 31;

size_t offset_of(const uint8_t* p, const uint8_t* begin) {
  return static_cast<size_t>(p - begin);
}

// ULEB128 of at most 10 bytes; false on truncation or a value above 2^64.
bool read_uleb(const uint8_t*& p, const uint8_t* end, uint64_t* out) {
  uint64_t v = 0;
  for (int i = 0, shift = 0; i < 10; ++i, shift += 7) {
    if (p >= end) return false;
    const uint8_t b = *p++;
    if (i == 9 && b > 1) return false;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *out = v;
      return true;
    }
  }
  return false;
}

void put_uleb(uint64_t v, std::string& out) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

uint64_t zigzag_decode(uint64_t v) {
  return (v >> 1) ^ (~(v & 1) + 1);
}

// ---- bit-packed groups of 8 values (RLE hybrid) ----

// unpack_groups<W> reads up to byte (7 * W / 8) + 8 of each group, so the
// caller guarantees kGroupSlack readable bytes from every group it passes.
constexpr size_t kGroupSlack = 40;

template <int W>
void unpack_groups(const uint8_t* in, size_t groups, uint32_t* out) {
  if constexpr (W == 0) {
    std::memset(out, 0, groups * 8 * sizeof(uint32_t));
  } else {
    constexpr uint64_t kMask = (uint64_t{1} << W) - 1;
    for (size_t g = 0; g < groups; ++g, in += W, out += 8) {
      for (int i = 0; i < 8; ++i) {
        const int bit = i * W;
        uint64_t x;
        std::memcpy(&x, in + (bit >> 3), 8);
        out[i] = static_cast<uint32_t>((x >> (bit & 7)) & kMask);
      }
    }
  }
}

using UnpackFn = void (*)(const uint8_t*, size_t, uint32_t*);

template <size_t... W>
constexpr std::array<UnpackFn, sizeof...(W)> make_unpack_table(std::index_sequence<W...>) {
  return {&unpack_groups<static_cast<int>(W)>...};
}

constexpr auto kUnpack = make_unpack_table(std::make_index_sequence<33>());

// One group whose bytes may run up to the end of the input: copied into a
// zero-padded buffer first.
void unpack_group_safe(const uint8_t* in, size_t avail, int w, uint32_t* out) {
  uint8_t buf[kGroupSlack + 8] = {};
  std::memcpy(buf, in, std::min<size_t>(avail, static_cast<size_t>(w)));
  kUnpack[w](buf, 1, out);
}

// Appends the packed form of values[0, n) plus zero padding to a multiple of 8.
void put_bit_packed(const uint32_t* values, size_t n, int w, std::string& out) {
  const size_t groups = (n + 7) / 8;
  const uint64_t mask = w == 32 ? 0xffffffffu : ((uint64_t{1} << w) - 1);
  const size_t old = out.size();
  out.resize(old + groups * static_cast<size_t>(w));
  auto* dst = reinterpret_cast<uint8_t*>(out.data() + old);
  uint64_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < groups * 8; ++i) {
    const uint64_t v = i < n ? (values[i] & mask) : 0;
    acc |= v << bits;
    bits += w;
    while (bits >= 8) {
      *dst++ = static_cast<uint8_t>(acc);
      acc >>= 8;
      bits -= 8;
    }
  }
}

// ---- DELTA_BINARY_PACKED ----

// Bits [bit, bit + w) of in[0, in_bytes), LSB first; all of them must lie
// inside the buffer.
inline uint64_t read_bits(const uint8_t* in, size_t in_bytes, uint64_t bit, int w) {
  if (w == 0) return 0;
  const size_t byte = bit >> 3;
  const int sh = static_cast<int>(bit & 7);
  uint64_t x;
  if (byte + 8 <= in_bytes) {
    std::memcpy(&x, in + byte, 8);
  } else {
    x = 0;
    for (size_t k = 0; k < 8 && byte + k < in_bytes; ++k) x |= static_cast<uint64_t>(in[byte + k]) << (8 * k);
  }
  x >>= sh;
  if (sh + w > 64) x |= static_cast<uint64_t>(in[byte + 8]) << (64 - sh);
  return w == 64 ? x : (x & ((uint64_t{1} << w) - 1));
}

// Decodes the first `count` values into out (appended) and walks the rest
// of the stream so *consumed covers every block of the page's values.
Status delta_decode(const uint8_t* data, size_t size, size_t count, std::vector<int64_t>& out,
                    size_t* consumed) {
  *consumed = 0;
  if (count == 0 && size == 0) return Status::ok_status();
  const uint8_t* p = data;
  const uint8_t* end = data + size;
  uint64_t block_size = 0, miniblocks = 0, total = 0, first = 0;
  if (!read_uleb(p, end, &block_size) || !read_uleb(p, end, &miniblocks) || !read_uleb(p, end, &total) ||
      !read_uleb(p, end, &first)) {
    return corruption(fmt::format("DELTA_BINARY_PACKED: truncated or bad header ({} bytes)", size));
  }
  if (block_size == 0 || block_size % 128 != 0 || block_size > kMaxBlockSize) {
    return corruption(
        fmt::format("DELTA_BINARY_PACKED: block size {} is not a positive multiple of 128", block_size));
  }
  if (miniblocks == 0 || block_size % miniblocks != 0 || (block_size / miniblocks) % 32 != 0) {
    return corruption(
        fmt::format("DELTA_BINARY_PACKED: {} miniblocks do not split a block of {} into multiples of 32",
                    miniblocks, block_size));
  }
  if (total < count) {
    return corruption(fmt::format("DELTA_BINARY_PACKED: page holds {} values, {} expected", total, count));
  }
  if (total == 0) {
    *consumed = offset_of(p, data);
    return Status::ok_status();
  }
  const uint64_t per_mini = block_size / miniblocks;
  uint64_t last = zigzag_decode(first);
  size_t wanted = count;  // values still to append
  if (wanted > 0) {
    out.push_back(static_cast<int64_t>(last));
    --wanted;
  }
  uint64_t deltas_left = total - 1;
  while (deltas_left > 0) {
    const uint8_t* block_start = p;
    uint64_t min_delta_zz = 0;
    if (!read_uleb(p, end, &min_delta_zz)) {
      return corruption(fmt::format("DELTA_BINARY_PACKED: truncated block header at byte {}",
                                    offset_of(block_start, data)));
    }
    const uint64_t min_delta = zigzag_decode(min_delta_zz);
    if (static_cast<uint64_t>(end - p) < miniblocks) {
      return corruption(
          fmt::format("DELTA_BINARY_PACKED: truncated miniblock widths at byte {}", offset_of(p, data)));
    }
    const uint8_t* widths = p;
    p += miniblocks;
    uint64_t block_left = std::min(block_size, deltas_left);
    deltas_left -= block_left;
    // Miniblocks past the last value are absent whatever their width byte says.
    for (uint64_t m = 0; m < miniblocks && block_left > 0; ++m) {
      const int w = widths[m];
      if (w > 64) {
        return corruption(fmt::format("DELTA_BINARY_PACKED: miniblock bit width {} at byte {}", w,
                                      offset_of(widths + m, data)));
      }
      const uint64_t mini_bytes = per_mini * static_cast<uint64_t>(w) / 8;
      if (static_cast<uint64_t>(end - p) < mini_bytes) {
        return corruption(fmt::format("DELTA_BINARY_PACKED: miniblock of {} bytes truncated at byte {} of {}",
                                      mini_bytes, offset_of(p, data), size));
      }
      const uint64_t in_mini = std::min(per_mini, block_left);
      block_left -= in_mini;
      const size_t take = static_cast<size_t>(std::min<uint64_t>(in_mini, wanted));
      if (take > 0) {
        const size_t old = out.size();
        out.resize(old + take);
        int64_t* dst = out.data() + old;
        const size_t nbytes = static_cast<size_t>(mini_bytes);
        if (w == 0) {
          for (size_t j = 0; j < take; ++j) {
            last += min_delta;
            dst[j] = static_cast<int64_t>(last);
          }
        } else {
          uint64_t bit = 0;
          for (size_t j = 0; j < take; ++j, bit += static_cast<uint64_t>(w)) {
            last += min_delta + read_bits(p, nbytes, bit, w);
            dst[j] = static_cast<int64_t>(last);
          }
        }
        wanted -= take;
      }
      p += mini_bytes;
    }
  }
  *consumed = offset_of(p, data);
  return Status::ok_status();
}

}  // namespace

// ---- RLE / bit-packed hybrid ----

RleBitPackedDecoder::RleBitPackedDecoder(const uint8_t* data, size_t size, int bit_width)
    : begin_(data), data_(data), end_(data + size), bit_width_(bit_width) {}

Status RleBitPackedDecoder::next_run() {
  const uint8_t* p = data_;
  uint64_t header = 0;
  if (!read_uleb(p, end_, &header) || header > 0xffffffffu) {
    return corruption(fmt::format("RLE: bad run header at byte {}", offset_of(data_, begin_)));
  }
  const uint64_t len = header >> 1;
  if (len == 0) return corruption(fmt::format("RLE: empty run at byte {}", offset_of(data_, begin_)));
  const auto w = static_cast<uint64_t>(bit_width_);
  const auto avail = static_cast<uint64_t>(end_ - p);
  if (header & 1) {
    // A bit-packed run cut short by the end of the input still serves the
    // values whose bits are all present.
    const uint64_t bytes = std::min(len * w, avail);
    const uint64_t values = w == 0 ? len * 8 : std::min(len * 8, bytes * 8 / w);
    if (values == 0) {
      return corruption(fmt::format("RLE: bit-packed run at byte {} has no data", offset_of(data_, begin_)));
    }
    packed_ = p;
    packed_pos_ = 0;
    packed_left_ = values;
    data_ = p + bytes;
  } else {
    const uint64_t nbytes = (w + 7) / 8;
    if (avail < nbytes)
      return corruption(fmt::format("RLE: truncated run value at byte {}", offset_of(p, begin_)));
    uint32_t value = 0;
    for (uint64_t i = 0; i < nbytes; ++i) value |= static_cast<uint32_t>(p[i]) << (8 * i);
    if (w < 32 && (value >> w) != 0) {
      return corruption(
          fmt::format("RLE: run value {} at byte {} is wider than {} bits", value, offset_of(p, begin_), w));
    }
    rle_left_ = len;
    rle_value_ = value;
    data_ = p + nbytes;
  }
  return Status::ok_status();
}

void RleBitPackedDecoder::unpack_packed(uint32_t* out, uint64_t n) {
  const int w = bit_width_;
  const auto uw = static_cast<size_t>(w);
  uint64_t pos = packed_pos_;
  uint64_t i = 0;
  while (i < n) {
    const uint8_t* group = packed_ + (pos / 8) * uw;
    const auto within = static_cast<unsigned>(pos % 8);
    const size_t avail = static_cast<size_t>(end_ - group);
    if (within == 0 && n - i >= 8) {
      const uint64_t groups = (n - i) / 8;
      uint64_t fast = 0;
      if (w == 0) {
        fast = groups;
      } else if (avail >= kGroupSlack) {
        fast = std::min<uint64_t>(groups, (avail - kGroupSlack) / uw + 1);
      }
      if (fast > 0) {
        kUnpack[w](group, static_cast<size_t>(fast), out + i);
        i += fast * 8;
        pos += fast * 8;
        continue;
      }
    }
    uint32_t tmp[8];
    unpack_group_safe(group, w == 0 ? 0 : avail, w, tmp);
    const uint64_t take = std::min<uint64_t>(8 - within, n - i);
    std::memcpy(out + i, tmp + within, take * sizeof(uint32_t));
    i += take;
    pos += take;
  }
  packed_pos_ = pos;
  packed_left_ -= n;
}

Status RleBitPackedDecoder::get(uint32_t* out, size_t n) {
  if (bit_width_ < 0 || bit_width_ > 32) {
    return invalid_argument(fmt::format("RLE: bit width {} is outside 0..32", bit_width_));
  }
  size_t done = 0;
  while (done < n) {
    if (rle_left_ > 0) {
      const auto take = static_cast<size_t>(std::min<uint64_t>(rle_left_, n - done));
      std::fill_n(out + done, take, rle_value_);
      rle_left_ -= take;
      done += take;
    } else if (packed_left_ > 0) {
      const auto take = static_cast<size_t>(std::min<uint64_t>(packed_left_, n - done));
      unpack_packed(out + done, take);
      done += take;
    } else {
      if (data_ >= end_) {
        return corruption(fmt::format("RLE: input ends at byte {} with {} of {} values decoded",
                                      offset_of(data_, begin_), done, n));
      }
      INFERCOST_RETURN_IF_ERROR(next_run());
    }
  }
  return Status::ok_status();
}

void encode_rle_bit_packed(const uint32_t* values, size_t n, int bit_width, std::string& out) {
  constexpr uint64_t kMaxRun = (uint64_t{1} << 31) - 1;
  constexpr size_t kMaxGroups = kMaxRun / 8;
  const int w = bit_width;
  const size_t value_bytes = static_cast<size_t>((w + 7) / 8);
  const uint32_t mask = w >= 32 ? 0xffffffffu : ((uint32_t{1} << w) - 1);
  auto flush_literals = [&](size_t start, size_t len) {
    while (len > 0) {
      const size_t chunk = std::min(len, kMaxGroups * 8);
      put_uleb((static_cast<uint64_t>((chunk + 7) / 8) << 1) | 1, out);
      put_bit_packed(values + start, chunk, w, out);
      start += chunk;
      len -= chunk;
    }
  };
  auto put_run = [&](uint32_t value, uint64_t len) {
    value &= mask;
    while (len > 0) {
      const uint64_t chunk = std::min(len, kMaxRun);
      put_uleb(chunk << 1, out);
      for (size_t b = 0; b < value_bytes; ++b) out.push_back(static_cast<char>((value >> (8 * b)) & 0xff));
      len -= chunk;
    }
  };
  size_t literal_start = 0;
  size_t i = 0;
  while (i < n) {
    size_t run = 1;
    while (i + run < n && values[i + run] == values[i]) ++run;
    if (run >= 8) {
      // Literal runs other than the last must hold whole groups: borrow the
      // first repeats to complete the pending group when the run survives it.
      const size_t pending = i - literal_start;
      const size_t pad = (8 - pending % 8) % 8;
      if (run - pad >= 8) {
        flush_literals(literal_start, pending + pad);
        put_run(values[i], run - pad);
        literal_start = i + run;
      }
    }
    i += run;
  }
  flush_literals(literal_start, n - literal_start);
}

int bit_width_for(uint64_t max_value) {
  return max_value == 0 ? 0 : 64 - std::countl_zero(max_value);
}

// ---- PLAIN ----

Status decode_plain_byte_array(const uint8_t* data, size_t size, size_t count, ByteArrayBuffer& out,
                               size_t* consumed) {
  *consumed = 0;
  if (count > size / 4) {
    return corruption(fmt::format("PLAIN: {} byte arrays cannot fit in {} bytes", count, size));
  }
  // One pass (a validating pre-pass measured 2-3x slower): the value bytes
  // cannot exceed what the input holds beyond the lengths, so reserving that
  // makes every append a plain copy; on error the buffer is rolled back.
  const size_t old_bytes = out.bytes.size();
  const size_t old_n = out.offsets.size();
  out.bytes.reserve(old_bytes + (size - 4 * count));
  out.offsets.reserve(old_n + count);
  size_t pos = 0;
  for (size_t i = 0; i < count; ++i) {
    uint32_t len = 0;
    if (size - pos >= 4) std::memcpy(&len, data + pos, 4);
    if (size - pos < 4 || len > size - pos - 4) {
      out.bytes.resize(old_bytes);
      out.offsets.resize(old_n);
      if (size - pos < 4) {
        return corruption(
            fmt::format("PLAIN: byte array {} of {}: length truncated at byte {}", i, count, pos));
      }
      return corruption(
          fmt::format("PLAIN: byte array {} of {}: length {} at byte {} exceeds the {} bytes left", i, count,
                      len, pos, size - pos - 4));
    }
    out.bytes.append(reinterpret_cast<const char*>(data + pos + 4), len);
    out.offsets.push_back(out.bytes.size());
    pos += 4 + static_cast<size_t>(len);
  }
  *consumed = pos;
  return Status::ok_status();
}

Status decode_plain_fixed_len(const uint8_t* data, size_t size, size_t count, int width, ByteArrayBuffer& out,
                              size_t* consumed) {
  *consumed = 0;
  if (width <= 0) return corruption(fmt::format("PLAIN: fixed-length width {} is not positive", width));
  const auto w = static_cast<size_t>(width);
  if (count > size / w) {
    return corruption(fmt::format("PLAIN: {} values of {} bytes cannot fit in {} bytes", count, w, size));
  }
  const size_t old_bytes = out.bytes.size();
  const size_t old_n = out.offsets.size();
  out.bytes.append(reinterpret_cast<const char*>(data), count * w);
  out.offsets.resize(old_n + count);
  for (size_t i = 0; i < count; ++i) out.offsets[old_n + i] = old_bytes + (i + 1) * w;
  *consumed = count * w;
  return Status::ok_status();
}

template <typename Stored, typename Out>
Status decode_plain_numeric(const uint8_t* data, size_t size, size_t count, std::vector<Out>& out,
                            size_t* consumed) {
  static_assert(sizeof(Stored) == 4 || sizeof(Stored) == 8);
  const char* type = std::is_integral_v<Stored> ? (sizeof(Stored) == 4 ? "INT32" : "INT64")
                                                : (sizeof(Stored) == 4 ? "FLOAT" : "DOUBLE");
  *consumed = 0;
  if (count > size / sizeof(Stored)) {
    return corruption(fmt::format("PLAIN: {} {} values need {} bytes, {} present", count, type,
                                  static_cast<unsigned long long>(count) * sizeof(Stored), size));
  }
  const size_t old = out.size();
  out.resize(old + count);
  Out* dst = out.data() + old;
  for (size_t i = 0; i < count; ++i) {
    Stored v;
    std::memcpy(&v, data + i * sizeof(Stored), sizeof(Stored));
    dst[i] = static_cast<Out>(v);
  }
  *consumed = count * sizeof(Stored);
  return Status::ok_status();
}

// The four the header names.
template Status decode_plain_numeric<int32_t>(const uint8_t*, size_t, size_t, std::vector<int64_t>&, size_t*);
template Status decode_plain_numeric<int64_t>(const uint8_t*, size_t, size_t, std::vector<int64_t>&, size_t*);
template Status decode_plain_numeric<float>(const uint8_t*, size_t, size_t, std::vector<double>&, size_t*);
template Status decode_plain_numeric<double>(const uint8_t*, size_t, size_t, std::vector<double>&, size_t*);

Status decode_plain_boolean(const uint8_t* data, size_t size, size_t count, std::vector<int64_t>& out,
                            size_t* consumed) {
  *consumed = 0;
  const size_t nbytes = count / 8 + (count % 8 != 0 ? 1 : 0);
  if (nbytes > size) {
    return corruption(fmt::format("PLAIN: {} booleans need {} bytes, {} present", count, nbytes, size));
  }
  const size_t old = out.size();
  out.resize(old + count);
  int64_t* dst = out.data() + old;
  for (size_t i = 0; i < count; ++i) dst[i] = (data[i >> 3] >> (i & 7)) & 1;
  *consumed = nbytes;
  return Status::ok_status();
}

void encode_plain_byte_array(std::string_view value, std::string& out) {
  const auto len = static_cast<uint32_t>(value.size());
  char prefix[4];
  std::memcpy(prefix, &len, 4);
  out.append(prefix, 4);
  out.append(value);
}

// ---- DELTA encodings ----

Status decode_delta_binary_packed(const uint8_t* data, size_t size, size_t count, std::vector<int64_t>& out,
                                  size_t* consumed) {
  return delta_decode(data, size, count, out, consumed);
}

namespace {

// The DELTA_BINARY_PACKED lengths that open the data of both byte-array
// encodings, and the bytes they take.
struct DeltaLengths {
  std::vector<int64_t> values;
  size_t bytes = 0;
};

// `count` lengths at `data`; errors say they are `what`.
Result<DeltaLengths> delta_lengths(const uint8_t* data, size_t size, size_t count, const char* what) {
  DeltaLengths lengths;
  Status st = delta_decode(data, size, count, lengths.values, &lengths.bytes);
  if (!st.ok()) return st.with_context(what);
  return lengths;
}

}  // namespace

Status decode_delta_length_byte_array(const uint8_t* data, size_t size, size_t count, ByteArrayBuffer& out,
                                      size_t* consumed) {
  *consumed = 0;
  INFERCOST_ASSIGN_OR_RETURN(const DeltaLengths lengths,
                             delta_lengths(data, size, count, "DELTA_LENGTH_BYTE_ARRAY: lengths"));
  const uint64_t left = size - lengths.bytes;
  uint64_t total = 0;
  for (size_t i = 0; i < count; ++i) {
    if (lengths.values[i] < 0) {
      return corruption(fmt::format("DELTA_LENGTH_BYTE_ARRAY: value {} has length {}", i, lengths.values[i]));
    }
    total += static_cast<uint64_t>(lengths.values[i]);
    if (total > left) {
      return corruption(
          fmt::format("DELTA_LENGTH_BYTE_ARRAY: values up to {} need {} bytes, {} left after byte {}", i,
                      total, left, lengths.bytes));
    }
  }
  const size_t old_bytes = out.bytes.size();
  const size_t old_n = out.offsets.size();
  out.bytes.append(reinterpret_cast<const char*>(data + lengths.bytes), static_cast<size_t>(total));
  out.offsets.resize(old_n + count);
  uint64_t at = old_bytes;
  for (size_t i = 0; i < count; ++i) {
    at += static_cast<uint64_t>(lengths.values[i]);
    out.offsets[old_n + i] = at;
  }
  *consumed = lengths.bytes + static_cast<size_t>(total);
  return Status::ok_status();
}

Status decode_delta_byte_array(const uint8_t* data, size_t size, size_t count, ByteArrayBuffer& out,
                               size_t* consumed) {
  *consumed = 0;
  INFERCOST_ASSIGN_OR_RETURN(const DeltaLengths prefixes,
                             delta_lengths(data, size, count, "DELTA_BYTE_ARRAY: prefix lengths"));
  ByteArrayBuffer suffixes;
  size_t suffix_used = 0;
  Status st = decode_delta_length_byte_array(data + prefixes.bytes, size - prefixes.bytes, count, suffixes,
                                             &suffix_used);
  if (!st.ok()) return st.with_context(fmt::format("DELTA_BYTE_ARRAY: suffixes at byte {}", prefixes.bytes));
  uint64_t total = 0;
  uint64_t prev_len = 0;
  for (size_t i = 0; i < count; ++i) {
    const int64_t prefix = prefixes.values[i];
    if (prefix < 0 || static_cast<uint64_t>(prefix) > prev_len) {
      return corruption(
          fmt::format("DELTA_BYTE_ARRAY: value {} has prefix length {}, previous value has {} bytes", i,
                      prefix, prev_len));
    }
    prev_len = static_cast<uint64_t>(prefix) + (suffixes.offsets[i + 1] - suffixes.offsets[i]);
    total += prev_len;
    if (total > kMaxDeltaByteArrayOutput) {
      return corruption(
          fmt::format("DELTA_BYTE_ARRAY: values expand to more than {} bytes", kMaxDeltaByteArrayOutput));
    }
  }
  const size_t old_bytes = out.bytes.size();
  const size_t old_n = out.offsets.size();
  out.bytes.resize(old_bytes + static_cast<size_t>(total));
  out.offsets.resize(old_n + count);
  char* base = out.bytes.data();
  size_t at = old_bytes;
  size_t prev_start = old_bytes;
  for (size_t i = 0; i < count; ++i) {
    const auto prefix = static_cast<size_t>(prefixes.values[i]);
    std::memcpy(base + at, base + prev_start, prefix);
    const std::string_view suffix = suffixes.at(i);
    std::memcpy(base + at + prefix, suffix.data(), suffix.size());
    prev_start = at;
    at += prefix + suffix.size();
    out.offsets[old_n + i] = at;
  }
  *consumed = prefixes.bytes + suffix_used;
  return Status::ok_status();
}

Status decode_byte_stream_split(const uint8_t* data, size_t size, size_t count, int width, std::string& out) {
  if (width <= 0) return corruption(fmt::format("BYTE_STREAM_SPLIT: value width {} is not positive", width));
  const auto w = static_cast<size_t>(width);
  if (size % w != 0) {
    return corruption(
        fmt::format("BYTE_STREAM_SPLIT: {} bytes are not a whole number of {}-byte values", size, w));
  }
  // The streams are as long as the page's value count, which only the size tells.
  const size_t n = size / w;
  if (count > n) {
    return corruption(fmt::format("BYTE_STREAM_SPLIT: {} values requested, page holds {}", count, n));
  }
  const size_t old = out.size();
  out.resize(old + count * w);
  auto* dst = reinterpret_cast<uint8_t*>(out.data() + old);
  auto unsplit = [&](auto width_tag) {
    constexpr size_t kW = decltype(width_tag)::value;
    for (size_t i = 0; i < count; ++i) {
      for (size_t k = 0; k < kW; ++k) dst[i * kW + k] = data[k * n + i];
    }
  };
  if (w == 4) {
    unsplit(std::integral_constant<size_t, 4>());
  } else if (w == 8) {
    unsplit(std::integral_constant<size_t, 8>());
  } else {
    for (size_t i = 0; i < count; ++i) {
      for (size_t k = 0; k < w; ++k) dst[i * w + k] = data[k * n + i];
    }
  }
  return Status::ok_status();
}

}  // namespace infercost::parquet
