// Parquet file and page metadata (the parquet-format Thrift structs we use),
// parsed from and serialized to the Thrift compact protocol.
//
// Parsing is defensive: every length, count and nesting depth is checked
// against the bytes that remain, so a corrupt footer or page header gives
// kCorruption naming the struct and field, never a crash or an allocation
// larger than the input. Unknown fields are skipped (forward compatible).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "infercost/status.h"

namespace infercost::parquet {

// The four bytes a Parquet file starts and ends with.
inline constexpr char kParquetMagic[4] = {'P', 'A', 'R', '1'};

// Values are the parquet-format enum values; unknown values from newer
// writers are kept as-is (the enums have fixed underlying types).
enum class PhysicalType : int32_t {
  kBoolean = 0,
  kInt32 = 1,
  kInt64 = 2,
  kInt96 = 3,
  kFloat = 4,
  kDouble = 5,
  kByteArray = 6,
  kFixedLenByteArray = 7,
};

enum class Codec : int32_t {
  kUncompressed = 0,
  kSnappy = 1,
  kGzip = 2,
  kLzo = 3,
  kBrotli = 4,
  kLz4 = 5,  // deprecated: Hadoop framing (parquet-mr), or an LZ4 frame / raw block
  kZstd = 6,
  kLz4Raw = 7,
};

enum class Encoding : int32_t {
  kPlain = 0,
  kPlainDictionary = 2,
  kRle = 3,
  kBitPacked = 4,
  kDeltaBinaryPacked = 5,
  kDeltaLengthByteArray = 6,
  kDeltaByteArray = 7,
  kRleDictionary = 8,
  kByteStreamSplit = 9,
};

enum class Repetition : int32_t { kRequired = 0, kOptional = 1, kRepeated = 2 };

enum class PageType : int32_t { kDataPage = 0, kIndexPage = 1, kDictionaryPage = 2, kDataPageV2 = 3 };

// parquet-format ConvertedType values we name (others are kept as numbers).
enum class ConvertedType : int32_t {
  kUtf8 = 0,
  kMap = 1,
  kMapKeyValue = 2,
  kList = 3,
  kEnum = 4,
  kDecimal = 5,
  kDate = 6,
  kTimeMillis = 7,
  kTimeMicros = 8,
  kTimestampMillis = 9,
  kTimestampMicros = 10,
  kUint8 = 11,
  kUint16 = 12,
  kUint32 = 13,
  kUint64 = 14,
  kInt8 = 15,
  kInt16 = 16,
  kInt32 = 17,
  kInt64 = 18,
  kJson = 19,
  kBson = 20,
  kInterval = 21,
};

// The LogicalType union, flattened. kind is the union's field id
// (STRING=1, MAP=2, LIST=3, ENUM=4, DECIMAL=5, DATE=6, TIME=7, TIMESTAMP=8,
// INTEGER=10, UNKNOWN(null)=11, JSON=12, BSON=13, UUID=14, FLOAT16=15, ...);
// 0 when absent. Unknown kinds from newer writers keep their id.
struct LogicalType {
  enum Kind : int32_t {
    kNone = 0,
    kString = 1,
    kMap = 2,
    kList = 3,
    kEnum = 4,
    kDecimal = 5,
    kDate = 6,
    kTime = 7,
    kTimestamp = 8,
    kInteger = 10,
    kNull = 11,
    kJson = 12,
    kBson = 13,
    kUuid = 14,
    kFloat16 = 15,
  };
  int32_t kind = kNone;
  int32_t decimal_scale = 0, decimal_precision = 0;  // DECIMAL
  bool is_adjusted_to_utc = false;                   // TIME, TIMESTAMP
  int32_t time_unit = 0;                             // TIME, TIMESTAMP: 1 millis, 2 micros, 3 nanos
  int32_t integer_bit_width = 0;                     // INTEGER
  bool integer_signed = true;                        // INTEGER
};

struct SchemaElement {
  std::string name;
  std::optional<PhysicalType> type;  // absent for groups
  int32_t type_length = 0;           // FIXED_LEN_BYTE_ARRAY
  std::optional<Repetition> repetition;
  int32_t num_children = 0;
  std::optional<ConvertedType> converted_type;
  std::optional<int32_t> scale, precision, field_id;
  LogicalType logical_type;
};

struct Statistics {
  std::optional<std::string> max, min;              // deprecated (signed order)
  std::optional<std::string> max_value, min_value;  // current
  std::optional<int64_t> null_count, distinct_count;
};

struct ColumnMetaData {
  PhysicalType type = PhysicalType::kByteArray;
  std::vector<Encoding> encodings;
  std::vector<std::string> path_in_schema;
  Codec codec = Codec::kUncompressed;
  int64_t num_values = 0;
  int64_t total_uncompressed_size = 0;
  int64_t total_compressed_size = 0;
  std::vector<std::pair<std::string, std::optional<std::string>>> key_value_metadata;
  int64_t data_page_offset = 0;
  std::optional<int64_t> index_page_offset;
  std::optional<int64_t> dictionary_page_offset;
  std::optional<Statistics> statistics;
};

struct ColumnChunk {
  std::string file_path;  // set when the chunk lives in another file (unsupported)
  int64_t file_offset = 0;
  std::optional<ColumnMetaData> meta_data;
  bool has_crypto_metadata = false;  // column encryption (unsupported)
  bool has_encrypted_column_metadata = false;
};

struct RowGroup {
  std::vector<ColumnChunk> columns;
  int64_t total_byte_size = 0;
  int64_t num_rows = 0;
  std::optional<int64_t> file_offset;
  std::optional<int64_t> total_compressed_size;
  std::optional<int16_t> ordinal;
};

struct FileMetaData {
  int32_t version = 1;
  std::vector<SchemaElement> schema;  // depth-first, schema[0] is the root
  int64_t num_rows = 0;
  std::vector<RowGroup> row_groups;
  std::vector<std::pair<std::string, std::optional<std::string>>> key_value_metadata;
  std::optional<std::string> created_by;
  // ColumnOrder per leaf: the union's field id (1 = TYPE_ORDER, the only one
  // defined). Readers such as pyarrow ignore min_value/max_value without it.
  std::vector<int32_t> column_orders;
  bool has_encryption_algorithm = false;  // plaintext footer of an encrypted file (unsupported)
};

struct DataPageHeader {
  int32_t num_values = 0;
  Encoding encoding = Encoding::kPlain;
  Encoding definition_level_encoding = Encoding::kRle;
  Encoding repetition_level_encoding = Encoding::kRle;
  std::optional<Statistics> statistics;
};

struct DictionaryPageHeader {
  int32_t num_values = 0;
  Encoding encoding = Encoding::kPlain;
  std::optional<bool> is_sorted;
};

struct DataPageHeaderV2 {
  int32_t num_values = 0;
  int32_t num_nulls = 0;
  int32_t num_rows = 0;
  Encoding encoding = Encoding::kPlain;
  int32_t definition_levels_byte_length = 0;
  int32_t repetition_levels_byte_length = 0;
  bool is_compressed = true;
  std::optional<Statistics> statistics;
};

struct PageHeader {
  PageType type = PageType::kDataPage;
  int32_t uncompressed_page_size = 0;
  int32_t compressed_page_size = 0;
  std::optional<int32_t> crc;  // CRC-32 (zlib polynomial) of the page bytes as stored
  std::optional<DataPageHeader> data_page_header;
  std::optional<DictionaryPageHeader> dictionary_page_header;
  std::optional<DataPageHeaderV2> data_page_header_v2;
};

// Parses the footer's FileMetaData (the `size` bytes before the length and
// "PAR1"). Errors: kCorruption "footer: <struct>.<field>: <what>".
Result<FileMetaData> parse_file_metadata(const uint8_t* data, size_t size);

// Parses a page header at the start of data[0, size); on success
// *header_size is the number of bytes it took. Errors: kCorruption
// "page header: ...". A header that runs past `size` is kCorruption with
// "truncated" in the message, and sets *ran_out (where given) to true: the
// caller may read more and retry; it is false for any other error.
Result<PageHeader> parse_page_header(const uint8_t* data, size_t size, size_t* header_size,
                                     bool* ran_out = nullptr);

// Compact-protocol serialization (what the writer emits). Optional fields
// that are absent are not written.
std::string serialize_file_metadata(const FileMetaData& metadata);
std::string serialize_page_header(const PageHeader& header);

// Names as parquet-format spells them ("BYTE_ARRAY", "SNAPPY",
// "RLE_DICTIONARY", "OPTIONAL", "DATA_PAGE_V2", "UTF8"); unknown values give
// "UNKNOWN(<n>)".
std::string type_name(PhysicalType type);
std::string codec_name(Codec codec);
std::string encoding_name(Encoding encoding);
std::string repetition_name(Repetition repetition);
std::string page_type_name(PageType type);
std::string converted_type_name(ConvertedType type);
// "STRING", "DECIMAL(10,2)", "TIMESTAMP(MICROS,true)", "INTEGER(8,false)"; "" for kNone.
std::string logical_type_name(const LogicalType& type);

}  // namespace infercost::parquet
