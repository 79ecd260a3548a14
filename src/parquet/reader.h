// Reading Parquet files: the footer, the flat (leaf) columns, and a streaming
// reader for one column that holds at most one page (plus the column chunk's
// dictionary) in memory at a time, so peak memory is bounded by the largest
// page and dictionary, not by the file or row group.
//
// Supported: flat columns (required or optional, at the top level) of every
// physical type; data pages v1 and v2; PLAIN, PLAIN_DICTIONARY,
// RLE_DICTIONARY, RLE (booleans), DELTA_BINARY_PACKED,
// DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY and BYTE_STREAM_SPLIT; every codec
// compression.h decompresses; page CRCs are checked when present.
// Refused with kUnsupported naming the feature and the column: nested or
// repeated columns (reading them; other columns of the file still read),
// encrypted files or columns, column chunks in other files, LZO.
// Corrupt input is kCorruption "<path>: <where>: <what>", where <where> names
// the row group, column and byte offset when known.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "infercost/status.h"
#include "parquet/encoding.h"
#include "parquet/metadata.h"

namespace infercost::parquet {

// A leaf column of the schema.
struct ColumnDescriptor {
  std::string path;                        // dotted path from the root, e.g. "full_text" or "a.b.c"
  int leaf_index = 0;                      // index in RowGroup::columns
  const SchemaElement* element = nullptr;  // into ParquetFile::metadata().schema
  int16_t max_definition_level = 0;
  int16_t max_repetition_level = 0;
  bool flat = true;  // a top-level required/optional field
};

class ParquetFile {
 public:
  // Reads and validates the footer (magic, length, schema tree, row group
  // and column chunk offsets within the file). Errors: kNotFound/kIOError
  // naming the path, kCorruption, kUnsupported (encrypted footer "PARE").
  static Result<std::shared_ptr<ParquetFile>> open(const std::string& path);
  // The same over bytes already in memory (fuzzing, tests); `name` stands
  // for the path in messages.
  static Result<std::shared_ptr<ParquetFile>> open_memory(std::string name, std::string bytes);
  virtual ~ParquetFile() = default;

  virtual const std::string& path() const = 0;
  virtual uint64_t file_size() const = 0;
  virtual const FileMetaData& metadata() const = 0;
  virtual const std::vector<ColumnDescriptor>& columns() const = 0;
  // The leaf named `name` (its dotted path). Not found: kNotFound listing
  // the columns the file has. A nested/repeated match: kUnsupported.
  virtual Result<const ColumnDescriptor*> find_flat_column(std::string_view name) const = 0;
  // Reads `size` bytes at `offset` (pread); short reads are kCorruption.
  virtual Status read_at(uint64_t offset, size_t size, uint8_t* out) const = 0;
};

// Values of one batch. Which vector is filled depends on the physical type:
// BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY, INT96 -> strings; BOOLEAN, INT32, INT64 ->
// ints; FLOAT, DOUBLE -> doubles. valid[i] is 0 for a null row, and nulls
// take an empty slot in the filled vector (so row i is at index i).
struct ColumnValues {
  PhysicalType type = PhysicalType::kByteArray;
  ByteArrayBuffer strings;
  std::vector<int64_t> ints;
  std::vector<double> doubles;
  std::vector<uint8_t> valid;
  size_t size() const { return valid.size(); }
  void clear() {
    strings.clear();
    ints.clear();
    doubles.clear();
    valid.clear();
  }
};

// Streams one flat column through every row group, page by page.
class ColumnReader {
 public:
  // kUnsupported for a non-flat column, naming it.
  static Result<std::unique_ptr<ColumnReader>> open(std::shared_ptr<const ParquetFile> file, int leaf_index);
  virtual ~ColumnReader() = default;
  // Appends up to max_rows rows to `out` (not cleared first); returns how
  // many, 0 at the end of the column.
  virtual Result<size_t> next(size_t max_rows, ColumnValues& out) = 0;
  // Skips `rows` rows: whole row groups by the footer's counts, without
  // reading their pages, then decoded and dropped within the next one.
  // Skipped rows count in rows_read() and their groups' bytes in
  // bytes_read(). kInvalidArgument past the column's end.
  virtual Status skip_rows(int64_t rows) = 0;
  virtual int64_t rows_read() const = 0;
  // Bytes of the file consumed so far (compressed pages), for progress.
  virtual uint64_t bytes_read() const = 0;
  // Largest buffers held at once so far (page + decompressed page +
  // dictionary), for the memory bound.
  virtual uint64_t peak_buffer_bytes() const = 0;
};

// One value as JSON for `infercost cat`: strings (UTF8/STRING/ENUM/JSON, or
// any BYTE_ARRAY that is valid UTF-8) as JSON strings; other binary as a
// JSON string of \u00XX escapes for non-ASCII bytes; integers honouring
// unsigned logical types; floats with round-trip precision (NaN/Inf as
// strings "NaN", "Infinity", "-Infinity"); INT96 as its 12 bytes in hex;
// DATE/TIMESTAMP as their raw numbers. Null is `null`.
void append_value_json(const ColumnDescriptor& column, const ColumnValues& values, size_t i,
                       std::string& out);

// `infercost inspect`: a human-readable description of the file: rows,
// created_by, key-value keys, the schema tree with types, and per row group
// each column's codec, encodings, compressed and uncompressed sizes, value
// count, null count and min/max when present.
std::string describe_file(const ParquetFile& file);

}  // namespace infercost::parquet
