#include "parquet/writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_set>
#include <utility>

#include "core/file.h"
#include "core/test_point.h"
#include "parquet/arrow_schema.h"
#include "parquet/column_chunk_writer.h"
#include "parquet/compression.h"
#include "parquet/encoding.h"

namespace infercost::parquet {
namespace {

using detail::ColumnChunkWriter;
using detail::physical_type_of;
using detail::put_u32;
using detail::spec_kind_name;

constexpr char kCreatedBy[] = "infercost version 0.1.0 (build infercost-parquet)";

class ParquetWriterImpl final : public ParquetWriter {
 public:
  ParquetWriterImpl(AtomicOutputFile out, std::vector<ColumnSpec> schema, const WriterOptions& options)
      : out_(std::move(out)), schema_(std::move(schema)), options_(options) {
    if (std::any_of(schema_.begin(), schema_.end(), [](const ColumnSpec& s) { return s.list_size > 0; })) {
      arrow_schema_ = arrow_schema_metadata(schema_);
    }
    cells_.resize(schema_.size());
    columns_.reserve(schema_.size());
    for (const ColumnSpec& spec : schema_)
      columns_.push_back(std::make_unique<ColumnChunkWriter>(spec, options_));
  }
  ~ParquetWriterImpl() override {
    if (!closed_) out_.abandon();
  }

  Status start() {
    offset_ = 4;
    return with_path(out_.write(std::string_view(kParquetMagic, 4)));
  }

  void append_string(int column, std::string_view value) override {
    Cell* c = cell_for(column, "a string");
    if (!c) return;
    if (schema_[column].kind != ColumnSpec::Kind::kString || schema_[column].list_size > 0) {
      return wrong_kind(column, "a string");
    }
    c->state = Cell::kString;
    c->text.assign(value);
  }
  void append_int64(int column, int64_t value) override {
    Cell* c = cell_for(column, "an integer");
    if (!c) return;
    ColumnSpec::Kind kind = schema_[column].kind;
    if (schema_[column].list_size > 0) return wrong_kind(column, "an integer");
    if (kind == ColumnSpec::Kind::kInt32) {
      if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
        return misuse(fmt::format("column '{}': {} is out of range for int32", schema_[column].name, value));
      }
    } else if (kind != ColumnSpec::Kind::kInt64) {
      return wrong_kind(column, "an integer");
    }
    c->state = Cell::kInt;
    c->integer = value;
  }
  void append_double(int column, double value) override {
    Cell* c = cell_for(column, "a floating-point value");
    if (!c) return;
    ColumnSpec::Kind kind = schema_[column].kind;
    if ((kind != ColumnSpec::Kind::kFloat && kind != ColumnSpec::Kind::kDouble) ||
        schema_[column].list_size > 0) {
      return wrong_kind(column, "a floating-point value");
    }
    c->state = Cell::kDouble;
    c->real = value;
  }
  void append_floats(int column, std::span<const float> values) override {
    Cell* c = cell_for(column, "a list of floats");
    if (!c) return;
    const ColumnSpec& spec = schema_[column];
    if (spec.list_size == 0) return wrong_kind(column, "a list of floats");
    if (values.size() != static_cast<size_t>(spec.list_size)) {
      return misuse(fmt::format("column '{}' holds lists of {} floats but got {}", spec.name, spec.list_size,
                                values.size()));
    }
    c->state = Cell::kFloats;
    c->floats.assign(values.begin(), values.end());
  }
  void append_null(int column) override {
    Cell* c = cell_for(column, "a null");
    if (!c) return;
    if (!schema_[column].nullable) {
      return misuse(
          fmt::format("column '{}' is required (not nullable) but got a null", schema_[column].name));
    }
    c->state = Cell::kNull;
  }

  Status end_row() override {
    if (!failed_.ok()) return failed_;
    if (closed_) return invalid_argument(out_.path() + ": end_row() after close()");
    Status misuse = std::move(misuse_);
    misuse_ = Status();
    if (misuse.ok()) {
      for (size_t i = 0; i < cells_.size(); ++i) {
        if (cells_[i].state == Cell::kEmpty) {
          misuse = invalid_argument(
              fmt::format("row {}: column '{}' has no value (append one cell per column per row, "
                          "append_null for null)",
                          rows_written_, schema_[i].name));
          break;
        }
      }
    }
    if (!misuse.ok()) {
      for (Cell& c : cells_) c.state = Cell::kEmpty;
      return misuse.with_context(out_.path());
    }
    for (size_t i = 0; i < cells_.size(); ++i) {
      Cell& c = cells_[i];
      ColumnChunkWriter& w = *columns_[i];
      switch (c.state) {
        case Cell::kNull: w.add_null(); break;
        case Cell::kString: w.add_string(c.text); break;
        case Cell::kInt: w.add_int(c.integer); break;
        case Cell::kDouble: w.add_double(c.real); break;
        case Cell::kFloats: w.add_float_list(c.floats); break;
        case Cell::kEmpty: break;
      }
      c.state = Cell::kEmpty;
      Status st = w.maybe_finish_page();
      if (!st.ok()) return fail(st);
    }
    ++rows_written_;
    ++group_rows_;
    if (group_rows_ >= options_.row_group_rows) return flush_row_group();
    // Summing every column after every row is cheap next to encoding it.
    int64_t buffered = 0;
    for (const auto& w : columns_) buffered += w->buffered_bytes();
    if (buffered >= options_.row_group_bytes) return flush_row_group();
    return Status();
  }

  // Checks that `from` describes a file of this schema ending at from.bytes
  // (before the partial is touched), and takes its row groups.
  Status resume(const WriterCheckpoint& from, const std::string& partial) {
    auto bad = [&](const std::string& why) { return corruption(partial + ": cannot resume: " + why); };
    Result<FileMetaData> md =
        parse_file_metadata(reinterpret_cast<const uint8_t*>(from.footer.data()), from.footer.size());
    if (!md.ok()) return bad("the checkpoint's footer does not parse: " + md.status().message());
    const FileMetaData expected = metadata({});
    if (md->schema.size() != expected.schema.size()) return bad("its schema differs from this run's");
    for (size_t i = 0; i < md->schema.size(); ++i) {
      const SchemaElement& got = md->schema[i];
      const SchemaElement& want = expected.schema[i];
      if (got.name != want.name || got.type != want.type || got.repetition != want.repetition ||
          got.num_children != want.num_children || got.converted_type != want.converted_type) {
        return bad("its schema differs from this run's at column '" + got.name + "'");
      }
    }
    // A list's size is only in the Arrow schema.
    if (arrow_schema_of(*md) != arrow_schema_of(expected)) {
      return bad("its Arrow schema (ARROW:schema) differs from this run's");
    }
    int64_t end = 4, rows = 0;
    for (const RowGroup& rg : md->row_groups) {
      if (rg.columns.size() != schema_.size()) return bad("a row group has the wrong number of columns");
      for (const ColumnChunk& chunk : rg.columns) {
        if (!chunk.meta_data) return bad("a column chunk has no metadata");
        const ColumnMetaData& m = *chunk.meta_data;
        int64_t start = m.data_page_offset;
        if (m.dictionary_page_offset && *m.dictionary_page_offset > 0)
          start = std::min(start, *m.dictionary_page_offset);
        end = std::max(end, start + m.total_compressed_size);
      }
      rows += rg.num_rows;
    }
    if (static_cast<uint64_t>(end) != from.bytes || rows != md->num_rows) {
      return bad(fmt::format("its row groups end at byte {} ({} rows), the checkpoint says {} ({} rows)", end,
                             rows, from.bytes, md->num_rows));
    }
    row_groups_ = std::move(md->row_groups);
    rows_written_ = rows;
    offset_ = end;
    return Status();
  }

  // The output to write to, once resume() has accepted the checkpoint.
  void adopt(AtomicOutputFile out) { out_ = std::move(out); }

  Result<WriterCheckpoint> checkpoint() override {
    if (!failed_.ok()) return failed_;
    if (closed_) return invalid_argument(out_.path() + ": checkpoint() after close()");
    INFERCOST_RETURN_IF_ERROR(flush_row_group());
    Status synced = out_.sync();
    if (!synced.ok()) return fail(synced);
    WriterCheckpoint c;
    c.bytes = static_cast<uint64_t>(offset_);
    c.footer = serialize_file_metadata(metadata(row_groups_));
    c.rows = rows_written_;
    return c;
  }

  void discard() override {
    closed_ = true;
    out_.discard();
  }

  Status close() override {
    if (!failed_.ok()) return failed_;
    if (closed_) return invalid_argument(out_.path() + ": close() called twice");
    if (!misuse_.ok()) {
      // Cells of an unfinished row: drop them; the row was never ended.
      misuse_ = Status();
    }
    INFERCOST_RETURN_IF_ERROR(flush_row_group());
    const FileMetaData md = metadata(std::move(row_groups_));
    std::string footer = serialize_file_metadata(md);
    put_u32(footer, static_cast<uint32_t>(footer.size()));
    footer.append(kParquetMagic, 4);
    test_point("parquet-footer");
    // In two writes, so that a crash test can stop between them.
    const size_t half = footer.size() / 2;
    Status st = with_path(out_.write(std::string_view(footer).substr(0, half)));
    if (st.ok()) st = with_path(out_.flush());
    test_point("parquet-footer-half");
    if (st.ok()) st = with_path(out_.write(std::string_view(footer).substr(half)));
    if (st.ok()) st = with_path(out_.commit());
    if (!st.ok()) return fail(st);
    closed_ = true;
    return Status();
  }

  int64_t rows_written() const override { return rows_written_; }

 private:
  // The file's metadata with these row groups.
  FileMetaData metadata(std::vector<RowGroup> row_groups) const {
    FileMetaData md;
    md.version = 2;
    SchemaElement root;
    root.name = "schema";
    root.num_children = static_cast<int32_t>(schema_.size());
    md.schema.push_back(root);
    bool has_list = false;
    for (const ColumnSpec& spec : schema_) {
      const Repetition repetition = spec.nullable ? Repetition::kOptional : Repetition::kRequired;
      if (spec.list_size > 0) {
        // The 3-level LIST: <repetition> group NAME (LIST) { repeated group
        // list { required float element; } }.
        has_list = true;
        SchemaElement outer;
        outer.name = spec.name;
        outer.repetition = repetition;
        outer.num_children = 1;
        outer.converted_type = ConvertedType::kList;
        outer.logical_type.kind = LogicalType::kList;
        md.schema.push_back(std::move(outer));
        SchemaElement list;
        list.name = "list";
        list.repetition = Repetition::kRepeated;
        list.num_children = 1;
        md.schema.push_back(std::move(list));
        SchemaElement element;
        element.name = "element";
        element.type = PhysicalType::kFloat;
        element.repetition = Repetition::kRequired;
        md.schema.push_back(std::move(element));
        continue;
      }
      SchemaElement e;
      e.name = spec.name;
      e.type = physical_type_of(spec.kind);
      e.repetition = repetition;
      if (spec.kind == ColumnSpec::Kind::kString) {
        e.converted_type = ConvertedType::kUtf8;
        e.logical_type.kind = LogicalType::kString;
      }
      md.schema.push_back(std::move(e));
    }
    md.row_groups = std::move(row_groups);
    int64_t rows = 0;
    for (const RowGroup& rg : md.row_groups) rows += rg.num_rows;
    md.num_rows = rows;
    bool caller_arrow_schema = false;
    for (const auto& [k, v] : options_.key_value_metadata) {
      md.key_value_metadata.emplace_back(k, v);
      caller_arrow_schema = caller_arrow_schema || k == kArrowSchemaKey;
    }
    // Only with a list column (Arrow readers need it for fixed_size_list),
    // so flat files stay as they were.
    if (has_list && !caller_arrow_schema) md.key_value_metadata.emplace_back(kArrowSchemaKey, arrow_schema_);
    md.created_by = kCreatedBy;
    md.column_orders.assign(schema_.size(), 1);  // TYPE_ORDER: min/max are meaningful
    return md;
  }

  static std::optional<std::string> arrow_schema_of(const FileMetaData& md) {
    for (const auto& [k, v] : md.key_value_metadata) {
      if (k == kArrowSchemaKey) return v.value_or("");
    }
    return std::nullopt;
  }

  struct Cell {
    enum State { kEmpty, kNull, kString, kInt, kDouble, kFloats };
    State state = kEmpty;
    std::string text;
    int64_t integer = 0;
    double real = 0;
    std::vector<float> floats;
  };

  Status with_path(Status st) const {
    if (st.ok()) return st;
    // AtomicOutputFile errors already name the path; others get it here.
    if (st.message().find(out_.path()) != std::string::npos) return st;
    return st.with_context(out_.path());
  }

  Status fail(Status st) {
    failed_ = with_path(std::move(st));
    out_.abandon();
    return failed_;
  }

  void misuse(std::string message) {
    if (misuse_.ok()) misuse_ = invalid_argument(std::move(message));
  }
  void wrong_kind(int column, const char* what) {
    misuse(fmt::format("column '{}' is {} but got {}", schema_[column].name, spec_kind_name(schema_[column]),
                       what));
  }
  Cell* cell_for(int column, const char* what) {
    if (column < 0 || static_cast<size_t>(column) >= cells_.size()) {
      misuse(fmt::format("column index {} (for {}) is out of range: the schema has {} columns", column, what,
                         cells_.size()));
      return nullptr;
    }
    Cell& c = cells_[column];
    if (c.state != Cell::kEmpty) {
      misuse(fmt::format("column '{}' got a second cell in one row", schema_[column].name));
      return nullptr;
    }
    return &c;
  }

  Status flush_row_group() {
    if (group_rows_ == 0) return Status();
    RowGroup rg;
    rg.num_rows = group_rows_;
    rg.file_offset = offset_;
    rg.columns.resize(columns_.size());
    int64_t uncompressed = 0, compressed = 0;
    for (size_t i = 0; i < columns_.size(); ++i) {
      Status st = columns_[i]->write_chunk(out_, offset_, rg.columns[i]);
      if (!st.ok()) return fail(st);
      const ColumnMetaData& md = *rg.columns[i].meta_data;
      offset_ += md.total_compressed_size;
      uncompressed += md.total_uncompressed_size;
      compressed += md.total_compressed_size;
    }
    rg.total_byte_size = uncompressed;
    rg.total_compressed_size = compressed;
    if (row_groups_.size() <= static_cast<size_t>(std::numeric_limits<int16_t>::max())) {
      rg.ordinal = static_cast<int16_t>(row_groups_.size());
    }
    row_groups_.push_back(std::move(rg));
    group_rows_ = 0;
    return Status();
  }

  AtomicOutputFile out_;
  std::vector<ColumnSpec> schema_;
  WriterOptions options_;
  std::string arrow_schema_;  // the ARROW:schema value, for a schema with a list column
  std::vector<std::unique_ptr<ColumnChunkWriter>> columns_;
  std::vector<Cell> cells_;
  std::vector<RowGroup> row_groups_;
  Status misuse_, failed_;
  int64_t offset_ = 0;
  int64_t rows_written_ = 0, group_rows_ = 0;
  bool closed_ = false;
};

}  // namespace

namespace {

Status check_writer_arguments(const std::string& path, const std::vector<ColumnSpec>& schema,
                              const WriterOptions& options) {
  if (schema.empty()) return invalid_argument(path + ": Parquet schema has no columns");
  std::unordered_set<std::string> names;
  for (const ColumnSpec& spec : schema) {
    if (spec.name.empty()) return invalid_argument(path + ": Parquet column with an empty name");
    if (!names.insert(spec.name).second) {
      return invalid_argument(fmt::format("{}: duplicate Parquet column name '{}'", path, spec.name));
    }
    if (spec.list_size < 0 || (spec.list_size > 0 && spec.kind != ColumnSpec::Kind::kFloat)) {
      return invalid_argument(fmt::format(
          "{}: Parquet column '{}': list_size {} (lists must be of float, with list_size > 0; 0 for a "
          "flat column)",
          path, spec.name, spec.list_size));
    }
  }
  if (options.data_page_version != 1 && options.data_page_version != 2) {
    return invalid_argument(
        fmt::format("{}: data_page_version must be 1 or 2, got {}", path, options.data_page_version));
  }
  if (options.page_bytes <= 0 || options.row_group_bytes <= 0 || options.row_group_rows <= 0) {
    return invalid_argument(path + ": page_bytes, row_group_bytes and row_group_rows must be positive");
  }
  if (!can_decompress(options.codec)) {  // compress() writes every codec decompress() reads
    return invalid_argument(fmt::format("{}: cannot write codec {}", path, codec_name(options.codec)));
  }
  return Status();
}

}  // namespace

Result<std::unique_ptr<ParquetWriter>> ParquetWriter::create(const std::string& path,
                                                             std::vector<ColumnSpec> schema,
                                                             const WriterOptions& options) {
  INFERCOST_RETURN_IF_ERROR(check_writer_arguments(path, schema, options));
  INFERCOST_ASSIGN_OR_RETURN(AtomicOutputFile out, AtomicOutputFile::create(path));
  auto writer = std::make_unique<ParquetWriterImpl>(std::move(out), std::move(schema), options);
  INFERCOST_RETURN_IF_ERROR(writer->start());
  return std::unique_ptr<ParquetWriter>(std::move(writer));
}

Result<std::unique_ptr<ParquetWriter>> ParquetWriter::create_resumable(const std::string& path,
                                                                       const std::string& partial,
                                                                       std::vector<ColumnSpec> schema,
                                                                       const WriterOptions& options,
                                                                       const WriterCheckpoint* from) {
  INFERCOST_RETURN_IF_ERROR(check_writer_arguments(path, schema, options));
  if (!from) {
    INFERCOST_ASSIGN_OR_RETURN(AtomicOutputFile out, AtomicOutputFile::open_resumable(path, partial, 0));
    auto writer = std::make_unique<ParquetWriterImpl>(std::move(out), std::move(schema), options);
    INFERCOST_RETURN_IF_ERROR(writer->start());
    return std::unique_ptr<ParquetWriter>(std::move(writer));
  }
  // The checkpoint is checked first: the partial is cut back only for one that fits.
  auto writer = std::make_unique<ParquetWriterImpl>(AtomicOutputFile(), std::move(schema), options);
  INFERCOST_RETURN_IF_ERROR(writer->resume(*from, partial));
  INFERCOST_ASSIGN_OR_RETURN(AtomicOutputFile out,
                             AtomicOutputFile::open_resumable(path, partial, from->bytes));
  writer->adopt(std::move(out));
  return std::unique_ptr<ParquetWriter>(std::move(writer));
}

}  // namespace infercost::parquet
