// Hand-assembled Parquet files for the reader tests: pages built with
// serialize_page_header and the encoders of encoding.h, a footer with
// serialize_file_metadata.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "parquet/compression.h"
#include "parquet/encoding.h"
#include "parquet/metadata.h"
#include "parquet/reader.h"

namespace infercost::parquet::testing {

inline void put_le32(uint32_t v, std::string& out) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
inline void put_le64(uint64_t v, std::string& out) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

// Definition levels as a v1 page carries them: 4-byte length + RLE hybrid.
inline std::string v1_levels(const std::vector<uint32_t>& levels) {
  std::string rle;
  encode_rle_bit_packed(levels.data(), levels.size(), 1, rle);
  std::string out;
  put_le32(static_cast<uint32_t>(rle.size()), out);
  return out + rle;
}

// header + body; sizes filled in, CRC when asked.
inline std::string page(PageHeader header, const std::string& body, bool crc = true,
                        std::optional<int32_t> uncompressed = std::nullopt) {
  header.compressed_page_size = static_cast<int32_t>(body.size());
  header.uncompressed_page_size = uncompressed.value_or(static_cast<int32_t>(body.size()));
  if (crc) {
    header.crc = static_cast<int32_t>(page_crc32(reinterpret_cast<const uint8_t*>(body.data()), body.size()));
  }
  return serialize_page_header(header) + body;
}

inline PageHeader data_page_header(int32_t num_values, Encoding encoding = Encoding::kPlain) {
  PageHeader h;
  h.type = PageType::kDataPage;
  DataPageHeader d;
  d.num_values = num_values;
  d.encoding = encoding;
  h.data_page_header = d;
  return h;
}

// A v1 PLAIN page of optional strings (nullopt = null).
inline std::string string_page(const std::vector<std::optional<std::string>>& values, bool optional = true,
                               bool crc = true) {
  std::string body;
  std::vector<uint32_t> levels;
  std::string plain;
  for (const auto& v : values) {
    levels.push_back(v.has_value());
    if (v) encode_plain_byte_array(*v, plain);
  }
  if (optional) body = v1_levels(levels);
  body += plain;
  return page(data_page_header(static_cast<int32_t>(values.size())), body, crc);
}

inline std::string int64_page(const std::vector<int64_t>& values) {
  std::string body;
  for (int64_t v : values) put_le64(static_cast<uint64_t>(v), body);
  return page(data_page_header(static_cast<int32_t>(values.size())), body);
}

inline std::string dictionary_page(const std::vector<std::string>& dict) {
  PageHeader h;
  h.type = PageType::kDictionaryPage;
  DictionaryPageHeader d;
  d.num_values = static_cast<int32_t>(dict.size());
  d.encoding = Encoding::kPlain;
  h.dictionary_page_header = d;
  std::string body;
  for (const auto& s : dict) encode_plain_byte_array(s, body);
  return page(h, body);
}

// A v1 RLE_DICTIONARY page of a required column.
inline std::string index_page(const std::vector<uint32_t>& indices, int width) {
  std::string body(1, static_cast<char>(width));
  encode_rle_bit_packed(indices.data(), indices.size(), width, body);
  return page(data_page_header(static_cast<int32_t>(indices.size()), Encoding::kRleDictionary), body);
}

struct Column {
  std::string name;
  PhysicalType type = PhysicalType::kByteArray;
  Repetition repetition = Repetition::kOptional;
  bool utf8 = true;
};

struct Chunk {
  std::string bytes;      // the pages, dictionary first
  size_t dict_bytes = 0;  // size of the dictionary page at the front (0: none)
  int64_t num_values = 0;
  Codec codec = Codec::kUncompressed;
};

// "PAR1", the chunks of each row group in order, the footer.
inline std::string assemble(const std::vector<Column>& schema, const std::vector<std::vector<Chunk>>& groups,
                            const std::vector<int64_t>& group_rows, FileMetaData* out_meta = nullptr) {
  std::string file = "PAR1";
  FileMetaData md;
  SchemaElement root;
  root.name = "schema";
  root.num_children = static_cast<int32_t>(schema.size());
  md.schema.push_back(root);
  for (const Column& c : schema) {
    SchemaElement e;
    e.name = c.name;
    e.type = c.type;
    e.repetition = c.repetition;
    if (c.type == PhysicalType::kByteArray && c.utf8) {
      e.converted_type = ConvertedType::kUtf8;
      e.logical_type.kind = LogicalType::kString;
    }
    md.schema.push_back(e);
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    RowGroup rg;
    rg.num_rows = group_rows[g];
    for (size_t c = 0; c < groups[g].size(); ++c) {
      const Chunk& chunk = groups[g][c];
      ColumnChunk cc;
      ColumnMetaData m;
      m.type = schema[c].type;
      m.encodings = {Encoding::kPlain, Encoding::kRle};
      m.path_in_schema = {schema[c].name};
      m.codec = chunk.codec;
      m.num_values = chunk.num_values;
      m.total_compressed_size = static_cast<int64_t>(chunk.bytes.size());
      m.total_uncompressed_size = static_cast<int64_t>(chunk.bytes.size());
      int64_t start = static_cast<int64_t>(file.size());
      if (chunk.dict_bytes > 0) m.dictionary_page_offset = start;
      m.data_page_offset = start + static_cast<int64_t>(chunk.dict_bytes);
      cc.file_offset = start;
      cc.meta_data = m;
      rg.columns.push_back(cc);
      rg.total_byte_size += static_cast<int64_t>(chunk.bytes.size());
      file += chunk.bytes;
    }
    md.num_rows += rg.num_rows;
    md.row_groups.push_back(rg);
  }
  md.created_by = "infercost reader tests";
  std::string footer = serialize_file_metadata(md);
  file += footer;
  put_le32(static_cast<uint32_t>(footer.size()), file);
  file += "PAR1";
  if (out_meta) *out_meta = md;
  return file;
}

// Reads every flat column to the end (at most max_rows rows each) and
// describes the file; the first error, if any.
inline Status read_everything(const std::shared_ptr<ParquetFile>& file, int64_t max_rows = 1'000'000,
                              size_t batch = 257) {
  (void)describe_file(*file);
  for (const ColumnDescriptor& column : file->columns()) {
    if (!column.flat) continue;
    auto reader = ColumnReader::open(file, column.leaf_index);
    if (!reader.ok()) return reader.status();
    ColumnValues values;
    std::string json;
    for (;;) {
      values.clear();
      auto n = (*reader)->next(batch, values);
      if (!n.ok()) return n.status();
      if (*n == 0) break;
      json.clear();
      for (size_t i = 0; i < values.size(); ++i) append_value_json(column, values, i, json);
      if ((*reader)->rows_read() >= max_rows) break;
    }
  }
  return Status();
}

}  // namespace infercost::parquet::testing
