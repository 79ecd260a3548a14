#include "io/parquet_source.h"

#include <fmt/format.h>

#include <cstring>

#include "core/utf8.h"
#include "io/bad_rows.h"
#include "parquet/reader.h"

namespace infercost::io {
namespace {

// A Parquet feature the reader does not support, in an input file, is a
// reason the input cannot be read: bad data (exit status 3), like a
// malformed file, not a refused option.
Status as_input_error(Status s) {
  if (s.code() != StatusCode::kUnsupported) return s;
  return corruption(s.message());
}

template <typename T>
Result<T> as_input_error(Result<T> r) {
  if (r.ok()) return r;
  return as_input_error(r.status());
}

class ParquetSource : public RowSource {
 public:
  ParquetSource(std::shared_ptr<parquet::ParquetFile> file, const parquet::ColumnDescriptor* column,
                std::unique_ptr<parquet::ColumnReader> reader, const SourceOptions& options)
      : file_(std::move(file)), column_(column), reader_(std::move(reader)), options_(options) {}

  Result<size_t> next(size_t max_rows, RowBatch& out) override {
    size_t produced = 0;
    while (produced < max_rows) {
      values_.clear();
      INFERCOST_ASSIGN_OR_RETURN(size_t n, as_input_error(reader_->next(max_rows - produced, values_)));
      if (n == 0) break;
      for (size_t i = 0; i < n; ++i) {
        const int64_t row = ++row_;
        if (!values_.valid[i]) {
          out.add(std::string(), true, row);
          ++produced;
          continue;
        }
        std::string text;
        if (options_.values_as_json) {
          parquet::append_value_json(*column_, values_, i, text);
        } else {
          const std::string_view value = values_.strings.at(i);
          const size_t bad = find_invalid_utf8(value);
          if (bad != std::string_view::npos) {
            INFERCOST_RETURN_IF_ERROR(
                bad_.handle(corruption(fmt::format("{}: row {}: column '{}': invalid UTF-8 at byte {}",
                                                   file_->path(), row, column_->path, bad))));
            continue;
          }
          text.assign(value);
        }
        out.add(std::move(text), false, row);
        ++produced;
      }
    }
    return produced;
  }

  int64_t rows_skipped() const override { return bad_.skipped(); }
  const Status& first_skip_reason() const override { return bad_.first(); }
  uint64_t bytes_total() const override { return file_->file_size(); }
  uint64_t bytes_read() const override { return reader_->bytes_read(); }
  const char* location_unit() const override { return "row"; }
  // The next row's index; Parquet rows have no byte offset of their own.
  SourcePosition position() const override { return {row_, 0, 0}; }
  Status seek(const SourcePosition& at) override {
    if (at.rows < 0 || at.rows > file_->metadata().num_rows || row_ != 0) {
      return invalid_argument(fmt::format("{}: cannot continue at row {}: the file has {} rows",
                                          file_->path(), at.rows, file_->metadata().num_rows));
    }
    INFERCOST_RETURN_IF_ERROR(as_input_error(reader_->skip_rows(at.rows)));
    row_ = at.rows;
    return Status();
  }

 private:
  std::shared_ptr<parquet::ParquetFile> file_;
  const parquet::ColumnDescriptor* column_;
  std::unique_ptr<parquet::ColumnReader> reader_;
  SourceOptions options_;
  parquet::ColumnValues values_;
  int64_t row_ = 0;
  BadRows bad_{options_.on_bad_row};
};

}  // namespace

Result<int64_t> parquet_rows(const std::string& path) {
  INFERCOST_ASSIGN_OR_RETURN(std::shared_ptr<parquet::ParquetFile> file, parquet::ParquetFile::open(path));
  return file->metadata().num_rows;
}

Result<std::unique_ptr<RowSource>> open_parquet_source(const std::string& path,
                                                       const SourceOptions& options) {
  INFERCOST_ASSIGN_OR_RETURN(std::shared_ptr<parquet::ParquetFile> file,
                             as_input_error(parquet::ParquetFile::open(path)));
  INFERCOST_ASSIGN_OR_RETURN(const parquet::ColumnDescriptor* column, file->find_flat_column(options.column));
  const parquet::PhysicalType type = *column->element->type;
  if (!options.values_as_json && type != parquet::PhysicalType::kByteArray &&
      type != parquet::PhysicalType::kFixedLenByteArray) {
    return invalid_argument(fmt::format("{}: column '{}' is {}, not a text column", path, column->path,
                                        parquet::type_name(type)));
  }
  INFERCOST_ASSIGN_OR_RETURN(std::unique_ptr<parquet::ColumnReader> reader,
                             as_input_error(parquet::ColumnReader::open(file, column->leaf_index)));
  return std::unique_ptr<RowSource>(new ParquetSource(std::move(file), column, std::move(reader), options));
}

}  // namespace infercost::io
