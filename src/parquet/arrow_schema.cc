#include "parquet/arrow_schema.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace infercost::parquet {
namespace {

// Schema.fbs: the Type union's members (NONE is 0), Precision, Endianness
// and MetadataVersion; Message.fbs: the MessageHeader union's members.
constexpr uint8_t kArrowTypeInt = 2;
constexpr uint8_t kArrowTypeFloatingPoint = 3;
constexpr uint8_t kArrowTypeUtf8 = 5;
constexpr uint8_t kArrowTypeFixedSizeList = 16;
constexpr int16_t kArrowPrecisionSingle = 1;
constexpr int16_t kArrowPrecisionDouble = 2;
constexpr int16_t kArrowEndiannessLittle = 0;
constexpr int16_t kArrowMetadataV5 = 4;
constexpr uint8_t kArrowMessageSchema = 1;

// Little-endian `size` bytes of `bits` at out[at] (the bytes must exist).
void store_le(std::string& out, size_t at, uint64_t bits, int size) {
  for (int i = 0; i < size; ++i) out[at + i] = static_cast<char>((bits >> (8 * i)) & 0xff);
}

void append_le(std::string& out, uint64_t bits, int size) {
  size_t at = out.size();
  out.resize(at + size);
  store_le(out, at, bits, size);
}

// Zero bytes until out.size() is a multiple of `align` (a power of two):
// FlatBuffers aligns every scalar to its size from the buffer's start.
void pad_to(std::string& out, size_t align) {
  out.resize((out.size() + align - 1) & ~(align - 1), '\0');
}

FlatTable arrow_field(std::string_view name, bool nullable, uint8_t type_id, FlatTable type,
                      std::vector<FlatTable> children = {}) {
  // Field: name 0, nullable 1, type_type 2, type 3, dictionary 4, children 5.
  // Arrow readers require `type` and `children` (empty for primitives).
  FlatTable field;
  field.add_string(0, name);
  field.add_u8(1, nullable ? 1 : 0);
  field.add_u8(2, type_id);
  field.add_table(3, std::move(type));
  field.add_tables(5, std::move(children));
  return field;
}

FlatTable floating_point(int16_t precision) {
  FlatTable t;
  t.add_i16(0, precision);
  return t;
}

FlatTable column_field(const ColumnSpec& spec) {
  switch (spec.kind) {
    case ColumnSpec::Kind::kString: return arrow_field(spec.name, spec.nullable, kArrowTypeUtf8, FlatTable());
    case ColumnSpec::Kind::kInt32:
    case ColumnSpec::Kind::kInt64: {
      FlatTable t;  // Int: bitWidth 0, is_signed 1
      t.add_i32(0, spec.kind == ColumnSpec::Kind::kInt32 ? 32 : 64);
      t.add_u8(1, 1);
      return arrow_field(spec.name, spec.nullable, kArrowTypeInt, std::move(t));
    }
    case ColumnSpec::Kind::kFloat:
      if (spec.list_size > 0) {
        FlatTable t;  // FixedSizeList: listSize 0
        t.add_i32(0, spec.list_size);
        std::vector<FlatTable> children;
        children.push_back(
            arrow_field("element", false, kArrowTypeFloatingPoint, floating_point(kArrowPrecisionSingle)));
        return arrow_field(spec.name, spec.nullable, kArrowTypeFixedSizeList, std::move(t),
                           std::move(children));
      }
      return arrow_field(spec.name, spec.nullable, kArrowTypeFloatingPoint,
                         floating_point(kArrowPrecisionSingle));
    case ColumnSpec::Kind::kDouble:
      return arrow_field(spec.name, spec.nullable, kArrowTypeFloatingPoint,
                         floating_point(kArrowPrecisionDouble));
  }
  return FlatTable();
}

}  // namespace

FlatTable& FlatTable::add_scalar(int slot, int size, uint64_t bits) {
  Field f;
  f.slot = slot;
  f.size = size;
  f.bits = bits;
  fields_.push_back(std::move(f));
  return *this;
}

FlatTable& FlatTable::add_string(int slot, std::string_view value) {
  Field f;
  f.slot = slot;
  f.ref = Ref::kString;
  f.text.assign(value);
  fields_.push_back(std::move(f));
  return *this;
}

FlatTable& FlatTable::add_table(int slot, FlatTable table) {
  Field f;
  f.slot = slot;
  f.ref = Ref::kTable;
  f.tables.push_back(std::move(table));
  fields_.push_back(std::move(f));
  return *this;
}

FlatTable& FlatTable::add_tables(int slot, std::vector<FlatTable> tables) {
  Field f;
  f.slot = slot;
  f.ref = Ref::kTables;
  f.tables = std::move(tables);
  fields_.push_back(std::move(f));
  return *this;
}

// Writes the vtable, then the table, then what its offsets refer to (so
// every offset points forward, as FlatBuffers' unsigned offsets must), and
// returns the table's position.
size_t FlatTable::write(std::string& out) const {
  // Inline: the int32 distance back to the vtable, then the fields from the
  // widest down, each aligned to its size (the table to the widest).
  std::vector<size_t> order(fields_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return fields_[a].size > fields_[b].size; });
  std::vector<size_t> offset(fields_.size());
  size_t inline_size = 4, align = 4;
  int slots = 0;
  for (size_t i : order) {
    const Field& f = fields_[i];
    inline_size = (inline_size + f.size - 1) & ~static_cast<size_t>(f.size - 1);
    offset[i] = inline_size;
    inline_size += f.size;
    align = std::max(align, static_cast<size_t>(f.size));
    slots = std::max(slots, f.slot + 1);
  }
  // vtable: its own size, the table's inline size, each slot's offset (0: absent).
  pad_to(out, 2);
  const size_t vtable = out.size();
  append_le(out, 2 * (2 + slots), 2);
  append_le(out, inline_size, 2);
  std::vector<uint16_t> slot_offsets(slots, 0);
  for (size_t i = 0; i < fields_.size(); ++i)
    slot_offsets[fields_[i].slot] = static_cast<uint16_t>(offset[i]);
  for (uint16_t o : slot_offsets) append_le(out, o, 2);

  pad_to(out, align);
  const size_t table = out.size();
  out.resize(table + inline_size, '\0');
  store_le(out, table, table - vtable, 4);  // the vtable is at table - this
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i].ref == Ref::kNone) store_le(out, table + offset[i], fields_[i].bits, fields_[i].size);
  }
  for (size_t i = 0; i < fields_.size(); ++i) {
    const Field& f = fields_[i];
    const size_t at = table + offset[i];
    size_t target = 0;
    switch (f.ref) {
      case Ref::kNone: continue;
      case Ref::kString:
        pad_to(out, 4);
        target = out.size();
        append_le(out, f.text.size(), 4);
        out.append(f.text);
        out.push_back('\0');
        break;
      case Ref::kTable: target = f.tables[0].write(out); break;
      case Ref::kTables: {
        pad_to(out, 4);
        target = out.size();
        append_le(out, f.tables.size(), 4);
        out.resize(out.size() + 4 * f.tables.size(), '\0');
        for (size_t k = 0; k < f.tables.size(); ++k) {
          const size_t element = target + 4 + 4 * k;
          store_le(out, element, f.tables[k].write(out) - element, 4);
        }
        break;
      }
    }
    store_le(out, at, target - at, 4);
  }
  return table;
}

std::string FlatTable::finish() const {
  std::string out(4, '\0');  // the root table's offset
  store_le(out, 0, write(out), 4);
  return out;
}

std::string arrow_schema_message(const std::vector<ColumnSpec>& schema) {
  std::vector<FlatTable> fields;
  fields.reserve(schema.size());
  for (const ColumnSpec& spec : schema) fields.push_back(column_field(spec));
  FlatTable arrow_schema;  // Schema: endianness 0, fields 1
  arrow_schema.add_i16(0, kArrowEndiannessLittle);
  arrow_schema.add_tables(1, std::move(fields));
  FlatTable message;  // Message: version 0, header_type 1, header 2, bodyLength 3
  message.add_i16(0, kArrowMetadataV5);
  message.add_u8(1, kArrowMessageSchema);
  message.add_table(2, std::move(arrow_schema));
  message.add_i64(3, 0);
  const std::string flatbuffer = message.finish();
  // The length counts the padding that ends the message on 8 bytes.
  const size_t padded = ((8 + flatbuffer.size() + 7) & ~size_t{7}) - 8;
  std::string out;
  append_le(out, 0xffffffffu, 4);
  append_le(out, padded, 4);
  out.append(flatbuffer);
  out.resize(8 + padded, '\0');
  return out;
}

std::string base64_encode(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = static_cast<uint8_t>(bytes[i]) << 16 | static_cast<uint8_t>(bytes[i + 1]) << 8 |
                 static_cast<uint8_t>(bytes[i + 2]);
    for (int k = 3; k >= 0; --k) out.push_back(kAlphabet[(v >> (6 * k)) & 63]);
  }
  if (size_t left = bytes.size() - i; left > 0) {
    uint32_t v = static_cast<uint8_t>(bytes[i]) << 16;
    if (left == 2) v |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(left == 2 ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::string arrow_schema_metadata(const std::vector<ColumnSpec>& schema) {
  return base64_encode(arrow_schema_message(schema));
}

}  // namespace infercost::parquet
