// Parquet value/level encodings: hand-built vectors from the spec, round trips
// through our encoders and test-only reference encoders, pyarrow-written pages
// (tests/data_files/parquet/encodings/vectors.json, from
// tools/gen_encoding_vectors.py), and corruption safety (truncations and random
// mutations never crash and never allocate much more than the input).
#include "parquet/encoding.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <new>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

// ---- allocation tracking: the largest single allocation while armed ----
// The replacements below pair malloc with free on purpose; GCC cannot see that.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {
std::atomic<bool> g_track{false};
std::atomic<size_t> g_max_alloc{0};

void note_alloc(size_t n) {
  if (!g_track.load(std::memory_order_relaxed)) return;
  size_t cur = g_max_alloc.load(std::memory_order_relaxed);
  while (n > cur && !g_max_alloc.compare_exchange_weak(cur, n)) {
  }
}
}  // namespace

void* operator new(size_t n) {
  note_alloc(n);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) {
  note_alloc(n);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, size_t) noexcept {
  std::free(p);
}

namespace infercost::parquet {
namespace {

using Bytes = std::vector<uint8_t>;

// Largest allocation made by fn().
size_t max_alloc_during(const std::function<void()>& fn) {
  g_max_alloc = 0;
  g_track = true;
  fn();
  g_track = false;
  return g_max_alloc.load();
}

Bytes from_hex(const std::string& hex) {
  Bytes out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

Bytes to_bytes(const std::string& s) {
  return Bytes(s.begin(), s.end());
}

// ---- test-only writers, independent of the library's encoders ----

struct BitWriter {
  Bytes bytes;
  uint64_t bit = 0;
  void put(uint64_t value, int width) {
    for (int b = 0; b < width; ++b, ++bit) {
      if (bit % 8 == 0) bytes.push_back(0);
      if ((value >> b) & 1) bytes.back() |= static_cast<uint8_t>(1u << (bit % 8));
    }
  }
};

void put_uleb(uint64_t v, Bytes& out) {
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    if (v) b |= 0x80;
    out.push_back(b);
  } while (v);
}
uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}

// Reference DELTA_BINARY_PACKED writer straight from Encodings.md. int32 mode
// does the delta arithmetic in 32 bits, as writers of INT32 columns do.
// Unused miniblocks of the last block get width byte `unused_width`.
Bytes ref_delta_encode(const std::vector<int64_t>& v, uint64_t block = 128, uint64_t minis = 4,
                       bool int32 = false, uint8_t unused_width = 0) {
  Bytes out;
  put_uleb(block, out);
  put_uleb(minis, out);
  put_uleb(v.size(), out);
  put_uleb(zigzag(v.empty() ? 0 : v[0]), out);
  const uint64_t per_mini = block / minis;
  std::vector<int64_t> deltas;
  for (size_t i = 1; i < v.size(); ++i) {
    if (int32) {
      deltas.push_back(static_cast<int32_t>(static_cast<uint32_t>(v[i]) - static_cast<uint32_t>(v[i - 1])));
    } else {
      deltas.push_back(static_cast<int64_t>(static_cast<uint64_t>(v[i]) - static_cast<uint64_t>(v[i - 1])));
    }
  }
  for (size_t start = 0; start < deltas.size(); start += block) {
    const size_t end = std::min<size_t>(deltas.size(), start + block);
    const int64_t min_delta = *std::min_element(deltas.begin() + start, deltas.begin() + end);
    put_uleb(zigzag(min_delta), out);
    std::vector<uint64_t> rel;
    for (size_t i = start; i < end; ++i) {
      uint64_t r = static_cast<uint64_t>(deltas[i]) - static_cast<uint64_t>(min_delta);
      if (int32) r &= 0xffffffffu;
      rel.push_back(r);
    }
    std::vector<int> widths;
    for (uint64_t m = 0; m < minis; ++m) {
      const size_t a = m * per_mini;
      if (a >= rel.size()) {
        widths.push_back(unused_width);
        continue;
      }
      uint64_t mx = 0;
      for (size_t i = a; i < std::min<size_t>(rel.size(), a + per_mini); ++i) mx |= rel[i];
      int w = 0;
      while (w < 64 && (mx >> w) != 0) ++w;
      widths.push_back(w);
    }
    for (int w : widths) out.push_back(static_cast<uint8_t>(w));
    for (uint64_t m = 0; m < minis && m * per_mini < rel.size(); ++m) {
      BitWriter bw;
      for (uint64_t i = 0; i < per_mini; ++i) {
        const size_t k = m * per_mini + i;
        bw.put(k < rel.size() ? rel[k] : 0, widths[m]);
      }
      out.insert(out.end(), bw.bytes.begin(), bw.bytes.end());
    }
  }
  return out;
}

Bytes ref_dlba_encode(const std::vector<std::string>& values) {
  std::vector<int64_t> lengths;
  for (const auto& s : values) lengths.push_back(static_cast<int64_t>(s.size()));
  Bytes out = ref_delta_encode(lengths);
  for (const auto& s : values) out.insert(out.end(), s.begin(), s.end());
  return out;
}

Bytes ref_dba_encode(const std::vector<std::string>& values) {
  std::vector<int64_t> prefixes;
  std::vector<std::string> suffixes;
  std::string prev;
  for (const auto& s : values) {
    size_t p = 0;
    while (p < prev.size() && p < s.size() && prev[p] == s[p]) ++p;
    prefixes.push_back(static_cast<int64_t>(p));
    suffixes.push_back(s.substr(p));
    prev = s;
  }
  Bytes out = ref_delta_encode(prefixes);
  Bytes tail = ref_dlba_encode(suffixes);
  out.insert(out.end(), tail.begin(), tail.end());
  return out;
}

// A hybrid stream built run by run: RLE runs or bit-packed runs of whole groups.
struct RefRleWriter {
  int width;
  Bytes out;
  std::vector<uint32_t> values;
  void rle(uint32_t value, uint64_t count) {
    put_uleb(count << 1, out);
    for (int b = 0; b < (width + 7) / 8; ++b) out.push_back(static_cast<uint8_t>(value >> (8 * b)));
    values.insert(values.end(), count, value);
  }
  void packed(const std::vector<uint32_t>& vals) {  // vals.size() % 8 == 0
    put_uleb(((vals.size() / 8) << 1) | 1, out);
    BitWriter bw;
    for (uint32_t v : vals) bw.put(v, width);
    out.insert(out.end(), bw.bytes.begin(), bw.bytes.end());
    values.insert(values.end(), vals.begin(), vals.end());
  }
};

uint32_t width_mask(int w) {
  return w == 32 ? 0xffffffffu : ((uint32_t{1} << w) - 1);
}

std::vector<uint32_t> rle_decode_all(const std::string& enc, int width, size_t n, Status* st,
                                     std::mt19937_64* chunks) {
  std::vector<uint32_t> got(n, 0xdeadbeef);
  RleBitPackedDecoder dec(reinterpret_cast<const uint8_t*>(enc.data()), enc.size(), width);
  size_t done = 0;
  *st = Status::ok_status();
  while (done < n) {
    size_t take = n - done;
    if (chunks) take = std::min<size_t>(take, 1 + (*chunks)() % 37);
    *st = dec.get(got.data() + done, take);
    if (!st->ok()) break;
    done += take;
  }
  return got;
}

// ---- RLE / bit-packed hybrid ----

TEST(RleTest, SpecBitPackingExampleDecodesAndEncodes) {
  // 0..7 at width 3: header 0x03 (one group, bit-packed), bytes from Encodings.md.
  const Bytes enc = {0x03, 0x88, 0xC6, 0xFA};
  RleBitPackedDecoder dec(enc.data(), enc.size(), 3);
  uint32_t got[8];
  ASSERT_TRUE(dec.get(got, 8).ok());
  for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(got[i], i);
  uint32_t extra;
  Status st = dec.get(&extra, 1);
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_EQ(st.message().rfind("RLE: ", 0), 0u) << st.message();

  const uint32_t values[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  std::string out;
  encode_rle_bit_packed(values, 8, 3, out);
  EXPECT_EQ(to_bytes(out), enc);
}

TEST(RleTest, RleRunBytes) {
  // 100 x 5 at width 3: header 200 = 0xC8 0x01, one value byte.
  std::vector<uint32_t> values(100, 5);
  std::string out;
  encode_rle_bit_packed(values.data(), values.size(), 3, out);
  EXPECT_EQ(to_bytes(out), (Bytes{0xC8, 0x01, 0x05}));
  // Width 17 needs 3 value bytes, little endian.
  values.assign(8, 0x1ABCD);
  out.clear();
  encode_rle_bit_packed(values.data(), values.size(), 17, out);
  EXPECT_EQ(to_bytes(out), (Bytes{0x10, 0xCD, 0xAB, 0x01}));
  RleBitPackedDecoder dec(reinterpret_cast<const uint8_t*>(out.data()), out.size(), 17);
  std::vector<uint32_t> got(8);
  ASSERT_TRUE(dec.get(got.data(), 8).ok());
  EXPECT_EQ(got, values);
}

TEST(RleTest, PaddedLastGroupAndMixedRuns) {
  // 3 literals then 12 repeats: the writer borrows 5 repeats to fill the
  // group, then an RLE run of 7 would be too short, so all 15 are literals.
  std::vector<uint32_t> v = {1, 2, 3};
  v.insert(v.end(), 12, 9);
  std::string out;
  encode_rle_bit_packed(v.data(), v.size(), 4, out);
  EXPECT_EQ(out.size(), 1u + 2 * 4) << "one bit-packed run of two groups";
  // With 20 repeats: 8 literals (3 + 5 borrowed) then an RLE run of 15.
  v.resize(3);
  v.insert(v.end(), 20, 9);
  out.clear();
  encode_rle_bit_packed(v.data(), v.size(), 4, out);
  EXPECT_EQ(to_bytes(out), (Bytes{0x03, 0x21, 0x93, 0x99, 0x99, 0x1E, 0x09}));
  std::vector<uint32_t> got(v.size());
  RleBitPackedDecoder dec(reinterpret_cast<const uint8_t*>(out.data()), out.size(), 4);
  ASSERT_TRUE(dec.get(got.data(), got.size()).ok());
  EXPECT_EQ(got, v);
}

TEST(RleTest, RoundTripEveryWidthPatternAndLength) {
  std::mt19937_64 rng(42);
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 70; ++n) lengths.push_back(n);
  for (size_t n : {127, 128, 129, 255, 256, 257, 500, 999, 1000}) lengths.push_back(n);
  for (int i = 0; i < 10; ++i) lengths.push_back(71 + rng() % 930);
  size_t checked = 0;
  for (int w = 0; w <= 32; ++w) {
    const uint32_t mask = width_mask(w);
    for (int pattern = 0; pattern < 4; ++pattern) {
      for (size_t n : lengths) {
        std::vector<uint32_t> v(n);
        const uint32_t c = static_cast<uint32_t>(rng()) & mask;
        for (size_t i = 0; i < n;) {
          switch (pattern) {
            case 0: v[i++] = static_cast<uint32_t>(rng()) & mask; break;
            case 1: v[i++] = c; break;
            case 2: v[i] = (i % 2) ? mask : 0, ++i; break;
            default: {  // runs of random lengths, some long
              const uint32_t x = static_cast<uint32_t>(rng()) & mask;
              size_t len = rng() % 4 == 0 ? 1 + rng() % 40 : 1 + rng() % 3;
              for (; len > 0 && i < n; --len) v[i++] = x;
            }
          }
        }
        std::string enc;
        encode_rle_bit_packed(v.data(), n, w, enc);
        Status st;
        auto got = rle_decode_all(enc, w, n, &st, n % 3 == 0 ? &rng : nullptr);
        ASSERT_TRUE(st.ok()) << "w=" << w << " pattern=" << pattern << " n=" << n << ": " << st.to_string();
        ASSERT_EQ(got, v) << "w=" << w << " pattern=" << pattern << " n=" << n;
        if (pattern == 1 && n >= 16) {
          EXPECT_LE(enc.size(), 6u + 4u) << "constant runs must be RLE, w=" << w << " n=" << n;
        }
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 33u * 4u * lengths.size());
}

TEST(RleTest, DecodesIndependentlyBuiltStreams) {
  std::mt19937_64 rng(7);
  for (int w = 0; w <= 32; ++w) {
    for (int trial = 0; trial < 20; ++trial) {
      RefRleWriter ref{w, {}, {}};
      const int runs = 1 + static_cast<int>(rng() % 12);
      for (int r = 0; r < runs; ++r) {
        if (rng() % 2) {
          ref.rle(static_cast<uint32_t>(rng()) & width_mask(w), 1 + rng() % 300);
        } else {
          std::vector<uint32_t> vals(8 * (1 + rng() % 20));
          for (auto& x : vals) x = static_cast<uint32_t>(rng()) & width_mask(w);
          ref.packed(vals);
        }
      }
      const std::string enc(ref.out.begin(), ref.out.end());
      Status st;
      auto got = rle_decode_all(enc, w, ref.values.size(), &st, trial % 2 ? &rng : nullptr);
      ASSERT_TRUE(st.ok()) << st.to_string();
      ASSERT_EQ(got, ref.values) << "w=" << w << " trial=" << trial;
    }
  }
}

TEST(RleTest, TruncatedLastGroupServesOnlyPresentValues) {
  // 0..7 at width 3 cut to 2 data bytes: 16 bits hold values 0..4 whole.
  const Bytes enc = {0x03, 0x88, 0xC6};
  RleBitPackedDecoder dec(enc.data(), enc.size(), 3);
  uint32_t got[5];
  ASSERT_TRUE(dec.get(got, 5).ok());
  for (uint32_t i = 0; i < 5; ++i) EXPECT_EQ(got[i], i);
  Status st = dec.get(got, 1);
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  // A header announcing 100 groups with one group of data present.
  const Bytes big = {0xC9, 0x01, 0x88, 0xC6, 0xFA};
  RleBitPackedDecoder dec2(big.data(), big.size(), 3);
  uint32_t eight[8];
  ASSERT_TRUE(dec2.get(eight, 8).ok());
  EXPECT_EQ(eight[7], 7u);
  EXPECT_EQ(dec2.get(eight, 1).code(), StatusCode::kCorruption);
}

TEST(RleTest, CorruptionCases) {
  uint32_t out[16];
  {  // RLE value 9 does not fit width 3
    const Bytes enc = {0x10, 0x09};
    RleBitPackedDecoder dec(enc.data(), enc.size(), 3);
    Status st = dec.get(out, 1);
    EXPECT_EQ(st.code(), StatusCode::kCorruption);
    EXPECT_NE(st.message().find("RLE: "), std::string::npos);
  }
  {  // value bytes missing
    const Bytes enc = {0x10, 0x09};
    RleBitPackedDecoder dec(enc.data(), enc.size(), 9);
    EXPECT_EQ(dec.get(out, 1).code(), StatusCode::kCorruption);
  }
  {  // unterminated header varint
    const Bytes enc = {0xFF, 0xFF, 0xFF};
    RleBitPackedDecoder dec(enc.data(), enc.size(), 1);
    EXPECT_EQ(dec.get(out, 1).code(), StatusCode::kCorruption);
  }
  {  // zero-length run
    const Bytes enc = {0x00, 0x01};
    RleBitPackedDecoder dec(enc.data(), enc.size(), 1);
    EXPECT_EQ(dec.get(out, 1).code(), StatusCode::kCorruption);
  }
  {  // empty input, empty request is fine
    RleBitPackedDecoder dec(nullptr, 0, 5);
    EXPECT_TRUE(dec.get(out, 0).ok());
    EXPECT_EQ(dec.get(out, 1).code(), StatusCode::kCorruption);
    RleBitPackedDecoder none;
    EXPECT_EQ(none.get(out, 1).code(), StatusCode::kCorruption);
  }
  {  // width out of range is the caller's error
    const Bytes enc = {0x02, 0x00};
    RleBitPackedDecoder dec(enc.data(), enc.size(), 33);
    EXPECT_EQ(dec.get(out, 1).code(), StatusCode::kInvalidArgument);
  }
  {  // width 0: RLE runs carry no value bytes, bit-packed runs no data
    const Bytes enc = {0x08, 0x03};
    RleBitPackedDecoder dec(enc.data(), enc.size(), 0);
    ASSERT_TRUE(dec.get(out, 12).ok());
    for (int i = 0; i < 12; ++i) EXPECT_EQ(out[i], 0u);
    EXPECT_EQ(dec.get(out, 1).code(), StatusCode::kCorruption);
  }
}

TEST(BitWidthTest, Values) {
  EXPECT_EQ(bit_width_for(0), 0);
  EXPECT_EQ(bit_width_for(1), 1);
  EXPECT_EQ(bit_width_for(2), 2);
  EXPECT_EQ(bit_width_for(3), 2);
  EXPECT_EQ(bit_width_for(4), 3);
  EXPECT_EQ(bit_width_for(255), 8);
  EXPECT_EQ(bit_width_for(256), 9);
  EXPECT_EQ(bit_width_for(0xffffffffu), 32);
  EXPECT_EQ(bit_width_for(~uint64_t{0}), 64);
}

// ---- PLAIN ----

TEST(PlainTest, ByteArrayRoundTripAppends) {
  std::vector<std::string> values = {"", "a", "héllo", std::string(1000, 'x'), "", "tail"};
  std::string enc;
  for (const auto& v : values) encode_plain_byte_array(v, enc);
  EXPECT_EQ(enc.substr(0, 9), std::string("\0\0\0\0\x01\0\0\0a", 9));
  enc += "trailing";
  ByteArrayBuffer out;
  out.append("first");
  size_t consumed = 0;
  ASSERT_TRUE(decode_plain_byte_array(reinterpret_cast<const uint8_t*>(enc.data()), enc.size(), values.size(),
                                      out, &consumed)
                  .ok());
  EXPECT_EQ(consumed, enc.size() - 8);
  ASSERT_EQ(out.size(), values.size() + 1);
  EXPECT_EQ(out.at(0), "first");
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(out.at(i + 1), values[i]);
}

TEST(PlainTest, ByteArrayCorruption) {
  const Bytes ten = {0x05, 0, 0, 0, 'a', 'b', 'c', 'd', 'e', 0};
  ByteArrayBuffer out;
  size_t consumed = 0;
  Status st;
  const size_t peak = max_alloc_during(
      [&] { st = decode_plain_byte_array(ten.data(), ten.size(), size_t{1} << 31, out, &consumed); });
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_NE(st.message().find("PLAIN: "), std::string::npos);
  EXPECT_LT(peak, 1024u);
  // Second value's length 0x00000100... runs past the end.
  EXPECT_EQ(decode_plain_byte_array(ten.data(), ten.size(), 2, out, &consumed).code(),
            StatusCode::kCorruption);
  const Bytes huge_len = {0xff, 0xff, 0xff, 0xff, 'a'};
  EXPECT_EQ(decode_plain_byte_array(huge_len.data(), huge_len.size(), 1, out, &consumed).code(),
            StatusCode::kCorruption);
  EXPECT_EQ(out.size(), 0u) << "nothing appended on error";
  ASSERT_TRUE(decode_plain_byte_array(ten.data(), ten.size(), 1, out, &consumed).ok());
  EXPECT_EQ(consumed, 9u);
  EXPECT_EQ(out.at(0), "abcde");
}

TEST(PlainTest, FixedWidthTypes) {
  const Bytes b = {0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0x00, 0x00, 0x00, 0x80};
  std::vector<int64_t> ints;
  size_t consumed = 0;
  ASSERT_TRUE(decode_plain_int32(b.data(), b.size(), 3, ints, &consumed).ok());
  EXPECT_EQ(ints, (std::vector<int64_t>{-1, 2, std::numeric_limits<int32_t>::min()}));
  EXPECT_EQ(consumed, 12u);
  EXPECT_EQ(decode_plain_int32(b.data(), b.size(), 4, ints, &consumed).code(), StatusCode::kCorruption);
  ints.clear();
  ASSERT_TRUE(decode_plain_int64(b.data(), b.size(), 1, ints, &consumed).ok());
  EXPECT_EQ(ints, (std::vector<int64_t>{0x2ffffffffLL}));
  EXPECT_EQ(decode_plain_int64(b.data(), b.size(), 2, ints, &consumed).code(), StatusCode::kCorruption);

  const float f[2] = {1.5f, -0.25f};
  const double d[2] = {3.25, -1e300};
  std::vector<double> fd;
  ASSERT_TRUE(decode_plain_float(reinterpret_cast<const uint8_t*>(f), 8, 2, fd, &consumed).ok());
  ASSERT_TRUE(decode_plain_double(reinterpret_cast<const uint8_t*>(d), 16, 2, fd, &consumed).ok());
  EXPECT_EQ(fd, (std::vector<double>{1.5, -0.25, 3.25, -1e300}));
  EXPECT_EQ(consumed, 16u);
  EXPECT_EQ(decode_plain_double(reinterpret_cast<const uint8_t*>(d), 15, 2, fd, &consumed).code(),
            StatusCode::kCorruption);

  // Booleans LSB first: 0b00000101, 0b1 -> 1,0,1,0,0,0,0,0, 1
  const Bytes bits = {0x05, 0x01};
  std::vector<int64_t> bools;
  ASSERT_TRUE(decode_plain_boolean(bits.data(), bits.size(), 9, bools, &consumed).ok());
  EXPECT_EQ(bools, (std::vector<int64_t>{1, 0, 1, 0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(consumed, 2u);
  EXPECT_EQ(decode_plain_boolean(bits.data(), bits.size(), 17, bools, &consumed).code(),
            StatusCode::kCorruption);

  ByteArrayBuffer fixed;
  ASSERT_TRUE(decode_plain_fixed_len(b.data(), b.size(), 4, 3, fixed, &consumed).ok());
  ASSERT_EQ(fixed.size(), 4u);
  EXPECT_EQ(fixed.at(1), std::string("\xff\x02\0", 3));
  EXPECT_EQ(consumed, 12u);
  EXPECT_EQ(decode_plain_fixed_len(b.data(), b.size(), 5, 3, fixed, &consumed).code(),
            StatusCode::kCorruption);
  EXPECT_EQ(decode_plain_fixed_len(b.data(), b.size(), 1, 0, fixed, &consumed).code(),
            StatusCode::kCorruption);
}

// ---- DELTA_BINARY_PACKED ----

Status delta(const Bytes& b, size_t count, std::vector<int64_t>& out, size_t* consumed) {
  return decode_delta_binary_packed(b.data(), b.size(), count, out, consumed);
}

TEST(DeltaBinaryPackedTest, SpecExamplesWithValidBlockSize) {
  // Example 1 of Encodings.md (1..5), with block size 128 and 1 miniblock.
  const Bytes ex1 = {0x80, 0x01, 0x01, 0x05, 0x02, 0x02, 0x00};
  std::vector<int64_t> out;
  size_t consumed = 0;
  ASSERT_TRUE(delta(ex1, 5, out, &consumed).ok());
  EXPECT_EQ(out, (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(consumed, ex1.size());
  // Example 2 (7,5,3,1,2,3,4,5): min delta -2, width 2, relative deltas
  // 0,0,0,3 | 3,3,3 packed; 4 miniblocks of 32, the 3 unused carry garbage widths.
  Bytes ex2 = {0x80, 0x01, 0x04, 0x08, 0x0E, 0x03, 0x02, 0xEE, 0xFF, 0x41, 0xC0, 0x3F};
  ex2.resize(ex2.size() + 6, 0);  // the miniblock is padded to 32 values = 8 bytes
  ex2.push_back(0x77);            // not part of the stream
  out.clear();
  ASSERT_TRUE(delta(ex2, 8, out, &consumed).ok());
  EXPECT_EQ(out, (std::vector<int64_t>{7, 5, 3, 1, 2, 3, 4, 5}));
  EXPECT_EQ(consumed, ex2.size() - 1);
  EXPECT_EQ(ref_delta_encode({7, 5, 3, 1, 2, 3, 4, 5}, 128, 4, false, 0xEE).size(), ex2.size() - 1);
}

TEST(DeltaBinaryPackedTest, RoundTripAgainstReferenceEncoder) {
  std::mt19937_64 rng(1234);
  const int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  struct Layout {
    uint64_t block, minis;
  };
  const Layout layouts[] = {{128, 4}, {128, 1}, {256, 8}, {256, 4}, {512, 16}};
  int cases = 0;
  for (size_t n : {0, 1, 2, 3, 31, 32, 33, 127, 128, 129, 130, 255, 256, 257, 1000, 4099}) {
    for (int kind = 0; kind < 6; ++kind) {
      std::vector<int64_t> v(n);
      for (size_t i = 0; i < n; ++i) {
        switch (kind) {
          case 0: v[i] = static_cast<int64_t>(rng()); break;
          case 1: v[i] = static_cast<int32_t>(rng()); break;
          case 2: v[i] = (i % 3 == 0) ? kMin : (i % 3 == 1 ? kMax : -1); break;  // wrapping deltas
          case 3: v[i] = static_cast<int64_t>(i) * 1000 - 7; break;
          case 4: v[i] = 42; break;
          default: v[i] = static_cast<int64_t>(rng() % 100 - 50 + (rng() % 50 == 0 ? uint64_t(kMax) : 0));
        }
      }
      const bool int32 = kind == 1;
      const Layout l = layouts[(n + kind) % 5];
      const Bytes enc = ref_delta_encode(v, l.block, l.minis, int32, static_cast<uint8_t>(rng()));
      std::vector<int64_t> out = {99};
      size_t consumed = 0;
      Status st = delta(enc, n, out, &consumed);
      ASSERT_TRUE(st.ok()) << st.to_string() << " n=" << n << " kind=" << kind;
      ASSERT_EQ(out.size(), n + 1);
      for (size_t i = 0; i < n; ++i) {
        if (int32) {
          ASSERT_EQ(static_cast<int32_t>(out[i + 1]), v[i]) << i;
        } else {
          ASSERT_EQ(out[i + 1], v[i]) << i;
        }
      }
      EXPECT_EQ(consumed, enc.size()) << "n=" << n << " kind=" << kind;
      // Fewer values than the page holds: consumed still covers the page.
      if (n > 1) {
        out.clear();
        ASSERT_TRUE(delta(enc, n / 2, out, &consumed).ok());
        EXPECT_EQ(out.size(), n / 2);
        EXPECT_EQ(consumed, enc.size());
        EXPECT_EQ(delta(enc, n + 1, out, &consumed).code(), StatusCode::kCorruption);
      }
      ++cases;
    }
  }
  EXPECT_EQ(cases, 16 * 6);
}

TEST(DeltaBinaryPackedTest, HeaderAndWidthCorruption) {
  std::vector<int64_t> out;
  size_t consumed = 0;
  const Bytes bad_block = {0x40, 0x01, 0x05, 0x02};  // block size 64
  EXPECT_EQ(delta(bad_block, 1, out, &consumed).code(), StatusCode::kCorruption);
  const Bytes bad_minis = {0x80, 0x01, 0x08, 0x05, 0x02};  // 16 values per miniblock
  EXPECT_EQ(delta(bad_minis, 1, out, &consumed).code(), StatusCode::kCorruption);
  const Bytes zero_minis = {0x80, 0x01, 0x00, 0x05, 0x02};
  EXPECT_EQ(delta(zero_minis, 1, out, &consumed).code(), StatusCode::kCorruption);
  // Width 65 in a used miniblock.
  Bytes wide = {0x80, 0x01, 0x01, 0x03, 0x00, 0x00, 65};
  wide.resize(wide.size() + 65 * 16, 0);
  Status st = delta(wide, 3, out, &consumed);
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_NE(st.message().find("DELTA_BINARY_PACKED: "), std::string::npos);
  // Width 64 is fine: deltas of +-2^63.
  // Deltas INT64_MIN and INT64_MAX: relative deltas 0 and 2^64-1.
  std::vector<int64_t> extremes = {0, std::numeric_limits<int64_t>::min(), -1, 0};
  const Bytes enc = ref_delta_encode(extremes, 128, 4);
  EXPECT_EQ(enc[5 + 10], 64);  // after a 5-byte header and the 10-byte zigzag of INT64_MIN
  out.clear();
  ASSERT_TRUE(delta(enc, 4, out, &consumed).ok());
  EXPECT_EQ(out, extremes);
  // Huge total, huge request, 10 bytes: fails without a big allocation.
  const Bytes huge = {0x80, 0x01, 0x04, 0x80, 0x80, 0x80, 0x80, 0x08, 0x00, 0x00};
  out.clear();
  const size_t peak = max_alloc_during([&] { st = delta(huge, size_t{1} << 31, out, &consumed); });
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_LT(peak, 4096u);
  // An empty request on an empty page.
  out.clear();
  const Bytes empty = {0x80, 0x01, 0x04, 0x00, 0x00};
  ASSERT_TRUE(delta(empty, 0, out, &consumed).ok());
  EXPECT_EQ(consumed, empty.size());
  EXPECT_TRUE(out.empty());
}

// ---- DELTA_LENGTH_BYTE_ARRAY / DELTA_BYTE_ARRAY ----

std::vector<std::string> sample_strings(std::mt19937_64& rng, size_t n) {
  std::vector<std::string> v = {"",
                                "Hello",
                                "World",
                                "Foobar",
                                "ABCDEF",
                                "",
                                "héllo wörld",
                                "日本語",
                                std::string(700, 'q'),
                                std::string(700, 'q') + "r",
                                "axis",
                                "axle",
                                "babble",
                                "babyhood"};
  while (v.size() < n) {
    std::string s = v[rng() % v.size()].substr(0, rng() % 12);
    for (size_t k = rng() % 6; k > 0; --k) s.push_back(static_cast<char>(rng()));
    v.push_back(s);
  }
  v.resize(n);
  return v;
}

TEST(DeltaByteArrayTest, SpecExamples) {
  const std::vector<std::string> words = {"Hello", "World", "Foobar", "ABCDEF"};
  Bytes enc = ref_dlba_encode(words);
  ByteArrayBuffer out;
  size_t consumed = 0;
  ASSERT_TRUE(decode_delta_length_byte_array(enc.data(), enc.size(), 4, out, &consumed).ok());
  EXPECT_EQ(consumed, enc.size());
  ASSERT_EQ(out.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(out.at(i), words[i]);
  EXPECT_EQ(std::string(enc.end() - 22, enc.end()), "HelloWorldFoobarABCDEF");

  const std::vector<std::string> front = {"axis", "axle", "babble", "babyhood"};
  enc = ref_dba_encode(front);
  EXPECT_EQ(std::string(enc.end() - 17, enc.end()), "axislebabbleyhood");
  out.clear();
  ASSERT_TRUE(decode_delta_byte_array(enc.data(), enc.size(), 4, out, &consumed).ok());
  EXPECT_EQ(consumed, enc.size());
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(out.at(i), front[i]);
}

TEST(DeltaByteArrayTest, RoundTrips) {
  std::mt19937_64 rng(99);
  for (size_t n : {0, 1, 2, 5, 33, 128, 129, 300, 1000}) {
    auto values = sample_strings(rng, n);
    std::sort(values.begin() + static_cast<long>(n / 2), values.end());  // long shared prefixes
    for (int which = 0; which < 2; ++which) {
      const Bytes enc = which ? ref_dba_encode(values) : ref_dlba_encode(values);
      Bytes padded = enc;
      padded.push_back(0x5A);
      ByteArrayBuffer out;
      out.append("keep");
      size_t consumed = 0;
      Status st = which ? decode_delta_byte_array(padded.data(), padded.size(), n, out, &consumed)
                        : decode_delta_length_byte_array(padded.data(), padded.size(), n, out, &consumed);
      ASSERT_TRUE(st.ok()) << st.to_string() << " n=" << n << " which=" << which;
      EXPECT_EQ(consumed, enc.size());
      ASSERT_EQ(out.size(), n + 1);
      EXPECT_EQ(out.at(0), "keep");
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(out.at(i + 1), values[i]) << i;
    }
  }
}

TEST(DeltaByteArrayTest, CorruptLengthsAndPrefixes) {
  ByteArrayBuffer out;
  size_t consumed = 0;
  {  // negative length
    Bytes enc = ref_delta_encode({3, -1});
    enc.insert(enc.end(), {'a', 'b', 'c'});
    Status st = decode_delta_length_byte_array(enc.data(), enc.size(), 2, out, &consumed);
    EXPECT_EQ(st.code(), StatusCode::kCorruption);
    EXPECT_NE(st.message().find("DELTA_LENGTH_BYTE_ARRAY"), std::string::npos) << st.message();
  }
  {  // lengths whose sum overflows 64 bits / exceed the data
    Bytes enc =
        ref_delta_encode({std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::max(), 4});
    enc.insert(enc.end(), 16, 'z');
    EXPECT_EQ(decode_delta_length_byte_array(enc.data(), enc.size(), 3, out, &consumed).code(),
              StatusCode::kCorruption);
    Bytes enc2 = ref_delta_encode({3, 4});
    enc2.insert(enc2.end(), 6, 'z');
    EXPECT_EQ(decode_delta_length_byte_array(enc2.data(), enc2.size(), 2, out, &consumed).code(),
              StatusCode::kCorruption);
  }
  {  // prefix longer than the previous value
    Bytes enc = ref_delta_encode({0, 3});
    Bytes tail = ref_dlba_encode({"ab", "c"});
    enc.insert(enc.end(), tail.begin(), tail.end());
    Status st = decode_delta_byte_array(enc.data(), enc.size(), 2, out, &consumed);
    EXPECT_EQ(st.code(), StatusCode::kCorruption);
    EXPECT_NE(st.message().find("DELTA_BYTE_ARRAY"), std::string::npos);
    // prefix 2 of "ab" is fine
    enc = ref_delta_encode({0, 2});
    enc.insert(enc.end(), tail.begin(), tail.end());
    ASSERT_TRUE(decode_delta_byte_array(enc.data(), enc.size(), 2, out, &consumed).ok());
    EXPECT_EQ(out.at(out.size() - 1), "abc");
  }
  EXPECT_EQ(out.size(), 2u) << "failed decodes append nothing";
}

// ---- BYTE_STREAM_SPLIT ----

TEST(ByteStreamSplitTest, SpecExampleAndWidths) {
  const Bytes split = {0xAA, 0x00, 0xA3, 0xBB, 0x11, 0xB4, 0xCC, 0x22, 0xC5, 0xDD, 0x33, 0xD6};
  std::string out = "x";
  ASSERT_TRUE(decode_byte_stream_split(split.data(), split.size(), 3, 4, out).ok());
  EXPECT_EQ(to_bytes(out),
            (Bytes{'x', 0xAA, 0xBB, 0xCC, 0xDD, 0x00, 0x11, 0x22, 0x33, 0xA3, 0xB4, 0xC5, 0xD6}));
  // The same 12 bytes as 2 values of width 6 or 4 values of width 3; fewer
  // values than the page holds keep the page's stream stride.
  out.clear();
  ASSERT_TRUE(decode_byte_stream_split(split.data(), split.size(), 1, 6, out).ok());
  EXPECT_EQ(to_bytes(out), (Bytes{0xAA, 0xA3, 0x11, 0xCC, 0xC5, 0x33}));
  out.clear();
  ASSERT_TRUE(decode_byte_stream_split(split.data(), split.size(), 2, 3, out).ok());
  EXPECT_EQ(to_bytes(out), (Bytes{0xAA, 0x11, 0xC5, 0x00, 0xB4, 0xDD}));
  std::mt19937_64 rng(5);
  Bytes v(8 * 37);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  Bytes s(v.size());
  for (size_t i = 0; i < 37; ++i)
    for (size_t k = 0; k < 8; ++k) s[k * 37 + i] = v[i * 8 + k];
  out.clear();
  ASSERT_TRUE(decode_byte_stream_split(s.data(), s.size(), 37, 8, out).ok());
  EXPECT_EQ(to_bytes(out), v);
  out.clear();
  ASSERT_TRUE(decode_byte_stream_split(s.data(), s.size(), 20, 8, out).ok());
  EXPECT_EQ(to_bytes(out), Bytes(v.begin(), v.begin() + 8 * 20));
  out.clear();
  ASSERT_TRUE(decode_byte_stream_split(split.data(), split.size(), 2, 4, out).ok());
  EXPECT_EQ(to_bytes(out), (Bytes{0xAA, 0xBB, 0xCC, 0xDD, 0x00, 0x11, 0x22, 0x33}));
  EXPECT_EQ(decode_byte_stream_split(split.data(), 11, 2, 4, out).code(), StatusCode::kCorruption);
  EXPECT_EQ(decode_byte_stream_split(split.data(), split.size(), 4, 4, out).code(), StatusCode::kCorruption);
  EXPECT_EQ(decode_byte_stream_split(split.data(), split.size(), 1, 0, out).code(), StatusCode::kCorruption);
}

// ---- pages written by pyarrow ----

nlohmann::json load_vectors() {
  std::ifstream in(std::string(INFERCOST_TEST_DATA_DIR) + "/parquet/encodings/vectors.json");
  EXPECT_TRUE(in.good()) << "missing vectors.json; run tools/gen_encoding_vectors.py";
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

TEST(PyarrowVectorsTest, DecodeEveryCase) {
  const auto doc = load_vectors();
  size_t cases = 0;
  for (const auto& c : doc.at("cases")) {
    const std::string name = c.at("name");
    const std::string enc = c.at("encoding");
    const std::string type = c.at("type");
    const size_t count = c.at("count");
    const Bytes data = from_hex(c.at("data_hex"));
    SCOPED_TRACE(name);
    size_t consumed = 0;
    if (enc == "DELTA_BINARY_PACKED") {
      std::vector<int64_t> out;
      ASSERT_TRUE(delta(data, count, out, &consumed).ok());
      EXPECT_EQ(consumed, data.size());
      const auto expected = c.at("ints").get<std::vector<int64_t>>();
      ASSERT_EQ(out.size(), expected.size());
      for (size_t i = 0; i < count; ++i) {
        if (type == "INT32") {
          ASSERT_EQ(static_cast<int32_t>(out[i]), expected[i]) << i;
        } else {
          ASSERT_EQ(out[i], expected[i]) << i;
        }
      }
      out.clear();
      ASSERT_TRUE(delta(data, count / 2, out, &consumed).ok());
      EXPECT_EQ(consumed, data.size());
    } else if (enc == "DELTA_LENGTH_BYTE_ARRAY" || enc == "DELTA_BYTE_ARRAY") {
      ByteArrayBuffer out;
      Status st = enc == "DELTA_BYTE_ARRAY"
                      ? decode_delta_byte_array(data.data(), data.size(), count, out, &consumed)
                      : decode_delta_length_byte_array(data.data(), data.size(), count, out, &consumed);
      ASSERT_TRUE(st.ok()) << st.to_string();
      EXPECT_EQ(consumed, data.size());
      const auto& expected = c.at("strings_hex");
      ASSERT_EQ(out.size(), expected.size());
      for (size_t i = 0; i < count; ++i)
        ASSERT_EQ(to_bytes(std::string(out.at(i))), from_hex(expected[i])) << i;
    } else if (enc == "BYTE_STREAM_SPLIT") {
      std::string out;
      ASSERT_TRUE(
          decode_byte_stream_split(data.data(), data.size(), count, c.at("width").get<int>(), out).ok());
      EXPECT_EQ(to_bytes(out), from_hex(c.at("plain_hex")));
    } else if (enc == "RLE_DICTIONARY" || enc == "RLE") {
      // Dictionary indices: one bit-width byte. Booleans (v1): a 4-byte length.
      const auto expected = c.at("ints").get<std::vector<int64_t>>();
      const uint8_t* p = data.data();
      size_t size = data.size();
      int width = 1;
      if (enc == "RLE_DICTIONARY") {
        width = p[0];
        EXPECT_EQ(width, 6);  // 37 dictionary entries
        ++p, --size;
      } else {
        uint32_t len;
        std::memcpy(&len, p, 4);
        EXPECT_EQ(len, size - 4);
        p += 4, size -= 4;
      }
      std::vector<uint32_t> got(count);
      RleBitPackedDecoder dec(p, size, width);
      ASSERT_TRUE(dec.get(got.data(), count).ok());
      for (size_t i = 0; i < count; ++i) ASSERT_EQ(got[i], static_cast<uint32_t>(expected[i])) << i;
      uint32_t extra[64];
      EXPECT_FALSE(dec.get(extra, 64).ok()) << "at most a group's padding follows the last value";
    } else {
      FAIL() << "unknown encoding " << enc;
    }
    ++cases;
  }
  EXPECT_EQ(cases, 18u);
}

// ---- corruption safety ----

struct FuzzTarget {
  std::string name;
  Bytes valid;
  size_t count;
  // Decodes data; returns whether it succeeded.
  std::function<bool(const Bytes&)> decode;
  bool truncation_must_fail;  // the valid input is consumed to its last byte
  size_t alloc_bound;         // largest allocation allowed for any input of about this size
};

std::vector<FuzzTarget> fuzz_targets() {
  std::vector<FuzzTarget> t;
  std::mt19937_64 rng(2024);
  auto bound = [](size_t size, size_t count) { return 64 * (size + 8 * count) + 65536; };
  for (int w : {1, 3, 8, 13, 32}) {
    std::vector<uint32_t> v(600);
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = (i / 50) % 2 ? 1 : static_cast<uint32_t>(rng()) & width_mask(w);
    std::string enc;
    encode_rle_bit_packed(v.data(), v.size(), w, enc);
    const size_t n = v.size();
    t.push_back({"rle_w" + std::to_string(w), to_bytes(enc), n,
                 [w, n](const Bytes& b) {
                   std::vector<uint32_t> out(n);
                   RleBitPackedDecoder dec(b.data(), b.size(), w);
                   return dec.get(out.data(), n).ok();
                 },
                 false, 16 * n + 65536});
  }
  {
    auto values = sample_strings(rng, 100);
    std::string enc;
    for (const auto& s : values) encode_plain_byte_array(s, enc);
    t.push_back({"plain_byte_array", to_bytes(enc), values.size(),
                 [](const Bytes& b) {
                   ByteArrayBuffer out;
                   size_t consumed;
                   return decode_plain_byte_array(b.data(), b.size(), 100, out, &consumed).ok();
                 },
                 true, bound(enc.size(), 100)});
  }
  {
    std::vector<int64_t> v(700);
    for (auto& x : v) x = static_cast<int64_t>(rng() >> (rng() % 64));
    t.push_back({"delta_binary_packed", ref_delta_encode(v, 256, 8), v.size(),
                 [](const Bytes& b) {
                   std::vector<int64_t> out;
                   size_t consumed;
                   return decode_delta_binary_packed(b.data(), b.size(), 700, out, &consumed).ok();
                 },
                 true, bound(0, 700)});
  }
  {
    auto values = sample_strings(rng, 150);
    Bytes enc = ref_dlba_encode(values);
    t.push_back({"delta_length_byte_array", enc, values.size(),
                 [](const Bytes& b) {
                   ByteArrayBuffer out;
                   size_t consumed;
                   return decode_delta_length_byte_array(b.data(), b.size(), 150, out, &consumed).ok();
                 },
                 true, bound(enc.size(), 150)});
    std::sort(values.begin(), values.end());
    enc = ref_dba_encode(values);
    // Prefixes may repeat earlier bytes, so output is bounded by count * size.
    t.push_back({"delta_byte_array", enc, values.size(),
                 [](const Bytes& b) {
                   ByteArrayBuffer out;
                   size_t consumed;
                   return decode_delta_byte_array(b.data(), b.size(), 150, out, &consumed).ok();
                 },
                 true, bound(enc.size(), 150) + 2 * 150 * (enc.size() + 64)});
  }
  {
    Bytes enc(8 * 64);
    for (auto& x : enc) x = static_cast<uint8_t>(rng());
    t.push_back({"byte_stream_split", enc, 64,
                 [](const Bytes& b) {
                   std::string out;
                   return decode_byte_stream_split(b.data(), b.size(), 64, 8, out).ok();
                 },
                 true, bound(enc.size(), 64)});
  }
  return t;
}

TEST(CorruptionSafetyTest, EveryTruncationFailsOrDecodes) {
  for (const auto& t : fuzz_targets()) {
    SCOPED_TRACE(t.name);
    ASSERT_TRUE(t.decode(t.valid)) << "the valid input decodes";
    size_t failures = 0;
    for (size_t len = 0; len < t.valid.size(); ++len) {
      const Bytes cut(t.valid.begin(), t.valid.begin() + static_cast<long>(len));  // exact-size heap copy
      bool ok = true;
      const size_t peak = max_alloc_during([&] { ok = t.decode(cut); });
      ASSERT_LE(peak, t.alloc_bound) << "len=" << len;
      if (!ok) ++failures;
      if (t.truncation_must_fail) {
        ASSERT_FALSE(ok) << "truncated to " << len << " of " << t.valid.size();
      }
    }
    EXPECT_GT(failures, t.valid.size() / 2);
  }
}

TEST(CorruptionSafetyTest, RandomMutationsNeverCrash) {
  constexpr int kMutations = 5000;
  std::mt19937_64 rng(777);
  for (const auto& t : fuzz_targets()) {
    SCOPED_TRACE(t.name);
    int failures = 0;
    for (int m = 0; m < kMutations; ++m) {
      Bytes b = t.valid;
      for (int k = 1 + static_cast<int>(rng() % 4); k > 0; --k) {
        const size_t at = b.empty() ? 0 : rng() % b.size();
        switch (rng() % 6) {
          case 0:
            if (!b.empty()) b[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
            break;
          case 1:
            if (!b.empty()) b[at] = static_cast<uint8_t>(rng());
            break;
          case 2:
            if (!b.empty()) b[at] = (rng() % 2) ? 0xFF : 0x80;  // varint continuation / big width
            break;
          case 3: b.insert(b.begin() + static_cast<long>(at), static_cast<uint8_t>(rng())); break;
          case 4:
            if (!b.empty()) b.erase(b.begin() + static_cast<long>(at));
            break;
          default:
            // Early bytes are headers: hit them more often.
            if (b.size() > 8) b[rng() % 8] = static_cast<uint8_t>(rng());
        }
      }
      b.shrink_to_fit();
      bool ok = true;
      const size_t peak = max_alloc_during([&] { ok = t.decode(b); });
      ASSERT_LE(peak, t.alloc_bound) << "mutation " << m;
      if (!ok) ++failures;
    }
    EXPECT_GT(failures, 0) << "mutations must be detected sometimes";
  }
}

}  // namespace
}  // namespace infercost::parquet
