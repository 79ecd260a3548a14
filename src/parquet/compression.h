// Page compression codecs and the page CRC.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "infercost/status.h"
#include "parquet/metadata.h"

namespace infercost::parquet {

// True for the codecs decompress() handles: UNCOMPRESSED, SNAPPY, GZIP
// (several concatenated members too), BROTLI, LZ4 (Hadoop framing as
// parquet-mr writes it, falling back to an LZ4 frame and then a raw block),
// ZSTD, LZ4_RAW. LZO is not.
bool can_decompress(Codec codec);

// Decompresses `in` into exactly `out_size` bytes at `out`. Output that would
// be longer or shorter than out_size, or a malformed stream, is kCorruption
// "<CODEC>: <what>"; never writes past out[out_size). Unsupported codecs are
// kUnsupported naming the codec.
Status decompress(Codec codec, const uint8_t* in, size_t in_size, uint8_t* out, size_t out_size);

// Compresses `in` with `codec` (UNCOMPRESSED, SNAPPY, GZIP, BROTLI, ZSTD,
// LZ4_RAW, and LZ4 in Hadoop framing), replacing `out`. level < 0 is the
// codec's default. Others are kUnsupported.
Status compress(Codec codec, const uint8_t* in, size_t in_size, std::string& out, int level = -1);

// "snappy", "gzip", "zstd", "lz4", "lz4_raw", "brotli", "none"/"uncompressed"
// (case-insensitive) to a codec; anything else is kInvalidArgument listing them.
Result<Codec> codec_from_name(std::string_view name);

// CRC-32 as Parquet page headers use it (the zlib/gzip polynomial).
uint32_t page_crc32(const uint8_t* data, size_t size);

}  // namespace infercost::parquet
