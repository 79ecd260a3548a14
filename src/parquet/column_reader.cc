#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "parquet/compression.h"
#include "parquet/encoding.h"
#include "parquet/reader.h"

namespace infercost::parquet {
namespace {

// Page headers are read with a small prefix first, grown on "truncated".
constexpr size_t kHeaderPrefix = 256;
constexpr size_t kMaxHeaderBytes = 16u << 20;
// No page buffer is ever larger than this, whatever the header claims.
constexpr uint64_t kMaxPageBytes = 1ull << 30;
// Below this a decompressed size is always believed; above it, only up to
// this ratio to the compressed size (gzip's limit is ~1032:1), so a forged
// header cannot make us allocate gigabytes from a few bytes.
constexpr uint64_t kTrustedPageBytes = 64u << 20;
constexpr uint64_t kMaxCompressionRatio = 1100;
// Levels are decoded in blocks of this many when only counting.
constexpr size_t kLevelBlock = 4096;

// Appends the `count` values of type T stored one after another at `p`
// (little-endian, as on the machines we run on) to `out`.
template <typename T, typename Out>
void append_stored_values(const char* p, size_t count, std::vector<Out>& out) {
  for (size_t i = 0; i < count; ++i, p += sizeof(T)) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    out.push_back(v);
  }
}

// A grow-only, uninitialised byte buffer reused across pages.
class PageBuffer {
 public:
  uint8_t* ensure(size_t n) {
    if (n > capacity_) {
      data_.reset(new uint8_t[n]);
      capacity_ = n;
    }
    return data_.get();
  }
  uint8_t* data() { return data_.get(); }
  size_t capacity() const { return capacity_; }

 private:
  std::unique_ptr<uint8_t[]> data_;
  size_t capacity_ = 0;
};

// parquet-mr up to 1.2.8 left the dictionary page header out of a column
// chunk's total_compressed_size (IMPALA-694), so its chunks may run up to a
// header's length past their stated end. Such files get this much slack.
constexpr uint64_t kLegacyDictionaryHeaderPadding = 100;

// "parquet-mr" with no version, or "parquet-mr version X.Y.Z ..." below 1.2.9.
bool written_by_old_parquet_mr(const std::string& created_by) {
  const std::string prefix = "parquet-mr";
  if (created_by.compare(0, prefix.size(), prefix) != 0) return false;
  size_t at = created_by.find("version ");
  if (at == std::string::npos) return true;
  int v[3] = {0, 0, 0};
  const char* p = created_by.c_str() + at + 8;
  for (int i = 0; i < 3; ++i) {
    for (; *p >= '0' && *p <= '9'; ++p) v[i] = std::min(v[i] * 10 + (*p - '0'), 1000000);
    if (*p != '.') break;
    ++p;
  }
  return v[0] < 1 || (v[0] == 1 && (v[1] < 2 || (v[1] == 2 && v[2] < 9)));
}

uint32_t load_le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

size_t values_bytes(const ColumnValues& v) {
  return v.strings.bytes.capacity() + v.strings.offsets.capacity() * sizeof(uint64_t) +
         v.ints.capacity() * sizeof(int64_t) + v.doubles.capacity() * sizeof(double) + v.valid.capacity();
}

// Spreads the k values appended after `base` over the n rows whose validity
// is valid[0, n) (k of them set): nulls get an empty slot / zero.
template <typename T>
void spread_values(std::vector<T>& v, size_t base, const uint8_t* valid, size_t n) {
  size_t j = v.size() - base;
  v.resize(base + n);
  for (size_t i = n; i-- > 0;) {
    if (valid[i]) {
      v[base + i] = v[base + j - 1];
      --j;
    } else {
      v[base + i] = T();
    }
  }
}

void spread_strings(ByteArrayBuffer& s, size_t base, const uint8_t* valid, size_t n) {
  // offsets[base] is where this batch starts; value m ends at offsets[base + 1 + m].
  std::vector<uint64_t>& off = s.offsets;
  size_t j = off.size() - 1 - base;
  off.resize(base + 1 + n);
  for (size_t i = n; i-- > 0;) {
    off[base + 1 + i] = off[base + j];
    if (valid[i]) --j;
  }
}

class ColumnReaderImpl : public ColumnReader {
 public:
  ColumnReaderImpl(std::shared_ptr<const ParquetFile> file, const ColumnDescriptor& column)
      : file_(std::move(file)), column_(column) {
    type_ = *column_.element->type;
    type_length_ = column_.element->type_length;
    level_width_ = bit_width_for(static_cast<uint64_t>(std::max<int16_t>(column_.max_definition_level, 0)));
    legacy_size_padding_ = written_by_old_parquet_mr(file_->metadata().created_by.value_or(""));
  }

  Result<size_t> next(size_t max_rows, ColumnValues& out) override {
    out.type = type_;
    size_t produced = 0;
    while (produced < max_rows) {
      if (page_left_ == 0) {
        INFERCOST_ASSIGN_OR_RETURN(bool more, next_data_page());
        if (!more) break;
        continue;
      }
      size_t n = static_cast<size_t>(std::min<uint64_t>(max_rows - produced, page_left_));
      INFERCOST_RETURN_IF_ERROR(read_rows(n, out));
      produced += n;
      page_left_ -= n;
      chunk_rows_ += static_cast<int64_t>(n);
      rows_read_ += static_cast<int64_t>(n);
    }
    update_peak();
    return produced;
  }

  Status skip_rows(int64_t rows) override {
    if (rows < 0) return invalid_argument(file_->path() + ": cannot skip a negative number of rows");
    const std::vector<RowGroup>& groups = file_->metadata().row_groups;
    // Whole row groups, while no chunk is open.
    while (rows > 0 && !chunk_open_ && page_left_ == 0 && row_group_ < static_cast<int>(groups.size()) &&
           groups[row_group_].num_rows <= rows) {
      const RowGroup& group = groups[row_group_];
      rows -= group.num_rows;
      rows_read_ += group.num_rows;
      const ColumnChunk& chunk = group.columns[column_.leaf_index];
      if (chunk.meta_data)
        bytes_read_ += static_cast<uint64_t>(std::max<int64_t>(chunk.meta_data->total_compressed_size, 0));
      ++row_group_;
    }
    ColumnValues dropped;
    while (rows > 0) {
      dropped.clear();
      INFERCOST_ASSIGN_OR_RETURN(size_t n, next(static_cast<size_t>(std::min<int64_t>(rows, 4096)), dropped));
      if (n == 0) {
        return invalid_argument(
            fmt::format("{}: column '{}': cannot skip {} more rows: the column ends at row {}", file_->path(),
                        column_.path, rows, rows_read_));
      }
      rows -= static_cast<int64_t>(n);
    }
    return Status();
  }

  int64_t rows_read() const override { return rows_read_; }
  uint64_t bytes_read() const override { return bytes_read_; }
  uint64_t peak_buffer_bytes() const override { return peak_; }

 private:
  Status error_at(uint64_t offset, const std::string& what) const {
    return corruption(fmt::format("{}: row group {}, column '{}', offset {}: {}", file_->path(), row_group_,
                                  column_.path, offset, what));
  }
  Status unsupported_here(const std::string& what) const {
    return unsupported(
        fmt::format("{}: row group {}, column '{}': {}", file_->path(), row_group_, column_.path, what));
  }

  void update_peak() {
    uint64_t now = raw_.capacity() + plain_.capacity() + header_.capacity() + values_bytes(dict_) +
                   values_bytes(page_values_) + levels_.capacity() * sizeof(uint32_t) +
                   indices_.capacity() * sizeof(uint32_t) + scratch_.capacity();
    peak_ = std::max(peak_, now);
  }

  // Opens row group `row_group_`'s chunk of this column.
  Status open_chunk() {
    const RowGroup& group = file_->metadata().row_groups[row_group_];
    const ColumnChunk& chunk = group.columns[column_.leaf_index];
    if (!chunk.file_path.empty()) {
      return unsupported_here(
          fmt::format("the column chunk lives in another file ('{}'); not supported", chunk.file_path));
    }
    if (!chunk.meta_data.has_value()) {
      if (chunk.has_crypto_metadata || chunk.has_encrypted_column_metadata) {
        return unsupported_here("encrypted columns are not supported");
      }
      return error_at(0, "column chunk has no metadata");
    }
    const ColumnMetaData& meta = *chunk.meta_data;
    if (meta.type != type_) {
      return error_at(static_cast<uint64_t>(meta.data_page_offset),
                      fmt::format("column chunk type {} differs from the schema's {}", type_name(meta.type),
                                  type_name(type_)));
    }
    if (!can_decompress(meta.codec)) {
      return unsupported_here(fmt::format("compression codec {} is not supported", codec_name(meta.codec)));
    }
    codec_ = meta.codec;
    // ParquetFile::open checked these offsets against the file.
    uint64_t start = static_cast<uint64_t>(meta.data_page_offset);
    if (meta.dictionary_page_offset.has_value() && *meta.dictionary_page_offset > 0 &&
        *meta.dictionary_page_offset < meta.data_page_offset) {
      start = static_cast<uint64_t>(*meta.dictionary_page_offset);
    }
    pos_ = start;
    end_ = start + static_cast<uint64_t>(meta.total_compressed_size);
    if (legacy_size_padding_) end_ = std::min(end_ + kLegacyDictionaryHeaderPadding, file_->file_size() - 8);
    chunk_rows_ = 0;
    group_rows_ = group.num_rows;
    dict_.clear();
    dict_size_ = 0;
    has_dict_ = false;
    chunk_open_ = true;
    return Status();
  }

  Status finish_chunk() {
    if (chunk_rows_ != group_rows_) {
      return error_at(end_, fmt::format("the column chunk holds {} rows, but the row group has {}",
                                        chunk_rows_, group_rows_));
    }
    chunk_open_ = false;
    ++row_group_;
    return Status();
  }

  Status read_header(PageHeader* header, size_t* header_size) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(kHeaderPrefix, end_ - pos_));
    const size_t limit = static_cast<size_t>(std::min<uint64_t>(kMaxHeaderBytes, end_ - pos_));
    for (;;) {
      uint8_t* buf = header_.ensure(want);
      INFERCOST_RETURN_IF_ERROR(file_->read_at(pos_, want, buf));
      bool ran_out = false;
      auto parsed = parse_page_header(buf, want, header_size, &ran_out);
      if (parsed.ok()) {
        *header = std::move(parsed).value();
        return Status();
      }
      if (!ran_out || want >= limit) return error_at(pos_, parsed.status().message());
      want = static_cast<size_t>(std::min<uint64_t>(static_cast<uint64_t>(want) * 4, limit));
    }
  }

  // Reads the page body at page_data_ (compressed_ bytes) into raw_ and
  // checks its CRC.
  Status read_body(const PageHeader& header) {
    uint8_t* raw = raw_.ensure(std::max<size_t>(compressed_, 1));
    INFERCOST_RETURN_IF_ERROR(file_->read_at(page_data_, compressed_, raw));
    if (header.crc.has_value()) {
      uint32_t crc = page_crc32(raw, compressed_);
      if (crc != static_cast<uint32_t>(*header.crc)) {
        return error_at(page_offset_, fmt::format("page CRC mismatch (stored {:08x}, computed {:08x})",
                                                  static_cast<uint32_t>(*header.crc), crc));
      }
    }
    return Status();
  }

  // Decompresses in[0, in_size) to `out_size` bytes; returns where they are.
  Result<const uint8_t*> decompress_into_plain(const uint8_t* in, size_t in_size, int64_t out_size) {
    if (out_size < 0) return error_at(page_offset_, "negative uncompressed page size");
    uint64_t size = static_cast<uint64_t>(out_size);
    uint64_t allowed = std::min<uint64_t>(
        kMaxPageBytes,
        std::max<uint64_t>(kTrustedPageBytes, static_cast<uint64_t>(in_size) * kMaxCompressionRatio));
    if (size > allowed) {
      return error_at(
          page_offset_,
          fmt::format("uncompressed page size {} is implausible for {} compressed bytes", size, in_size));
    }
    uint8_t* out = plain_.ensure(std::max<size_t>(size, 1));
    Status st = decompress(codec_, in, in_size, out, size);
    if (!st.ok()) {
      if (st.code() == StatusCode::kUnsupported) return unsupported_here(st.message());
      return error_at(page_offset_, st.message());
    }
    return static_cast<const uint8_t*>(out);
  }

  Status load_dictionary(const PageHeader& header) {
    if (has_dict_) return error_at(page_offset_, "a second dictionary page in the column chunk");
    if (!header.dictionary_page_header.has_value()) {
      return error_at(page_offset_, "DICTIONARY_PAGE without a dictionary_page_header");
    }
    const DictionaryPageHeader& dh = *header.dictionary_page_header;
    if (dh.encoding != Encoding::kPlain && dh.encoding != Encoding::kPlainDictionary) {
      return unsupported_here(fmt::format("dictionary page encoding {}", encoding_name(dh.encoding)));
    }
    if (dh.num_values < 0)
      return error_at(page_offset_, fmt::format("dictionary has {} values", dh.num_values));
    INFERCOST_RETURN_IF_ERROR(read_body(header));
    const uint8_t* data = raw_.data();
    size_t size = compressed_;
    if (codec_ != Codec::kUncompressed) {
      INFERCOST_ASSIGN_OR_RETURN(data, decompress_into_plain(data, size, header.uncompressed_page_size));
      size = static_cast<size_t>(header.uncompressed_page_size);
    }
    dict_.clear();
    dict_.type = type_;
    size_t consumed = 0;
    Status st = decode_plain(data, size, static_cast<size_t>(dh.num_values), dict_, &consumed);
    if (!st.ok()) return error_at(page_offset_, "dictionary page: " + st.message());
    dict_size_ = static_cast<size_t>(dh.num_values);
    has_dict_ = true;
    return Status();
  }

  Status decode_plain(const uint8_t* data, size_t size, size_t count, ColumnValues& out, size_t* consumed) {
    switch (type_) {
      case PhysicalType::kBoolean: return decode_plain_boolean(data, size, count, out.ints, consumed);
      case PhysicalType::kInt32: return decode_plain_int32(data, size, count, out.ints, consumed);
      case PhysicalType::kInt64: return decode_plain_int64(data, size, count, out.ints, consumed);
      case PhysicalType::kInt96: return decode_plain_fixed_len(data, size, count, 12, out.strings, consumed);
      case PhysicalType::kFloat: return decode_plain_float(data, size, count, out.doubles, consumed);
      case PhysicalType::kDouble: return decode_plain_double(data, size, count, out.doubles, consumed);
      case PhysicalType::kByteArray: return decode_plain_byte_array(data, size, count, out.strings, consumed);
      case PhysicalType::kFixedLenByteArray:
        return decode_plain_fixed_len(data, size, count, type_length_, out.strings, consumed);
    }
    return corruption(fmt::format("unknown physical type {}", static_cast<int>(type_)));
  }

  // Finds the next data page (reading dictionary pages on the way, moving
  // to later row groups); false at the end of the column.
  Result<bool> next_data_page() {
    for (;;) {
      if (!chunk_open_) {
        if (row_group_ >= static_cast<int>(file_->metadata().row_groups.size())) return false;
        INFERCOST_RETURN_IF_ERROR(open_chunk());
      }
      if (pos_ >= end_ || chunk_rows_ >= group_rows_) {
        INFERCOST_RETURN_IF_ERROR(finish_chunk());
        continue;
      }
      PageHeader header;
      size_t header_size = 0;
      INFERCOST_RETURN_IF_ERROR(read_header(&header, &header_size));
      page_offset_ = pos_;
      page_data_ = pos_ + header_size;
      if (header.compressed_page_size < 0 || header.uncompressed_page_size < 0) {
        return error_at(page_offset_,
                        fmt::format("negative page size (compressed {}, uncompressed {})",
                                    header.compressed_page_size, header.uncompressed_page_size));
      }
      if (static_cast<uint64_t>(header.compressed_page_size) > end_ - page_data_) {
        return error_at(page_offset_,
                        fmt::format("page of {} bytes runs past the column chunk's end at offset {}",
                                    header.compressed_page_size, end_));
      }
      compressed_ = static_cast<size_t>(header.compressed_page_size);
      pos_ = page_data_ + compressed_;
      bytes_read_ += header_size + compressed_;
      switch (header.type) {
        case PageType::kDictionaryPage: INFERCOST_RETURN_IF_ERROR(load_dictionary(header)); break;
        case PageType::kDataPage:
        case PageType::kDataPageV2: {
          INFERCOST_ASSIGN_OR_RETURN(bool has_rows, load_data_page(header));
          update_peak();
          if (has_rows) return true;
          break;
        }
        default: break;  // INDEX_PAGE and unknown page types carry no values
      }
    }
  }

  Result<bool> load_data_page(const PageHeader& header) {
    const bool v2 = header.type == PageType::kDataPageV2;
    if (!v2 && !header.data_page_header.has_value())
      return error_at(page_offset_, "DATA_PAGE without a header");
    if (v2 && !header.data_page_header_v2.has_value()) {
      return error_at(page_offset_, "DATA_PAGE_V2 without a data_page_header_v2");
    }
    const int32_t num_values =
        v2 ? header.data_page_header_v2->num_values : header.data_page_header->num_values;
    encoding_ = v2 ? header.data_page_header_v2->encoding : header.data_page_header->encoding;
    if (num_values < 0) return error_at(page_offset_, fmt::format("page has {} values", num_values));
    if (num_values > group_rows_ - chunk_rows_) {
      return error_at(page_offset_,
                      fmt::format("page has {} values, but only {} of the row group's {} rows remain",
                                  num_values, group_rows_ - chunk_rows_, group_rows_));
    }
    if (num_values == 0) return false;
    INFERCOST_RETURN_IF_ERROR(read_body(header));
    const uint8_t* raw = raw_.data();
    const uint8_t* values = nullptr;
    size_t values_size = 0;
    has_levels_ = column_.max_definition_level > 0;
    if (v2) {
      const DataPageHeaderV2& h = *header.data_page_header_v2;
      if (h.definition_levels_byte_length < 0 || h.repetition_levels_byte_length < 0) {
        return error_at(page_offset_, "negative level byte lengths");
      }
      uint64_t levels = static_cast<uint64_t>(h.definition_levels_byte_length) +
                        static_cast<uint64_t>(h.repetition_levels_byte_length);
      if (levels > compressed_ || levels > static_cast<uint64_t>(header.uncompressed_page_size)) {
        return error_at(page_offset_, fmt::format("level bytes ({}) exceed the page size", levels));
      }
      if (h.repetition_levels_byte_length > 0 && column_.max_repetition_level == 0) {
        return error_at(page_offset_, "repetition levels in a flat column");
      }
      if (has_levels_) {
        def_decoder_ =
            RleBitPackedDecoder(raw + h.repetition_levels_byte_length,
                                static_cast<size_t>(h.definition_levels_byte_length), level_width_);
      }
      const uint8_t* body = raw + levels;
      size_t body_size = compressed_ - levels;
      if (codec_ == Codec::kUncompressed || !h.is_compressed || body_size == 0) {
        values = body;
        values_size = body_size;
      } else {
        INFERCOST_ASSIGN_OR_RETURN(
            values, decompress_into_plain(body, body_size,
                                          header.uncompressed_page_size - static_cast<int64_t>(levels)));
        values_size = static_cast<size_t>(header.uncompressed_page_size - static_cast<int64_t>(levels));
      }
    } else {
      const uint8_t* data = raw;
      size_t size = compressed_;
      if (codec_ != Codec::kUncompressed) {
        INFERCOST_ASSIGN_OR_RETURN(data,
                                   decompress_into_plain(raw, compressed_, header.uncompressed_page_size));
        size = static_cast<size_t>(header.uncompressed_page_size);
      }
      if (has_levels_) {
        Encoding level_encoding = header.data_page_header->definition_level_encoding;
        if (level_encoding != Encoding::kRle) {
          return unsupported_here(
              fmt::format("definition levels encoded as {}", encoding_name(level_encoding)));
        }
        if (size < 4) return error_at(page_offset_, "page too short for its definition levels' length");
        uint32_t length = load_le32(data);
        if (length > size - 4) {
          return error_at(page_offset_, fmt::format("definition levels of {} bytes exceed the page's {}",
                                                    length, size - 4));
        }
        def_decoder_ = RleBitPackedDecoder(data + 4, length, level_width_);
        data += 4 + length;
        size -= 4 + length;
      }
      values = data;
      values_size = size;
    }
    values_ = values;
    values_size_ = values_size;
    values_pos_ = 0;
    page_left_ = static_cast<uint64_t>(num_values);
    buffered_ = false;
    INFERCOST_RETURN_IF_ERROR(prepare_values(static_cast<size_t>(num_values)));
    return true;
  }

  // Sets up value decoding for the page just loaded: streaming decoders
  // for PLAIN, dictionary indices and RLE booleans; the other encodings
  // decode the page's values at once into page_values_.
  Status prepare_values(size_t num_values) {
    const Encoding enc = encoding_;
    switch (enc) {
      case Encoding::kPlain:
        if (type_ == PhysicalType::kBoolean) return buffer_page(num_values);
        return Status();
      case Encoding::kPlainDictionary:
      case Encoding::kRleDictionary: {
        if (!has_dict_) return error_at(page_offset_, "dictionary-encoded page but no dictionary page");
        if (values_size_ == 0) {
          index_decoder_ = RleBitPackedDecoder(values_, 0, 0);
          return Status();
        }
        int width = values_[0];
        if (width > 32)
          return error_at(page_offset_, fmt::format("dictionary index bit width {} > 32", width));
        index_decoder_ = RleBitPackedDecoder(values_ + 1, values_size_ - 1, width);
        return Status();
      }
      case Encoding::kRle: {
        if (type_ != PhysicalType::kBoolean) {
          return unsupported_here(fmt::format("RLE encoding for {} values", type_name(type_)));
        }
        if (values_size_ < 4) {
          index_decoder_ = RleBitPackedDecoder(values_, 0, 1);
          return Status();
        }
        uint32_t length = load_le32(values_);
        if (length > values_size_ - 4) {
          return error_at(page_offset_, fmt::format("RLE boolean run length {} exceeds the page", length));
        }
        index_decoder_ = RleBitPackedDecoder(values_ + 4, length, 1);
        return Status();
      }
      case Encoding::kDeltaBinaryPacked:
        if (type_ != PhysicalType::kInt32 && type_ != PhysicalType::kInt64) break;
        return buffer_page(num_values);
      case Encoding::kDeltaLengthByteArray:
        if (type_ != PhysicalType::kByteArray) break;
        return buffer_page(num_values);
      case Encoding::kDeltaByteArray:
        if (type_ != PhysicalType::kByteArray && type_ != PhysicalType::kFixedLenByteArray) break;
        return buffer_page(num_values);
      case Encoding::kByteStreamSplit:
        if (type_ == PhysicalType::kBoolean || type_ == PhysicalType::kByteArray ||
            type_ == PhysicalType::kInt96) {
          break;
        }
        return buffer_page(num_values);
      default: break;
    }
    return unsupported_here(fmt::format("encoding {} for {} values", encoding_name(enc), type_name(type_)));
  }

  // Counts the non-null values among the next `n` levels without consuming
  // them (on a copy of the level decoder).
  Result<size_t> count_present(size_t n) {
    if (!has_levels_) return n;
    RleBitPackedDecoder copy = def_decoder_;
    size_t present = 0;
    levels_.resize(std::min(n, kLevelBlock));
    for (size_t done = 0; done < n;) {
      size_t block = std::min(n - done, kLevelBlock);
      Status st = copy.get(levels_.data(), block);
      if (!st.ok()) return level_error(st);
      for (size_t i = 0; i < block; ++i)
        present += levels_[i] == static_cast<uint32_t>(column_.max_definition_level);
      done += block;
    }
    return present;
  }

  Status level_error(const Status& st) const {
    return error_at(page_offset_,
                    "definition levels: fewer than the page's values or malformed: " + st.message());
  }

  Status buffer_page(size_t num_values) {
    buffered_ = true;
    INFERCOST_ASSIGN_OR_RETURN(size_t present, count_present(num_values));
    page_values_.clear();
    page_values_pos_ = 0;
    size_t consumed = 0;
    Status st;
    switch (encoding_) {
      case Encoding::kPlain:  // booleans
        st = decode_plain_boolean(values_, values_size_, present, page_values_.ints, &consumed);
        break;
      case Encoding::kDeltaBinaryPacked:
        st = decode_delta_binary_packed(values_, values_size_, present, page_values_.ints, &consumed);
        if (st.ok() && type_ == PhysicalType::kInt32) {
          for (int64_t& v : page_values_.ints) v = static_cast<int32_t>(static_cast<uint32_t>(v));
        }
        break;
      case Encoding::kDeltaLengthByteArray:
        st = decode_delta_length_byte_array(values_, values_size_, present, page_values_.strings, &consumed);
        break;
      case Encoding::kDeltaByteArray:
        st = decode_delta_byte_array(values_, values_size_, present, page_values_.strings, &consumed);
        if (st.ok() && type_ == PhysicalType::kFixedLenByteArray) {
          for (size_t i = 0; i < page_values_.strings.size(); ++i) {
            if (page_values_.strings.at(i).size() != static_cast<size_t>(type_length_)) {
              return error_at(
                  page_offset_,
                  fmt::format("DELTA_BYTE_ARRAY value of {} bytes in a FIXED_LEN_BYTE_ARRAY({}) column",
                              page_values_.strings.at(i).size(), type_length_));
            }
          }
        }
        break;
      case Encoding::kByteStreamSplit: st = unsplit(present); break;
      default: return internal_error("buffer_page: unexpected encoding");
    }
    if (!st.ok()) return error_at(page_offset_, st.message());
    return Status();
  }

  Status unsplit(size_t present) {
    int width = 0;
    switch (type_) {
      case PhysicalType::kInt32:
      case PhysicalType::kFloat: width = 4; break;
      case PhysicalType::kInt64:
      case PhysicalType::kDouble: width = 8; break;
      case PhysicalType::kFixedLenByteArray: width = type_length_; break;
      default: return internal_error("unsplit: unexpected type");
    }
    if (width <= 0) return corruption(fmt::format("BYTE_STREAM_SPLIT with value width {}", width));
    scratch_.clear();
    INFERCOST_RETURN_IF_ERROR(decode_byte_stream_split(values_, values_size_, present, width, scratch_));
    if (scratch_.size() != present * static_cast<size_t>(width)) {
      return corruption("BYTE_STREAM_SPLIT: decoded size does not match the value count");
    }
    const char* p = scratch_.data();
    switch (type_) {
      case PhysicalType::kInt32: append_stored_values<int32_t>(p, present, page_values_.ints); break;
      case PhysicalType::kInt64: append_stored_values<int64_t>(p, present, page_values_.ints); break;
      case PhysicalType::kFloat: append_stored_values<float>(p, present, page_values_.doubles); break;
      case PhysicalType::kDouble: append_stored_values<double>(p, present, page_values_.doubles); break;
      default:
        for (size_t i = 0; i < present; ++i, p += width) {
          page_values_.strings.append(std::string_view(p, static_cast<size_t>(width)));
        }
    }
    return Status();
  }

  // Appends the next `present` non-null values of the page to `out`.
  Status read_values(size_t present, ColumnValues& out) {
    if (present == 0) return Status();
    if (buffered_) {
      const ColumnValues& src = page_values_;
      size_t from = page_values_pos_;
      if (src.ints.size() + src.doubles.size() + src.strings.size() < from + present) {
        return error_at(page_offset_, "page holds fewer values than its levels say");
      }
      if (!src.ints.empty()) {
        out.ints.insert(out.ints.end(), src.ints.begin() + from, src.ints.begin() + from + present);
      } else if (!src.doubles.empty()) {
        out.doubles.insert(out.doubles.end(), src.doubles.begin() + from,
                           src.doubles.begin() + from + present);
      } else {
        const auto& off = src.strings.offsets;
        uint64_t begin = off[from], end = off[from + present];
        uint64_t shift = out.strings.bytes.size() - begin;
        out.strings.bytes.append(src.strings.bytes, begin, end - begin);
        for (size_t i = 1; i <= present; ++i) out.strings.offsets.push_back(off[from + i] + shift);
      }
      page_values_pos_ += present;
      return Status();
    }
    switch (encoding_) {
      case Encoding::kPlain: {
        size_t consumed = 0;
        Status st = decode_plain(values_ + values_pos_, values_size_ - values_pos_, present, out, &consumed);
        if (!st.ok()) return error_at(page_offset_, st.message());
        values_pos_ += consumed;
        return Status();
      }
      case Encoding::kRle: {
        indices_.resize(present);
        Status st = index_decoder_.get(indices_.data(), present);
        if (!st.ok()) return error_at(page_offset_, "RLE booleans: " + st.message());
        for (size_t i = 0; i < present; ++i) out.ints.push_back(indices_[i] != 0);
        return Status();
      }
      default: return read_dictionary_values(present, out);
    }
  }

  Status read_dictionary_values(size_t present, ColumnValues& out) {
    indices_.resize(present);
    Status st = index_decoder_.get(indices_.data(), present);
    if (!st.ok()) return error_at(page_offset_, "dictionary indices: " + st.message());
    for (size_t i = 0; i < present; ++i) {
      if (indices_[i] >= dict_size_) {
        return error_at(page_offset_,
                        fmt::format("dictionary index {} out of range (the dictionary has {} values)",
                                    indices_[i], dict_size_));
      }
    }
    switch (type_) {
      case PhysicalType::kBoolean:
      case PhysicalType::kInt32:
      case PhysicalType::kInt64:
        for (size_t i = 0; i < present; ++i) out.ints.push_back(dict_.ints[indices_[i]]);
        break;
      case PhysicalType::kFloat:
      case PhysicalType::kDouble:
        for (size_t i = 0; i < present; ++i) out.doubles.push_back(dict_.doubles[indices_[i]]);
        break;
      default: {
        const auto& off = dict_.strings.offsets;
        const char* bytes = dict_.strings.bytes.data();
        size_t total = 0;
        for (size_t i = 0; i < present; ++i) total += off[indices_[i] + 1] - off[indices_[i]];
        std::string& dst = out.strings.bytes;
        size_t at = dst.size();
        dst.resize(at + total);
        char* w = dst.data() + at;
        out.strings.offsets.reserve(out.strings.offsets.size() + present);
        for (size_t i = 0; i < present; ++i) {
          uint64_t b = off[indices_[i]], len = off[indices_[i] + 1] - b;
          std::memcpy(w, bytes + b, len);
          w += len;
          at += len;
          out.strings.offsets.push_back(at);
        }
        break;
      }
    }
    return Status();
  }

  bool is_string_type() const {
    return type_ == PhysicalType::kByteArray || type_ == PhysicalType::kFixedLenByteArray ||
           type_ == PhysicalType::kInt96;
  }

  Status read_rows(size_t n, ColumnValues& out) {
    const size_t base = out.valid.size();
    size_t present = n;
    if (has_levels_) {
      levels_.resize(n);
      Status st = def_decoder_.get(levels_.data(), n);
      if (!st.ok()) return level_error(st);
      out.valid.resize(base + n);
      present = 0;
      const uint32_t max = static_cast<uint32_t>(column_.max_definition_level);
      for (size_t i = 0; i < n; ++i) {
        if (levels_[i] > max) {
          return error_at(page_offset_,
                          fmt::format("definition level {} above the maximum {}", levels_[i], max));
        }
        bool valid = levels_[i] == max;
        out.valid[base + i] = valid;
        present += valid;
      }
    } else {
      out.valid.resize(base + n, 1);
    }
    // Keep every vector's size in step with valid (an earlier batch may
    // have been appended under another type only if the caller mixed).
    const size_t base_values = is_string_type() ? out.strings.size()
                               : type_ == PhysicalType::kFloat || type_ == PhysicalType::kDouble
                                   ? out.doubles.size()
                                   : out.ints.size();
    Status st = read_values(present, out);
    if (!st.ok()) {
      out.valid.resize(base);
      return st;
    }
    if (present != n) {
      const uint8_t* valid = out.valid.data() + base;
      if (is_string_type()) {
        spread_strings(out.strings, base_values, valid, n);
      } else if (type_ == PhysicalType::kFloat || type_ == PhysicalType::kDouble) {
        spread_values(out.doubles, base_values, valid, n);
      } else {
        spread_values(out.ints, base_values, valid, n);
      }
    }
    return Status();
  }

  std::shared_ptr<const ParquetFile> file_;
  ColumnDescriptor column_;
  PhysicalType type_ = PhysicalType::kByteArray;
  int32_t type_length_ = 0;
  int level_width_ = 0;

  // Current column chunk.
  int row_group_ = 0;
  bool chunk_open_ = false;
  uint64_t pos_ = 0, end_ = 0;
  int64_t chunk_rows_ = 0, group_rows_ = 0;
  Codec codec_ = Codec::kUncompressed;
  ColumnValues dict_;
  size_t dict_size_ = 0;
  bool has_dict_ = false;

  // Current page.
  uint64_t page_offset_ = 0, page_data_ = 0;
  size_t compressed_ = 0;
  uint64_t page_left_ = 0;
  Encoding encoding_ = Encoding::kPlain;
  bool has_levels_ = false;
  RleBitPackedDecoder def_decoder_;
  RleBitPackedDecoder index_decoder_;
  const uint8_t* values_ = nullptr;
  size_t values_size_ = 0, values_pos_ = 0;
  bool buffered_ = false;
  bool legacy_size_padding_ = false;
  ColumnValues page_values_;
  size_t page_values_pos_ = 0;

  PageBuffer header_, raw_, plain_;
  std::vector<uint32_t> levels_, indices_;
  std::string scratch_;

  int64_t rows_read_ = 0;
  uint64_t bytes_read_ = 0;
  uint64_t peak_ = 0;
};

}  // namespace

Result<std::unique_ptr<ColumnReader>> ColumnReader::open(std::shared_ptr<const ParquetFile> file,
                                                         int leaf_index) {
  if (!file) return invalid_argument("ColumnReader::open: no file");
  const auto& columns = file->columns();
  if (leaf_index < 0 || static_cast<size_t>(leaf_index) >= columns.size()) {
    return invalid_argument(
        fmt::format("{}: no leaf column {} (the file has {})", file->path(), leaf_index, columns.size()));
  }
  const ColumnDescriptor& column = columns[leaf_index];
  if (!column.flat) {
    return unsupported(fmt::format("{}: column '{}' is nested or repeated; only flat columns can be read",
                                   file->path(), column.path));
  }
  const PhysicalType type = *column.element->type;
  if (static_cast<int32_t>(type) < 0 || static_cast<int32_t>(type) > 7) {
    return corruption(fmt::format("{}: column '{}': unknown physical type {}", file->path(), column.path,
                                  static_cast<int32_t>(type)));
  }
  if (type == PhysicalType::kFixedLenByteArray && column.element->type_length <= 0) {
    return corruption(fmt::format("{}: column '{}': FIXED_LEN_BYTE_ARRAY with type_length {}", file->path(),
                                  column.path, column.element->type_length));
  }
  return std::unique_ptr<ColumnReader>(new ColumnReaderImpl(std::move(file), column));
}

}  // namespace infercost::parquet
