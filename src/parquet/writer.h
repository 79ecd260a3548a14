// Writing Parquet files: flat columns, and fixed-size lists of floats
// (embeddings), buffered a row group at a time (memory bounded by
// WriterOptions::row_group_bytes), written to a temporary that close()
// renames into place, so a failed run leaves nothing behind.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "infercost/status.h"
#include "parquet/metadata.h"

namespace infercost::parquet {

struct ColumnSpec {
  enum class Kind { kString, kInt32, kInt64, kFloat, kDouble };
  std::string name;
  Kind kind = Kind::kString;
  bool nullable = true;  // OPTIONAL, else REQUIRED
  // With kFloat and list_size > 0: each row holds exactly list_size floats
  // (or is null when nullable), written as a 3-level Parquet LIST
  // (NAME.list.element) with an "ARROW:schema" key-value entry that makes
  // Arrow readers see fixed_size_list<element: float>[list_size]. 0 for
  // every other column.
  int list_size = 0;
};

struct WriterOptions {
  Codec codec = Codec::kSnappy;
  int compression_level = -1;            // codec default
  int64_t row_group_bytes = 64ll << 20;  // flush when the buffered (encoded, uncompressed) data passes this
  int64_t row_group_rows = 1'000'000;    // or this many rows
  int64_t page_bytes = 1 << 20;          // target data page size
  bool dictionary = true;                // strings: dictionary-encode while it pays, else fall back to PLAIN
  int data_page_version = 1;             // 1 or 2
  bool statistics = true;                // min/max/null_count per column chunk and page
  bool page_crc = true;
  // Written as given. A schema with a list column adds "ARROW:schema"
  // (describing every column) unless this already has that key.
  std::vector<std::pair<std::string, std::string>> key_value_metadata;
};

// Where a resumable file stands after ParquetWriter::checkpoint(): its bytes
// up to the end of the last complete row group, and the footer that would
// describe them (a serialized FileMetaData, without the length and magic).
struct WriterCheckpoint {
  uint64_t bytes = 0;
  std::string footer;
  int64_t rows = 0;
};

class ParquetWriter {
 public:
  // Errors: kInvalidArgument (empty schema, duplicate names, a list_size
  // that is negative or on a column that is not kFloat, bad options),
  // kIOError naming the path.
  static Result<std::unique_ptr<ParquetWriter>> create(const std::string& path,
                                                       std::vector<ColumnSpec> schema,
                                                       const WriterOptions& options = {});
  // A resumable file, written to `partial` (AtomicOutputFile::open_resumable)
  // and renamed to `path` by close(). `from` null: a new file. Otherwise the
  // partial is cut to from->bytes and the row groups from->footer lists are
  // kept: close() writes one footer holding them and those written after.
  // kCorruption naming the partial when the footer does not parse, does not
  // match `schema`, or does not end where from->bytes says.
  static Result<std::unique_ptr<ParquetWriter>> create_resumable(const std::string& path,
                                                                 const std::string& partial,
                                                                 std::vector<ColumnSpec> schema,
                                                                 const WriterOptions& options,
                                                                 const WriterCheckpoint* from);
  virtual ~ParquetWriter() = default;

  // Append one cell to column `column` of the current row; the kind must
  // match the ColumnSpec (an int32 column takes append_int64 values in
  // range, a list column only append_floats or append_null). Misuse (wrong
  // kind, a list of the wrong length, null in a REQUIRED column, a second
  // cell in one row) is reported by the next end_row() as kInvalidArgument.
  virtual void append_string(int column, std::string_view value) = 0;
  virtual void append_int64(int column, int64_t value) = 0;
  virtual void append_double(int column, double value) = 0;
  // The cell of a list column: exactly list_size values (copied).
  virtual void append_floats(int column, std::span<const float> values) = 0;
  // A null cell; for a list column, a null row (not a list of nulls).
  virtual void append_null(int column) = 0;
  // Ends the row: every column must have exactly one new cell (else
  // kInvalidArgument naming the column); may flush a row group.
  virtual Status end_row() = 0;
  // Flushes the last row group, writes the footer and renames the file
  // into place. After an error nothing is left at the path.
  virtual Status close() = 0;
  virtual int64_t rows_written() const = 0;
  // Ends the current row group (if it has rows), makes the file durable
  // (fsync) and says where it stands, for a later create_resumable().
  virtual Result<WriterCheckpoint> checkpoint() = 0;
  // Closes without writing the footer; the partial of a resumable file is
  // removed too (it is kept by destruction without close()).
  virtual void discard() = 0;
};

}  // namespace infercost::parquet
