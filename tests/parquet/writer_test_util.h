// Shared by the ParquetWriter tests: in-memory datasets, writing them, the
// expected-values JSON the pyarrow checker reads, and a page-by-page walk of
// a written file with our own footer/page-header parsers.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "infercost/core/file.h"
#include "parquet/compression.h"
#include "parquet/metadata.h"
#include "parquet/writer.h"

namespace infercost::parquet::testing {

using Value = std::variant<std::monostate, std::string, int64_t, double>;

struct Dataset {
  std::vector<ColumnSpec> specs;
  std::vector<std::vector<Value>> columns;  // columns[c][row]
  size_t rows() const { return columns.empty() ? 0 : columns[0].size(); }
  void add_column(std::string name, ColumnSpec::Kind kind, bool nullable) {
    specs.push_back({std::move(name), kind, nullable});
    columns.emplace_back();
  }
};

inline Status write_dataset(const std::string& path, const Dataset& data, const WriterOptions& options) {
  INFERCOST_ASSIGN_OR_RETURN(auto writer, ParquetWriter::create(path, data.specs, options));
  for (size_t r = 0; r < data.rows(); ++r) {
    for (size_t c = 0; c < data.columns.size(); ++c) {
      const Value& v = data.columns[c][r];
      int col = static_cast<int>(c);
      if (std::holds_alternative<std::monostate>(v)) {
        writer->append_null(col);
      } else if (auto* s = std::get_if<std::string>(&v)) {
        writer->append_string(col, *s);
      } else if (auto* i = std::get_if<int64_t>(&v)) {
        writer->append_int64(col, *i);
      } else {
        writer->append_double(col, std::get<double>(v));
      }
    }
    INFERCOST_RETURN_IF_ERROR(writer->end_row());
  }
  if (writer->rows_written() != static_cast<int64_t>(data.rows()))
    return internal_error("rows_written mismatch");
  return writer->close();
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

inline nlohmann::json value_json(const Value& v, ColumnSpec::Kind kind) {
  if (std::holds_alternative<std::monostate>(v)) return nullptr;
  if (auto* s = std::get_if<std::string>(&v)) return *s;
  if (auto* i = std::get_if<int64_t>(&v)) return *i;
  double d = std::get<double>(v);
  if (kind == ColumnSpec::Kind::kFloat) d = static_cast<float>(d);  // as stored
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return d;
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
};

struct FileSummary {
  FileMetaData metadata;
  std::vector<PageSummary> columns;  // summed over row groups
};

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
  summary.columns.resize(md.schema.empty() ? 0 : md.schema.size() - 1);
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
        } else if (h.type == PageType::kDataPageV2) {
          if (!h.data_page_header_v2) return corruption(where + "no data_page_header_v2");
          const DataPageHeaderV2& v2 = *h.data_page_header_v2;
          if (!seen_data && cm.data_page_offset != pos) return corruption(where + "data_page_offset");
          ++ps.data_pages;
          values += v2.num_values;
          if (v2.num_rows != v2.num_values) return corruption(where + "v2 num_rows");
          if (v2.repetition_levels_byte_length != 0) return corruption(where + "v2 repetition levels");
          if (v2.is_compressed != (cm.codec != Codec::kUncompressed))
            return corruption(where + "v2 is_compressed");
          size_t levels = v2.definition_levels_byte_length;
          if (levels > static_cast<size_t>(h.compressed_page_size)) return corruption(where + "v2 levels");
          INFERCOST_RETURN_IF_ERROR(decompress(cm.codec, page + levels, h.compressed_page_size - levels,
                                               reinterpret_cast<uint8_t*>(out.data()), out.size() - levels));
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
      if (values != cm.num_values || values != rg.num_rows) return corruption(where + "value count");
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
