// The names of Parquet's enums and logical types, as parquet-format spells
// them (metadata.h): for errors and the file descriptions of describe.cc.
#include <fmt/format.h>

#include <string>

#include "parquet/metadata.h"

namespace infercost::parquet {

namespace {
std::string unknown_name(int32_t v) {
  return fmt::format("UNKNOWN({})", v);
}
}  // namespace

std::string type_name(PhysicalType type) {
  switch (type) {
    case PhysicalType::kBoolean: return "BOOLEAN";
    case PhysicalType::kInt32: return "INT32";
    case PhysicalType::kInt64: return "INT64";
    case PhysicalType::kInt96: return "INT96";
    case PhysicalType::kFloat: return "FLOAT";
    case PhysicalType::kDouble: return "DOUBLE";
    case PhysicalType::kByteArray: return "BYTE_ARRAY";
    case PhysicalType::kFixedLenByteArray: return "FIXED_LEN_BYTE_ARRAY";
  }
  return unknown_name(static_cast<int32_t>(type));
}

std::string codec_name(Codec codec) {
  switch (codec) {
    case Codec::kUncompressed: return "UNCOMPRESSED";
    case Codec::kSnappy: return "SNAPPY";
    case Codec::kGzip: return "GZIP";
    case Codec::kLzo: return "LZO";
    case Codec::kBrotli: return "BROTLI";
    case Codec::kLz4: return "LZ4";
    case Codec::kZstd: return "ZSTD";
    case Codec::kLz4Raw: return "LZ4_RAW";
  }
  return unknown_name(static_cast<int32_t>(codec));
}

std::string encoding_name(Encoding encoding) {
  switch (encoding) {
    case Encoding::kPlain: return "PLAIN";
    case Encoding::kPlainDictionary: return "PLAIN_DICTIONARY";
    case Encoding::kRle: return "RLE";
    case Encoding::kBitPacked: return "BIT_PACKED";
    case Encoding::kDeltaBinaryPacked: return "DELTA_BINARY_PACKED";
    case Encoding::kDeltaLengthByteArray: return "DELTA_LENGTH_BYTE_ARRAY";
    case Encoding::kDeltaByteArray: return "DELTA_BYTE_ARRAY";
    case Encoding::kRleDictionary: return "RLE_DICTIONARY";
    case Encoding::kByteStreamSplit: return "BYTE_STREAM_SPLIT";
  }
  return unknown_name(static_cast<int32_t>(encoding));
}

std::string repetition_name(Repetition repetition) {
  switch (repetition) {
    case Repetition::kRequired: return "REQUIRED";
    case Repetition::kOptional: return "OPTIONAL";
    case Repetition::kRepeated: return "REPEATED";
  }
  return unknown_name(static_cast<int32_t>(repetition));
}

std::string page_type_name(PageType type) {
  switch (type) {
    case PageType::kDataPage: return "DATA_PAGE";
    case PageType::kIndexPage: return "INDEX_PAGE";
    case PageType::kDictionaryPage: return "DICTIONARY_PAGE";
    case PageType::kDataPageV2: return "DATA_PAGE_V2";
  }
  return unknown_name(static_cast<int32_t>(type));
}

std::string converted_type_name(ConvertedType type) {
  switch (type) {
    case ConvertedType::kUtf8: return "UTF8";
    case ConvertedType::kMap: return "MAP";
    case ConvertedType::kMapKeyValue: return "MAP_KEY_VALUE";
    case ConvertedType::kList: return "LIST";
    case ConvertedType::kEnum: return "ENUM";
    case ConvertedType::kDecimal: return "DECIMAL";
    case ConvertedType::kDate: return "DATE";
    case ConvertedType::kTimeMillis: return "TIME_MILLIS";
    case ConvertedType::kTimeMicros: return "TIME_MICROS";
    case ConvertedType::kTimestampMillis: return "TIMESTAMP_MILLIS";
    case ConvertedType::kTimestampMicros: return "TIMESTAMP_MICROS";
    case ConvertedType::kUint8: return "UINT_8";
    case ConvertedType::kUint16: return "UINT_16";
    case ConvertedType::kUint32: return "UINT_32";
    case ConvertedType::kUint64: return "UINT_64";
    case ConvertedType::kInt8: return "INT_8";
    case ConvertedType::kInt16: return "INT_16";
    case ConvertedType::kInt32: return "INT_32";
    case ConvertedType::kInt64: return "INT_64";
    case ConvertedType::kJson: return "JSON";
    case ConvertedType::kBson: return "BSON";
    case ConvertedType::kInterval: return "INTERVAL";
  }
  return unknown_name(static_cast<int32_t>(type));
}

std::string logical_type_name(const LogicalType& type) {
  auto unit = [](int32_t u) -> std::string {
    switch (u) {
      case 1: return "MILLIS";
      case 2: return "MICROS";
      case 3: return "NANOS";
    }
    return unknown_name(u);
  };
  switch (type.kind) {
    case LogicalType::kNone: return "";
    case LogicalType::kString: return "STRING";
    case LogicalType::kMap: return "MAP";
    case LogicalType::kList: return "LIST";
    case LogicalType::kEnum: return "ENUM";
    case LogicalType::kDecimal:
      return fmt::format("DECIMAL({},{})", type.decimal_precision, type.decimal_scale);
    case LogicalType::kDate: return "DATE";
    case LogicalType::kTime: return fmt::format("TIME({},{})", unit(type.time_unit), type.is_adjusted_to_utc);
    case LogicalType::kTimestamp:
      return fmt::format("TIMESTAMP({},{})", unit(type.time_unit), type.is_adjusted_to_utc);
    case LogicalType::kInteger:
      return fmt::format("INTEGER({},{})", type.integer_bit_width, type.integer_signed);
    case LogicalType::kNull: return "NULL";
    case LogicalType::kJson: return "JSON";
    case LogicalType::kBson: return "BSON";
    case LogicalType::kUuid: return "UUID";
    case LogicalType::kFloat16: return "FLOAT16";
  }
  return unknown_name(type.kind);
}

}  // namespace infercost::parquet
