#include "parquet/thrift_compact.h"

#include <fmt/format.h>

#include <cstring>
#include <limits>
#include <type_traits>

namespace infercost::parquet::thrift {

std::string ctype_name(CType type) {
  switch (type) {
    case CType::kStop: return "stop";
    case CType::kBoolTrue:
    case CType::kBoolFalse: return "bool";
    case CType::kByte: return "byte";
    case CType::kI16: return "i16";
    case CType::kI32: return "i32";
    case CType::kI64: return "i64";
    case CType::kDouble: return "double";
    case CType::kBinary: return "binary";
    case CType::kList: return "list";
    case CType::kSet: return "set";
    case CType::kMap: return "map";
    case CType::kStruct: return "struct";
  }
  return fmt::format("type({})", static_cast<int>(type));
}

namespace {

uint64_t zigzag_encode(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t zigzag_decode(uint64_t v) {
  return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1));
}

bool valid_element_type(CType t) {
  return static_cast<uint8_t>(t) >= 1 && static_cast<uint8_t>(t) <= 12;
}

// The fewest bytes one value of this type can take on the wire.
size_t min_wire_size(CType t) {
  return t == CType::kDouble ? 8 : 1;
}

}  // namespace

// ---- CompactReader ----

Status CompactReader::truncated(size_t need) {
  ran_out_ = true;
  return corruption(
      fmt::format("truncated: need {} byte(s) at offset {}, {} remain", need, pos_, size_ - pos_));
}

Status CompactReader::error(std::string_view what) const {
  return corruption(fmt::format("{} at offset {}", what, pos_));
}

Status CompactReader::struct_begin() {
  if (depth_ >= max_depth_) return error(fmt::format("nesting deeper than {}", max_depth_));
  ++depth_;
  last_field_id_.push_back(last_id_);
  last_id_ = 0;
  return Status::ok_status();
}

Status CompactReader::struct_end() {
  if (last_field_id_.empty()) return error("struct end without a struct");
  last_id_ = last_field_id_.back();
  last_field_id_.pop_back();
  --depth_;
  return Status::ok_status();
}

Status CompactReader::read_field_header(int16_t* id, CType* type) {
  if (pos_ >= size_) return truncated(1);
  uint8_t b = data_[pos_++];
  if (b == 0) {
    *id = 0;
    *type = CType::kStop;
    return Status::ok_status();
  }
  auto t = static_cast<CType>(b & 0x0f);
  if (!valid_element_type(t)) {
    --pos_;
    return error(fmt::format("invalid field type {}", static_cast<int>(b & 0x0f)));
  }
  int delta = b >> 4;
  int32_t new_id;
  if (delta == 0) {
    int16_t explicit_id = 0;
    INFERCOST_RETURN_IF_ERROR(read_i16(&explicit_id));
    new_id = explicit_id;
  } else {
    new_id = static_cast<int32_t>(last_id_) + delta;
    if (new_id > std::numeric_limits<int16_t>::max()) return error("field id overflows i16");
  }
  last_id_ = static_cast<int16_t>(new_id);
  *id = last_id_;
  *type = t;
  return Status::ok_status();
}

Status CompactReader::check_collection_type(CType t) const {
  if (!valid_element_type(t)) {
    return error(fmt::format("invalid element type {}", static_cast<int>(t)));
  }
  return Status::ok_status();
}

Status CompactReader::read_list_header(CType* elem_type, uint32_t* count) {
  if (depth_ >= max_depth_) return error(fmt::format("nesting deeper than {}", max_depth_));
  if (pos_ >= size_) return truncated(1);
  size_t start = pos_;
  uint8_t b = data_[pos_++];
  uint64_t n = b >> 4;
  CType t = static_cast<CType>(b & 0x0f);
  if (n == 15) {
    INFERCOST_RETURN_IF_ERROR(read_varint(&n));
    if (n > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
      pos_ = start;
      return error(fmt::format("list size {} is negative or too large", n));
    }
  }
  if (n > 0) {
    if (!valid_element_type(t)) {
      pos_ = start;
      return check_collection_type(t);
    }
    // Division avoids overflow of n * min size.
    if (n > remaining() / min_wire_size(t)) {
      pos_ = start;
      return error(fmt::format("list of {} {} elements needs more than the {} bytes that remain", n,
                               ctype_name(t), size_ - start - 1));
    }
  }
  ++depth_;
  *elem_type = t;
  *count = static_cast<uint32_t>(n);
  return Status::ok_status();
}

Status CompactReader::read_map_header(CType* key_type, CType* value_type, uint32_t* count) {
  if (depth_ >= max_depth_) return error(fmt::format("nesting deeper than {}", max_depth_));
  size_t start = pos_;
  uint64_t n = 0;
  INFERCOST_RETURN_IF_ERROR(read_varint(&n));
  CType kt = CType::kStop, vt = CType::kStop;
  if (n > 0) {
    if (n > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
      pos_ = start;
      return error(fmt::format("map size {} is negative or too large", n));
    }
    if (pos_ >= size_) return truncated(1);
    uint8_t b = data_[pos_++];
    kt = static_cast<CType>(b >> 4);
    vt = static_cast<CType>(b & 0x0f);
    if (!valid_element_type(kt)) return check_collection_type(kt);
    if (!valid_element_type(vt)) return check_collection_type(vt);
    size_t per_entry = min_wire_size(kt) + min_wire_size(vt);
    if (n > remaining() / per_entry) {
      pos_ = start;
      return error(
          fmt::format("map of {} entries needs more than the {} bytes that remain", n, size_ - start));
    }
  }
  ++depth_;
  *key_type = kt;
  *value_type = vt;
  *count = static_cast<uint32_t>(n);
  return Status::ok_status();
}

Status CompactReader::read_varint(uint64_t* value) {
  uint64_t result = 0;
  size_t start = pos_;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= size_) {
      size_t need = pos_ - start + 1;
      pos_ = start;
      return truncated(need);
    }
    uint8_t b = data_[pos_++];
    // The 10th byte may only carry the top bit of a 64-bit value.
    if (shift == 63 && (b & 0x7e) != 0) {
      pos_ = start;
      return error("varint overflows 64 bits");
    }
    result |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *value = result;
      return Status::ok_status();
    }
  }
  pos_ = start;
  return error("varint longer than 10 bytes");
}

Status CompactReader::read_byte(int8_t* value) {
  if (pos_ >= size_) return truncated(1);
  *value = static_cast<int8_t>(data_[pos_++]);
  return Status::ok_status();
}

template <typename T>
Status CompactReader::read_zigzag(T* value, const char* name) {
  size_t start = pos_;
  uint64_t v = 0;
  INFERCOST_RETURN_IF_ERROR(read_varint(&v));
  int64_t d = zigzag_decode(v);
  if (v > std::numeric_limits<std::make_unsigned_t<T>>::max()) {
    pos_ = start;
    return error(fmt::format("{} value {} out of range", name, d));
  }
  *value = static_cast<T>(d);
  return Status::ok_status();
}

Status CompactReader::read_i16(int16_t* value) {
  return read_zigzag(value, "i16");
}

Status CompactReader::read_i32(int32_t* value) {
  return read_zigzag(value, "i32");
}

Status CompactReader::read_i64(int64_t* value) {
  uint64_t v = 0;
  INFERCOST_RETURN_IF_ERROR(read_varint(&v));
  *value = zigzag_decode(v);
  return Status::ok_status();
}

Status CompactReader::read_integer(CType type, int64_t* value) {
  // The value `read` reads, widened to int64.
  auto widened = [&]<typename T>(Status (CompactReader::*read)(T*)) {
    T v = 0;
    INFERCOST_RETURN_IF_ERROR((this->*read)(&v));
    *value = v;
    return Status::ok_status();
  };
  switch (type) {
    case CType::kByte: return widened(&CompactReader::read_byte);
    case CType::kI16: return widened(&CompactReader::read_i16);
    case CType::kI32: return widened(&CompactReader::read_i32);
    case CType::kI64: return read_i64(value);
    default: return error(fmt::format("expected an integer, got {}", ctype_name(type)));
  }
}

Status CompactReader::read_double(double* value) {
  if (remaining() < 8) return truncated(8);
  // The compact protocol stores doubles little-endian.
  uint64_t bits = 0;
  for (int i = 7; i >= 0; --i) bits = (bits << 8) | data_[pos_ + i];
  std::memcpy(value, &bits, 8);
  pos_ += 8;
  return Status::ok_status();
}

Status CompactReader::read_binary_view(std::string_view* value) {
  size_t start = pos_;
  uint64_t n = 0;
  INFERCOST_RETURN_IF_ERROR(read_varint(&n));
  if (n > remaining()) {
    ran_out_ = true;
    Status st = corruption(
        fmt::format("truncated: binary of {} bytes at offset {}, {} remain", n, start, remaining()));
    pos_ = start;
    return st;
  }
  *value = std::string_view(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(n));
  pos_ += static_cast<size_t>(n);
  return Status::ok_status();
}

Status CompactReader::read_binary(std::string* value) {
  std::string_view v;
  INFERCOST_RETURN_IF_ERROR(read_binary_view(&v));
  value->assign(v.data(), v.size());
  return Status::ok_status();
}

Status CompactReader::read_bool_element(bool* value) {
  if (pos_ >= size_) return truncated(1);
  uint8_t b = data_[pos_++];
  if (b > 2) {
    --pos_;
    return error(fmt::format("invalid bool byte {}", b));
  }
  *value = b == 1;
  return Status::ok_status();
}

Status CompactReader::skip(CType type) {
  switch (type) {
    case CType::kBoolTrue:
    case CType::kBoolFalse:
      // A bool field carries its value in its header, so there is nothing
      // to consume; bool list elements are handled by the list case.
      return Status::ok_status();
    case CType::kByte: {
      int8_t v = 0;
      return read_byte(&v);
    }
    case CType::kI16:
    case CType::kI32:
    case CType::kI64: {
      uint64_t v = 0;
      return read_varint(&v);
    }
    case CType::kDouble: {
      if (remaining() < 8) return truncated(8);
      pos_ += 8;
      return Status::ok_status();
    }
    case CType::kBinary: {
      std::string_view v;
      return read_binary_view(&v);
    }
    case CType::kStruct: {
      INFERCOST_RETURN_IF_ERROR(struct_begin());
      while (true) {
        int16_t id = 0;
        CType t = CType::kStop;
        INFERCOST_RETURN_IF_ERROR(read_field_header(&id, &t));
        if (t == CType::kStop) break;
        INFERCOST_RETURN_IF_ERROR(skip(t));
      }
      return struct_end();
    }
    case CType::kList:
    case CType::kSet: {
      CType et = CType::kStop;
      uint32_t n = 0;
      INFERCOST_RETURN_IF_ERROR(read_list_header(&et, &n));
      for (uint32_t i = 0; i < n; ++i) INFERCOST_RETURN_IF_ERROR(skip_element(et));
      collection_end();
      return Status::ok_status();
    }
    case CType::kMap: {
      CType kt = CType::kStop, vt = CType::kStop;
      uint32_t n = 0;
      INFERCOST_RETURN_IF_ERROR(read_map_header(&kt, &vt, &n));
      for (uint32_t i = 0; i < n; ++i) {
        INFERCOST_RETURN_IF_ERROR(skip_element(kt));
        INFERCOST_RETURN_IF_ERROR(skip_element(vt));
      }
      collection_end();
      return Status::ok_status();
    }
    case CType::kStop: break;
  }
  return error(fmt::format("cannot skip a value of {}", ctype_name(type)));
}

Status CompactReader::skip_element(CType type) {
  if (!is_bool(type)) return skip(type);
  bool b = false;
  return read_bool_element(&b);
}

// ---- CompactWriter ----

void CompactWriter::struct_begin() {
  last_field_id_.push_back(last_id_);
  last_id_ = 0;
}

void CompactWriter::struct_end() {
  out_.push_back('\0');
  if (!last_field_id_.empty()) {
    last_id_ = last_field_id_.back();
    last_field_id_.pop_back();
  }
}

void CompactWriter::field_header(int16_t id, CType type) {
  int delta = static_cast<int>(id) - static_cast<int>(last_id_);
  if (delta > 0 && delta <= 15) {
    out_.push_back(static_cast<char>((delta << 4) | static_cast<int>(type)));
  } else {
    out_.push_back(static_cast<char>(type));
    write_i16(id);
  }
  last_id_ = id;
}

void CompactWriter::field_bool(int16_t id, bool value) {
  field_header(id, value ? CType::kBoolTrue : CType::kBoolFalse);
}
void CompactWriter::field_struct_begin(int16_t id) {
  field_header(id, CType::kStruct);
  struct_begin();
}
void CompactWriter::field_list_begin(int16_t id, CType elem_type, uint32_t size) {
  field_header(id, CType::kList);
  list_begin(elem_type, size);
}

void CompactWriter::list_begin(CType elem_type, uint32_t size) {
  // Bool elements are conventionally announced as type 1.
  if (elem_type == CType::kBoolFalse) elem_type = CType::kBoolTrue;
  if (size < 15) {
    out_.push_back(static_cast<char>((size << 4) | static_cast<uint32_t>(elem_type)));
  } else {
    out_.push_back(static_cast<char>(0xf0 | static_cast<uint32_t>(elem_type)));
    write_varint(size);
  }
}

void CompactWriter::map_begin(CType key_type, CType value_type, uint32_t size) {
  write_varint(size);
  if (size > 0) {
    out_.push_back(static_cast<char>((static_cast<int>(key_type) << 4) | static_cast<int>(value_type)));
  }
}

void CompactWriter::write_varint(uint64_t value) {
  while (value >= 0x80) {
    out_.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out_.push_back(static_cast<char>(value));
}

void CompactWriter::write_byte(int8_t value) {
  out_.push_back(static_cast<char>(value));
}
void CompactWriter::write_i16(int16_t value) {
  write_varint(zigzag_encode(value));
}
void CompactWriter::write_i32(int32_t value) {
  write_varint(zigzag_encode(value));
}
void CompactWriter::write_i64(int64_t value) {
  write_varint(zigzag_encode(value));
}

void CompactWriter::write_double(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, 8);
  for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

void CompactWriter::write_binary(std::string_view value) {
  write_varint(value.size());
  out_.append(value.data(), value.size());
}

void CompactWriter::write_bool_element(bool value) {
  out_.push_back(static_cast<char>(value ? 1 : 2));
}

}  // namespace infercost::parquet::thrift
