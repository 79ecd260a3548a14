#include "parquet/reader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

#include "parquet/reader_test_util.h"

namespace infercost::parquet {
namespace {

using testing::assemble;
using testing::Chunk;
using testing::Column;

using Opt = std::optional<std::string>;

// Strips the footer of `file` and writes `md` in its place.
std::string replace_footer(const std::string& file, const FileMetaData& md) {
  uint32_t len = 0;
  std::memcpy(&len, file.data() + file.size() - 8, 4);
  std::string out = file.substr(0, file.size() - 8 - len);
  std::string footer = serialize_file_metadata(md);
  out += footer;
  testing::put_le32(static_cast<uint32_t>(footer.size()), out);
  return out + "PAR1";
}

std::shared_ptr<ParquetFile> open_ok(const std::string& bytes) {
  auto file = ParquetFile::open_memory("mem.parquet", bytes);
  EXPECT_TRUE(file.ok()) << file.status().to_string();
  return file.ok() ? *file : nullptr;
}

// Reads the whole column in batches of `batch`.
Result<ColumnValues> read_column(const std::shared_ptr<ParquetFile>& file, int leaf, size_t batch) {
  INFERCOST_ASSIGN_OR_RETURN(auto reader, ColumnReader::open(file, leaf));
  ColumnValues all;
  for (;;) {
    INFERCOST_ASSIGN_OR_RETURN(size_t n, reader->next(batch, all));
    if (n == 0) break;
    if (n > batch) return internal_error("batch overrun");
  }
  if (reader->rows_read() != static_cast<int64_t>(all.size())) return internal_error("rows_read mismatch");
  return all;
}

std::vector<Opt> as_strings(const ColumnValues& v) {
  std::vector<Opt> out;
  for (size_t i = 0; i < v.size(); ++i) out.push_back(v.valid[i] ? Opt(std::string(v.strings.at(i))) : Opt());
  return out;
}

// rg0: two pages, rg1: one page; column "text" optional UTF8.
std::string three_page_file() {
  Chunk c0;
  c0.bytes =
      testing::string_page({Opt("a"), Opt(), Opt("h\xc3\xa9llo")}) + testing::string_page({Opt("d"), Opt()});
  c0.num_values = 5;
  Chunk c1;
  c1.bytes = testing::string_page({Opt("x")});
  c1.num_values = 1;
  return assemble({Column{"text"}}, {{c0}, {c1}}, {5, 1});
}

const std::vector<Opt> kThreePageValues = {Opt("a"), Opt(), Opt("h\xc3\xa9llo"), Opt("d"), Opt(), Opt("x")};

TEST(ParquetReader, ReadsOptionalStringsAcrossPagesAndRowGroupsInAnyBatchSize) {
  auto file = open_ok(three_page_file());
  ASSERT_TRUE(file);
  ASSERT_EQ(file->columns().size(), 1u);
  EXPECT_EQ(file->columns()[0].path, "text");
  EXPECT_EQ(file->columns()[0].max_definition_level, 1);
  EXPECT_TRUE(file->columns()[0].flat);
  EXPECT_EQ(file->metadata().num_rows, 6);
  for (size_t batch : {1, 2, 3, 4, 5, 100}) {
    auto values = read_column(file, 0, batch);
    ASSERT_TRUE(values.ok()) << values.status().to_string();
    EXPECT_EQ(values->type, PhysicalType::kByteArray);
    EXPECT_EQ(as_strings(*values), kThreePageValues) << "batch " << batch;
  }
}

TEST(ParquetReader, TracksBytesAndPeakBuffers) {
  std::string bytes = three_page_file();
  auto file = open_ok(bytes);
  ASSERT_TRUE(file);
  auto reader = ColumnReader::open(file, 0);
  ASSERT_TRUE(reader.ok());
  ColumnValues v;
  EXPECT_EQ(*(*reader)->next(2, v), 2u);
  EXPECT_GT((*reader)->bytes_read(), 0u);
  while (*(*reader)->next(2, v) > 0) {
  }
  const auto& md = file->metadata();
  uint64_t chunks = 0;
  for (const auto& rg : md.row_groups) chunks += rg.columns[0].meta_data->total_compressed_size;
  EXPECT_EQ((*reader)->bytes_read(), chunks);
  EXPECT_GT((*reader)->peak_buffer_bytes(), 0u);
  EXPECT_LT((*reader)->peak_buffer_bytes(), 64u << 10);
  EXPECT_EQ((*reader)->rows_read(), 6);
  // At the end it stays at the end.
  EXPECT_EQ(*(*reader)->next(10, v), 0u);
}

TEST(ParquetReader, OpensFromDiskWithPread) {
  std::string path = std::string(INFERCOST_BINARY_DIR) + "/reader_test_disk.parquet";
  {
    std::ofstream f(path, std::ios::binary);
    std::string bytes = three_page_file();
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  auto file = ParquetFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  EXPECT_EQ((*file)->path(), path);
  auto values = read_column(*file, 0, 4);
  ASSERT_TRUE(values.ok()) << values.status().to_string();
  EXPECT_EQ(as_strings(*values), kThreePageValues);
  std::remove(path.c_str());

  auto missing = ParquetFile::open(path + ".missing");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("reader_test_disk.parquet.missing"), std::string::npos);
}

std::string dictionary_file(const std::vector<uint32_t>& indices) {
  Chunk c;
  std::string dict = testing::dictionary_page({"p", "qq", "rrr"});
  c.bytes = dict + testing::index_page(indices, 2);
  c.dict_bytes = dict.size();
  c.num_values = static_cast<int64_t>(indices.size());
  return assemble({Column{"name", PhysicalType::kByteArray, Repetition::kRequired}}, {{c}},
                  {static_cast<int64_t>(indices.size())});
}

TEST(ParquetReader, ReadsDictionaryEncodedStrings) {
  std::vector<uint32_t> idx;
  for (int i = 0; i < 50; ++i) idx.push_back(i % 7 == 0 ? 2 : i % 2);
  auto file = open_ok(dictionary_file(idx));
  ASSERT_TRUE(file);
  auto values = read_column(file, 0, 9);
  ASSERT_TRUE(values.ok()) << values.status().to_string();
  ASSERT_EQ(values->size(), 50u);
  const char* dict[] = {"p", "qq", "rrr"};
  for (size_t i = 0; i < 50; ++i) {
    EXPECT_TRUE(values->valid[i]);
    EXPECT_EQ(values->strings.at(i), dict[idx[i]]);
  }
}

TEST(ParquetReader, DictionaryIndexOutOfRangeIsCorruptionWithLocation) {
  auto file = open_ok(dictionary_file({0, 1, 3, 0}));
  ASSERT_TRUE(file);
  auto values = read_column(file, 0, 100);
  ASSERT_FALSE(values.ok());
  EXPECT_EQ(values.status().code(), StatusCode::kCorruption);
  const std::string& m = values.status().message();
  EXPECT_EQ(m.rfind("mem.parquet: row group 0, column 'name', offset ", 0), 0u) << m;
  EXPECT_NE(m.find("dictionary index 3"), std::string::npos) << m;
}

TEST(ParquetReader, ReadsRequiredInt64AndRendersJson) {
  Chunk c;
  c.bytes = testing::int64_page({1, -2, std::numeric_limits<int64_t>::max()});
  c.num_values = 3;
  auto file = open_ok(assemble({Column{"n", PhysicalType::kInt64, Repetition::kRequired}}, {{c}}, {3}));
  ASSERT_TRUE(file);
  auto values = read_column(file, 0, 2);
  ASSERT_TRUE(values.ok()) << values.status().to_string();
  EXPECT_EQ(values->ints, (std::vector<int64_t>{1, -2, std::numeric_limits<int64_t>::max()}));
  std::string json;
  for (size_t i = 0; i < 3; ++i) {
    append_value_json(file->columns()[0], *values, i, json);
    json += ",";
  }
  EXPECT_EQ(json, "1,-2,9223372036854775807,");
}

std::string v2_file(Codec codec, const std::vector<Opt>& values, bool is_compressed = true) {
  std::vector<uint32_t> levels;
  std::string plain;
  int nulls = 0;
  for (const auto& v : values) {
    levels.push_back(v.has_value());
    if (v) encode_plain_byte_array(*v, plain);
    nulls += !v;
  }
  std::string lv;
  encode_rle_bit_packed(levels.data(), levels.size(), 1, lv);
  std::string body = plain;
  if (codec != Codec::kUncompressed && is_compressed && !plain.empty()) {
    EXPECT_TRUE(compress(codec, reinterpret_cast<const uint8_t*>(plain.data()), plain.size(), body).ok());
  }
  PageHeader h;
  h.type = PageType::kDataPageV2;
  DataPageHeaderV2 d;
  d.num_values = static_cast<int32_t>(values.size());
  d.num_rows = d.num_values;
  d.num_nulls = nulls;
  d.definition_levels_byte_length = static_cast<int32_t>(lv.size());
  d.is_compressed = is_compressed;
  h.data_page_header_v2 = d;
  Chunk c;
  c.bytes = testing::page(h, lv + body, true, static_cast<int32_t>(lv.size() + plain.size()));
  c.num_values = static_cast<int64_t>(values.size());
  c.codec = codec;
  return assemble({Column{"t"}}, {{c}}, {static_cast<int64_t>(values.size())});
}

TEST(ParquetReader, ReadsDataPageV2WithUncompressedLevels) {
  std::vector<Opt> values;
  for (int i = 0; i < 300; ++i)
    values.push_back(i % 5 == 1 ? Opt() : Opt("value number " + std::to_string(i % 11)));
  for (Codec codec : {Codec::kUncompressed, Codec::kSnappy, Codec::kZstd, Codec::kGzip}) {
    auto file = open_ok(v2_file(codec, values));
    ASSERT_TRUE(file);
    auto got = read_column(file, 0, 64);
    ASSERT_TRUE(got.ok()) << codec_name(codec) << ": " << got.status().to_string();
    EXPECT_EQ(as_strings(*got), values) << codec_name(codec);
  }
  // is_compressed = false under a codec: the values are stored plain.
  auto file = open_ok(v2_file(Codec::kSnappy, values, false));
  ASSERT_TRUE(file);
  auto got = read_column(file, 0, 1000);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  EXPECT_EQ(as_strings(*got), values);
}

TEST(ParquetReader, AllNullV2PageWithNoValueBytesIsNotDecompressed) {
  std::vector<Opt> values(10);
  auto file = open_ok(v2_file(Codec::kSnappy, values));
  ASSERT_TRUE(file);
  auto got = read_column(file, 0, 3);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  EXPECT_EQ(as_strings(*got), values);
  EXPECT_EQ(got->strings.size(), 10u);  // nulls take empty slots
}

// ---- refusals and corruption ----

Status open_status(const std::string& bytes) {
  auto file = ParquetFile::open_memory("bad.parquet", bytes);
  return file.ok() ? Status() : file.status();
}

TEST(ParquetReaderErrors, MagicAndFooterLength) {
  std::string good = three_page_file();
  std::string bad = good;
  bad[0] = 'X';
  Status st = open_status(bad);
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_NE(st.message().find("bad.parquet"), std::string::npos);

  bad = good;
  bad.replace(bad.size() - 4, 4, "PARE");
  st = open_status(bad);
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_EQ(st.message(), "bad.parquet: encrypted Parquet files are not supported");

  bad = good;
  bad.replace(bad.size() - 8, 4, std::string("\xff\xff\x00\x00", 4));
  st = open_status(bad);
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_NE(st.message().find("footer length"), std::string::npos) << st.message();

  EXPECT_EQ(open_status("PAR1PAR1").code(), StatusCode::kCorruption);
  EXPECT_EQ(open_status("").code(), StatusCode::kCorruption);
}

TEST(ParquetReaderErrors, RowGroupColumnCountAndChunkBounds) {
  std::string good = three_page_file();
  auto file = open_ok(good);
  ASSERT_TRUE(file);
  FileMetaData md = file->metadata();

  FileMetaData extra = md;
  extra.row_groups[1].columns.push_back(extra.row_groups[1].columns[0]);
  Status st = open_status(replace_footer(good, extra));
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_NE(st.message().find("row group 1: 2 column chunks, but the schema has 1"), std::string::npos)
      << st.message();

  FileMetaData past = md;
  past.row_groups[0].columns[0].meta_data->total_compressed_size = static_cast<int64_t>(good.size());
  st = open_status(replace_footer(good, past));
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_NE(st.message().find("row group 0, column 'text'"), std::string::npos) << st.message();
}

TEST(ParquetReaderErrors, PageCrcMismatch) {
  std::string bytes = three_page_file();
  // The first page's last value byte ("llo" of "héllo"): flip it.
  size_t at = bytes.find("llo");
  ASSERT_NE(at, std::string::npos);
  bytes[at] = 'L';
  auto file = open_ok(bytes);
  ASSERT_TRUE(file);
  auto got = read_column(file, 0, 10);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kCorruption);
  EXPECT_NE(got.status().message().find("CRC"), std::string::npos) << got.status().message();
  EXPECT_NE(got.status().message().find("offset 4:"), std::string::npos) << got.status().message();
}

TEST(ParquetReaderErrors, FewerLevelsThanPageValues) {
  // The page header says 12 values, the levels (one RLE run) encode 8 (cf.
  // ARROW-GH-41321). Bit-packed runs are padded to groups of 8, so a run is
  // what can come up short.
  std::string plain;
  for (int i = 0; i < 12; ++i) encode_plain_byte_array("a", plain);
  std::string body = testing::v1_levels(std::vector<uint32_t>(8, 1)) + plain;
  Chunk c;
  c.bytes = testing::page(testing::data_page_header(12), body);
  c.num_values = 12;
  auto file = open_ok(assemble({Column{"t"}}, {{c}}, {12}));
  ASSERT_TRUE(file);
  auto got = read_column(file, 0, 100);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kCorruption);
  EXPECT_NE(got.status().message().find("definition levels"), std::string::npos) << got.status().message();
}

TEST(ParquetReaderErrors, ChunkRowsDifferFromRowGroup) {
  // Row group says 5 rows, the chunk holds 3 (cf. ARROW-GH-41317).
  Chunk c;
  c.bytes = testing::string_page({Opt("a"), Opt("b"), Opt()});
  c.num_values = 3;
  auto file = open_ok(assemble({Column{"t"}}, {{c}}, {5}));
  ASSERT_TRUE(file);
  auto got = read_column(file, 0, 100);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kCorruption);
  EXPECT_NE(got.status().message().find("holds 3 rows, but the row group has 5"), std::string::npos)
      << got.status().message();

  // And a page with more values than the row group has rows.
  auto file2 = open_ok(assemble({Column{"t"}}, {{c}}, {2}));
  ASSERT_TRUE(file2);
  got = read_column(file2, 0, 100);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("page has 3 values"), std::string::npos) << got.status().message();
}

TEST(ParquetReaderErrors, NestedColumnsAreRefusedByNameOthersRead) {
  Chunk a;
  a.bytes = testing::int64_page({7, 8});
  a.num_values = 2;
  Chunk b;
  b.bytes = testing::string_page({Opt("x"), Opt("y")});
  b.num_values = 2;
  std::string flat =
      assemble({Column{"s", PhysicalType::kInt64, Repetition::kRequired}, Column{"t"}}, {{a, b}}, {2});
  auto file = open_ok(flat);
  ASSERT_TRUE(file);
  FileMetaData md = file->metadata();
  // Put column 0 inside an optional group "g": schema root, g{x}, t.
  SchemaElement group;
  group.name = "g";
  group.repetition = Repetition::kOptional;
  group.num_children = 1;
  md.schema[1].name = "x";
  md.schema.insert(md.schema.begin() + 1, group);
  auto nested = open_ok(replace_footer(flat, md));
  ASSERT_TRUE(nested);
  ASSERT_EQ(nested->columns().size(), 2u);
  EXPECT_EQ(nested->columns()[0].path, "g.x");
  EXPECT_FALSE(nested->columns()[0].flat);
  EXPECT_EQ(nested->columns()[0].max_definition_level, 1);
  auto found = nested->find_flat_column("g.x");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(found.status().message().find("'g.x'"), std::string::npos);
  EXPECT_EQ(nested->find_flat_column("g").status().code(), StatusCode::kUnsupported);
  auto reader = ColumnReader::open(nested, 0);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(reader.status().message().find("g.x"), std::string::npos);
  auto t = read_column(nested, 1, 10);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(as_strings(*t), (std::vector<Opt>{Opt("x"), Opt("y")}));

  auto missing = nested->find_flat_column("nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("g.x, t"), std::string::npos) << missing.status().message();

  // A schema whose num_children runs past its end.
  md.schema[1].num_children = 5;
  EXPECT_EQ(open_status(replace_footer(flat, md)).code(), StatusCode::kCorruption);
}

TEST(ParquetReaderJson, ValuesRenderAsTheHeaderSays) {
  SchemaElement bin;
  bin.name = "b";
  bin.type = PhysicalType::kByteArray;
  ColumnDescriptor c;
  c.element = &bin;
  ColumnValues v;
  v.type = PhysicalType::kByteArray;
  v.strings.append("caf\xc3\xa9 \"q\"\n");
  v.strings.append(std::string("\xff\x01", 2));
  v.strings.append("");
  v.valid = {1, 1, 0};
  std::string out;
  for (size_t i = 0; i < 3; ++i) {
    append_value_json(c, v, i, out);
    out += " ";
  }
  EXPECT_EQ(out, "\"caf\xc3\xa9 \\\"q\\\"\\n\" \"\\u00ff\\u0001\" null ");

  SchemaElement dbl;
  dbl.name = "d";
  dbl.type = PhysicalType::kDouble;
  c.element = &dbl;
  ColumnValues d;
  d.type = PhysicalType::kDouble;
  d.doubles = {0.1, std::nan(""), -INFINITY, 1e300};
  d.valid = {1, 1, 1, 1};
  out.clear();
  for (size_t i = 0; i < 4; ++i) {
    append_value_json(c, d, i, out);
    out += " ";
  }
  EXPECT_EQ(out, "0.1 \"NaN\" \"-Infinity\" 1e+300 ");

  SchemaElement u;
  u.name = "u";
  u.type = PhysicalType::kInt32;
  u.converted_type = ConvertedType::kUint32;
  c.element = &u;
  ColumnValues i32;
  i32.type = PhysicalType::kInt32;
  i32.ints = {-1};
  i32.valid = {1};
  out.clear();
  append_value_json(c, i32, 0, out);
  EXPECT_EQ(out, "4294967295");

  SchemaElement f;
  f.name = "f";
  f.type = PhysicalType::kFloat;
  c.element = &f;
  ColumnValues fl;
  fl.type = PhysicalType::kFloat;
  fl.doubles = {static_cast<double>(0.1f)};
  fl.valid = {1};
  out.clear();
  append_value_json(c, fl, 0, out);
  EXPECT_EQ(out, "0.1");
}

TEST(ParquetReaderDescribe, NamesRowsSchemaAndChunks) {
  auto file = open_ok(three_page_file());
  ASSERT_TRUE(file);
  std::string d = describe_file(*file);
  EXPECT_NE(d.find("rows: 6"), std::string::npos) << d;
  EXPECT_NE(d.find("row groups: 2"), std::string::npos) << d;
  EXPECT_NE(d.find("infercost reader tests"), std::string::npos) << d;
  EXPECT_NE(d.find("OPTIONAL text BYTE_ARRAY"), std::string::npos) << d;
  EXPECT_NE(d.find("column 'text': UNCOMPRESSED"), std::string::npos) << d;
}

}  // namespace
}  // namespace infercost::parquet
