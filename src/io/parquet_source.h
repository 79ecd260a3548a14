// The Parquet RowSource: one flat column of a Parquet file, streamed page by
// page through infercost::parquet::ColumnReader.
#pragma once

#include <memory>
#include <string>

#include "infercost/status.h"
#include "io/row_source.h"

namespace infercost::io {

// Opens `path` and its column options.column. Errors: those of
// ParquetFile::open; kNotFound listing the file's columns; kUnsupported for
// a nested column; kInvalidArgument "<path>: column 'x' is INT64, not a
// text column" when !options.values_as_json and the column is not
// BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY. RowBatch::lines are 1-based rows.
Result<std::unique_ptr<RowSource>> open_parquet_source(const std::string& path, const SourceOptions& options);

// The footer's row count.
Result<int64_t> parquet_rows(const std::string& path);

}  // namespace infercost::io
