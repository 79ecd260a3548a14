// The "ARROW:schema" entry of a Parquet file's key-value metadata, which
// Arrow readers (parquet-cpp, pyarrow) use to restore Arrow types that
// Parquet cannot say, such as fixed_size_list: the base64 of an Arrow IPC
// encapsulated Schema message (Arrow's format/Message.fbs, Schema.fbs),
// built here with a minimal FlatBuffers writer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parquet/writer.h"

namespace infercost::parquet {

inline constexpr char kArrowSchemaKey[] = "ARROW:schema";

// The encapsulated message: 0xFFFFFFFF, the int32 little-endian length of
// what follows, then the FlatBuffer of Message{V5, Schema{Little, fields}},
// zero-padded to a multiple of 8 bytes. One field per column: string Utf8,
// int32/int64 Int{32|64, signed}, float/double FloatingPoint{SINGLE|DOUBLE},
// a list column FixedSizeList{list_size} of one non-nullable child
// "element" of FloatingPoint{SINGLE}; nullable as the ColumnSpec says.
std::string arrow_schema_message(const std::vector<ColumnSpec>& schema);

// Standard base64 (RFC 4648 alphabet, '=' padding).
std::string base64_encode(std::string_view bytes);

// base64_encode(arrow_schema_message(schema)): the entry's value.
std::string arrow_schema_metadata(const std::vector<ColumnSpec>& schema);

// A FlatBuffer table under construction: fields by slot (the field's index
// in its .fbs table; a union takes two, its type then its value), scalars,
// strings, one table or a vector of tables. Absent slots read as defaults.
class FlatTable {
 public:
  FlatTable& add_u8(int slot, uint8_t value) { return add_scalar(slot, 1, value); }
  FlatTable& add_i16(int slot, int16_t value) { return add_scalar(slot, 2, static_cast<uint16_t>(value)); }
  FlatTable& add_i32(int slot, int32_t value) { return add_scalar(slot, 4, static_cast<uint32_t>(value)); }
  FlatTable& add_i64(int slot, int64_t value) { return add_scalar(slot, 8, static_cast<uint64_t>(value)); }
  FlatTable& add_string(int slot, std::string_view value);
  FlatTable& add_table(int slot, FlatTable table);
  FlatTable& add_tables(int slot, std::vector<FlatTable> tables);

  // The finished buffer with this table as its root.
  std::string finish() const;

 private:
  enum class Ref { kNone, kString, kTable, kTables };
  struct Field {
    int slot = 0;
    int size = 4;       // inline bytes: 1, 2, 4, 8 (scalars) or 4 (an offset)
    uint64_t bits = 0;  // scalar value
    Ref ref = Ref::kNone;
    std::string text;
    std::vector<FlatTable> tables;
  };
  FlatTable& add_scalar(int slot, int size, uint64_t bits);
  size_t write(std::string& out) const;

  std::vector<Field> fields_;
};

}  // namespace infercost::parquet
