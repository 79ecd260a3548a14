// Parquet value and level encodings: decoders for everything a flat column
// may use, encoders for what our writer emits.
//
// Decoders never read outside [data, data + size) and never trust a count
// from the input for an allocation larger than the input could hold: bad
// input is kCorruption "<ENCODING>: <what>", never a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "infercost/status.h"

namespace infercost::parquet {

// Byte-array values in one buffer: value i is bytes[offsets[i], offsets[i+1]).
struct ByteArrayBuffer {
  std::string bytes;
  std::vector<uint64_t> offsets{0};

  size_t size() const { return offsets.size() - 1; }
  std::string_view at(size_t i) const {
    return std::string_view(bytes).substr(offsets[i], offsets[i + 1] - offsets[i]);
  }
  void append(std::string_view value) {
    bytes.append(value);
    offsets.push_back(bytes.size());
  }
  void clear() {
    bytes.clear();
    offsets.assign(1, 0);
  }
};

// ---- RLE / bit-packed hybrid (levels, dictionary indices, booleans) ----

// Reads runs lazily; values are < 2^bit_width (0 <= bit_width <= 32).
class RleBitPackedDecoder {
 public:
  RleBitPackedDecoder() = default;
  RleBitPackedDecoder(const uint8_t* data, size_t size, int bit_width);
  // Decodes exactly n values into out; running out of input is kCorruption.
  // A bit-packed run cut short by the end of the input still yields the
  // values whose bits are all present. On error the decoder is spent.
  Status get(uint32_t* out, size_t n);

 private:
  Status next_run();
  void unpack_packed(uint32_t* out, uint64_t n);

  const uint8_t* begin_ = nullptr;  // for byte offsets in messages
  const uint8_t* data_ = nullptr;   // next run header
  const uint8_t* end_ = nullptr;
  int bit_width_ = 0;
  // current run: an RLE run, or a bit-packed run of 8-value groups
  uint64_t rle_left_ = 0;
  uint32_t rle_value_ = 0;
  const uint8_t* packed_ = nullptr;  // first byte of the bit-packed run
  uint64_t packed_pos_ = 0;          // values already taken from it
  uint64_t packed_left_ = 0;         // values left (clipped to the bytes present)
};

// Appends the hybrid encoding of values[0, n) (RLE runs for repeats of 8+,
// bit-packed groups otherwise) to out, without a length prefix.
void encode_rle_bit_packed(const uint32_t* values, size_t n, int bit_width, std::string& out);

// Bits needed for values up to max_value (0 for 0).
int bit_width_for(uint64_t max_value);

// ---- PLAIN ----
// Each appends `count` values and sets *consumed to the bytes used.
Status decode_plain_byte_array(const uint8_t* data, size_t size, size_t count, ByteArrayBuffer& out,
                               size_t* consumed);
Status decode_plain_fixed_len(const uint8_t* data, size_t size, size_t count, int width, ByteArrayBuffer& out,
                              size_t* consumed);
// Values of a numeric physical type (Stored: int32_t, int64_t, float or
// double), widened to Out (int64_t or double): INT32 values are sign-extended.
template <typename Stored, typename Out>
Status decode_plain_numeric(const uint8_t* data, size_t size, size_t count, std::vector<Out>& out,
                            size_t* consumed);
inline constexpr auto* decode_plain_int32 = &decode_plain_numeric<int32_t, int64_t>;
inline constexpr auto* decode_plain_int64 = &decode_plain_numeric<int64_t, int64_t>;
inline constexpr auto* decode_plain_float = &decode_plain_numeric<float, double>;
inline constexpr auto* decode_plain_double = &decode_plain_numeric<double, double>;
// Booleans, bit-packed LSB first; appended as 0/1.
Status decode_plain_boolean(const uint8_t* data, size_t size, size_t count, std::vector<int64_t>& out,
                            size_t* consumed);

void encode_plain_byte_array(std::string_view value, std::string& out);  // 4-byte LE length + bytes

// ---- DELTA encodings ----
// DELTA_BINARY_PACKED: appends `count` values (the page may hold more; fewer
// is kCorruption). *consumed is the bytes up to the end of the last block
// read, as DELTA_LENGTH_BYTE_ARRAY needs.
Status decode_delta_binary_packed(const uint8_t* data, size_t size, size_t count, std::vector<int64_t>& out,
                                  size_t* consumed);
Status decode_delta_length_byte_array(const uint8_t* data, size_t size, size_t count, ByteArrayBuffer& out,
                                      size_t* consumed);
Status decode_delta_byte_array(const uint8_t* data, size_t size, size_t count, ByteArrayBuffer& out,
                               size_t* consumed);

// BYTE_STREAM_SPLIT for FLOAT (width 4) and DOUBLE (width 8), and
// INT32/INT64/FIXED_LEN_BYTE_ARRAY: un-splits `count` values of `width`
// bytes into out (count * width bytes appended).
Status decode_byte_stream_split(const uint8_t* data, size_t size, size_t count, int width, std::string& out);

}  // namespace infercost::parquet
