#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "core/json_text.h"
#include "core/utf8.h"
#include "parquet/reader.h"

namespace infercost::parquet {
namespace {

// JSON string; bytes >= 0x80 are copied when `utf8`, else escaped as \u00XX.
void append_json_string(std::string_view s, bool utf8, std::string& out) {
  if (utf8) {
    infercost::append_json_string(out, s);
  } else {
    infercost::append_json_bytes(out, s);
  }
}

bool is_text(const SchemaElement& e) {
  switch (e.logical_type.kind) {
    case LogicalType::kString:
    case LogicalType::kEnum:
    case LogicalType::kJson: return true;
    default: break;
  }
  if (e.converted_type.has_value()) {
    switch (*e.converted_type) {
      case ConvertedType::kUtf8:
      case ConvertedType::kEnum:
      case ConvertedType::kJson: return true;
      default: break;
    }
  }
  return false;
}

bool is_unsigned(const SchemaElement& e) {
  if (e.logical_type.kind == LogicalType::kInteger) return !e.logical_type.integer_signed;
  if (e.converted_type.has_value()) {
    switch (*e.converted_type) {
      case ConvertedType::kUint8:
      case ConvertedType::kUint16:
      case ConvertedType::kUint32:
      case ConvertedType::kUint64: return true;
      default: break;
    }
  }
  return false;
}

void append_hex(std::string_view bytes, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (unsigned char c : bytes) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
}

void append_double(double v, bool is_float, std::string& out) {
  if (std::isnan(v)) {
    out += "\"NaN\"";
  } else if (std::isinf(v)) {
    out += v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  } else if (is_float) {
    fmt::format_to(std::back_inserter(out), "{}", static_cast<float>(v));
  } else {
    fmt::format_to(std::back_inserter(out), "{}", v);
  }
}

void append_int(const SchemaElement& e, PhysicalType type, int64_t v, std::string& out) {
  if (type == PhysicalType::kBoolean) {
    out += v ? "true" : "false";
  } else if (is_unsigned(e)) {
    uint64_t u = type == PhysicalType::kInt32 ? static_cast<uint32_t>(v) : static_cast<uint64_t>(v);
    fmt::format_to(std::back_inserter(out), "{}", u);
  } else {
    fmt::format_to(std::back_inserter(out), "{}", v);
  }
}

// A statistics value (PLAIN bytes of one value) for describe_file.
std::string render_stat(const ColumnDescriptor& column, const std::string& bytes) {
  const SchemaElement& e = *column.element;
  std::string out;
  auto le = [&](size_t width) {
    uint64_t v = 0;
    for (size_t i = 0; i < width; ++i)
      v |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
    return v;
  };
  switch (*e.type) {
    case PhysicalType::kBoolean:
      if (bytes.size() >= 1) return bytes[0] ? "true" : "false";
      break;
    case PhysicalType::kInt32:
      if (bytes.size() == 4) {
        append_int(e, PhysicalType::kInt32, static_cast<int32_t>(static_cast<uint32_t>(le(4))), out);
        return out;
      }
      break;
    case PhysicalType::kInt64:
      if (bytes.size() == 8) {
        append_int(e, PhysicalType::kInt64, static_cast<int64_t>(le(8)), out);
        return out;
      }
      break;
    case PhysicalType::kFloat:
      if (bytes.size() == 4) {
        uint32_t bits = static_cast<uint32_t>(le(4));
        float f;
        std::memcpy(&f, &bits, 4);
        append_double(f, true, out);
        return out;
      }
      break;
    case PhysicalType::kDouble:
      if (bytes.size() == 8) {
        uint64_t bits = le(8);
        double d;
        std::memcpy(&d, &bits, 8);
        append_double(d, false, out);
        return out;
      }
      break;
    default: {
      constexpr size_t kMaxShown = 64;
      std::string_view view(bytes);
      bool cut = view.size() > kMaxShown;
      if (cut) view = view.substr(0, kMaxShown);
      append_json_string(view, is_text(e) && is_valid_utf8(view), out);
      if (cut) out += "...";
      return out;
    }
  }
  out = "0x";
  append_hex(bytes, out);
  return out;
}

std::string element_type(const SchemaElement& e) {
  std::string s;
  if (e.type.has_value()) {
    s = type_name(*e.type);
    if (*e.type == PhysicalType::kFixedLenByteArray) s += fmt::format("({})", e.type_length);
  } else {
    s = "group";
  }
  std::string logical = logical_type_name(e.logical_type);
  if (!logical.empty()) {
    s += " " + logical;
  } else if (e.converted_type.has_value()) {
    s += " " + converted_type_name(*e.converted_type);
  }
  return s;
}

}  // namespace

void append_value_json(const ColumnDescriptor& column, const ColumnValues& values, size_t i,
                       std::string& out) {
  if (i >= values.valid.size() || !values.valid[i]) {
    out += "null";
    return;
  }
  const SchemaElement& e = *column.element;
  switch (values.type) {
    case PhysicalType::kByteArray: {
      // A STRING column holding invalid UTF-8 is escaped too, never emitted as bad JSON.
      std::string_view v = values.strings.at(i);
      append_json_string(v, is_valid_utf8(v), out);
      return;
    }
    case PhysicalType::kFixedLenByteArray: {
      std::string_view v = values.strings.at(i);
      append_json_string(v, is_text(e) && is_valid_utf8(v), out);
      return;
    }
    case PhysicalType::kInt96:
      out.push_back('"');
      append_hex(values.strings.at(i), out);
      out.push_back('"');
      return;
    case PhysicalType::kFloat: append_double(values.doubles[i], true, out); return;
    case PhysicalType::kDouble: append_double(values.doubles[i], false, out); return;
    default: append_int(e, values.type, values.ints[i], out); return;
  }
}

std::string describe_file(const ParquetFile& file) {
  const FileMetaData& md = file.metadata();
  std::string out;
  auto w = std::back_inserter(out);
  fmt::format_to(w, "file: {} ({} bytes)\n", file.path(), file.file_size());
  fmt::format_to(w, "rows: {}\nrow groups: {}\nformat version: {}\n", md.num_rows, md.row_groups.size(),
                 md.version);
  fmt::format_to(w, "created_by: {}\n", md.created_by.value_or("(not set)"));
  if (!md.key_value_metadata.empty()) {
    out += "key-value metadata keys:";
    for (const auto& kv : md.key_value_metadata) {
      out += " ";
      out += kv.first;
    }
    out += "\n";
  }
  out += "schema:\n";
  // Leaves in schema order, to annotate each with its levels.
  const auto& columns = file.columns();
  size_t leaf = 0;
  std::function<void(size_t&, int)> walk = [&](size_t& index, int depth) {
    if (index >= md.schema.size()) return;
    const SchemaElement& e = md.schema[index++];
    std::string rep = e.repetition.has_value() ? repetition_name(*e.repetition) : std::string("REQUIRED");
    fmt::format_to(w, "{:{}}{} {} {}", "", 2 * depth, depth == 0 ? "message" : rep, e.name, element_type(e));
    if (e.num_children == 0 && e.type.has_value() && leaf < columns.size()) {
      const ColumnDescriptor& c = columns[leaf++];
      fmt::format_to(w, "  [column {}, max def {}, max rep {}{}]", c.leaf_index, c.max_definition_level,
                     c.max_repetition_level, c.flat ? "" : ", nested: not readable");
    }
    out += "\n";
    for (int32_t k = 0; k < e.num_children && index < md.schema.size(); ++k) walk(index, depth + 1);
  };
  size_t index = 0;
  walk(index, 0);
  for (size_t g = 0; g < md.row_groups.size(); ++g) {
    const RowGroup& group = md.row_groups[g];
    fmt::format_to(w, "row group {}: {} rows, {} bytes\n", g, group.num_rows, group.total_byte_size);
    for (size_t c = 0; c < group.columns.size() && c < columns.size(); ++c) {
      const ColumnChunk& chunk = group.columns[c];
      fmt::format_to(w, "  column '{}':", columns[c].path);
      if (!chunk.meta_data.has_value()) {
        out += chunk.has_crypto_metadata ? " encrypted\n" : " (no metadata)\n";
        continue;
      }
      const ColumnMetaData& m = *chunk.meta_data;
      fmt::format_to(w, " {}, encodings", codec_name(m.codec));
      for (size_t k = 0; k < m.encodings.size(); ++k)
        fmt::format_to(w, "{}{}", k ? "," : " ", encoding_name(m.encodings[k]));
      if (m.encodings.empty()) out += " (none listed)";
      fmt::format_to(w, ", {} -> {} bytes, {} values", m.total_compressed_size, m.total_uncompressed_size,
                     m.num_values);
      if (m.statistics.has_value()) {
        const Statistics& s = *m.statistics;
        if (s.null_count.has_value()) fmt::format_to(w, ", {} nulls", *s.null_count);
        const std::optional<std::string>& min = s.min_value.has_value() ? s.min_value : s.min;
        const std::optional<std::string>& max = s.max_value.has_value() ? s.max_value : s.max;
        if (min.has_value()) fmt::format_to(w, ", min {}", render_stat(columns[c], *min));
        if (max.has_value()) fmt::format_to(w, ", max {}", render_stat(columns[c], *max));
      }
      if (!chunk.file_path.empty()) fmt::format_to(w, ", in file '{}'", chunk.file_path);
      out += "\n";
    }
  }
  return out;
}

}  // namespace infercost::parquet
