#include "parquet/metadata.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "parquet/thrift_compact.h"

namespace infercost::parquet {

namespace {

using thrift::CompactReader;
using thrift::CompactWriter;
using thrift::CType;

// Field ids below follow parquet-format's parquet.thrift.

// Wraps the compact reader with the "footer: Struct.field: " error context.
class Parser {
 public:
  Parser(const uint8_t* data, size_t size, std::string_view where) : r_(data, size), where_(where) {}

  CompactReader& reader() { return r_; }

  Status fail(std::string_view st, std::string_view field, std::string_view what) const {
    return corruption(fmt::format("{}: {}.{}: {}", where_, st, field, what));
  }
  Status fail(std::string_view st, std::string_view field, const Status& s) const {
    return fail(st, field, std::string_view(s.message()));
  }

  // Calls on_field(id, type) for every field of a struct; on_field must
  // consume the value (skip_field for fields it does not know).
  template <typename F>
  Status parse_struct(std::string_view st, F&& on_field) {
    Status s = r_.struct_begin();
    if (!s.ok()) return fail(st, "(struct)", s);
    int16_t last = 0;
    while (true) {
      int16_t id = 0;
      CType t = CType::kStop;
      s = r_.read_field_header(&id, &t);
      if (!s.ok()) return fail(st, fmt::format("(field after id {})", last), s);
      if (t == CType::kStop) break;
      last = id;
      INFERCOST_RETURN_IF_ERROR(on_field(id, t));
    }
    s = r_.struct_end();
    if (!s.ok()) return fail(st, "(struct)", s);
    return Status::ok_status();
  }

  Status skip_field(std::string_view st, int16_t id, CType t) {
    Status s = r_.skip(t);
    if (!s.ok()) return fail(st, fmt::format("(field {})", id), s);
    return Status::ok_status();
  }

  Status expect(std::string_view st, std::string_view field, CType t, CType want) const {
    if (t == want || (thrift::is_bool(t) && thrift::is_bool(want))) return Status::ok_status();
    return fail(st, field,
                fmt::format("expected {}, got {}", thrift::ctype_name(want), thrift::ctype_name(t)));
  }

  template <typename Int>
  Status integer(std::string_view st, std::string_view field, CType t, Int* out) {
    if (!thrift::is_integer(t)) {
      return fail(st, field, fmt::format("expected an integer, got {}", thrift::ctype_name(t)));
    }
    int64_t v = 0;
    Status s = r_.read_integer(t, &v);
    if (!s.ok()) return fail(st, field, s);
    if (v < std::numeric_limits<Int>::min() || v > std::numeric_limits<Int>::max()) {
      return fail(st, field, fmt::format("value {} out of range", v));
    }
    *out = static_cast<Int>(v);
    return Status::ok_status();
  }

  template <typename Int>
  Status integer(std::string_view st, std::string_view field, CType t, std::optional<Int>* out) {
    Int v{};
    INFERCOST_RETURN_IF_ERROR(integer(st, field, t, &v));
    *out = v;
    return Status::ok_status();
  }

  template <typename Enum>
  Status enumeration(std::string_view st, std::string_view field, CType t, Enum* out) {
    int32_t v = 0;
    INFERCOST_RETURN_IF_ERROR(integer(st, field, t, &v));
    *out = static_cast<Enum>(v);
    return Status::ok_status();
  }

  Status boolean(std::string_view st, std::string_view field, CType t, bool* out) {
    INFERCOST_RETURN_IF_ERROR(expect(st, field, t, CType::kBoolTrue));
    *out = CompactReader::field_bool_value(t);
    return Status::ok_status();
  }

  Status binary(std::string_view st, std::string_view field, CType t, std::string* out) {
    INFERCOST_RETURN_IF_ERROR(expect(st, field, t, CType::kBinary));
    Status s = r_.read_binary(out);
    if (!s.ok()) return fail(st, field, s);
    return Status::ok_status();
  }

  Status binary(std::string_view st, std::string_view field, CType t, std::optional<std::string>* out) {
    std::string v;
    INFERCOST_RETURN_IF_ERROR(binary(st, field, t, &v));
    *out = std::move(v);
    return Status::ok_status();
  }

  // Reads a list field whose elements each go through read_elem(CType).
  template <typename F>
  Status list(std::string_view st, std::string_view field, CType t, F&& read_elem) {
    INFERCOST_RETURN_IF_ERROR(expect(st, field, t, CType::kList));
    CType et = CType::kStop;
    uint32_t n = 0;
    Status s = r_.read_list_header(&et, &n);
    if (!s.ok()) return fail(st, field, s);
    for (uint32_t i = 0; i < n; ++i) INFERCOST_RETURN_IF_ERROR(read_elem(et));
    r_.collection_end();
    return Status::ok_status();
  }

  Status missing(std::string_view st, uint32_t seen,
                 std::initializer_list<std::pair<int, const char*>> required) {
    std::string names;
    for (const auto& [bit, name] : required) {
      if ((seen & (1u << bit)) == 0) {
        if (!names.empty()) names += ", ";
        names += name;
      }
    }
    if (names.empty()) return Status::ok_status();
    return corruption(fmt::format("{}: {}: required field(s) missing: {}", where_, st, names));
  }

 private:
  CompactReader r_;
  std::string where_;
};

// Bounded reserve: counts are already checked against the input, but the
// in-memory structs can be much larger than their wire form.
template <typename T>
void reserve_some(std::vector<T>& v, uint32_t n) {
  v.reserve(std::min<uint32_t>(n, 1024));
}

Status parse_statistics(Parser& p, std::string_view st, Statistics* out) {
  return p.parse_struct(st, [&](int16_t id, CType t) -> Status {
    switch (id) {
      case 1: return p.binary(st, "max", t, &out->max);
      case 2: return p.binary(st, "min", t, &out->min);
      case 3: return p.integer(st, "null_count", t, &out->null_count);
      case 4: return p.integer(st, "distinct_count", t, &out->distinct_count);
      case 5: return p.binary(st, "max_value", t, &out->max_value);
      case 6: return p.binary(st, "min_value", t, &out->min_value);
      default: return p.skip_field(st, id, t);
    }
  });
}

Status parse_optional_statistics(Parser& p, std::string_view owner, CType t, std::optional<Statistics>* out) {
  INFERCOST_RETURN_IF_ERROR(p.expect(owner, "statistics", t, CType::kStruct));
  Statistics s;
  INFERCOST_RETURN_IF_ERROR(parse_statistics(p, "Statistics", &s));
  *out = std::move(s);
  return Status::ok_status();
}

Status parse_time_unit(Parser& p, std::string_view owner, CType t, int32_t* unit) {
  INFERCOST_RETURN_IF_ERROR(p.expect(owner, "unit", t, CType::kStruct));
  return p.parse_struct("TimeUnit", [&](int16_t id, CType ft) -> Status {
    // MILLIS=1, MICROS=2, NANOS=3, each an empty struct.
    *unit = id;
    return p.skip_field("TimeUnit", id, ft);
  });
}

Status parse_logical_type(Parser& p, LogicalType* out) {
  return p.parse_struct("LogicalType", [&](int16_t id, CType t) -> Status {
    if (t != CType::kStruct) return p.skip_field("LogicalType", id, t);
    *out = LogicalType{};
    out->kind = id;
    switch (id) {
      case LogicalType::kDecimal: {
        uint32_t seen = 0;
        INFERCOST_RETURN_IF_ERROR(p.parse_struct("DecimalType", [&](int16_t fid, CType ft) -> Status {
          switch (fid) {
            case 1: seen |= 1u << 1; return p.integer("DecimalType", "scale", ft, &out->decimal_scale);
            case 2:
              seen |= 1u << 2;
              return p.integer("DecimalType", "precision", ft, &out->decimal_precision);
            default: return p.skip_field("DecimalType", fid, ft);
          }
        }));
        return p.missing("DecimalType", seen, {{1, "scale"}, {2, "precision"}});
      }
      case LogicalType::kTime:
      case LogicalType::kTimestamp: {
        const char* st = id == LogicalType::kTime ? "TimeType" : "TimestampType";
        uint32_t seen = 0;
        INFERCOST_RETURN_IF_ERROR(p.parse_struct(st, [&](int16_t fid, CType ft) -> Status {
          switch (fid) {
            case 1: seen |= 1u << 1; return p.boolean(st, "isAdjustedToUTC", ft, &out->is_adjusted_to_utc);
            case 2: seen |= 1u << 2; return parse_time_unit(p, st, ft, &out->time_unit);
            default: return p.skip_field(st, fid, ft);
          }
        }));
        return p.missing(st, seen, {{1, "isAdjustedToUTC"}, {2, "unit"}});
      }
      case LogicalType::kInteger: {
        uint32_t seen = 0;
        INFERCOST_RETURN_IF_ERROR(p.parse_struct("IntType", [&](int16_t fid, CType ft) -> Status {
          switch (fid) {
            case 1: seen |= 1u << 1; return p.integer("IntType", "bitWidth", ft, &out->integer_bit_width);
            case 2: seen |= 1u << 2; return p.boolean("IntType", "isSigned", ft, &out->integer_signed);
            default: return p.skip_field("IntType", fid, ft);
          }
        }));
        return p.missing("IntType", seen, {{1, "bitWidth"}, {2, "isSigned"}});
      }
      default: return p.skip_field("LogicalType", id, t);  // empty or newer structs
    }
  });
}

Status parse_schema_element(Parser& p, SchemaElement* out) {
  constexpr std::string_view st = "SchemaElement";
  uint32_t seen = 0;
  INFERCOST_RETURN_IF_ERROR(p.parse_struct(st, [&](int16_t id, CType t) -> Status {
    switch (id) {
      case 1: {
        PhysicalType v{};
        INFERCOST_RETURN_IF_ERROR(p.enumeration(st, "type", t, &v));
        out->type = v;
        return Status::ok_status();
      }
      case 2: return p.integer(st, "type_length", t, &out->type_length);
      case 3: {
        Repetition v{};
        INFERCOST_RETURN_IF_ERROR(p.enumeration(st, "repetition_type", t, &v));
        out->repetition = v;
        return Status::ok_status();
      }
      case 4: seen |= 1u << 4; return p.binary(st, "name", t, &out->name);
      case 5:
        INFERCOST_RETURN_IF_ERROR(p.integer(st, "num_children", t, &out->num_children));
        if (out->num_children < 0)
          return p.fail(st, "num_children", fmt::format("negative ({})", out->num_children));
        return Status::ok_status();
      case 6: {
        ConvertedType v{};
        INFERCOST_RETURN_IF_ERROR(p.enumeration(st, "converted_type", t, &v));
        out->converted_type = v;
        return Status::ok_status();
      }
      case 7: return p.integer(st, "scale", t, &out->scale);
      case 8: return p.integer(st, "precision", t, &out->precision);
      case 9: return p.integer(st, "field_id", t, &out->field_id);
      case 10:
        INFERCOST_RETURN_IF_ERROR(p.expect(st, "logicalType", t, CType::kStruct));
        return parse_logical_type(p, &out->logical_type);
      default: return p.skip_field(st, id, t);
    }
  }));
  return p.missing(st, seen, {{4, "name"}});
}

Status parse_key_values(Parser& p, std::string_view owner, CType t,
                        std::vector<std::pair<std::string, std::optional<std::string>>>* out) {
  return p.list(owner, "key_value_metadata", t, [&](CType et) -> Status {
    INFERCOST_RETURN_IF_ERROR(p.expect(owner, "key_value_metadata", et, CType::kStruct));
    std::pair<std::string, std::optional<std::string>> kv;
    uint32_t seen = 0;
    INFERCOST_RETURN_IF_ERROR(p.parse_struct("KeyValue", [&](int16_t id, CType ft) -> Status {
      switch (id) {
        case 1: seen |= 1u << 1; return p.binary("KeyValue", "key", ft, &kv.first);
        case 2: return p.binary("KeyValue", "value", ft, &kv.second);
        default: return p.skip_field("KeyValue", id, ft);
      }
    }));
    INFERCOST_RETURN_IF_ERROR(p.missing("KeyValue", seen, {{1, "key"}}));
    out->push_back(std::move(kv));
    return Status::ok_status();
  });
}

Status parse_column_metadata(Parser& p, ColumnMetaData* out) {
  constexpr std::string_view st = "ColumnMetaData";
  uint32_t seen = 0;
  INFERCOST_RETURN_IF_ERROR(p.parse_struct(st, [&](int16_t id, CType t) -> Status {
    if (id >= 1 && id <= 12) seen |= 1u << id;
    switch (id) {
      case 1: return p.enumeration(st, "type", t, &out->type);
      case 2:
        return p.list(st, "encodings", t, [&](CType et) -> Status {
          Encoding e{};
          INFERCOST_RETURN_IF_ERROR(p.enumeration(st, "encodings", et, &e));
          out->encodings.push_back(e);
          return Status::ok_status();
        });
      case 3:
        return p.list(st, "path_in_schema", t, [&](CType et) -> Status {
          std::string s;
          INFERCOST_RETURN_IF_ERROR(p.binary(st, "path_in_schema", et, &s));
          out->path_in_schema.push_back(std::move(s));
          return Status::ok_status();
        });
      case 4: return p.enumeration(st, "codec", t, &out->codec);
      case 5:
        INFERCOST_RETURN_IF_ERROR(p.integer(st, "num_values", t, &out->num_values));
        if (out->num_values < 0)
          return p.fail(st, "num_values", fmt::format("negative ({})", out->num_values));
        return Status::ok_status();
      case 6: return p.integer(st, "total_uncompressed_size", t, &out->total_uncompressed_size);
      case 7: return p.integer(st, "total_compressed_size", t, &out->total_compressed_size);
      case 8: return parse_key_values(p, st, t, &out->key_value_metadata);
      case 9: return p.integer(st, "data_page_offset", t, &out->data_page_offset);
      case 10: return p.integer(st, "index_page_offset", t, &out->index_page_offset);
      case 11: return p.integer(st, "dictionary_page_offset", t, &out->dictionary_page_offset);
      case 12: return parse_optional_statistics(p, st, t, &out->statistics);
      default: return p.skip_field(st, id, t);
    }
  }));
  return p.missing(st, seen,
                   {{1, "type"},
                    {2, "encodings"},
                    {3, "path_in_schema"},
                    {4, "codec"},
                    {5, "num_values"},
                    {6, "total_uncompressed_size"},
                    {7, "total_compressed_size"},
                    {9, "data_page_offset"}});
}

Status parse_column_chunk(Parser& p, ColumnChunk* out) {
  constexpr std::string_view st = "ColumnChunk";
  return p.parse_struct(st, [&](int16_t id, CType t) -> Status {
    switch (id) {
      case 1: return p.binary(st, "file_path", t, &out->file_path);
      // file_offset is required with a default of 0; accept its absence.
      case 2: return p.integer(st, "file_offset", t, &out->file_offset);
      case 3: {
        INFERCOST_RETURN_IF_ERROR(p.expect(st, "meta_data", t, CType::kStruct));
        ColumnMetaData md;
        INFERCOST_RETURN_IF_ERROR(parse_column_metadata(p, &md));
        out->meta_data = std::move(md);
        return Status::ok_status();
      }
      case 8:
        INFERCOST_RETURN_IF_ERROR(p.expect(st, "crypto_metadata", t, CType::kStruct));
        out->has_crypto_metadata = true;
        return p.skip_field(st, id, t);
      case 9:
        INFERCOST_RETURN_IF_ERROR(p.expect(st, "encrypted_column_metadata", t, CType::kBinary));
        out->has_encrypted_column_metadata = true;
        return p.skip_field(st, id, t);
      default: return p.skip_field(st, id, t);
    }
  });
}

Status parse_row_group(Parser& p, RowGroup* out) {
  constexpr std::string_view st = "RowGroup";
  uint32_t seen = 0;
  INFERCOST_RETURN_IF_ERROR(p.parse_struct(st, [&](int16_t id, CType t) -> Status {
    if (id >= 1 && id <= 7) seen |= 1u << id;
    switch (id) {
      case 1:
        return p.list(st, "columns", t, [&](CType et) -> Status {
          INFERCOST_RETURN_IF_ERROR(p.expect(st, "columns", et, CType::kStruct));
          out->columns.emplace_back();
          return parse_column_chunk(p, &out->columns.back());
        });
      case 2: return p.integer(st, "total_byte_size", t, &out->total_byte_size);
      case 3:
        INFERCOST_RETURN_IF_ERROR(p.integer(st, "num_rows", t, &out->num_rows));
        if (out->num_rows < 0) return p.fail(st, "num_rows", fmt::format("negative ({})", out->num_rows));
        return Status::ok_status();
      case 5: return p.integer(st, "file_offset", t, &out->file_offset);
      case 6: return p.integer(st, "total_compressed_size", t, &out->total_compressed_size);
      case 7: return p.integer(st, "ordinal", t, &out->ordinal);
      default: return p.skip_field(st, id, t);
    }
  }));
  return p.missing(st, seen, {{1, "columns"}, {2, "total_byte_size"}, {3, "num_rows"}});
}

Status parse_file_metadata_struct(Parser& p, FileMetaData* out) {
  constexpr std::string_view st = "FileMetaData";
  uint32_t seen = 0;
  INFERCOST_RETURN_IF_ERROR(p.parse_struct(st, [&](int16_t id, CType t) -> Status {
    if (id >= 1 && id <= 9) seen |= 1u << id;
    switch (id) {
      case 1: return p.integer(st, "version", t, &out->version);
      case 2:
        return p.list(st, "schema", t, [&](CType et) -> Status {
          INFERCOST_RETURN_IF_ERROR(p.expect(st, "schema", et, CType::kStruct));
          out->schema.emplace_back();
          return parse_schema_element(p, &out->schema.back());
        });
      case 3:
        INFERCOST_RETURN_IF_ERROR(p.integer(st, "num_rows", t, &out->num_rows));
        if (out->num_rows < 0) return p.fail(st, "num_rows", fmt::format("negative ({})", out->num_rows));
        return Status::ok_status();
      case 4:
        return p.list(st, "row_groups", t, [&](CType et) -> Status {
          INFERCOST_RETURN_IF_ERROR(p.expect(st, "row_groups", et, CType::kStruct));
          out->row_groups.emplace_back();
          return parse_row_group(p, &out->row_groups.back());
        });
      case 5: return parse_key_values(p, st, t, &out->key_value_metadata);
      case 6: return p.binary(st, "created_by", t, &out->created_by);
      case 7:
        return p.list(st, "column_orders", t, [&](CType et) -> Status {
          INFERCOST_RETURN_IF_ERROR(p.expect(st, "column_orders", et, CType::kStruct));
          int32_t kind = 0;
          INFERCOST_RETURN_IF_ERROR(p.parse_struct("ColumnOrder", [&](int16_t union_id, CType ut) -> Status {
            if (kind == 0) kind = union_id;
            return p.skip_field("ColumnOrder", union_id, ut);
          }));
          out->column_orders.push_back(kind);
          return Status::ok_status();
        });
      case 8:
        INFERCOST_RETURN_IF_ERROR(p.expect(st, "encryption_algorithm", t, CType::kStruct));
        out->has_encryption_algorithm = true;
        return p.skip_field(st, id, t);
      default: return p.skip_field(st, id, t);
    }
  }));
  return p.missing(st, seen, {{1, "version"}, {2, "schema"}, {3, "num_rows"}, {4, "row_groups"}});
}

Status non_negative(Parser& p, std::string_view st, std::string_view field, int32_t v) {
  if (v < 0) return p.fail(st, field, fmt::format("negative ({})", v));
  return Status::ok_status();
}

Status parse_data_page_header(Parser& p, DataPageHeader* out) {
  constexpr std::string_view st = "DataPageHeader";
  uint32_t seen = 0;
  INFERCOST_RETURN_IF_ERROR(p.parse_struct(st, [&](int16_t id, CType t) -> Status {
    if (id >= 1 && id <= 5) seen |= 1u << id;
    switch (id) {
      case 1:
        INFERCOST_RETURN_IF_ERROR(p.integer(st, "num_values", t, &out->num_values));
        return non_negative(p, st, "num_values", out->num_values);
      case 2: return p.enumeration(st, "encoding", t, &out->encoding);
      case 3: return p.enumeration(st, "definition_level_encoding", t, &out->definition_level_encoding);
      case 4: return p.enumeration(st, "repetition_level_encoding", t, &out->repetition_level_encoding);
      case 5: return parse_optional_statistics(p, st, t, &out->statistics);
      default: return p.skip_field(st, id, t);
    }
  }));
  return p.missing(st, seen,
                   {{1, "num_values"},
                    {2, "encoding"},
                    {3, "definition_level_encoding"},
                    {4, "repetition_level_encoding"}});
}

Status parse_dictionary_page_header(Parser& p, DictionaryPageHeader* out) {
  constexpr std::string_view st = "DictionaryPageHeader";
  uint32_t seen = 0;
  INFERCOST_RETURN_IF_ERROR(p.parse_struct(st, [&](int16_t id, CType t) -> Status {
    if (id >= 1 && id <= 3) seen |= 1u << id;
    switch (id) {
      case 1:
        INFERCOST_RETURN_IF_ERROR(p.integer(st, "num_values", t, &out->num_values));
        return non_negative(p, st, "num_values", out->num_values);
      case 2: return p.enumeration(st, "encoding", t, &out->encoding);
      case 3: {
        bool v = 0;
        INFERCOST_RETURN_IF_ERROR(p.boolean(st, "is_sorted", t, &v));
        out->is_sorted = v;
        return Status::ok_status();
      }
      default: return p.skip_field(st, id, t);
    }
  }));
  return p.missing(st, seen, {{1, "num_values"}, {2, "encoding"}});
}

Status parse_data_page_header_v2(Parser& p, DataPageHeaderV2* out) {
  constexpr std::string_view st = "DataPageHeaderV2";
  uint32_t seen = 0;
  INFERCOST_RETURN_IF_ERROR(p.parse_struct(st, [&](int16_t id, CType t) -> Status {
    if (id >= 1 && id <= 8) seen |= 1u << id;
    switch (id) {
      case 1:
        INFERCOST_RETURN_IF_ERROR(p.integer(st, "num_values", t, &out->num_values));
        return non_negative(p, st, "num_values", out->num_values);
      case 2:
        INFERCOST_RETURN_IF_ERROR(p.integer(st, "num_nulls", t, &out->num_nulls));
        return non_negative(p, st, "num_nulls", out->num_nulls);
      case 3:
        INFERCOST_RETURN_IF_ERROR(p.integer(st, "num_rows", t, &out->num_rows));
        return non_negative(p, st, "num_rows", out->num_rows);
      case 4: return p.enumeration(st, "encoding", t, &out->encoding);
      case 5:
        INFERCOST_RETURN_IF_ERROR(
            p.integer(st, "definition_levels_byte_length", t, &out->definition_levels_byte_length));
        return non_negative(p, st, "definition_levels_byte_length", out->definition_levels_byte_length);
      case 6:
        INFERCOST_RETURN_IF_ERROR(
            p.integer(st, "repetition_levels_byte_length", t, &out->repetition_levels_byte_length));
        return non_negative(p, st, "repetition_levels_byte_length", out->repetition_levels_byte_length);
      case 7: return p.boolean(st, "is_compressed", t, &out->is_compressed);
      case 8: return parse_optional_statistics(p, st, t, &out->statistics);
      default: return p.skip_field(st, id, t);
    }
  }));
  return p.missing(st, seen,
                   {{1, "num_values"},
                    {2, "num_nulls"},
                    {3, "num_rows"},
                    {4, "encoding"},
                    {5, "definition_levels_byte_length"},
                    {6, "repetition_levels_byte_length"}});
}

Status parse_page_header_struct(Parser& p, PageHeader* out) {
  constexpr std::string_view st = "PageHeader";
  uint32_t seen = 0;
  INFERCOST_RETURN_IF_ERROR(p.parse_struct(st, [&](int16_t id, CType t) -> Status {
    if (id >= 1 && id <= 8) seen |= 1u << id;
    switch (id) {
      case 1: return p.enumeration(st, "type", t, &out->type);
      case 2:
        INFERCOST_RETURN_IF_ERROR(p.integer(st, "uncompressed_page_size", t, &out->uncompressed_page_size));
        return non_negative(p, st, "uncompressed_page_size", out->uncompressed_page_size);
      case 3:
        INFERCOST_RETURN_IF_ERROR(p.integer(st, "compressed_page_size", t, &out->compressed_page_size));
        return non_negative(p, st, "compressed_page_size", out->compressed_page_size);
      case 4: return p.integer(st, "crc", t, &out->crc);
      case 5: {
        INFERCOST_RETURN_IF_ERROR(p.expect(st, "data_page_header", t, CType::kStruct));
        DataPageHeader h;
        INFERCOST_RETURN_IF_ERROR(parse_data_page_header(p, &h));
        out->data_page_header = std::move(h);
        return Status::ok_status();
      }
      case 7: {
        INFERCOST_RETURN_IF_ERROR(p.expect(st, "dictionary_page_header", t, CType::kStruct));
        DictionaryPageHeader h;
        INFERCOST_RETURN_IF_ERROR(parse_dictionary_page_header(p, &h));
        out->dictionary_page_header = std::move(h);
        return Status::ok_status();
      }
      case 8: {
        INFERCOST_RETURN_IF_ERROR(p.expect(st, "data_page_header_v2", t, CType::kStruct));
        DataPageHeaderV2 h;
        INFERCOST_RETURN_IF_ERROR(parse_data_page_header_v2(p, &h));
        out->data_page_header_v2 = std::move(h);
        return Status::ok_status();
      }
      default: return p.skip_field(st, id, t);  // 6: IndexPageHeader (empty), newer fields
    }
  }));
  return p.missing(st, seen, {{1, "type"}, {2, "uncompressed_page_size"}, {3, "compressed_page_size"}});
}

// ---- serialization ----

void write_statistics(CompactWriter& w, const Statistics& s) {
  if (s.max) w.field_binary(1, *s.max);
  if (s.min) w.field_binary(2, *s.min);
  if (s.null_count) w.field_i64(3, *s.null_count);
  if (s.distinct_count) w.field_i64(4, *s.distinct_count);
  if (s.max_value) w.field_binary(5, *s.max_value);
  if (s.min_value) w.field_binary(6, *s.min_value);
}

void write_statistics_field(CompactWriter& w, int16_t id, const std::optional<Statistics>& s) {
  if (!s) return;
  w.field_struct_begin(id);
  write_statistics(w, *s);
  w.struct_end();
}

void write_logical_type(CompactWriter& w, const LogicalType& lt) {
  w.field_struct_begin(static_cast<int16_t>(lt.kind));
  switch (lt.kind) {
    case LogicalType::kDecimal:
      w.field_i32(1, lt.decimal_scale);
      w.field_i32(2, lt.decimal_precision);
      break;
    case LogicalType::kTime:
    case LogicalType::kTimestamp:
      w.field_bool(1, lt.is_adjusted_to_utc);
      w.field_struct_begin(2);
      if (lt.time_unit > 0 && lt.time_unit <= std::numeric_limits<int16_t>::max()) {
        w.field_struct_begin(static_cast<int16_t>(lt.time_unit));
        w.struct_end();
      }
      w.struct_end();
      break;
    case LogicalType::kInteger:
      w.field_byte(1, static_cast<int8_t>(lt.integer_bit_width));
      w.field_bool(2, lt.integer_signed);
      break;
    default: break;  // empty structs
  }
  w.struct_end();
}

void write_key_values(CompactWriter& w, int16_t id,
                      const std::vector<std::pair<std::string, std::optional<std::string>>>& kvs) {
  if (kvs.empty()) return;
  w.field_list_begin(id, CType::kStruct, static_cast<uint32_t>(kvs.size()));
  for (const auto& [k, v] : kvs) {
    w.struct_begin();
    w.field_binary(1, k);
    if (v) w.field_binary(2, *v);
    w.struct_end();
  }
}

void write_schema_element(CompactWriter& w, const SchemaElement& e) {
  w.struct_begin();
  if (e.type) w.field_i32(1, static_cast<int32_t>(*e.type));
  if (e.type_length != 0 || e.type == PhysicalType::kFixedLenByteArray) w.field_i32(2, e.type_length);
  if (e.repetition) w.field_i32(3, static_cast<int32_t>(*e.repetition));
  w.field_binary(4, e.name);
  if (!e.type || e.num_children != 0) w.field_i32(5, e.num_children);
  if (e.converted_type) w.field_i32(6, static_cast<int32_t>(*e.converted_type));
  if (e.scale) w.field_i32(7, *e.scale);
  if (e.precision) w.field_i32(8, *e.precision);
  if (e.field_id) w.field_i32(9, *e.field_id);
  if (e.logical_type.kind > 0 && e.logical_type.kind <= std::numeric_limits<int16_t>::max()) {
    w.field_struct_begin(10);
    write_logical_type(w, e.logical_type);
    w.struct_end();
  }
  w.struct_end();
}

void write_column_metadata(CompactWriter& w, const ColumnMetaData& m) {
  w.field_i32(1, static_cast<int32_t>(m.type));
  w.field_list_begin(2, CType::kI32, static_cast<uint32_t>(m.encodings.size()));
  for (Encoding e : m.encodings) w.write_i32(static_cast<int32_t>(e));
  w.field_list_begin(3, CType::kBinary, static_cast<uint32_t>(m.path_in_schema.size()));
  for (const auto& s : m.path_in_schema) w.write_binary(s);
  w.field_i32(4, static_cast<int32_t>(m.codec));
  w.field_i64(5, m.num_values);
  w.field_i64(6, m.total_uncompressed_size);
  w.field_i64(7, m.total_compressed_size);
  write_key_values(w, 8, m.key_value_metadata);
  w.field_i64(9, m.data_page_offset);
  if (m.index_page_offset) w.field_i64(10, *m.index_page_offset);
  if (m.dictionary_page_offset) w.field_i64(11, *m.dictionary_page_offset);
  write_statistics_field(w, 12, m.statistics);
}

void write_column_chunk(CompactWriter& w, const ColumnChunk& c) {
  w.struct_begin();
  if (!c.file_path.empty()) w.field_binary(1, c.file_path);
  w.field_i64(2, c.file_offset);
  if (c.meta_data) {
    w.field_struct_begin(3);
    write_column_metadata(w, *c.meta_data);
    w.struct_end();
  }
  if (c.has_crypto_metadata) {
    // We keep only the flag; ENCRYPTION_WITH_FOOTER_KEY (an empty struct)
    // stands in for whatever the original said.
    w.field_struct_begin(8);
    w.field_struct_begin(1);
    w.struct_end();
    w.struct_end();
  }
  if (c.has_encrypted_column_metadata) w.field_binary(9, "");
  w.struct_end();
}

void write_row_group(CompactWriter& w, const RowGroup& g) {
  w.struct_begin();
  w.field_list_begin(1, CType::kStruct, static_cast<uint32_t>(g.columns.size()));
  for (const auto& c : g.columns) write_column_chunk(w, c);
  w.field_i64(2, g.total_byte_size);
  w.field_i64(3, g.num_rows);
  if (g.file_offset) w.field_i64(5, *g.file_offset);
  if (g.total_compressed_size) w.field_i64(6, *g.total_compressed_size);
  if (g.ordinal) w.field_i16(7, *g.ordinal);
  w.struct_end();
}

}  // namespace

Result<FileMetaData> parse_file_metadata(const uint8_t* data, size_t size) {
  Parser p(data, size, "footer");
  FileMetaData md;
  INFERCOST_RETURN_IF_ERROR(parse_file_metadata_struct(p, &md));
  return md;
}

Result<PageHeader> parse_page_header(const uint8_t* data, size_t size, size_t* header_size, bool* ran_out) {
  Parser p(data, size, "page header");
  PageHeader h;
  Status parsed = parse_page_header_struct(p, &h);
  if (ran_out != nullptr) *ran_out = !parsed.ok() && p.reader().ran_out();
  INFERCOST_RETURN_IF_ERROR(parsed);
  if (header_size != nullptr) *header_size = p.reader().position();
  return h;
}

std::string serialize_file_metadata(const FileMetaData& md) {
  CompactWriter w;
  w.struct_begin();
  w.field_i32(1, md.version);
  w.field_list_begin(2, CType::kStruct, static_cast<uint32_t>(md.schema.size()));
  for (const auto& e : md.schema) write_schema_element(w, e);
  w.field_i64(3, md.num_rows);
  w.field_list_begin(4, CType::kStruct, static_cast<uint32_t>(md.row_groups.size()));
  for (const auto& g : md.row_groups) write_row_group(w, g);
  write_key_values(w, 5, md.key_value_metadata);
  if (md.created_by) w.field_binary(6, *md.created_by);
  if (!md.column_orders.empty()) {
    w.field_list_begin(7, CType::kStruct, static_cast<uint32_t>(md.column_orders.size()));
    for (int32_t kind : md.column_orders) {
      w.struct_begin();
      w.field_struct_begin(static_cast<int16_t>(kind));  // the union member, an empty struct
      w.struct_end();
      w.struct_end();
    }
  }
  if (md.has_encryption_algorithm) {
    // AES_GCM_V1 with no fields: only the flag survives parsing.
    w.field_struct_begin(8);
    w.field_struct_begin(1);
    w.struct_end();
    w.struct_end();
  }
  w.struct_end();
  return w.take();
}

std::string serialize_page_header(const PageHeader& h) {
  CompactWriter w;
  w.struct_begin();
  w.field_i32(1, static_cast<int32_t>(h.type));
  w.field_i32(2, h.uncompressed_page_size);
  w.field_i32(3, h.compressed_page_size);
  if (h.crc) w.field_i32(4, *h.crc);
  if (h.data_page_header) {
    const auto& d = *h.data_page_header;
    w.field_struct_begin(5);
    w.field_i32(1, d.num_values);
    w.field_i32(2, static_cast<int32_t>(d.encoding));
    w.field_i32(3, static_cast<int32_t>(d.definition_level_encoding));
    w.field_i32(4, static_cast<int32_t>(d.repetition_level_encoding));
    write_statistics_field(w, 5, d.statistics);
    w.struct_end();
  }
  if (h.dictionary_page_header) {
    const auto& d = *h.dictionary_page_header;
    w.field_struct_begin(7);
    w.field_i32(1, d.num_values);
    w.field_i32(2, static_cast<int32_t>(d.encoding));
    if (d.is_sorted) w.field_bool(3, *d.is_sorted);
    w.struct_end();
  }
  if (h.data_page_header_v2) {
    const auto& d = *h.data_page_header_v2;
    w.field_struct_begin(8);
    w.field_i32(1, d.num_values);
    w.field_i32(2, d.num_nulls);
    w.field_i32(3, d.num_rows);
    w.field_i32(4, static_cast<int32_t>(d.encoding));
    w.field_i32(5, d.definition_levels_byte_length);
    w.field_i32(6, d.repetition_levels_byte_length);
    w.field_bool(7, d.is_compressed);
    write_statistics_field(w, 8, d.statistics);
    w.struct_end();
  }
  w.struct_end();
  return w.take();
}

}  // namespace infercost::parquet
