#include "parquet/compression.h"

#include <brotli/decode.h>
#include <brotli/encode.h>
#include <fmt/format.h>
#include <lz4.h>
#include <lz4frame.h>
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstring>
#include <memory>

namespace infercost::parquet {

namespace {

Status size_mismatch(Codec codec, size_t got, size_t want) {
  return corruption(fmt::format("{}: decompressed to {} bytes, expected {}", codec_name(codec), got, want));
}

Status too_long(Codec codec, size_t want) {
  return corruption(
      fmt::format("{}: decompressed data is longer than the expected {} bytes", codec_name(codec), want));
}

// ---- snappy ----

Status snappy_decompress(const uint8_t* in, size_t in_size, uint8_t* out, size_t out_size) {
  const char* src = reinterpret_cast<const char*>(in);
  size_t len = 0;
  if (!snappy::GetUncompressedLength(src, in_size, &len)) {
    return corruption("SNAPPY: invalid length header");
  }
  if (len != out_size) return size_mismatch(Codec::kSnappy, len, out_size);
  if (!snappy::RawUncompress(src, in_size, reinterpret_cast<char*>(out))) {
    return corruption(fmt::format("SNAPPY: malformed stream of {} bytes", in_size));
  }
  return Status::ok_status();
}

// ---- gzip / zlib ----

Status gzip_decompress(const uint8_t* in, size_t in_size, uint8_t* out, size_t out_size) {
  if (in_size > UINT_MAX || out_size > UINT_MAX) return unsupported("GZIP: pages over 4 GiB");
  uint8_t dummy = 0;  // zlib rejects null buffers even when empty
  z_stream s;
  std::memset(&s, 0, sizeof(s));
  // 15 + 32: auto-detect a gzip or a zlib header.
  if (inflateInit2(&s, 15 + 32) != Z_OK) return resource_exhausted("GZIP: inflateInit2 failed");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&s, inflateEnd);
  s.next_in = const_cast<Bytef*>(in_size > 0 ? in : &dummy);
  s.avail_in = static_cast<uInt>(in_size);
  s.next_out = out_size > 0 ? out : &dummy;
  s.avail_out = static_cast<uInt>(out_size);
  int members = 0;
  while (true) {
    uInt in_before = s.avail_in, out_before = s.avail_out;
    int rc = inflate(&s, Z_FINISH);
    if (rc == Z_STREAM_END) {
      ++members;
      if (s.avail_in == 0) break;
      // Another member follows (concatenated gzip, as some writers emit).
      if (inflateReset(&s) != Z_OK) return corruption("GZIP: inflateReset failed");
      continue;
    }
    if (rc == Z_BUF_ERROR || (rc == Z_OK && s.avail_in == in_before && s.avail_out == out_before)) {
      if (s.avail_out == 0) return too_long(Codec::kGzip, out_size);
      return corruption(fmt::format("GZIP: stream truncated after {} of {} input bytes (member {})",
                                    in_size - s.avail_in, in_size, members + 1));
    }
    if (rc != Z_OK) {
      return corruption(fmt::format("GZIP: {} at input byte {}", s.msg != nullptr ? s.msg : "inflate error",
                                    in_size - s.avail_in));
    }
  }
  size_t produced = out_size - s.avail_out;
  if (produced != out_size) return size_mismatch(Codec::kGzip, produced, out_size);
  return Status::ok_status();
}

Status gzip_compress(const uint8_t* in, size_t in_size, std::string& out, int level) {
  if (level > 9) return invalid_argument(fmt::format("GZIP: level {} is outside 0..9", level));
  if (in_size > UINT_MAX) return unsupported("GZIP: pages over 4 GiB");
  uint8_t dummy = 0;
  z_stream s;
  std::memset(&s, 0, sizeof(s));
  // 15 + 16: a gzip header, as Parquet's GZIP codec specifies.
  if (deflateInit2(&s, level < 0 ? Z_DEFAULT_COMPRESSION : level, Z_DEFLATED, 15 + 16, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    return resource_exhausted("GZIP: deflateInit2 failed");
  }
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&s, deflateEnd);
  out.resize(deflateBound(&s, static_cast<uLong>(in_size)) + 32);
  s.next_in = const_cast<Bytef*>(in_size > 0 ? in : &dummy);
  s.avail_in = static_cast<uInt>(in_size);
  s.next_out = reinterpret_cast<Bytef*>(out.data());
  s.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&s, Z_FINISH);
  if (rc != Z_STREAM_END) return internal_error(fmt::format("GZIP: deflate returned {}", rc));
  out.resize(out.size() - s.avail_out);
  return Status::ok_status();
}

// ---- zstd ----

Status zstd_decompress(const uint8_t* in, size_t in_size, uint8_t* out, size_t out_size) {
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> ctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (!ctx) return resource_exhausted("ZSTD: cannot create a context");
  // Decodes every frame in the input (a page may hold several).
  size_t r = ZSTD_decompressDCtx(ctx.get(), out, out_size, in, in_size);
  if (ZSTD_isError(r)) {
    if (ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall) return too_long(Codec::kZstd, out_size);
    return corruption(fmt::format("ZSTD: {}", ZSTD_getErrorName(r)));
  }
  if (r != out_size) return size_mismatch(Codec::kZstd, r, out_size);
  return Status::ok_status();
}

// ---- lz4 ----

uint32_t load_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

void append_be32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
}

Status lz4_raw_decompress(Codec codec, const uint8_t* in, size_t in_size, uint8_t* out, size_t out_size) {
  if (in_size > INT_MAX || out_size > INT_MAX)
    return unsupported(fmt::format("{}: pages over 2 GiB", codec_name(codec)));
  uint8_t dummy = 0;
  int r = LZ4_decompress_safe(reinterpret_cast<const char*>(in_size > 0 ? in : &dummy),
                              reinterpret_cast<char*>(out_size > 0 ? out : &dummy), static_cast<int>(in_size),
                              static_cast<int>(out_size));
  if (r < 0) {
    return corruption(fmt::format("{}: malformed block of {} bytes (or longer than {} bytes)",
                                  codec_name(codec), in_size, out_size));
  }
  if (static_cast<size_t>(r) != out_size) return size_mismatch(codec, static_cast<size_t>(r), out_size);
  return Status::ok_status();
}

// Hadoop's BlockCompressorStream framing: blocks of
// [BE32 uncompressed size] then chunks of [BE32 compressed size][raw LZ4]
// until the block's uncompressed size is reached.
bool lz4_hadoop_decompress(const uint8_t* in, size_t in_size, uint8_t* out, size_t out_size) {
  size_t pos = 0, opos = 0;
  while (pos < in_size) {
    if (in_size - pos < 8) return false;
    size_t block_size = load_be32(in + pos);
    pos += 4;
    if (block_size > out_size - opos) return false;
    size_t block_end = opos + block_size;
    do {
      if (in_size - pos < 4) return false;
      size_t chunk = load_be32(in + pos);
      pos += 4;
      if (chunk > in_size - pos || chunk > INT_MAX) return false;
      size_t room = block_end - opos;
      if (room == 0) {
        if (chunk != 0) return false;
      } else {
        int r =
            LZ4_decompress_safe(reinterpret_cast<const char*>(in + pos), reinterpret_cast<char*>(out + opos),
                                static_cast<int>(chunk), static_cast<int>(std::min<size_t>(room, INT_MAX)));
        if (r <= 0) return false;
        opos += static_cast<size_t>(r);
      }
      pos += chunk;
    } while (opos < block_end);
  }
  return opos == out_size;
}

bool lz4_frame_decompress(const uint8_t* in, size_t in_size, uint8_t* out, size_t out_size) {
  if (in_size < 4 || (uint32_t{in[0]} | uint32_t{in[1]} << 8 | uint32_t{in[2]} << 16 |
                      uint32_t{in[3]} << 24) != 0x184D2204u) {
    return false;
  }
  LZ4F_dctx* raw = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&raw, LZ4F_VERSION))) return false;
  std::unique_ptr<LZ4F_dctx, LZ4F_errorCode_t (*)(LZ4F_dctx*)> ctx(raw, LZ4F_freeDecompressionContext);
  uint8_t dummy = 0;
  size_t ipos = 0, opos = 0;
  while (true) {
    size_t src = in_size - ipos, dst = out_size - opos;
    size_t r = LZ4F_decompress(ctx.get(), dst > 0 ? out + opos : &dummy, &dst, in + ipos, &src, nullptr);
    if (LZ4F_isError(r)) return false;
    ipos += src;
    opos += dst;
    if (r == 0) {  // a frame ended; another may follow
      if (ipos == in_size) return opos == out_size;
      continue;
    }
    if (src == 0 && dst == 0) return false;  // truncated, or more output than out_size
  }
}

Status lz4_hadoop_or_frame_decompress(const uint8_t* in, size_t in_size, uint8_t* out, size_t out_size) {
  if (lz4_hadoop_decompress(in, in_size, out, out_size)) return Status::ok_status();
  if (lz4_frame_decompress(in, in_size, out, out_size)) return Status::ok_status();
  Status raw = lz4_raw_decompress(Codec::kLz4, in, in_size, out, out_size);
  if (raw.ok()) return raw;
  return corruption(fmt::format(
      "LZ4: {} bytes are neither Hadoop-framed LZ4, an LZ4 frame, nor a raw LZ4 block of {} bytes", in_size,
      out_size));
}

Status lz4_raw_compress(const uint8_t* in, size_t in_size, std::string& out) {
  if (in_size > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) return unsupported("LZ4_RAW: page too large");
  out.resize(static_cast<size_t>(LZ4_compressBound(static_cast<int>(in_size))));
  uint8_t dummy = 0;
  int n = LZ4_compress_default(reinterpret_cast<const char*>(in_size > 0 ? in : &dummy), out.data(),
                               static_cast<int>(in_size), static_cast<int>(out.size()));
  if (n <= 0 && in_size > 0) return internal_error("LZ4_RAW: compression failed");
  out.resize(static_cast<size_t>(std::max(n, 0)));
  return Status::ok_status();
}

// Blocks of at most 256 KiB, each [BE32 size][BE32 compressed size][raw block].
Status lz4_hadoop_compress(const uint8_t* in, size_t in_size, std::string& out) {
  constexpr size_t kBlock = 256 * 1024;
  out.clear();
  std::string block;
  for (size_t pos = 0; pos < in_size; pos += kBlock) {
    size_t n = std::min(kBlock, in_size - pos);
    INFERCOST_RETURN_IF_ERROR(lz4_raw_compress(in + pos, n, block));
    append_be32(out, static_cast<uint32_t>(n));
    append_be32(out, static_cast<uint32_t>(block.size()));
    out += block;
  }
  return Status::ok_status();
}

// ---- brotli ----

Status brotli_decompress(const uint8_t* in, size_t in_size, uint8_t* out, size_t out_size) {
  std::unique_ptr<BrotliDecoderState, void (*)(BrotliDecoderState*)> st(
      BrotliDecoderCreateInstance(nullptr, nullptr, nullptr), BrotliDecoderDestroyInstance);
  if (!st) return resource_exhausted("BROTLI: cannot create a decoder");
  uint8_t dummy = 0;
  size_t avail_in = in_size, avail_out = out_size;
  const uint8_t* next_in = in_size > 0 ? in : &dummy;
  uint8_t* next_out = out_size > 0 ? out : &dummy;
  BrotliDecoderResult r =
      BrotliDecoderDecompressStream(st.get(), &avail_in, &next_in, &avail_out, &next_out, nullptr);
  switch (r) {
    case BROTLI_DECODER_RESULT_SUCCESS: break;
    case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT: return too_long(Codec::kBrotli, out_size);
    case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT:
      return corruption(fmt::format("BROTLI: stream truncated after {} bytes", in_size));
    default:
      return corruption(
          fmt::format("BROTLI: {}", BrotliDecoderErrorString(BrotliDecoderGetErrorCode(st.get()))));
  }
  if (avail_in != 0) return corruption(fmt::format("BROTLI: {} bytes after the end of the stream", avail_in));
  size_t produced = out_size - avail_out;
  if (produced != out_size) return size_mismatch(Codec::kBrotli, produced, out_size);
  return Status::ok_status();
}

Status brotli_compress(const uint8_t* in, size_t in_size, std::string& out, int level) {
  if (level > BROTLI_MAX_QUALITY) {
    return invalid_argument(fmt::format("BROTLI: level {} is outside 0..{}", level, BROTLI_MAX_QUALITY));
  }
  // Quality 11 (the library default) is very slow for page-sized data.
  int quality = level < 0 ? 8 : level;
  size_t size = BrotliEncoderMaxCompressedSize(in_size);
  if (size == 0) size = in_size + 1024;
  out.resize(size);
  uint8_t dummy = 0;
  if (!BrotliEncoderCompress(quality, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, in_size,
                             in_size > 0 ? in : &dummy, &size, reinterpret_cast<uint8_t*>(out.data()))) {
    return internal_error("BROTLI: compression failed");
  }
  out.resize(size);
  return Status::ok_status();
}

}  // namespace

bool can_decompress(Codec codec) {
  switch (codec) {
    case Codec::kUncompressed:
    case Codec::kSnappy:
    case Codec::kGzip:
    case Codec::kBrotli:
    case Codec::kLz4:
    case Codec::kZstd:
    case Codec::kLz4Raw: return true;
    case Codec::kLzo: return false;
  }
  return false;
}

Status decompress(Codec codec, const uint8_t* in, size_t in_size, uint8_t* out, size_t out_size) {
  if (!can_decompress(codec)) return unsupported(fmt::format("compression codec {}", codec_name(codec)));
  // Parquet v2 pages whose values are all null may have no bytes at all.
  if (in_size == 0 && out_size == 0) return Status::ok_status();
  switch (codec) {
    case Codec::kUncompressed:
      if (in_size != out_size) return size_mismatch(codec, in_size, out_size);
      if (in_size > 0) std::memcpy(out, in, in_size);
      return Status::ok_status();
    case Codec::kSnappy: return snappy_decompress(in, in_size, out, out_size);
    case Codec::kGzip: return gzip_decompress(in, in_size, out, out_size);
    case Codec::kZstd: return zstd_decompress(in, in_size, out, out_size);
    case Codec::kLz4Raw: return lz4_raw_decompress(codec, in, in_size, out, out_size);
    case Codec::kLz4: return lz4_hadoop_or_frame_decompress(in, in_size, out, out_size);
    case Codec::kBrotli: return brotli_decompress(in, in_size, out, out_size);
    case Codec::kLzo: break;
  }
  return unsupported(fmt::format("compression codec {}", codec_name(codec)));
}

Status compress(Codec codec, const uint8_t* in, size_t in_size, std::string& out, int level) {
  switch (codec) {
    case Codec::kUncompressed:
      out.assign(reinterpret_cast<const char*>(in), in_size);
      return Status::ok_status();
    case Codec::kSnappy: {
      out.resize(snappy::MaxCompressedLength(in_size));
      size_t n = 0;
      static const char kEmpty = 0;
      snappy::RawCompress(in_size > 0 ? reinterpret_cast<const char*>(in) : &kEmpty, in_size, out.data(), &n);
      out.resize(n);
      return Status::ok_status();
    }
    case Codec::kGzip: return gzip_compress(in, in_size, out, level);
    case Codec::kZstd: {
      if (level > ZSTD_maxCLevel()) {
        return invalid_argument(
            fmt::format("ZSTD: level {} is above the maximum {}", level, ZSTD_maxCLevel()));
      }
      out.resize(ZSTD_compressBound(in_size));
      size_t n = ZSTD_compress(out.data(), out.size(), in, in_size, level < 0 ? ZSTD_CLEVEL_DEFAULT : level);
      if (ZSTD_isError(n)) return internal_error(fmt::format("ZSTD: {}", ZSTD_getErrorName(n)));
      out.resize(n);
      return Status::ok_status();
    }
    case Codec::kLz4Raw: return lz4_raw_compress(in, in_size, out);
    case Codec::kLz4: return lz4_hadoop_compress(in, in_size, out);
    case Codec::kBrotli: return brotli_compress(in, in_size, out, level);
    case Codec::kLzo: break;
  }
  return unsupported(fmt::format("compressing with codec {}", codec_name(codec)));
}

Result<Codec> codec_from_name(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "none" || lower == "uncompressed") return Codec::kUncompressed;
  if (lower == "snappy") return Codec::kSnappy;
  if (lower == "gzip") return Codec::kGzip;
  if (lower == "zstd") return Codec::kZstd;
  if (lower == "lz4") return Codec::kLz4;
  if (lower == "lz4_raw") return Codec::kLz4Raw;
  if (lower == "brotli") return Codec::kBrotli;
  return invalid_argument(
      fmt::format("unknown compression '{}' (expected one of: none, uncompressed, snappy, gzip, zstd, lz4, "
                  "lz4_raw, brotli)",
                  name));
}

uint32_t page_crc32(const uint8_t* data, size_t size) {
  uLong crc = crc32_z(0L, Z_NULL, 0);
  if (size > 0) crc = crc32_z(crc, data, size);
  return static_cast<uint32_t>(crc);
}

}  // namespace infercost::parquet
