// Page codecs: round trips, the framings other writers produce, the
// exact-size contract, and garbage input.
#include "parquet/compression.h"

#include <gtest/gtest.h>
#include <lz4frame.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "parquet/metadata.h"
#include "test_utils.h"

namespace infercost::parquet {
namespace {

namespace fs = std::filesystem;

using testing::bytes_of;

const Codec kCompressible[] = {Codec::kUncompressed, Codec::kSnappy, Codec::kGzip,  Codec::kBrotli,
                               Codec::kLz4,          Codec::kZstd,   Codec::kLz4Raw};

std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

std::string repetitive(size_t n) {
  std::string s;
  while (s.size() < n) s += "the quick brown fox jumps over the lazy dog 0123456789 ";
  s.resize(n);
  return s;
}

// Decompresses into a buffer of exactly out_size (so ASan sees overruns).
Status decompress_to(Codec codec, const std::string& in, size_t out_size, std::string* out) {
  std::vector<uint8_t> buf(out_size);
  std::vector<uint8_t> src(in.begin(), in.end());
  Status st = decompress(codec, src.data(), src.size(), buf.data(), buf.size());
  if (st.ok()) out->assign(buf.begin(), buf.end());
  return st;
}

TEST(Compression, RoundTripEveryCodec) {
  const std::vector<std::pair<const char*, std::string>> inputs = {
      {"empty", ""},
      {"one byte", "x"},
      {"tiny", "abc"},
      {"random 100k", random_bytes(100000, 1)},
      {"repetitive 1M", repetitive(1 << 20)},
  };
  for (Codec codec : kCompressible) {
    for (const auto& [label, data] : inputs) {
      SCOPED_TRACE(codec_name(codec) + " " + label);
      std::string packed;
      Status st = compress(codec, bytes_of(data), data.size(), packed);
      ASSERT_TRUE(st.ok()) << st.message();
      if (codec != Codec::kUncompressed && data.size() >= 1 << 20) {
        EXPECT_LT(packed.size(), data.size() / 4);
      }
      std::string back;
      st = decompress_to(codec, packed, data.size(), &back);
      ASSERT_TRUE(st.ok()) << st.message();
      EXPECT_EQ(back, data);
      // One byte short and one byte over are both corruption.
      if (!data.empty()) {
        st = decompress_to(codec, packed, data.size() - 1, &back);
        EXPECT_EQ(st.code(), StatusCode::kCorruption) << st.message();
      }
      st = decompress_to(codec, packed, data.size() + 1, &back);
      EXPECT_EQ(st.code(), StatusCode::kCorruption) << st.message();
    }
  }
}

TEST(Compression, EmptyInputWithZeroOutputIsOkForEveryCodec) {
  for (Codec codec : kCompressible) {
    EXPECT_TRUE(decompress(codec, nullptr, 0, nullptr, 0).ok()) << codec_name(codec);
  }
  uint8_t out[4];
  EXPECT_EQ(decompress(Codec::kSnappy, nullptr, 0, out, 4).code(), StatusCode::kCorruption);
}

TEST(Compression, LevelsAreHonouredOrRefused) {
  std::string data = repetitive(50000);
  for (Codec codec : {Codec::kGzip, Codec::kZstd, Codec::kBrotli}) {
    std::string fast, best, back;
    ASSERT_TRUE(compress(codec, bytes_of(data), data.size(), fast, 1).ok());
    ASSERT_TRUE(compress(codec, bytes_of(data), data.size(), best, 9).ok());
    ASSERT_TRUE(decompress_to(codec, fast, data.size(), &back).ok());
    EXPECT_EQ(back, data);
    ASSERT_TRUE(decompress_to(codec, best, data.size(), &back).ok());
    EXPECT_EQ(back, data);
  }
  std::string out;
  EXPECT_EQ(compress(Codec::kGzip, bytes_of(data), data.size(), out, 10).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(compress(Codec::kBrotli, bytes_of(data), data.size(), out, 12).code(),
            StatusCode::kInvalidArgument);
}

TEST(Compression, GzipConcatenatedMembersAndZlibHeader) {
  std::string a = repetitive(10000), b = random_bytes(3000, 2), c = "tail";
  std::string pa, pb, pc;
  ASSERT_TRUE(compress(Codec::kGzip, bytes_of(a), a.size(), pa).ok());
  ASSERT_TRUE(compress(Codec::kGzip, bytes_of(b), b.size(), pb).ok());
  ASSERT_TRUE(compress(Codec::kGzip, bytes_of(c), c.size(), pc).ok());
  ASSERT_EQ(static_cast<uint8_t>(pa[0]), 0x1f);  // a gzip member
  ASSERT_EQ(static_cast<uint8_t>(pa[1]), 0x8b);
  std::string back;
  Status st = decompress_to(Codec::kGzip, pa + pb + pc, a.size() + b.size() + c.size(), &back);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(back, a + b + c);
  // The second member truncated.
  st = decompress_to(Codec::kGzip, pa + pb.substr(0, pb.size() / 2), a.size() + b.size(), &back);
  EXPECT_EQ(st.code(), StatusCode::kCorruption);

  // A zlib (RFC 1950) stream, as some writers produce.
  std::string z(compressBound(a.size()), '\0');
  uLongf zlen = z.size();
  ASSERT_EQ(compress2(reinterpret_cast<Bytef*>(z.data()), &zlen, bytes_of(a), a.size(), 6), Z_OK);
  z.resize(zlen);
  st = decompress_to(Codec::kGzip, z, a.size(), &back);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(back, a);
}

TEST(Compression, ZstdSeveralFrames) {
  std::string a = repetitive(7000), b = random_bytes(500, 3);
  std::string pa, pb, back;
  ASSERT_TRUE(compress(Codec::kZstd, bytes_of(a), a.size(), pa).ok());
  ASSERT_TRUE(compress(Codec::kZstd, bytes_of(b), b.size(), pb).ok());
  Status st = decompress_to(Codec::kZstd, pa + pb, a.size() + b.size(), &back);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(back, a + b);
  EXPECT_FALSE(decompress_to(Codec::kZstd, pa + "junk", a.size(), &back).ok());
}

uint32_t be32(const std::string& s, size_t at) {
  return (uint32_t{static_cast<uint8_t>(s[at])} << 24) | (uint32_t{static_cast<uint8_t>(s[at + 1])} << 16) |
         (uint32_t{static_cast<uint8_t>(s[at + 2])} << 8) | uint32_t{static_cast<uint8_t>(s[at + 3])};
}

std::string be32_bytes(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>((v >> (24 - 8 * i)) & 0xff);
  return s;
}

TEST(Compression, Lz4HadoopFramingWithTwoBlocks) {
  std::string data = repetitive(300 * 1024) + random_bytes(1000, 4);
  std::string packed;
  ASSERT_TRUE(compress(Codec::kLz4, bytes_of(data), data.size(), packed).ok());
  // Our writer emits 256 KiB blocks: [size][compressed size][raw block] twice.
  ASSERT_GT(packed.size(), 16u);
  EXPECT_EQ(be32(packed, 0), 256u * 1024);
  uint32_t first = be32(packed, 4);
  ASSERT_LT(8 + first + 8, packed.size());
  EXPECT_EQ(be32(packed, 8 + first), data.size() - 256 * 1024);
  EXPECT_EQ(8 + first + 8 + be32(packed, 8 + first + 4), packed.size());
  std::string back;
  Status st = decompress_to(Codec::kLz4, packed, data.size(), &back);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(back, data);

  // One Hadoop block made of two compressed chunks.
  std::string a = repetitive(5000), b = random_bytes(700, 5), ra, rb;
  ASSERT_TRUE(compress(Codec::kLz4Raw, bytes_of(a), a.size(), ra).ok());
  ASSERT_TRUE(compress(Codec::kLz4Raw, bytes_of(b), b.size(), rb).ok());
  std::string chunked = be32_bytes(static_cast<uint32_t>(a.size() + b.size())) +
                        be32_bytes(static_cast<uint32_t>(ra.size())) + ra +
                        be32_bytes(static_cast<uint32_t>(rb.size())) + rb;
  st = decompress_to(Codec::kLz4, chunked, a.size() + b.size(), &back);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(back, a + b);
}

TEST(Compression, Lz4FallsBackToFrameAndRawBlock) {
  std::string data = repetitive(20000);
  // An LZ4 frame (what some non-Hadoop writers emitted for LZ4).
  std::string frame(LZ4F_compressFrameBound(data.size(), nullptr), '\0');
  size_t n = LZ4F_compressFrame(frame.data(), frame.size(), data.data(), data.size(), nullptr);
  ASSERT_FALSE(LZ4F_isError(n));
  frame.resize(n);
  std::string back;
  Status st = decompress_to(Codec::kLz4, frame, data.size(), &back);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(back, data);
  // Two concatenated frames.
  st = decompress_to(Codec::kLz4, frame + frame, 2 * data.size(), &back);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(back, data + data);
  EXPECT_EQ(decompress_to(Codec::kLz4, frame, data.size() - 1, &back).code(), StatusCode::kCorruption);
  // A bare raw block.
  std::string raw;
  ASSERT_TRUE(compress(Codec::kLz4Raw, bytes_of(data), data.size(), raw).ok());
  st = decompress_to(Codec::kLz4, raw, data.size(), &back);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(back, data);
}

TEST(Compression, GarbageIsCorruptionForEveryCodec) {
  for (uint32_t seed = 10; seed < 20; ++seed) {
    std::string garbage = random_bytes(200 + seed, seed);
    for (Codec codec : kCompressible) {
      std::string back;
      Status st = decompress_to(codec, garbage, 1000, &back);
      EXPECT_EQ(st.code(), StatusCode::kCorruption) << codec_name(codec) << " seed " << seed;
      EXPECT_EQ(st.message().rfind(codec_name(codec) + ":", 0), 0u) << st.message();
    }
  }
  // Truncations and byte flips of valid streams never crash.
  std::string data = repetitive(4000) + random_bytes(1000, 6);
  std::mt19937 rng(99);
  for (Codec codec : kCompressible) {
    std::string packed, back;
    ASSERT_TRUE(compress(codec, bytes_of(data), data.size(), packed).ok());
    for (size_t cut = 0; cut < packed.size(); cut += 1 + packed.size() / 50) {
      EXPECT_FALSE(decompress_to(codec, packed.substr(0, cut), data.size(), &back).ok())
          << codec_name(codec) << cut;
    }
    for (int i = 0; i < 100; ++i) {
      std::string m = packed;
      m[rng() % m.size()] ^= static_cast<char>(1 + rng() % 255);
      (void)decompress_to(codec, m, data.size(), &back);
    }
  }
}

TEST(Compression, LzoIsUnsupported) {
  EXPECT_FALSE(can_decompress(Codec::kLzo));
  EXPECT_FALSE(can_decompress(static_cast<Codec>(42)));
  for (Codec c : kCompressible) EXPECT_TRUE(can_decompress(c)) << codec_name(c);
  uint8_t in[4] = {1, 2, 3, 4}, out[4];
  Status st = decompress(Codec::kLzo, in, 4, out, 4);
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_NE(st.message().find("LZO"), std::string::npos) << st.message();
  std::string packed;
  EXPECT_EQ(compress(Codec::kLzo, in, 4, packed).code(), StatusCode::kUnsupported);
  EXPECT_EQ(decompress(static_cast<Codec>(42), in, 4, out, 4).code(), StatusCode::kUnsupported);
}

TEST(Compression, CodecFromName) {
  const std::pair<const char*, Codec> names[] = {
      {"snappy", Codec::kSnappy},     {"GZIP", Codec::kGzip},
      {"Zstd", Codec::kZstd},         {"lz4", Codec::kLz4},
      {"LZ4_RAW", Codec::kLz4Raw},    {"brotli", Codec::kBrotli},
      {"none", Codec::kUncompressed}, {"Uncompressed", Codec::kUncompressed},
  };
  for (const auto& [name, codec] : names) {
    auto r = codec_from_name(name);
    ASSERT_TRUE(r.ok()) << name;
    EXPECT_EQ(*r, codec) << name;
  }
  for (const char* bad : {"", "lzo", "zip", "snappy "}) {
    auto r = codec_from_name(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("lz4_raw"), std::string::npos) << r.status().message();
  }
}

TEST(Compression, PageCrc32) {
  const std::string check = "123456789";
  EXPECT_EQ(page_crc32(bytes_of(check), check.size()), 0xCBF43926u);  // the CRC-32 check value
  EXPECT_EQ(page_crc32(nullptr, 0), 0u);
}

// The first data page of every compressed column in parquet-testing
// decompresses to exactly its declared size.
TEST(CompressionRealFiles, FirstPagesDecompress) {
  fs::path dir = fs::path(INFERCOST_SHARED_DATA_DIR) / "parquet-testing" / "data";
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".parquet") files.push_back(e.path());
  }
  if (files.empty())
    GTEST_SKIP() << "no parquet-testing files under " << dir.string() << " (shared data not present)";
  std::set<Codec> seen;
  for (const auto& path : files) {
    SCOPED_TRACE(path.filename().string());
    std::ifstream in(path, std::ios::binary);
    std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_GE(file.size(), 12u);
    uint32_t len = 0;
    std::memcpy(&len, file.data() + file.size() - 8, 4);
    ASSERT_LE(len, file.size() - 12);
    auto md = parse_file_metadata(bytes_of(file) + file.size() - 8 - len, len);
    ASSERT_TRUE(md.ok()) << md.status().message();
    for (const auto& rg : md->row_groups) {
      for (const auto& cc : rg.columns) {
        const ColumnMetaData& m = *cc.meta_data;
        size_t off = static_cast<size_t>(m.data_page_offset);
        size_t hs = 0;
        auto h = parse_page_header(bytes_of(file) + off, file.size() - off, &hs);
        ASSERT_TRUE(h.ok()) << h.status().message();
        off += hs;
        size_t csize = static_cast<size_t>(h->compressed_page_size);
        size_t usize = static_cast<size_t>(h->uncompressed_page_size);
        ASSERT_LE(off + csize, file.size());
        if (h->data_page_header_v2) {
          // v2: the level bytes precede the values and are never compressed.
          if (!h->data_page_header_v2->is_compressed) continue;
          size_t levels = static_cast<size_t>(h->data_page_header_v2->definition_levels_byte_length +
                                              h->data_page_header_v2->repetition_levels_byte_length);
          ASSERT_LE(levels, csize);
          off += levels;
          csize -= levels;
          usize -= levels;
        }
        std::string out;
        Status st = decompress_to(m.codec, file.substr(off, csize), usize, &out);
        EXPECT_TRUE(st.ok()) << codec_name(m.codec) << ": " << st.message();
        if (st.ok()) seen.insert(m.codec);
      }
    }
  }
  for (Codec c : {Codec::kUncompressed, Codec::kSnappy, Codec::kZstd, Codec::kLz4, Codec::kLz4Raw}) {
    EXPECT_TRUE(seen.count(c)) << codec_name(c) << " not exercised";
  }
}

}  // namespace
}  // namespace infercost::parquet
