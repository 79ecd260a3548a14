// The writer's column chunks (parquet/writer.cc): one column's pages of the
// current row group, PLAIN or dictionary encoded, with its levels, statistics
// and compression. Internal to the writer: writer.cc is its one includer.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/file.h"
#include "parquet/compression.h"
#include "parquet/encoding.h"
#include "parquet/writer.h"

namespace infercost::parquet::detail {

// Dictionary encoding stops (for the rest of the column chunk) once the
// dictionary's PLAIN size passes this, as parquet-cpp does by default.
constexpr int64_t kDictionaryCapBytes = 1 << 20;
// The "does the dictionary pay" test needs a sample first: a few distinct
// values at the start of a column say little about the rest.
constexpr int64_t kDictionaryRatioMinValues = 1000;
// parquet-cpp's default page row limit; bounds pages of all-null or tiny values.
constexpr int64_t kMaxPageRows = 20000;
// String min/max statistics longer than this are left out (only null_count
// is written) rather than truncated: exact bounds or none.
constexpr size_t kMaxStatisticsValueBytes = 1024;

inline void put_u32(std::string& out, uint32_t v) {
  char b[4];
  std::memcpy(b, &v, 4);  // little-endian hosts only (x86-64, aarch64)
  out.append(b, 4);
}

template <typename T>
inline std::string raw_bytes(T v) {
  std::string s(sizeof(T), '\0');
  std::memcpy(s.data(), &v, sizeof(T));
  return s;
}

inline PhysicalType physical_type_of(ColumnSpec::Kind kind) {
  switch (kind) {
    case ColumnSpec::Kind::kString: return PhysicalType::kByteArray;
    case ColumnSpec::Kind::kInt32: return PhysicalType::kInt32;
    case ColumnSpec::Kind::kInt64: return PhysicalType::kInt64;
    case ColumnSpec::Kind::kFloat: return PhysicalType::kFloat;
    case ColumnSpec::Kind::kDouble: return PhysicalType::kDouble;
  }
  return PhysicalType::kByteArray;
}

inline const char* kind_name(ColumnSpec::Kind kind) {
  switch (kind) {
    case ColumnSpec::Kind::kString: return "string";
    case ColumnSpec::Kind::kInt32: return "int32";
    case ColumnSpec::Kind::kInt64: return "int64";
    case ColumnSpec::Kind::kFloat: return "float";
    case ColumnSpec::Kind::kDouble: return "double";
  }
  return "?";
}

// "float", or "a list of 384 floats" for a list column.
inline std::string spec_kind_name(const ColumnSpec& spec) {
  if (spec.list_size > 0) return fmt::format("a list of {} floats", spec.list_size);
  return kind_name(spec.kind);
}

// Min/max/null count of a page or a column chunk. Floating-point NaN is left
// out of min/max (the spec's rule); strings compare as unsigned bytes
// (std::char_traits<char> compares as unsigned char).
class StatsAccumulator {
 public:
  explicit StatsAccumulator(ColumnSpec::Kind kind) : kind_(kind) {}

  void add_null() { ++nulls_; }
  void add_int(int64_t v) {
    if (!has_) {
      imin_ = imax_ = v;
      has_ = true;
    } else {
      imin_ = std::min(imin_, v);
      imax_ = std::max(imax_, v);
    }
  }
  void add_double(double v) {
    if (std::isnan(v)) return;
    if (!has_) {
      dmin_ = dmax_ = v;
      has_ = true;
    } else {
      if (v < dmin_) dmin_ = v;
      if (v > dmax_) dmax_ = v;
    }
  }
  void add_string(std::string_view v) {
    if (!has_) {
      smin_.assign(v);
      smax_.assign(v);
      has_ = true;
    } else if (v < std::string_view(smin_)) {
      smin_.assign(v);
    } else if (v > std::string_view(smax_)) {
      smax_.assign(v);
    }
  }
  void merge(const StatsAccumulator& other) {
    nulls_ += other.nulls_;
    if (!other.has_) return;
    if (kind_ == ColumnSpec::Kind::kString) {
      add_string(other.smin_);
      add_string(other.smax_);
    } else if (kind_ == ColumnSpec::Kind::kFloat || kind_ == ColumnSpec::Kind::kDouble) {
      add_double(other.dmin_);
      add_double(other.dmax_);
    } else {
      add_int(other.imin_);
      add_int(other.imax_);
    }
  }
  void clear() {
    has_ = false;
    nulls_ = 0;
    smin_.clear();
    smax_.clear();
  }

  Statistics to_statistics() const {
    Statistics s;
    s.null_count = nulls_;
    if (!has_) return s;
    switch (kind_) {
      case ColumnSpec::Kind::kString:
        if (smin_.size() <= kMaxStatisticsValueBytes && smax_.size() <= kMaxStatisticsValueBytes) {
          s.min_value = smin_;
          s.max_value = smax_;
        }
        break;
      case ColumnSpec::Kind::kInt32:
        s.min_value = raw_bytes(static_cast<int32_t>(imin_));
        s.max_value = raw_bytes(static_cast<int32_t>(imax_));
        break;
      case ColumnSpec::Kind::kInt64:
        s.min_value = raw_bytes(imin_);
        s.max_value = raw_bytes(imax_);
        break;
      case ColumnSpec::Kind::kFloat:
      case ColumnSpec::Kind::kDouble: {
        // A zero bound is written as -0.0 (min) / +0.0 (max) so readers that
        // distinguish signed zeros never skip a page wrongly.
        double lo = dmin_ == 0.0 ? -0.0 : dmin_;
        double hi = dmax_ == 0.0 ? 0.0 : dmax_;
        if (kind_ == ColumnSpec::Kind::kFloat) {
          s.min_value = raw_bytes(static_cast<float>(lo));
          s.max_value = raw_bytes(static_cast<float>(hi));
        } else {
          s.min_value = raw_bytes(lo);
          s.max_value = raw_bytes(hi);
        }
        break;
      }
    }
    return s;
  }

 private:
  ColumnSpec::Kind kind_;
  bool has_ = false;
  int64_t nulls_ = 0;
  int64_t imin_ = 0, imax_ = 0;
  double dmin_ = 0, dmax_ = 0;
  std::string smin_, smax_;
};

// Distinct strings of one column chunk, in first-seen order, stored PLAIN
// (as the dictionary page holds them) and found through an open-addressing
// table of entry numbers, so no per-entry allocation.
class StringDictionary {
 public:
  // Index of `v`, adding it when new.
  uint32_t index_of(std::string_view v) {
    if ((entries_.size() + 1) * 2 > slots_.size()) grow();
    size_t mask = slots_.size() - 1;
    size_t h = std::hash<std::string_view>()(v);
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      uint32_t slot = slots_[i];
      if (slot == 0) {
        auto index = static_cast<uint32_t>(entries_.size());
        entries_.push_back(Entry{plain_.size() + 4, static_cast<uint32_t>(v.size()), h});
        encode_plain_byte_array(v, plain_);
        slots_[i] = index + 1;
        return index;
      }
      const Entry& e = entries_[slot - 1];
      if (e.hash == h && e.size == v.size() &&
          std::memcmp(plain_.data() + e.offset, v.data(), v.size()) == 0) {
        return slot - 1;
      }
    }
  }
  size_t size() const { return entries_.size(); }
  const std::string& plain() const { return plain_; }
  void clear() {
    entries_.clear();
    slots_.clear();
    plain_.clear();
  }

 private:
  struct Entry {
    size_t offset;
    uint32_t size;
    size_t hash;
  };
  void grow() {
    std::vector<uint32_t> slots(std::max<size_t>(64, slots_.size() * 2), 0);
    size_t mask = slots.size() - 1;
    for (size_t k = 0; k < entries_.size(); ++k) {
      size_t i = entries_[k].hash & mask;
      while (slots[i] != 0) i = (i + 1) & mask;
      slots[i] = static_cast<uint32_t>(k + 1);
    }
    slots_ = std::move(slots);
  }
  std::vector<Entry> entries_;
  std::vector<uint32_t> slots_;
  std::string plain_;
};

// One column's part of the current row group: finished pages (header and
// body, as they will be written) plus the page being filled.
//
// A list column (NAME.list.element) has a level entry per element, or one
// for a null row: repetition level 0 for a row's first entry, 1 for the
// rest; definition level 2 (1 when REQUIRED) for an element, 0 for a null
// row. A flat column has one entry per row and no repetition levels.
class ColumnChunkWriter {
 public:
  ColumnChunkWriter(const ColumnSpec& spec, const WriterOptions& options)
      : spec_(spec),
        options_(options),
        list_(spec.list_size > 0),
        max_definition_level_((spec.nullable ? 1 : 0) + (list_ ? 1 : 0)),
        definition_bit_width_(bit_width_for(static_cast<uint64_t>(max_definition_level_))),
        page_stats_(spec.kind),
        chunk_stats_(spec.kind) {
    reset_chunk();
  }

  const ColumnSpec& spec() const { return spec_; }

  void add_null() {
    def_levels_.push_back(0);
    if (list_) rep_levels_.push_back(0);
    ++page_values_;
    ++page_rows_;
    page_stats_.add_null();
    page_estimate_ += 1;
  }
  // One row of a list column: list_size elements (the caller checked).
  void add_float_list(std::span<const float> v) {
    const auto def = static_cast<uint32_t>(max_definition_level_);
    for (size_t i = 0; i < v.size(); ++i) {
      rep_levels_.push_back(i == 0 ? 0 : 1);
      def_levels_.push_back(def);
      page_stats_.add_double(v[i]);
    }
    values_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
    const auto n = static_cast<int64_t>(v.size());
    page_values_ += n;
    ++page_rows_;
    nonnull_values_seen_ += n;
    // The values, and both levels as if bit-packed (RLE runs take less).
    page_estimate_ += 4 * n + (n * (1 + definition_bit_width_) + 7) / 8;
  }
  void add_string(std::string_view v) {
    add_defined();
    page_stats_.add_string(v);
    plain_bytes_seen_ += 4 + static_cast<int64_t>(v.size());
    if (dictionary_mode_) {
      indices_.push_back(dictionary_.index_of(v));
      page_estimate_ += 4;
    } else {
      encode_plain_byte_array(v, values_);
      page_estimate_ += 4 + static_cast<int64_t>(v.size());
    }
  }
  void add_int(int64_t v) {
    add_defined();
    page_stats_.add_int(v);
    if (spec_.kind == ColumnSpec::Kind::kInt32) {
      auto x = static_cast<int32_t>(v);
      values_.append(reinterpret_cast<const char*>(&x), 4);
      page_estimate_ += 4;
    } else {
      values_.append(reinterpret_cast<const char*>(&v), 8);
      page_estimate_ += 8;
    }
  }
  void add_double(double v) {
    add_defined();
    if (spec_.kind == ColumnSpec::Kind::kFloat) {
      auto x = static_cast<float>(v);
      page_stats_.add_double(x);  // statistics of the value as stored
      values_.append(reinterpret_cast<const char*>(&x), 4);
      page_estimate_ += 4;
    } else {
      page_stats_.add_double(v);
      values_.append(reinterpret_cast<const char*>(&v), 8);
      page_estimate_ += 8;
    }
  }

  // Finishes the page when it is full (called after every row, so pages
  // end on row boundaries).
  Status maybe_finish_page() {
    if (page_rows_ >= kMaxPageRows || page_estimate_ >= options_.page_bytes ||
        (dictionary_mode_ && static_cast<int64_t>(dictionary_.plain().size()) > kDictionaryCapBytes)) {
      return finish_page();
    }
    return Status();
  }

  // Encoded bytes held for this chunk: finished pages (uncompressed),
  // the dictionary and the page being filled.
  int64_t buffered_bytes() const {
    return uncompressed_pages_bytes_ + static_cast<int64_t>(dictionary_.plain().size()) + page_estimate_;
  }

  // Finishes the last page and writes the chunk (dictionary page first) at
  // `offset` of `out`, filling `chunk`'s metadata; resets for the next chunk.
  Status write_chunk(AtomicOutputFile& out, int64_t offset, ColumnChunk& chunk) {
    if (page_values_ > 0) INFERCOST_RETURN_IF_ERROR(finish_page());
    ColumnMetaData md;
    md.type = physical_type_of(spec_.kind);
    md.path_in_schema = {spec_.name};
    if (list_) md.path_in_schema = {spec_.name, "list", "element"};
    md.codec = options_.codec;
    md.num_values = chunk_values_;
    int64_t total_uncompressed = uncompressed_pages_bytes_;
    int64_t total_compressed = static_cast<int64_t>(pages_.size());
    int64_t data_offset = offset;
    if (has_dictionary_pages_) {
      std::string dict_page;
      int64_t dict_uncompressed = 0;
      INFERCOST_RETURN_IF_ERROR(build_dictionary_page(dict_page, &dict_uncompressed));
      INFERCOST_RETURN_IF_ERROR(out.write(dict_page));
      md.dictionary_page_offset = offset;
      data_offset = offset + static_cast<int64_t>(dict_page.size());
      total_uncompressed += dict_uncompressed;
      total_compressed += static_cast<int64_t>(dict_page.size());
    }
    INFERCOST_RETURN_IF_ERROR(out.write(pages_));
    md.data_page_offset = data_offset;
    md.total_uncompressed_size = total_uncompressed;
    md.total_compressed_size = total_compressed;
    // Same order parquet-cpp lists them in.
    if (has_dictionary_pages_ || has_plain_pages_) md.encodings.push_back(Encoding::kPlain);
    md.encodings.push_back(Encoding::kRle);
    if (has_dictionary_pages_) md.encodings.push_back(Encoding::kRleDictionary);
    if (options_.statistics) md.statistics = chunk_stats_.to_statistics();
    chunk.file_offset = offset;
    chunk.meta_data = std::move(md);
    reset_chunk();
    return Status();
  }

 private:
  void add_defined() {
    if (spec_.nullable) {
      def_levels_.push_back(1);
      page_estimate_ += 1;
    }
    ++page_values_;
    ++page_rows_;
    ++nonnull_values_seen_;
  }

  void reset_chunk() {
    pages_.clear();
    uncompressed_pages_bytes_ = 0;
    chunk_values_ = 0;
    chunk_stats_.clear();
    dictionary_.clear();
    dictionary_mode_ = options_.dictionary && spec_.kind == ColumnSpec::Kind::kString;
    has_dictionary_pages_ = has_plain_pages_ = false;
    plain_bytes_seen_ = 0;
    nonnull_values_seen_ = 0;
    index_bytes_ = 0;
  }

  // Compresses `body` (the part after any v2 levels: `levels` holds
  // repetition_bytes of repetition levels, then the definition levels) and
  // appends header and page to pages_.
  Status emit_data_page(const std::string& levels, size_t repetition_bytes, const std::string& body,
                        Encoding encoding, int32_t num_nulls) {
    const std::string* stored = &body;
    if (options_.codec != Codec::kUncompressed) {
      INFERCOST_RETURN_IF_ERROR(compress(options_.codec, reinterpret_cast<const uint8_t*>(body.data()),
                                         body.size(), compressed_, options_.compression_level));
      stored = &compressed_;
    }
    PageHeader h;
    int64_t uncompressed = static_cast<int64_t>(levels.size() + body.size());
    int64_t compressed = static_cast<int64_t>(levels.size() + stored->size());
    if (uncompressed > std::numeric_limits<int32_t>::max() ||
        compressed > std::numeric_limits<int32_t>::max()) {
      return invalid_argument(fmt::format("column '{}': a page of {} bytes is too large for Parquet",
                                          spec_.name, std::max(uncompressed, compressed)));
    }
    h.uncompressed_page_size = static_cast<int32_t>(uncompressed);
    h.compressed_page_size = static_cast<int32_t>(compressed);
    std::optional<Statistics> stats;
    if (options_.statistics) stats = page_stats_.to_statistics();
    if (options_.data_page_version == 2) {
      h.type = PageType::kDataPageV2;
      DataPageHeaderV2 v2;
      v2.num_values = static_cast<int32_t>(page_values_);
      v2.num_nulls = num_nulls;
      v2.num_rows = static_cast<int32_t>(page_rows_);
      v2.encoding = encoding;
      v2.definition_levels_byte_length = static_cast<int32_t>(levels.size() - repetition_bytes);
      v2.repetition_levels_byte_length = static_cast<int32_t>(repetition_bytes);
      v2.is_compressed = options_.codec != Codec::kUncompressed;
      v2.statistics = std::move(stats);
      h.data_page_header_v2 = std::move(v2);
    } else {
      h.type = PageType::kDataPage;
      DataPageHeader v1;
      v1.num_values = static_cast<int32_t>(page_values_);
      v1.encoding = encoding;
      v1.definition_level_encoding = Encoding::kRle;
      v1.repetition_level_encoding = Encoding::kRle;
      v1.statistics = std::move(stats);
      h.data_page_header = std::move(v1);
    }
    if (options_.page_crc) {
      // v2: the CRC covers the levels too (everything after the header).
      const std::string* covered = stored;
      if (!levels.empty()) {
        crc_scratch_.assign(levels);
        crc_scratch_.append(*stored);
        covered = &crc_scratch_;
      }
      h.crc = static_cast<int32_t>(
          page_crc32(reinterpret_cast<const uint8_t*>(covered->data()), covered->size()));
    }
    std::string header = serialize_page_header(h);
    pages_.append(header);
    pages_.append(levels);
    pages_.append(*stored);
    uncompressed_pages_bytes_ += static_cast<int64_t>(header.size()) + uncompressed;
    return Status();
  }

  Status finish_page() {
    if (page_values_ == 0) return Status();
    int32_t num_nulls = 0;
    // Repetition levels, then definition levels: v2 keeps them apart from
    // the (compressed) body, v1 starts the body with them, each after its
    // 4-byte length.
    std::string levels;
    auto add_levels = [&](const std::vector<uint32_t>& values, int bit_width) {
      std::string rle;
      encode_rle_bit_packed(values.data(), values.size(), bit_width, rle);
      if (options_.data_page_version == 2) {
        levels.append(rle);
      } else {
        put_u32(body_, static_cast<uint32_t>(rle.size()));
        body_.append(rle);
      }
      return rle.size();
    };
    size_t repetition_bytes = 0;
    if (list_) repetition_bytes = add_levels(rep_levels_, 1);
    if (max_definition_level_ > 0) {
      const auto defined = static_cast<uint32_t>(max_definition_level_);
      for (uint32_t d : def_levels_) num_nulls += d < defined ? 1 : 0;
      add_levels(def_levels_, definition_bit_width_);
    }
    Encoding encoding = Encoding::kPlain;
    if (dictionary_mode_) {
      encoding = Encoding::kRleDictionary;
      // Width 1 at least: some readers mishandle a zero-width index stream.
      int width = std::max(1, bit_width_for(dictionary_.size() > 0 ? dictionary_.size() - 1 : 0));
      body_.push_back(static_cast<char>(width));
      size_t before = body_.size();
      encode_rle_bit_packed(indices_.data(), indices_.size(), width, body_);
      index_bytes_ += static_cast<int64_t>(body_.size() - before) + 1;
      has_dictionary_pages_ = true;
    } else {
      body_.append(values_);
      has_plain_pages_ = true;
    }
    Status st = emit_data_page(levels, repetition_bytes, body_, encoding, num_nulls);
    body_.clear();
    if (!st.ok()) return st;
    chunk_values_ += page_values_;
    chunk_stats_.merge(page_stats_);
    page_stats_.clear();
    def_levels_.clear();
    rep_levels_.clear();
    indices_.clear();
    values_.clear();
    page_values_ = 0;
    page_rows_ = 0;
    page_estimate_ = 0;
    if (dictionary_mode_) {
      bool over_cap = static_cast<int64_t>(dictionary_.plain().size()) > kDictionaryCapBytes;
      bool pays = nonnull_values_seen_ < kDictionaryRatioMinValues ||
                  static_cast<int64_t>(dictionary_.plain().size()) + index_bytes_ < plain_bytes_seen_;
      if (over_cap || !pays) dictionary_mode_ = false;
    }
    return Status();
  }

  Status build_dictionary_page(std::string& page, int64_t* uncompressed_total) {
    const std::string& plain = dictionary_.plain();
    const std::string* stored = &plain;
    if (options_.codec != Codec::kUncompressed) {
      INFERCOST_RETURN_IF_ERROR(compress(options_.codec, reinterpret_cast<const uint8_t*>(plain.data()),
                                         plain.size(), compressed_, options_.compression_level));
      stored = &compressed_;
    }
    if (plain.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max()) ||
        stored->size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
      return invalid_argument(fmt::format("column '{}': dictionary page too large", spec_.name));
    }
    PageHeader h;
    h.type = PageType::kDictionaryPage;
    h.uncompressed_page_size = static_cast<int32_t>(plain.size());
    h.compressed_page_size = static_cast<int32_t>(stored->size());
    DictionaryPageHeader d;
    d.num_values = static_cast<int32_t>(dictionary_.size());
    d.encoding = Encoding::kPlain;
    h.dictionary_page_header = d;
    if (options_.page_crc) {
      h.crc =
          static_cast<int32_t>(page_crc32(reinterpret_cast<const uint8_t*>(stored->data()), stored->size()));
    }
    std::string header = serialize_page_header(h);
    page = header;
    page.append(*stored);
    *uncompressed_total = static_cast<int64_t>(header.size() + plain.size());
    return Status();
  }

  ColumnSpec spec_;
  const WriterOptions& options_;
  const bool list_;
  const int max_definition_level_;
  const int definition_bit_width_;
  // current page
  std::vector<uint32_t> def_levels_;
  std::vector<uint32_t> rep_levels_;  // list columns only
  std::vector<uint32_t> indices_;
  std::string values_;
  int64_t page_values_ = 0;  // level entries (a flat column's rows)
  int64_t page_rows_ = 0;
  int64_t page_estimate_ = 0;
  StatsAccumulator page_stats_;
  // current chunk
  std::string pages_;
  int64_t uncompressed_pages_bytes_ = 0;
  int64_t chunk_values_ = 0;
  StatsAccumulator chunk_stats_;
  StringDictionary dictionary_;
  bool dictionary_mode_ = false;
  bool has_dictionary_pages_ = false, has_plain_pages_ = false;
  int64_t plain_bytes_seen_ = 0, nonnull_values_seen_ = 0, index_bytes_ = 0;
  // scratch
  std::string body_, compressed_, crc_scratch_;
};

}  // namespace infercost::parquet::detail
