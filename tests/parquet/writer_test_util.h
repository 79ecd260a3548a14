// Shared by the ParquetWriter tests: in-memory datasets, writing them, the
// expected-values JSON the pyarrow checker reads, and a page-by-page walk of
// a written file with our own footer/page-header parsers (which decodes the
// levels and values of list columns, that our reader refuses).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/file.h"
#include "parquet/compression.h"
#include "parquet/encoding.h"
#include "parquet/metadata.h"
#include "parquet/writer.h"

namespace infercost::parquet::testing {

// A cell: null, a string, an integer, a floating-point value, or the floats
// of a list column's row.
using Value = std::variant<std::monostate, std::string, int64_t, double, std::vector<float>>;

struct Dataset {
  std::vector<ColumnSpec> specs;
  std::vector<std::vector<Value>> columns;  // columns[c][row]
  size_t rows() const { return columns.empty() ? 0 : columns[0].size(); }
  void add_column(std::string name, ColumnSpec::Kind kind, bool nullable, int list_size = 0) {
    specs.push_back({std::move(name), kind, nullable, list_size});
    columns.emplace_back();
  }
  bool has_list() const {
    for (const ColumnSpec& s : specs) {
      if (s.list_size > 0) return true;
    }
    return false;
  }
};

// Appends rows [from, to) of `data` to `writer`.
inline Status append_rows(ParquetWriter& writer, const Dataset& data, size_t from, size_t to) {
  for (size_t r = from; r < to; ++r) {
    for (size_t c = 0; c < data.columns.size(); ++c) {
      const Value& v = data.columns[c][r];
      int col = static_cast<int>(c);
      if (std::holds_alternative<std::monostate>(v)) {
        writer.append_null(col);
      } else if (auto* s = std::get_if<std::string>(&v)) {
        writer.append_string(col, *s);
      } else if (auto* i = std::get_if<int64_t>(&v)) {
        writer.append_int64(col, *i);
      } else if (auto* f = std::get_if<std::vector<float>>(&v)) {
        writer.append_floats(col, *f);
      } else {
        writer.append_double(col, std::get<double>(v));
      }
    }
    INFERCOST_RETURN_IF_ERROR(writer.end_row());
  }
  return Status();
}

inline Status write_dataset(const std::string& path, const Dataset& data, const WriterOptions& options) {
  INFERCOST_ASSIGN_OR_RETURN(auto writer, ParquetWriter::create(path, data.specs, options));
  INFERCOST_RETURN_IF_ERROR(append_rows(*writer, data, 0, data.rows()));
  if (writer->rows_written() != static_cast<int64_t>(data.rows()))
    return internal_error("rows_written mismatch");
  return writer->close();
}

// `data` written resumably to `path`: rows [0, checkpoint_at), a
// checkpoint, rows up to lost_to that a crash loses (the writer destroyed
// without close(), then garbage after them), create_resumable from the
// checkpoint and the rows from checkpoint_at on.
inline Status write_resumed(const std::string& path, const std::string& partial, const Dataset& data,
                            const WriterOptions& options, size_t checkpoint_at, size_t lost_to) {
  WriterCheckpoint at;
  {
    INFERCOST_ASSIGN_OR_RETURN(auto w,
                               ParquetWriter::create_resumable(path, partial, data.specs, options, nullptr));
    INFERCOST_RETURN_IF_ERROR(append_rows(*w, data, 0, checkpoint_at));
    INFERCOST_ASSIGN_OR_RETURN(at, w->checkpoint());
    INFERCOST_RETURN_IF_ERROR(append_rows(*w, data, checkpoint_at, lost_to));
  }
  {
    std::ofstream garbage(partial, std::ios::app | std::ios::binary);
    garbage << "half a footer";
  }
  INFERCOST_ASSIGN_OR_RETURN(auto w,
                             ParquetWriter::create_resumable(path, partial, data.specs, options, &at));
  if (w->rows_written() != static_cast<int64_t>(checkpoint_at))
    return internal_error("rows_written after resume");
  INFERCOST_RETURN_IF_ERROR(append_rows(*w, data, checkpoint_at, data.rows()));
  return w->close();
}

inline const char* kind_json_name(ColumnSpec::Kind kind) {
  switch (kind) {
    case ColumnSpec::Kind::kString: return "string";
    case ColumnSpec::Kind::kInt32: return "int32";
    case ColumnSpec::Kind::kInt64: return "int64";
    case ColumnSpec::Kind::kFloat: return "float";
    case ColumnSpec::Kind::kDouble: return "double";
  }
  return "?";
}

inline nlohmann::json double_json(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return d;
}

inline nlohmann::json value_json(const Value& v, ColumnSpec::Kind kind) {
  if (std::holds_alternative<std::monostate>(v)) return nullptr;
  if (auto* s = std::get_if<std::string>(&v)) return *s;
  if (auto* i = std::get_if<int64_t>(&v)) return *i;
  if (auto* f = std::get_if<std::vector<float>>(&v)) {
    nlohmann::json list = nlohmann::json::array();
    for (float x : *f) list.push_back(double_json(x));
    return list;
  }
  double d = std::get<double>(v);
  if (kind == ColumnSpec::Kind::kFloat) d = static_cast<float>(d);  // as stored
  return double_json(d);
}

// Equal bit for bit (NaN payloads and signed zeros included).
inline bool same_float_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

inline uint32_t float_bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

inline const char* codec_json_name(Codec codec) {
  switch (codec) {
    case Codec::kUncompressed: return "UNCOMPRESSED";
    case Codec::kSnappy: return "SNAPPY";
    case Codec::kGzip: return "GZIP";
    case Codec::kBrotli: return "BROTLI";
    case Codec::kLz4: return "LZ4";
    case Codec::kZstd: return "ZSTD";
    case Codec::kLz4Raw: return "LZ4_RAW";
    default: return "?";
  }
}

// The checker's expectations. num_row_groups < 0: not checked.
inline nlohmann::json expected_json(const Dataset& data, const WriterOptions& options,
                                    int64_t num_row_groups) {
  nlohmann::json j;
  j["num_rows"] = data.rows();
  j["num_row_groups"] = num_row_groups >= 0 ? nlohmann::json(num_row_groups) : nlohmann::json(nullptr);
  j["codec"] = codec_json_name(options.codec);
  j["statistics"] = options.statistics;
  j["key_value_metadata"] = nlohmann::json::object();
  for (const auto& [k, v] : options.key_value_metadata) j["key_value_metadata"][k] = v;
  j["columns"] = nlohmann::json::array();
  for (size_t c = 0; c < data.specs.size(); ++c) {
    nlohmann::json col;
    col["name"] = data.specs[c].name;
    col["kind"] = kind_json_name(data.specs[c].kind);
    col["nullable"] = data.specs[c].nullable;
    col["values"] = nlohmann::json::array();
    for (const Value& v : data.columns[c]) col["values"].push_back(value_json(v, data.specs[c].kind));
    if (data.specs[c].list_size > 0) {
      // kind "float_list"; the floats' bits too, to compare them exactly.
      col["kind"] = "float_list";
      col["list_size"] = data.specs[c].list_size;
      col["bits"] = nlohmann::json::array();
      for (const Value& v : data.columns[c]) {
        nlohmann::json bits = nullptr;
        if (auto* f = std::get_if<std::vector<float>>(&v)) {
          bits = nlohmann::json::array();
          for (float x : *f) bits.push_back(float_bits(x));
        }
        col["bits"].push_back(std::move(bits));
      }
    }
    j["columns"].push_back(std::move(col));
  }
  return j;
}

// What a walk over every page of every column chunk saw.
struct PageSummary {
  int dictionary_pages = 0;
  int data_pages = 0;
  std::vector<Encoding> data_page_encodings;  // in file order
  std::vector<PageType> data_page_types;
  // A list column (NAME.list.element): its levels and values, decoded from
  // every page in file order, and the rows of each data page.
  bool list = false;
  int max_definition_level = 0;
  std::vector<uint32_t> rep_levels, def_levels;
  std::vector<float> values;
  std::vector<int64_t> page_rows;
  std::vector<int64_t> page_floats;  // the values of each data page
};

struct FileSummary {
  FileMetaData metadata;
  std::vector<PageSummary> columns;  // per leaf, summed over row groups
};

// The leaves of a schema our writer writes: top-level primitives, and
// 3-level lists "<opt|req> group NAME (LIST) { repeated group list {
// required <type> element; } }" (anything else is kCorruption).
inline Result<std::vector<PageSummary>> leaf_shapes(const FileMetaData& md) {
  std::vector<PageSummary> leaves;
  if (md.schema.empty()) return leaves;
  size_t i = 1;
  for (int32_t c = 0; c < md.schema[0].num_children; ++c) {
    if (i >= md.schema.size()) return corruption("schema: root children past the end");
    const SchemaElement& e = md.schema[i];
    const bool optional = e.repetition == Repetition::kOptional;
    PageSummary leaf;
    if (e.num_children == 0) {
      leaf.max_definition_level = optional ? 1 : 0;
      i += 1;
    } else {
      if (i + 2 >= md.schema.size()) return corruption("schema: list '" + e.name + "' cut short");
      const SchemaElement& list = md.schema[i + 1];
      const SchemaElement& element = md.schema[i + 2];
      if (e.num_children != 1 || e.converted_type != ConvertedType::kList ||
          e.logical_type.kind != LogicalType::kList || e.type.has_value() || list.name != "list" ||
          list.repetition != Repetition::kRepeated || list.num_children != 1 || list.type.has_value() ||
          element.name != "element" || element.repetition != Repetition::kRequired ||
          element.num_children != 0 || !element.type.has_value()) {
        return corruption("schema: '" + e.name + "' is not a 3-level LIST of a primitive");
      }
      leaf.list = true;
      leaf.max_definition_level = optional ? 2 : 1;
      i += 3;
    }
    leaves.push_back(std::move(leaf));
  }
  if (i != md.schema.size()) return corruption("schema: elements past the root's children");
  return leaves;
}

// The 4-byte length and the bytes after it at the start of `body` (v1
// levels); advances `body` past them.
inline Result<std::string_view> take_length_prefixed(std::string_view& body) {
  uint32_t n = 0;
  if (body.size() < 4) return corruption("levels: no length");
  std::memcpy(&n, body.data(), 4);
  if (n > body.size() - 4) return corruption("levels: length past the page");
  std::string_view out = body.substr(4, n);
  body.remove_prefix(4 + n);
  return out;
}

// Decodes one data page of a list column into `leaf`; checks that the page
// starts a row, that every null row is one entry, and that the PLAIN floats
// are exactly the defined elements. Returns the page's rows; *nulls is set
// to its entries with def < max (the null rows).
inline Result<int64_t> take_list_page(std::string_view rep, std::string_view def, std::string_view values,
                                      int64_t num_values, PageSummary& leaf, int64_t* nulls) {
  const int max_def = leaf.max_definition_level;
  std::vector<uint32_t> r(num_values), d(num_values);
  RleBitPackedDecoder rd(reinterpret_cast<const uint8_t*>(rep.data()), rep.size(), 1);
  INFERCOST_RETURN_IF_ERROR(rd.get(r.data(), r.size()));
  RleBitPackedDecoder dd(reinterpret_cast<const uint8_t*>(def.data()), def.size(), bit_width_for(max_def));
  INFERCOST_RETURN_IF_ERROR(dd.get(d.data(), d.size()));
  int64_t rows = 0, present = 0;
  *nulls = 0;
  for (int64_t k = 0; k < num_values; ++k) {
    if (r[k] > 1 || d[k] > static_cast<uint32_t>(max_def)) return corruption("levels: out of range");
    if (k == 0 && r[k] != 0) return corruption("levels: a page that does not start a row");
    rows += r[k] == 0 ? 1 : 0;
    if (d[k] == static_cast<uint32_t>(max_def)) {
      ++present;
    } else {
      if (d[k] != 0) return corruption("levels: an empty list (the writer never writes one)");
      ++*nulls;
      if (k + 1 < num_values && r[k + 1] != 0) return corruption("levels: a null row of several entries");
    }
  }
  if (values.size() != static_cast<size_t>(present) * 4) {
    return corruption("values: " + std::to_string(values.size()) + " bytes for " + std::to_string(present) +
                      " floats");
  }
  leaf.rep_levels.insert(leaf.rep_levels.end(), r.begin(), r.end());
  leaf.def_levels.insert(leaf.def_levels.end(), d.begin(), d.end());
  const size_t before = leaf.values.size();
  leaf.values.resize(before + present);
  if (present > 0) std::memcpy(leaf.values.data() + before, values.data(), values.size());
  leaf.page_rows.push_back(rows);
  leaf.page_floats.push_back(present);
  return rows;
}

// Parses the footer and every page header; checks each page's CRC (when
// present) against page_crc32 of the stored bytes, that it decompresses to
// uncompressed_page_size, that a dictionary page comes first, that value
// counts add up to the chunk's num_values, and that the chunk sizes and
// offsets agree with the pages.
inline Result<FileSummary> walk_file(const std::string& path) {
  INFERCOST_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
  if (bytes.size() < 12 || bytes.compare(0, 4, "PAR1") != 0 ||
      bytes.compare(bytes.size() - 4, 4, "PAR1") != 0) {
    return corruption(path + ": no PAR1 magic");
  }
  uint32_t footer_len = 0;
  std::memcpy(&footer_len, bytes.data() + bytes.size() - 8, 4);
  if (footer_len > bytes.size() - 12) return corruption(path + ": bad footer length");
  const auto* base = reinterpret_cast<const uint8_t*>(bytes.data());
  INFERCOST_ASSIGN_OR_RETURN(FileMetaData md,
                             parse_file_metadata(base + bytes.size() - 8 - footer_len, footer_len));
  FileSummary summary;
  INFERCOST_ASSIGN_OR_RETURN(summary.columns, leaf_shapes(md));
  int64_t expected_offset = 4;
  for (size_t r = 0; r < md.row_groups.size(); ++r) {
    const RowGroup& rg = md.row_groups[r];
    if (rg.columns.size() != summary.columns.size()) return corruption("row group column count");
    if (!rg.ordinal || *rg.ordinal != static_cast<int16_t>(r)) return corruption("row group ordinal");
    if (!rg.file_offset || *rg.file_offset != expected_offset) return corruption("row group file_offset");
    int64_t rg_uncompressed = 0, rg_compressed = 0;
    for (size_t c = 0; c < rg.columns.size(); ++c) {
      std::string where = "row group " + std::to_string(r) + " column " + std::to_string(c) + ": ";
      if (!rg.columns[c].meta_data) return corruption(where + "no meta_data");
      const ColumnMetaData& cm = *rg.columns[c].meta_data;
      int64_t start = cm.dictionary_page_offset ? *cm.dictionary_page_offset : cm.data_page_offset;
      if (start != expected_offset) return corruption(where + "chunk does not start where the last ended");
      if (rg.columns[c].file_offset != start) return corruption(where + "file_offset");
      int64_t pos = start, end = start + cm.total_compressed_size, values = 0, uncompressed_total = 0;
      int64_t list_rows = 0;
      if (end > static_cast<int64_t>(bytes.size()) - 8 - footer_len)
        return corruption(where + "past the footer");
      bool first = true, seen_data = false;
      PageSummary& ps = summary.columns[c];
      std::string out;
      while (pos < end) {
        size_t header_size = 0;
        INFERCOST_ASSIGN_OR_RETURN(PageHeader h, parse_page_header(base + pos, end - pos, &header_size));
        const uint8_t* page = base + pos + header_size;
        if (pos + static_cast<int64_t>(header_size) + h.compressed_page_size > end) {
          return corruption(where + "page past the chunk");
        }
        if (h.crc && static_cast<uint32_t>(*h.crc) != page_crc32(page, h.compressed_page_size)) {
          return corruption(where + "CRC mismatch at offset " + std::to_string(pos));
        }
        uncompressed_total += static_cast<int64_t>(header_size) + h.uncompressed_page_size;
        out.assign(h.uncompressed_page_size, '\0');
        if (h.type == PageType::kDictionaryPage) {
          if (!first) return corruption(where + "dictionary page not first");
          if (cm.dictionary_page_offset != pos) return corruption(where + "dictionary_page_offset");
          ++ps.dictionary_pages;
          INFERCOST_RETURN_IF_ERROR(decompress(cm.codec, page, h.compressed_page_size,
                                               reinterpret_cast<uint8_t*>(out.data()), out.size()));
        } else if (h.type == PageType::kDataPage) {
          if (!h.data_page_header) return corruption(where + "no data_page_header");
          if (!seen_data && cm.data_page_offset != pos) return corruption(where + "data_page_offset");
          ++ps.data_pages;
          values += h.data_page_header->num_values;
          ps.data_page_encodings.push_back(h.data_page_header->encoding);
          ps.data_page_types.push_back(h.type);
          INFERCOST_RETURN_IF_ERROR(decompress(cm.codec, page, h.compressed_page_size,
                                               reinterpret_cast<uint8_t*>(out.data()), out.size()));
          if (ps.list) {
            // Repetition levels, then definition levels, each after its length.
            std::string_view body(out);
            INFERCOST_ASSIGN_OR_RETURN(std::string_view rep, take_length_prefixed(body));
            INFERCOST_ASSIGN_OR_RETURN(std::string_view def, take_length_prefixed(body));
            int64_t nulls = 0;
            INFERCOST_ASSIGN_OR_RETURN(
                int64_t rows, take_list_page(rep, def, body, h.data_page_header->num_values, ps, &nulls));
            list_rows += rows;
          }
        } else if (h.type == PageType::kDataPageV2) {
          if (!h.data_page_header_v2) return corruption(where + "no data_page_header_v2");
          const DataPageHeaderV2& v2 = *h.data_page_header_v2;
          if (!seen_data && cm.data_page_offset != pos) return corruption(where + "data_page_offset");
          ++ps.data_pages;
          values += v2.num_values;
          if (!ps.list && v2.num_rows != v2.num_values) return corruption(where + "v2 num_rows");
          if (!ps.list && v2.repetition_levels_byte_length != 0)
            return corruption(where + "v2 repetition levels");
          if (v2.is_compressed != (cm.codec != Codec::kUncompressed))
            return corruption(where + "v2 is_compressed");
          size_t levels = static_cast<size_t>(v2.definition_levels_byte_length) +
                          static_cast<size_t>(v2.repetition_levels_byte_length);
          if (levels > static_cast<size_t>(h.compressed_page_size)) return corruption(where + "v2 levels");
          INFERCOST_RETURN_IF_ERROR(decompress(cm.codec, page + levels, h.compressed_page_size - levels,
                                               reinterpret_cast<uint8_t*>(out.data()), out.size() - levels));
          if (ps.list) {
            std::string_view stored(reinterpret_cast<const char*>(page), levels);
            int64_t nulls = 0;
            INFERCOST_ASSIGN_OR_RETURN(int64_t rows,
                                       take_list_page(stored.substr(0, v2.repetition_levels_byte_length),
                                                      stored.substr(v2.repetition_levels_byte_length),
                                                      std::string_view(out).substr(0, out.size() - levels),
                                                      v2.num_values, ps, &nulls));
            if (rows != v2.num_rows) return corruption(where + "v2 num_rows is not the page's rows");
            if (nulls != v2.num_nulls) return corruption(where + "v2 num_nulls is not the page's null rows");
            list_rows += rows;
          }
          ps.data_page_encodings.push_back(v2.encoding);
          ps.data_page_types.push_back(h.type);
        } else {
          return corruption(where + "unexpected page type");
        }
        seen_data = seen_data || h.type != PageType::kDictionaryPage;
        first = false;
        pos += static_cast<int64_t>(header_size) + h.compressed_page_size;
      }
      if (pos != end) return corruption(where + "pages overrun the chunk");
      if (values != cm.num_values) return corruption(where + "value count");
      if ((ps.list ? list_rows : values) != rg.num_rows) return corruption(where + "row count");
      if (uncompressed_total != cm.total_uncompressed_size)
        return corruption(where + "total_uncompressed_size");
      rg_uncompressed += cm.total_uncompressed_size;
      rg_compressed += cm.total_compressed_size;
      expected_offset = end;
    }
    if (rg.total_byte_size != rg_uncompressed) return corruption("row group total_byte_size");
    if (!rg.total_compressed_size || *rg.total_compressed_size != rg_compressed) {
      return corruption("row group total_compressed_size");
    }
  }
  if (expected_offset != static_cast<int64_t>(bytes.size()) - 8 - footer_len) {
    return corruption(path + ": bytes between the last chunk and the footer");
  }
  summary.metadata = std::move(md);
  return summary;
}

}  // namespace infercost::parquet::testing
