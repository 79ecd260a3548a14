// Thrift compact protocol and Parquet metadata: round trips, real footers
// from parquet-testing, and hostile input (truncation, mutation, deep
// nesting, huge counts).
#include "parquet/metadata.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "../../src/parquet/thrift_compact.h"
#include "test_utils.h"

namespace infercost::parquet {
namespace {

namespace fs = std::filesystem;
using thrift::CompactReader;
using thrift::CompactWriter;
using thrift::CType;

using testing::bytes_of;

// ---- field-by-field comparisons (the structs have no operator==) ----

void expect_eq(const LogicalType& a, const LogicalType& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.decimal_scale, b.decimal_scale);
  EXPECT_EQ(a.decimal_precision, b.decimal_precision);
  EXPECT_EQ(a.is_adjusted_to_utc, b.is_adjusted_to_utc);
  EXPECT_EQ(a.time_unit, b.time_unit);
  EXPECT_EQ(a.integer_bit_width, b.integer_bit_width);
  EXPECT_EQ(a.integer_signed, b.integer_signed);
}

void expect_eq(const std::optional<Statistics>& a, const std::optional<Statistics>& b) {
  ASSERT_EQ(a.has_value(), b.has_value());
  if (!a) return;
  EXPECT_EQ(a->max, b->max);
  EXPECT_EQ(a->min, b->min);
  EXPECT_EQ(a->max_value, b->max_value);
  EXPECT_EQ(a->min_value, b->min_value);
  EXPECT_EQ(a->null_count, b->null_count);
  EXPECT_EQ(a->distinct_count, b->distinct_count);
}

void expect_eq(const SchemaElement& a, const SchemaElement& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.type_length, b.type_length);
  EXPECT_EQ(a.repetition, b.repetition);
  EXPECT_EQ(a.num_children, b.num_children);
  EXPECT_EQ(a.converted_type, b.converted_type);
  EXPECT_EQ(a.scale, b.scale);
  EXPECT_EQ(a.precision, b.precision);
  EXPECT_EQ(a.field_id, b.field_id);
  expect_eq(a.logical_type, b.logical_type);
}

void expect_eq(const ColumnMetaData& a, const ColumnMetaData& b) {
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.encodings, b.encodings);
  EXPECT_EQ(a.path_in_schema, b.path_in_schema);
  EXPECT_EQ(a.codec, b.codec);
  EXPECT_EQ(a.num_values, b.num_values);
  EXPECT_EQ(a.total_uncompressed_size, b.total_uncompressed_size);
  EXPECT_EQ(a.total_compressed_size, b.total_compressed_size);
  EXPECT_EQ(a.key_value_metadata, b.key_value_metadata);
  EXPECT_EQ(a.data_page_offset, b.data_page_offset);
  EXPECT_EQ(a.index_page_offset, b.index_page_offset);
  EXPECT_EQ(a.dictionary_page_offset, b.dictionary_page_offset);
  expect_eq(a.statistics, b.statistics);
}

void expect_eq(const FileMetaData& a, const FileMetaData& b) {
  EXPECT_EQ(a.version, b.version);
  ASSERT_EQ(a.schema.size(), b.schema.size());
  for (size_t i = 0; i < a.schema.size(); ++i) expect_eq(a.schema[i], b.schema[i]);
  EXPECT_EQ(a.num_rows, b.num_rows);
  ASSERT_EQ(a.row_groups.size(), b.row_groups.size());
  for (size_t g = 0; g < a.row_groups.size(); ++g) {
    const RowGroup& x = a.row_groups[g];
    const RowGroup& y = b.row_groups[g];
    EXPECT_EQ(x.total_byte_size, y.total_byte_size);
    EXPECT_EQ(x.num_rows, y.num_rows);
    EXPECT_EQ(x.file_offset, y.file_offset);
    EXPECT_EQ(x.total_compressed_size, y.total_compressed_size);
    EXPECT_EQ(x.ordinal, y.ordinal);
    ASSERT_EQ(x.columns.size(), y.columns.size());
    for (size_t c = 0; c < x.columns.size(); ++c) {
      EXPECT_EQ(x.columns[c].file_path, y.columns[c].file_path);
      EXPECT_EQ(x.columns[c].file_offset, y.columns[c].file_offset);
      EXPECT_EQ(x.columns[c].has_crypto_metadata, y.columns[c].has_crypto_metadata);
      EXPECT_EQ(x.columns[c].has_encrypted_column_metadata, y.columns[c].has_encrypted_column_metadata);
      ASSERT_EQ(x.columns[c].meta_data.has_value(), y.columns[c].meta_data.has_value());
      if (x.columns[c].meta_data) expect_eq(*x.columns[c].meta_data, *y.columns[c].meta_data);
    }
  }
  EXPECT_EQ(a.key_value_metadata, b.key_value_metadata);
  EXPECT_EQ(a.created_by, b.created_by);
  EXPECT_EQ(a.column_orders, b.column_orders);
  EXPECT_EQ(a.has_encryption_algorithm, b.has_encryption_algorithm);
}

Statistics full_statistics(int seed) {
  Statistics s;
  s.max = "max" + std::to_string(seed);
  s.min = std::string("\0\x01\xff", 3);
  s.max_value = "zzz";
  s.min_value = "";
  s.null_count = 7 + seed;
  s.distinct_count = -1 - (int64_t{1} << 40);
  return s;
}

FileMetaData full_file_metadata() {
  FileMetaData md;
  md.version = 2;
  md.num_rows = (int64_t{1} << 33) + 5;
  md.created_by = "infercost test";
  md.column_orders = {1, 1, 1, 1};
  md.key_value_metadata = {{"ARROW:schema", std::string(300, 'x')}, {"no value", std::nullopt}};
  md.has_encryption_algorithm = true;

  SchemaElement root;
  root.name = "schema";
  root.num_children = 0;
  md.schema.push_back(root);
  // One leaf per logical type kind (plus an unknown one), all attributes set.
  const std::vector<int32_t> kinds = {1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 19};
  for (size_t i = 0; i < kinds.size(); ++i) {
    SchemaElement e;
    e.name = "col_" + std::to_string(i);
    e.type = static_cast<PhysicalType>(i % 8);
    e.type_length = e.type == PhysicalType::kFixedLenByteArray ? 16 : static_cast<int32_t>(i);
    e.repetition = static_cast<Repetition>(i % 3);
    e.converted_type = static_cast<ConvertedType>(i);
    e.scale = static_cast<int32_t>(i) - 3;
    e.precision = 38;
    e.field_id = -static_cast<int32_t>(i) * 1000;
    e.logical_type.kind = kinds[i];
    switch (kinds[i]) {
      case LogicalType::kDecimal:
        e.logical_type.decimal_scale = 2;
        e.logical_type.decimal_precision = 10;
        break;
      case LogicalType::kTime:
        e.logical_type.is_adjusted_to_utc = false;
        e.logical_type.time_unit = 3;
        break;
      case LogicalType::kTimestamp:
        e.logical_type.is_adjusted_to_utc = true;
        e.logical_type.time_unit = 2;
        break;
      case LogicalType::kInteger:
        e.logical_type.integer_bit_width = 16;
        e.logical_type.integer_signed = false;
        break;
      default: break;
    }
    md.schema.push_back(e);
  }
  md.schema[0].num_children = static_cast<int32_t>(kinds.size());
  SchemaElement group;  // a group with a large field id delta to its neighbours
  group.name = "group";
  group.repetition = Repetition::kOptional;
  group.num_children = 0;
  md.schema.push_back(group);

  for (int g = 0; g < 3; ++g) {
    RowGroup rg;
    rg.num_rows = 1000 + g;
    rg.total_byte_size = 123456789012LL;
    if (g != 1) {
      rg.file_offset = 4 + g;
      rg.total_compressed_size = 99 + g;
      rg.ordinal = static_cast<int16_t>(-g);
    }
    for (int c = 0; c < 4; ++c) {
      ColumnChunk cc;
      cc.file_offset = 1000 * g + c;
      if (c == 3) {
        cc.file_path = "other.parquet";
        cc.has_crypto_metadata = true;
        cc.has_encrypted_column_metadata = true;
      } else {
        ColumnMetaData m;
        m.type = static_cast<PhysicalType>(c);
        m.encodings = {Encoding::kPlain, Encoding::kRleDictionary, Encoding::kRle, static_cast<Encoding>(77)};
        m.path_in_schema = {"group", "col_" + std::to_string(c)};
        m.codec = static_cast<Codec>(c * 2 + 1);
        m.num_values = 1000 + c;
        m.total_uncompressed_size = int64_t{1} << 40;
        m.total_compressed_size = 12345;
        if (c == 0) m.key_value_metadata = {{"k", "v"}};
        m.data_page_offset = 4 + c * 100;
        if (c == 1) m.index_page_offset = 7;
        if (c != 2) m.dictionary_page_offset = 4;
        if (c != 1) m.statistics = full_statistics(c);
        cc.meta_data = m;
      }
      rg.columns.push_back(cc);
    }
    md.row_groups.push_back(rg);
  }
  return md;
}

TEST(ThriftCompact, ScalarsRoundTrip) {
  CompactWriter w;
  const std::vector<int64_t> i64s = {0, 1, -1, 63, -64, 64, INT64_MAX, INT64_MIN, int64_t{1} << 35};
  const std::vector<int32_t> i32s = {0, -1, INT32_MAX, INT32_MIN, 300};
  for (int64_t v : i64s) w.write_i64(v);
  for (int32_t v : i32s) w.write_i32(v);
  w.write_i16(INT16_MIN);
  w.write_i16(INT16_MAX);
  w.write_double(-2.5e300);
  w.write_binary(std::string("a\0b", 3));
  w.write_bool_element(true);
  w.write_bool_element(false);
  std::string buf = w.take();
  CompactReader r(bytes_of(buf), buf.size());
  for (int64_t v : i64s) {
    int64_t got = 0;
    ASSERT_TRUE(r.read_i64(&got).ok());
    EXPECT_EQ(got, v);
  }
  for (int32_t v : i32s) {
    int32_t got = 0;
    ASSERT_TRUE(r.read_i32(&got).ok());
    EXPECT_EQ(got, v);
  }
  int16_t s16 = 0;
  ASSERT_TRUE(r.read_i16(&s16).ok());
  EXPECT_EQ(s16, INT16_MIN);
  ASSERT_TRUE(r.read_i16(&s16).ok());
  EXPECT_EQ(s16, INT16_MAX);
  double d = 0;
  ASSERT_TRUE(r.read_double(&d).ok());
  EXPECT_EQ(d, -2.5e300);
  std::string s;
  ASSERT_TRUE(r.read_binary(&s).ok());
  EXPECT_EQ(s, std::string("a\0b", 3));
  bool b = false;
  ASSERT_TRUE(r.read_bool_element(&b).ok());
  EXPECT_TRUE(b);
  ASSERT_TRUE(r.read_bool_element(&b).ok());
  EXPECT_FALSE(b);
  EXPECT_EQ(r.remaining(), 0u);
  Status st = r.read_i64(nullptr);
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_NE(st.message().find("truncated"), std::string::npos) << st.message();
}

TEST(ThriftCompact, VarintOverflowAndRangeChecks) {
  // 11-byte varint, and a 10th byte carrying more than one bit.
  std::string too_long(10, '\xff');
  too_long.push_back('\x01');
  uint64_t v = 0;
  CompactReader r1(bytes_of(too_long), too_long.size());
  EXPECT_FALSE(r1.read_varint(&v).ok());
  std::string overflow(9, '\xff');
  overflow.push_back('\x02');
  CompactReader r2(bytes_of(overflow), overflow.size());
  EXPECT_FALSE(r2.read_varint(&v).ok());
  std::string max64(9, '\xff');
  max64.push_back('\x01');
  CompactReader r3(bytes_of(max64), max64.size());
  ASSERT_TRUE(r3.read_varint(&v).ok());
  EXPECT_EQ(v, UINT64_MAX);
  // A zigzag value past i32 read as i32, and past i16 read as i16.
  CompactWriter w;
  w.write_i64(int64_t{1} << 31);
  w.write_i32(40000);
  std::string buf = w.take();
  CompactReader r4(bytes_of(buf), buf.size());
  int32_t i32 = 0;
  EXPECT_FALSE(r4.read_i32(&i32).ok());
  int64_t skip = 0;
  ASSERT_TRUE(r4.read_i64(&skip).ok());
  int16_t i16 = 0;
  EXPECT_FALSE(r4.read_i16(&i16).ok());
}

TEST(ThriftCompact, SkipsEveryTypeIncludingNested) {
  CompactWriter w;
  w.struct_begin();
  w.field_bool(1, true);
  w.field_byte(2, -5);
  w.field_i16(3, 300);
  w.field_i32(4, -70000);
  w.field_i64(40, INT64_MIN);  // long delta: explicit field id
  w.field_double(41, 1.5);
  w.field_binary(42, "hello");
  w.field_list_begin(43, CType::kStruct, 20);  // long-form list size
  for (int i = 0; i < 20; ++i) {
    w.struct_begin();
    w.field_list_begin(1, CType::kBoolTrue, 3);
    w.write_bool_element(true);
    w.write_bool_element(false);
    w.write_bool_element(true);
    w.struct_end();
  }
  w.field_header(44, CType::kMap);
  w.map_begin(CType::kBinary, CType::kStruct, 2);
  for (int i = 0; i < 2; ++i) {
    w.write_binary("k");
    w.struct_begin();
    w.field_double(1, 2.0);
    w.struct_end();
  }
  w.field_header(45, CType::kMap);
  w.map_begin(CType::kI32, CType::kI32, 0);
  w.field_header(46, CType::kSet);
  w.list_begin(CType::kI64, 2);
  w.write_i64(1);
  w.write_i64(2);
  w.field_i32(47, 99);  // the last field, to check the reader ends in step
  w.struct_end();
  std::string buf = w.take();

  CompactReader r(bytes_of(buf), buf.size());
  ASSERT_TRUE(r.struct_begin().ok());
  std::vector<int16_t> ids;
  while (true) {
    int16_t id = 0;
    CType t = CType::kStop;
    ASSERT_TRUE(r.read_field_header(&id, &t).ok());
    if (t == CType::kStop) break;
    ids.push_back(id);
    if (id == 47) {
      int32_t v = 0;
      ASSERT_TRUE(r.read_i32(&v).ok());
      EXPECT_EQ(v, 99);
    } else {
      Status st = r.skip(t);
      ASSERT_TRUE(st.ok()) << st.message();
    }
  }
  ASSERT_TRUE(r.struct_end().ok());
  EXPECT_EQ(r.remaining(), 0u);
  EXPECT_EQ(ids, (std::vector<int16_t>{1, 2, 3, 4, 40, 41, 42, 43, 44, 45, 46, 47}));

  // Skipping the same bytes as one struct consumes them exactly.
  CompactReader r2(bytes_of(buf), buf.size());
  ASSERT_TRUE(r2.skip(CType::kStruct).ok());
  EXPECT_EQ(r2.remaining(), 0u);
  // Every truncation of it fails cleanly.
  for (size_t n = 0; n < buf.size(); ++n) {
    CompactReader rt(bytes_of(buf), n);
    EXPECT_FALSE(rt.skip(CType::kStruct).ok()) << n;
  }
}

TEST(Metadata, FileMetaDataRoundTrip) {
  FileMetaData md = full_file_metadata();
  std::string wire = serialize_file_metadata(md);
  auto parsed = parse_file_metadata(bytes_of(wire), wire.size());
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  expect_eq(md, *parsed);
  EXPECT_EQ(serialize_file_metadata(*parsed), wire);
}

TEST(Metadata, MinimalFileMetaDataRoundTrip) {
  FileMetaData md;
  SchemaElement root;
  root.name = "schema";
  md.schema.push_back(root);
  std::string wire = serialize_file_metadata(md);
  auto parsed = parse_file_metadata(bytes_of(wire), wire.size());
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  expect_eq(md, *parsed);
  EXPECT_FALSE(parsed->created_by.has_value());
  EXPECT_FALSE(parsed->has_encryption_algorithm);
}

PageHeader page_header(PageType type) {
  PageHeader h;
  h.type = type;
  h.uncompressed_page_size = 1 << 20;
  h.compressed_page_size = 12345;
  h.crc = -123456789;
  switch (type) {
    case PageType::kDataPage: {
      DataPageHeader d;
      d.num_values = 1000;
      d.encoding = Encoding::kRleDictionary;
      d.definition_level_encoding = Encoding::kRle;
      d.repetition_level_encoding = Encoding::kBitPacked;
      d.statistics = full_statistics(1);
      h.data_page_header = d;
      break;
    }
    case PageType::kDictionaryPage: {
      DictionaryPageHeader d;
      d.num_values = 77;
      d.encoding = Encoding::kPlainDictionary;
      d.is_sorted = false;
      h.dictionary_page_header = d;
      break;
    }
    case PageType::kDataPageV2: {
      DataPageHeaderV2 d;
      d.num_values = 10;
      d.num_nulls = 3;
      d.num_rows = 9;
      d.encoding = Encoding::kDeltaByteArray;
      d.definition_levels_byte_length = 4;
      d.repetition_levels_byte_length = 2;
      d.is_compressed = false;
      d.statistics = full_statistics(2);
      h.data_page_header_v2 = d;
      break;
    }
    default: break;
  }
  return h;
}

TEST(Metadata, PageHeaderRoundTripAndTruncation) {
  for (PageType type :
       {PageType::kDataPage, PageType::kDictionaryPage, PageType::kDataPageV2, PageType::kIndexPage}) {
    SCOPED_TRACE(page_type_name(type));
    PageHeader h = page_header(type);
    std::string wire = serialize_page_header(h);
    std::string with_payload = wire + "PAGE BYTES FOLLOW";
    size_t header_size = 0;
    auto parsed = parse_page_header(bytes_of(with_payload), with_payload.size(), &header_size);
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    EXPECT_EQ(header_size, wire.size());
    EXPECT_EQ(parsed->type, h.type);
    EXPECT_EQ(parsed->uncompressed_page_size, h.uncompressed_page_size);
    EXPECT_EQ(parsed->compressed_page_size, h.compressed_page_size);
    EXPECT_EQ(parsed->crc, h.crc);
    ASSERT_EQ(parsed->data_page_header.has_value(), h.data_page_header.has_value());
    if (h.data_page_header) {
      EXPECT_EQ(parsed->data_page_header->num_values, h.data_page_header->num_values);
      EXPECT_EQ(parsed->data_page_header->encoding, h.data_page_header->encoding);
      EXPECT_EQ(parsed->data_page_header->definition_level_encoding,
                h.data_page_header->definition_level_encoding);
      EXPECT_EQ(parsed->data_page_header->repetition_level_encoding,
                h.data_page_header->repetition_level_encoding);
      expect_eq(parsed->data_page_header->statistics, h.data_page_header->statistics);
    }
    ASSERT_EQ(parsed->dictionary_page_header.has_value(), h.dictionary_page_header.has_value());
    if (h.dictionary_page_header) {
      EXPECT_EQ(parsed->dictionary_page_header->num_values, 77);
      EXPECT_EQ(parsed->dictionary_page_header->encoding, Encoding::kPlainDictionary);
      EXPECT_EQ(parsed->dictionary_page_header->is_sorted, std::optional<bool>(false));
    }
    ASSERT_EQ(parsed->data_page_header_v2.has_value(), h.data_page_header_v2.has_value());
    if (h.data_page_header_v2) {
      const auto& a = *parsed->data_page_header_v2;
      const auto& b = *h.data_page_header_v2;
      EXPECT_EQ(a.num_values, b.num_values);
      EXPECT_EQ(a.num_nulls, b.num_nulls);
      EXPECT_EQ(a.num_rows, b.num_rows);
      EXPECT_EQ(a.encoding, b.encoding);
      EXPECT_EQ(a.definition_levels_byte_length, b.definition_levels_byte_length);
      EXPECT_EQ(a.repetition_levels_byte_length, b.repetition_levels_byte_length);
      EXPECT_EQ(a.is_compressed, b.is_compressed);
      expect_eq(a.statistics, b.statistics);
    }
    EXPECT_EQ(serialize_page_header(*parsed), wire);
    for (size_t n = 0; n < wire.size(); ++n) {
      bool ran_out = false;
      auto t = parse_page_header(bytes_of(wire), n, &header_size, &ran_out);
      ASSERT_FALSE(t.ok()) << n;
      EXPECT_TRUE(ran_out) << n << ": " << t.status().message();
      EXPECT_EQ(t.status().code(), StatusCode::kCorruption);
      EXPECT_NE(t.status().message().find("truncated"), std::string::npos)
          << n << ": " << t.status().message();
      EXPECT_EQ(t.status().message().rfind("page header: ", 0), 0u) << t.status().message();
    }
  }
}

// Only bytes that end inside a header say "read more": a header that is wrong
// (a negative size) fails at once, whatever its message says.
TEST(Metadata, ABadPageHeaderIsNotTakenForAShortOne) {
  CompactWriter w;
  w.struct_begin();
  w.field_i32(1, 0);
  w.field_i32(2, -1);
  w.field_i32(3, 10);
  w.struct_end();
  std::string wire = w.take();
  size_t n = 0;
  bool ran_out = true;
  auto h = parse_page_header(bytes_of(wire), wire.size(), &n, &ran_out);
  ASSERT_FALSE(h.ok());
  EXPECT_FALSE(ran_out) << h.status().message();
  EXPECT_NE(h.status().message().find("uncompressed_page_size"), std::string::npos) << h.status().message();
}

TEST(Metadata, DataPageV2IsCompressedDefaultsToTrue) {
  CompactWriter w;
  w.struct_begin();
  w.field_i32(1, 3);
  w.field_i32(2, 10);
  w.field_i32(3, 10);
  w.field_struct_begin(8);
  for (int16_t id = 1; id <= 6; ++id) w.field_i32(id, 0);
  w.struct_end();
  w.struct_end();
  std::string wire = w.take();
  size_t n = 0;
  auto h = parse_page_header(bytes_of(wire), wire.size(), &n);
  ASSERT_TRUE(h.ok()) << h.status().message();
  ASSERT_TRUE(h->data_page_header_v2.has_value());
  EXPECT_TRUE(h->data_page_header_v2->is_compressed);
  EXPECT_EQ(h->type, PageType::kDataPageV2);
}

// A FileMetaData whose schema has one element written by `element`.
std::string footer_with_element(const std::function<void(CompactWriter&)>& element) {
  CompactWriter w;
  w.struct_begin();
  w.field_i32(1, 1);
  w.field_list_begin(2, CType::kStruct, 1);
  w.struct_begin();
  element(w);
  w.struct_end();
  w.field_i64(3, 0);
  w.field_list_begin(4, CType::kStruct, 0);
  w.struct_end();
  return w.take();
}

TEST(Metadata, MissingRequiredFieldsAreNamed) {
  std::string no_name = footer_with_element([](CompactWriter& w) { w.field_i32(1, 1); });
  auto r = parse_file_metadata(bytes_of(no_name), no_name.size());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_NE(r.status().message().find("SchemaElement"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("name"), std::string::npos) << r.status().message();

  // FileMetaData without num_rows and row_groups.
  CompactWriter w;
  w.struct_begin();
  w.field_i32(1, 1);
  w.field_list_begin(2, CType::kStruct, 0);
  w.struct_end();
  std::string partial = w.take();
  r = parse_file_metadata(bytes_of(partial), partial.size());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("num_rows"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("row_groups"), std::string::npos) << r.status().message();
  EXPECT_EQ(r.status().message().find("version"), std::string::npos) << r.status().message();

  // ColumnMetaData without codec and data_page_offset.
  CompactWriter c;
  c.struct_begin();
  c.field_i32(1, 1);
  c.field_list_begin(2, CType::kI32, 1);
  c.write_i32(0);
  c.field_list_begin(3, CType::kBinary, 1);
  c.write_binary("a");
  c.field_i64(5, 1);
  c.field_i64(6, 1);
  c.field_i64(7, 1);
  c.struct_end();
  std::string cmd = c.take();
  CompactWriter f;
  f.struct_begin();
  f.field_i32(1, 1);
  f.field_list_begin(2, CType::kStruct, 0);
  f.field_i64(3, 0);
  f.field_list_begin(4, CType::kStruct, 1);
  f.struct_begin();
  f.field_list_begin(1, CType::kStruct, 1);
  f.struct_begin();
  f.field_i64(2, 0);
  f.field_header(3, CType::kStruct);
  std::string wire = f.take() + cmd;
  wire += std::string("\0", 1);                    // end ColumnChunk
  wire += std::string("\x16\x00\x16\x00\x00", 5);  // RowGroup total_byte_size, num_rows, stop
  wire += std::string("\0", 1);                    // end FileMetaData
  r = parse_file_metadata(bytes_of(wire), wire.size());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(
      r.status().message().find("footer: ColumnMetaData: required field(s) missing: codec, data_page_offset"),
      std::string::npos)
      << r.status().message();
}

TEST(Metadata, WrongWireTypeNamesStructAndField) {
  std::string bad = footer_with_element([](CompactWriter& w) {
    w.field_i32(1, 1);
    w.field_i32(4, 5);  // name must be binary
  });
  auto r = parse_file_metadata(bytes_of(bad), bad.size());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("footer: SchemaElement.name: ", 0), 0u) << r.status().message();
}

TEST(Metadata, UnknownFieldsAreSkipped) {
  std::string wire = footer_with_element([](CompactWriter& w) {
    w.field_binary(4, "x");
    w.field_header(20, CType::kMap);
    w.map_begin(CType::kBinary, CType::kList, 1);
    w.write_binary("key");
    w.list_begin(CType::kStruct, 1);
    w.struct_begin();
    w.field_double(3, 1.0);
    w.struct_end();
    w.field_struct_begin(21);
    w.field_bool(1, false);
    w.struct_end();
    w.field_i32(6, 0);  // converted_type UTF8 after the unknown fields
  });
  auto r = parse_file_metadata(bytes_of(wire), wire.size());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->schema.size(), 1u);
  EXPECT_EQ(r->schema[0].name, "x");
  EXPECT_EQ(r->schema[0].converted_type, ConvertedType::kUtf8);
}

TEST(Metadata, DeepNestingIsRefused) {
  for (CType kind : {CType::kStruct, CType::kList}) {
    std::string wire = footer_with_element([kind](CompactWriter& w) {
      w.field_binary(4, "x");
      if (kind == CType::kStruct) {
        w.field_struct_begin(30);
        for (int i = 0; i < 10000; ++i) w.field_struct_begin(1);
        for (int i = 0; i < 10001; ++i) w.struct_end();
      } else {
        w.field_list_begin(30, CType::kList, 1);
        for (int i = 0; i < 10000; ++i) w.list_begin(CType::kList, 1);
        w.list_begin(CType::kI32, 0);
      }
    });
    auto r = parse_file_metadata(bytes_of(wire), wire.size());
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("nesting deeper than 64"), std::string::npos) << r.status().message();
  }
}

TEST(Metadata, HugeCountsAreRefusedBeforeAllocating) {
  // version=1, schema = list<struct> claiming 2^31-1 elements, in 20 bytes.
  const uint8_t list_claim[] = {0x15, 0x02, 0x19, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x07, 0x18,
                                0x01, 0x78, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  auto r = parse_file_metadata(list_claim, sizeof(list_claim));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("FileMetaData.schema"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("2147483647"), std::string::npos) << r.status().message();
  // 2^31 itself does not fit a Thrift list size.
  const uint8_t list_2_31[] = {0x15, 0x02, 0x19, 0xfc, 0x80, 0x80, 0x80, 0x80, 0x08, 0x00};
  EXPECT_FALSE(parse_file_metadata(list_2_31, sizeof(list_2_31)).ok());
  // created_by (field 6) claiming 2^40 bytes.
  const uint8_t binary_claim[] = {0x15, 0x02, 0x58, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 'a', 0x00};
  r = parse_file_metadata(binary_claim, sizeof(binary_claim));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("FileMetaData.created_by"), std::string::npos) << r.status().message();
  // A map claiming many entries in an unknown field.
  const uint8_t map_claim[] = {0x15, 0x02, 0x0b, 0x3c, 0xff, 0xff, 0xff, 0xff, 0x07, 0x88, 0x00};
  EXPECT_FALSE(parse_file_metadata(map_claim, sizeof(map_claim)).ok());
}

TEST(Metadata, Names) {
  EXPECT_EQ(type_name(PhysicalType::kByteArray), "BYTE_ARRAY");
  EXPECT_EQ(type_name(static_cast<PhysicalType>(42)), "UNKNOWN(42)");
  EXPECT_EQ(codec_name(Codec::kSnappy), "SNAPPY");
  EXPECT_EQ(codec_name(Codec::kLz4Raw), "LZ4_RAW");
  EXPECT_EQ(encoding_name(Encoding::kRleDictionary), "RLE_DICTIONARY");
  EXPECT_EQ(encoding_name(static_cast<Encoding>(1)), "UNKNOWN(1)");
  EXPECT_EQ(repetition_name(Repetition::kOptional), "OPTIONAL");
  EXPECT_EQ(page_type_name(PageType::kDataPageV2), "DATA_PAGE_V2");
  EXPECT_EQ(converted_type_name(ConvertedType::kUtf8), "UTF8");
  EXPECT_EQ(converted_type_name(ConvertedType::kTimestampMicros), "TIMESTAMP_MICROS");
  LogicalType lt;
  EXPECT_EQ(logical_type_name(lt), "");
  lt.kind = LogicalType::kString;
  EXPECT_EQ(logical_type_name(lt), "STRING");
  lt.kind = LogicalType::kDecimal;
  lt.decimal_precision = 10;
  lt.decimal_scale = 2;
  EXPECT_EQ(logical_type_name(lt), "DECIMAL(10,2)");
  lt.kind = LogicalType::kTimestamp;
  lt.time_unit = 2;
  lt.is_adjusted_to_utc = true;
  EXPECT_EQ(logical_type_name(lt), "TIMESTAMP(MICROS,true)");
  lt.kind = LogicalType::kInteger;
  lt.integer_bit_width = 8;
  lt.integer_signed = false;
  EXPECT_EQ(logical_type_name(lt), "INTEGER(8,false)");
  lt.kind = 99;
  EXPECT_EQ(logical_type_name(lt), "UNKNOWN(99)");
}

// ---- real files from parquet-testing ----

fs::path parquet_testing_dir() {
  return fs::path(INFERCOST_SHARED_DATA_DIR) / "parquet-testing" / "data";
}

std::string read_whole(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The footer bytes: before the 4-byte length and "PAR1".
std::string footer_of(const std::string& file) {
  if (file.size() < 12 || file.compare(file.size() - 4, 4, "PAR1") != 0) return {};
  uint32_t len = 0;
  std::memcpy(&len, file.data() + file.size() - 8, 4);
  if (len > file.size() - 12) return {};
  return file.substr(file.size() - 8 - len, len);
}

std::vector<fs::path> testing_files() {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(parquet_testing_dir(), ec)) {
    if (e.path().extension() == ".parquet") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

#define SKIP_WITHOUT_TESTING_FILES()                                                  \
  if (testing_files().empty())                                                        \
  GTEST_SKIP() << "no parquet-testing files under " << parquet_testing_dir().string() \
               << " (shared data not present)"

TEST(MetadataRealFiles, EveryFooterAndPageHeaderParses) {
  SKIP_WITHOUT_TESTING_FILES();
  size_t pages = 0;
  for (const auto& path : testing_files()) {
    SCOPED_TRACE(path.filename().string());
    std::string file = read_whole(path);
    std::string footer = footer_of(file);
    ASSERT_FALSE(footer.empty());
    auto md = parse_file_metadata(bytes_of(footer), footer.size());
    ASSERT_TRUE(md.ok()) << md.status().message();
    ASSERT_FALSE(md->schema.empty());
    int64_t rows = 0;
    for (const auto& rg : md->row_groups) {
      rows += rg.num_rows;
      for (const auto& cc : rg.columns) {
        ASSERT_TRUE(cc.meta_data.has_value());
        const ColumnMetaData& m = *cc.meta_data;
        // Old Impala files record a bogus dictionary_page_offset; data_page_offset is reliable.
        for (int64_t off : {m.data_page_offset}) {
          ASSERT_GE(off, 4);
          ASSERT_LT(static_cast<size_t>(off), file.size());
          size_t hs = 0;
          auto h = parse_page_header(bytes_of(file) + off, file.size() - off, &hs);
          ASSERT_TRUE(h.ok()) << h.status().message();
          EXPECT_GT(hs, 0u);
          EXPECT_LE(static_cast<size_t>(off) + hs + h->compressed_page_size, file.size());
          ++pages;
        }
      }
    }
    EXPECT_EQ(rows, md->num_rows);
    // Re-serializing what we understood parses back to the same values.
    std::string again = serialize_file_metadata(*md);
    auto md2 = parse_file_metadata(bytes_of(again), again.size());
    ASSERT_TRUE(md2.ok()) << md2.status().message();
    expect_eq(*md, *md2);
  }
  EXPECT_GT(pages, 10u);
}

struct KnownFacts {
  const char* file;
  int64_t rows;
  size_t leaf_columns;
  Codec codec;
};

TEST(MetadataRealFiles, KnownFacts) {
  SKIP_WITHOUT_TESTING_FILES();
  // Checked against pyarrow's ParquetFile(...).metadata.
  const KnownFacts facts[] = {
      {"alltypes_plain.parquet", 8, 11, Codec::kUncompressed},
      {"alltypes_plain.snappy.parquet", 2, 11, Codec::kSnappy},
      {"alltypes_dictionary.parquet", 2, 11, Codec::kUncompressed},
      {"nested_lists.snappy.parquet", 3, 2, Codec::kSnappy},
      {"datapage_v2.snappy.parquet", 5, 5, Codec::kSnappy},
      {"byte_stream_split.zstd.parquet", 300, 2, Codec::kZstd},
      {"hadoop_lz4_compressed.parquet", 4, 3, Codec::kLz4},
      {"lz4_raw_compressed.parquet", 4, 3, Codec::kLz4Raw},
      {"nonnullable.impala.parquet", 1, 13, Codec::kUncompressed},
      {"binary.parquet", 12, 1, Codec::kUncompressed},
  };
  for (const auto& f : facts) {
    SCOPED_TRACE(f.file);
    std::string file = read_whole(parquet_testing_dir() / f.file);
    ASSERT_FALSE(file.empty());
    std::string footer = footer_of(file);
    auto md = parse_file_metadata(bytes_of(footer), footer.size());
    ASSERT_TRUE(md.ok()) << md.status().message();
    EXPECT_EQ(md->num_rows, f.rows);
    size_t leaves = 0;
    for (const auto& e : md->schema) leaves += e.type.has_value() ? 1 : 0;
    EXPECT_EQ(leaves, f.leaf_columns);
    ASSERT_EQ(md->row_groups.size(), 1u);
    ASSERT_EQ(md->row_groups[0].columns.size(), f.leaf_columns);
    for (const auto& cc : md->row_groups[0].columns) EXPECT_EQ(cc.meta_data->codec, f.codec);
  }

  std::string plain = read_whole(parquet_testing_dir() / "alltypes_plain.parquet");
  std::string footer = footer_of(plain);
  auto md = parse_file_metadata(bytes_of(footer), footer.size());
  ASSERT_TRUE(md.ok());
  EXPECT_EQ(md->schema[0].name, "schema");
  EXPECT_EQ(md->schema[0].num_children, 11);
  EXPECT_EQ(md->schema[1].name, "id");
  EXPECT_EQ(md->schema[1].type, PhysicalType::kInt32);
  EXPECT_EQ(md->schema[1].repetition, Repetition::kOptional);
  EXPECT_EQ(md->created_by.value_or(""),
            "impala version 1.3.0-INTERNAL (build 8a48ddb1eff84592b3fc06bc6f51ec120e1fffc9)");
  const auto& c0 = *md->row_groups[0].columns[0].meta_data;
  EXPECT_EQ(c0.path_in_schema, std::vector<std::string>{"id"});
  EXPECT_EQ(c0.num_values, 8);

  std::string v2 = read_whole(parquet_testing_dir() / "datapage_v2.snappy.parquet");
  footer = footer_of(v2);
  md = parse_file_metadata(bytes_of(footer), footer.size());
  ASSERT_TRUE(md.ok());
  for (const auto& cc : md->row_groups[0].columns) {
    // parquet-mr 1.8 leaves dictionary_page_offset unset and puts the
    // dictionary page at data_page_offset; the data page follows it.
    size_t hs = 0;
    size_t off = static_cast<size_t>(cc.meta_data->data_page_offset);
    auto h = parse_page_header(bytes_of(v2) + off, v2.size() - off, &hs);
    ASSERT_TRUE(h.ok()) << h.status().message();
    if (h->type == PageType::kDictionaryPage) {
      off += hs + static_cast<size_t>(h->compressed_page_size);
      ASSERT_LT(off, v2.size());
      h = parse_page_header(bytes_of(v2) + off, v2.size() - off, &hs);
      ASSERT_TRUE(h.ok()) << h.status().message();
    }
    EXPECT_EQ(h->type, PageType::kDataPageV2) << page_type_name(h->type);
    ASSERT_TRUE(h->data_page_header_v2.has_value());
    EXPECT_EQ(h->data_page_header_v2->num_rows, 5);
  }
}

TEST(MetadataRealFiles, EveryTruncationFailsCleanly) {
  SKIP_WITHOUT_TESTING_FILES();
  size_t checked = 0;
  for (const auto& path : testing_files()) {
    SCOPED_TRACE(path.filename().string());
    std::string footer = footer_of(read_whole(path));
    ASSERT_FALSE(footer.empty());
    for (size_t n = 0; n < footer.size(); ++n) {
      // A fresh, exactly sized copy so ASan sees any overread.
      std::vector<uint8_t> prefix(footer.begin(), footer.begin() + static_cast<std::ptrdiff_t>(n));
      auto md = parse_file_metadata(prefix.data(), prefix.size());
      ASSERT_FALSE(md.ok()) << "prefix of " << n << " bytes parsed";
      EXPECT_EQ(md.status().code(), StatusCode::kCorruption);
      EXPECT_EQ(md.status().message().rfind("footer: ", 0), 0u) << md.status().message();
      ++checked;
    }
  }
  EXPECT_GT(checked, 1000u);
}

TEST(MetadataRealFiles, RandomMutationsNeverCrash) {
  SKIP_WITHOUT_TESTING_FILES();
  std::vector<std::string> footers;
  for (const auto& path : testing_files()) footers.push_back(footer_of(read_whole(path)));
  std::mt19937 rng(12345);
  size_t ok = 0, failed = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string f = footers[rng() % footers.size()];
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) {
      size_t pos = rng() % f.size();
      switch (rng() % 3) {
        case 0: f[pos] = static_cast<char>(rng()); break;
        case 1: f[pos] = static_cast<char>(f[pos] ^ (1 << (rng() % 8))); break;
        default: f[pos] = static_cast<char>(0xff); break;
      }
    }
    std::vector<uint8_t> buf(f.begin(), f.end());
    auto md = parse_file_metadata(buf.data(), buf.size());
    if (md.ok()) {
      ++ok;
      std::string again = serialize_file_metadata(*md);
      EXPECT_TRUE(parse_file_metadata(bytes_of(again), again.size()).ok());
    } else {
      ++failed;
      EXPECT_EQ(md.status().code(), StatusCode::kCorruption);
    }
    size_t hs = 0;
    (void)parse_page_header(buf.data(), buf.size(), &hs);
  }
  EXPECT_EQ(ok + failed, 3000u);
  EXPECT_GT(failed, 0u);
}

}  // namespace
}  // namespace infercost::parquet
