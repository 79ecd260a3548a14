// Thrift compact protocol: a bounded reader and a writer (internal to the
// parquet module). Only what Parquet metadata needs: structs, lists, maps,
// binary/string, integers, bools and doubles.
//
// The reader never reads past its buffer: every read checks the bytes that
// remain, collection sizes are checked against the remaining bytes before a
// caller could allocate, and struct/collection nesting is limited. Errors are
// kCorruption with the byte offset; running out of input says "truncated".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "infercost/status.h"

namespace infercost::parquet::thrift {

// Compact-protocol wire types (the 4-bit type nibble).
enum class CType : uint8_t {
  kStop = 0,
  kBoolTrue = 1,
  kBoolFalse = 2,
  kByte = 3,
  kI16 = 4,
  kI32 = 5,
  kI64 = 6,
  kDouble = 7,
  kBinary = 8,
  kList = 9,
  kSet = 10,
  kMap = 11,
  kStruct = 12,
};

// "i32", "binary", "struct", ...; "type(<n>)" for invalid nibbles.
std::string ctype_name(CType type);
// True for kBoolTrue/kBoolFalse (a bool field or list element).
inline bool is_bool(CType t) {
  return t == CType::kBoolTrue || t == CType::kBoolFalse;
}
// True for the integer wire types (byte, i16, i32, i64).
inline bool is_integer(CType t) {
  return t == CType::kByte || t == CType::kI16 || t == CType::kI32 || t == CType::kI64;
}

inline constexpr int kDefaultMaxDepth = 64;

class CompactReader {
 public:
  CompactReader(const uint8_t* data, size_t size, int max_depth = kDefaultMaxDepth)
      : data_(data), size_(size), max_depth_(max_depth) {}

  size_t position() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }
  int depth() const { return depth_; }

  // Struct framing. struct_begin fails past the depth limit.
  Status struct_begin();
  Status struct_end();
  // Next field of the current struct. *type == kStop ends the struct (*id is
  // then 0). For bool fields the value is in the type: use field_bool_value.
  Status read_field_header(int16_t* id, CType* type);
  static bool field_bool_value(CType type) { return type == CType::kBoolTrue; }

  // Collection headers. The count is checked against the remaining bytes
  // (every element takes at least one byte), so count <= remaining().
  // Each list/map header must be followed by its elements and then
  // collection_end() (it tracks nesting depth).
  Status read_list_header(CType* elem_type, uint32_t* count);
  Status read_map_header(CType* key_type, CType* value_type, uint32_t* count);
  void collection_end() {
    if (depth_ > 0) --depth_;
  }

  // Scalars. Integers are zigzag varints, range-checked for their width.
  Status read_varint(uint64_t* value);
  Status read_byte(int8_t* value);
  Status read_i16(int16_t* value);
  Status read_i32(int32_t* value);
  Status read_i64(int64_t* value);
  // Any integer wire type (byte, i16, i32, i64) as int64.
  Status read_integer(CType type, int64_t* value);
  Status read_double(double* value);
  // Length-prefixed bytes; the length is checked before allocating.
  Status read_binary(std::string* value);
  Status read_binary_view(std::string_view* value);
  // A bool list element (one byte: 1 true; 0 or 2 false).
  Status read_bool_element(bool* value);

  // Skips one value of `type` (nested structs, lists, sets and maps too).
  Status skip(CType type);

  // Whether a read failed because the input ended inside a value (more
  // bytes might have completed it), as opposed to bytes that are wrong.
  bool ran_out() const { return ran_out_; }

 private:
  Status truncated(size_t need);
  Status error(std::string_view what) const;
  Status check_collection_type(CType t) const;
  // Skips one element of a list, set or map of `type` (bools there are bytes).
  Status skip_element(CType type);
  // A zigzag varint that must fit T (int16_t, int32_t): out of range is an
  // error naming the type `name`, the position left at the varint.
  template <typename T>
  Status read_zigzag(T* value, const char* name);

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  int max_depth_;
  int depth_ = 0;
  std::vector<int16_t> last_field_id_;
  int16_t last_id_ = 0;
  bool ran_out_ = false;
};

class CompactWriter {
 public:
  void struct_begin();
  // Writes the stop byte and restores the enclosing struct's field state.
  void struct_end();

  void field_header(int16_t id, CType type);
  void field_bool(int16_t id, bool value);
  // A field of each type: its header, then the value by the write_ of the type.
  void field_byte(int16_t id, int8_t value) { field_of(id, CType::kByte, &CompactWriter::write_byte, value); }
  void field_i16(int16_t id, int16_t value) { field_of(id, CType::kI16, &CompactWriter::write_i16, value); }
  void field_i32(int16_t id, int32_t value) { field_of(id, CType::kI32, &CompactWriter::write_i32, value); }
  void field_i64(int16_t id, int64_t value) { field_of(id, CType::kI64, &CompactWriter::write_i64, value); }
  void field_double(int16_t id, double value) {
    field_of(id, CType::kDouble, &CompactWriter::write_double, value);
  }
  void field_binary(int16_t id, std::string_view value) {
    field_of(id, CType::kBinary, &CompactWriter::write_binary, value);
  }
  // Field header plus struct_begin(); close with struct_end().
  void field_struct_begin(int16_t id);
  // Field header plus list header; then write `size` elements.
  void field_list_begin(int16_t id, CType elem_type, uint32_t size);

  void list_begin(CType elem_type, uint32_t size);
  void map_begin(CType key_type, CType value_type, uint32_t size);

  void write_varint(uint64_t value);
  void write_byte(int8_t value);
  void write_i16(int16_t value);
  void write_i32(int32_t value);
  void write_i64(int64_t value);
  void write_double(double value);
  void write_binary(std::string_view value);
  void write_bool_element(bool value);

  const std::string& buffer() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  template <typename T>
  void field_of(int16_t id, CType type, void (CompactWriter::*write)(T), T value) {
    field_header(id, type);
    (this->*write)(value);
  }

  std::string out_;
  std::vector<int16_t> last_field_id_;
  int16_t last_id_ = 0;
};

}  // namespace infercost::parquet::thrift
