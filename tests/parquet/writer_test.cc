// ParquetWriter without Python: file structure checked with our own footer
// and page-header parsers (page CRCs, offsets, sizes, page types, dictionary
// fallback), API misuse, and the no-partial-output contract.
#include "parquet/writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "infercost/core/file.h"
#include "parquet/reader.h"
#include "test_utils.h"
#include "writer_test_cases.h"

namespace infercost::parquet {
namespace {

using infercost::testing::count_entries;
using infercost::testing::TempDir;
using testing::Dataset;
using testing::Value;
using testing::WriterCase;

class WriterStructureTest : public ::testing::TestWithParam<std::string> {};

const WriterCase& find_case(const std::string& name) {
  static const std::vector<WriterCase> cases = testing::writer_cases();
  for (const WriterCase& c : cases) {
    if (c.name == name) return c;
  }
  std::abort();
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const WriterCase& c : testing::writer_cases()) names.push_back(c.name);
  return names;
}

TEST_P(WriterStructureTest, PagesOffsetsSizesAndCrcs) {
  const WriterCase& c = find_case(GetParam());
  TempDir dir;
  std::string path = dir.file("out.parquet");
  Status st = testing::write_dataset(path, c.data, c.options);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(count_entries(dir.path()), 1) << "a temporary was left behind";
  auto summary = testing::walk_file(path);
  ASSERT_TRUE(summary.ok()) << summary.status().to_string();
  const FileMetaData& md = summary->metadata;
  EXPECT_EQ(md.num_rows, static_cast<int64_t>(c.data.rows()));
  if (c.row_groups >= 0) {
    EXPECT_EQ(static_cast<int64_t>(md.row_groups.size()), c.row_groups);
  }
  ASSERT_TRUE(md.created_by.has_value());
  EXPECT_EQ(md.created_by->rfind("infercost version ", 0), 0u) << *md.created_by;
  ASSERT_EQ(md.schema.size(), c.data.specs.size() + 1);
  EXPECT_EQ(md.schema[0].num_children, static_cast<int>(c.data.specs.size()));
  for (size_t i = 0; i < c.data.specs.size(); ++i) {
    const SchemaElement& e = md.schema[i + 1];
    EXPECT_EQ(e.name, c.data.specs[i].name);
    EXPECT_EQ(e.repetition, c.data.specs[i].nullable ? Repetition::kOptional : Repetition::kRequired);
    if (c.data.specs[i].kind == ColumnSpec::Kind::kString) {
      EXPECT_EQ(e.logical_type.kind, LogicalType::kString);
      EXPECT_EQ(e.converted_type, ConvertedType::kUtf8);
    }
  }
  for (const RowGroup& rg : md.row_groups) {
    for (const ColumnChunk& cc : rg.columns) {
      EXPECT_EQ(cc.meta_data->codec, c.options.codec);
      EXPECT_EQ(cc.meta_data->statistics.has_value(), c.options.statistics);
    }
  }
  const PageType want_type = c.options.data_page_version == 2 ? PageType::kDataPageV2 : PageType::kDataPage;
  for (size_t col = 0; col < summary->columns.size(); ++col) {
    const testing::PageSummary& ps = summary->columns[col];
    for (PageType t : ps.data_page_types) EXPECT_EQ(t, want_type);
    bool is_string = c.data.specs[col].kind == ColumnSpec::Kind::kString;
    if (!is_string || !c.options.dictionary) {
      EXPECT_EQ(ps.dictionary_pages, 0) << c.data.specs[col].name;
      for (Encoding e : ps.data_page_encodings) EXPECT_EQ(e, Encoding::kPlain);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, WriterStructureTest, ::testing::ValuesIn(case_names()),
                         [](const auto& info) { return info.param; });

Result<testing::FileSummary> write_and_walk(const TempDir& dir, const Dataset& data,
                                            const WriterOptions& options) {
  std::string path = dir.file("t.parquet");
  INFERCOST_RETURN_IF_ERROR(testing::write_dataset(path, data, options));
  return testing::walk_file(path);
}

TEST(WriterStructure, DictionaryCapFallbackKeepsDictionaryThenPlainPages) {
  for (int version : {1, 2}) {
    const WriterCase& c = find_case("dictionary_cap_fallback_v" + std::to_string(version));
    TempDir dir;
    auto s = write_and_walk(dir, c.data, c.options);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    const auto& ps = s->columns[0];
    EXPECT_EQ(ps.dictionary_pages, 1);
    ASSERT_GE(ps.data_pages, 3);
    // RLE_DICTIONARY pages, then PLAIN ones, never back.
    auto first_plain =
        std::find(ps.data_page_encodings.begin(), ps.data_page_encodings.end(), Encoding::kPlain);
    ASSERT_NE(first_plain, ps.data_page_encodings.begin());
    ASSERT_NE(first_plain, ps.data_page_encodings.end());
    EXPECT_TRUE(std::all_of(ps.data_page_encodings.begin(), first_plain,
                            [](Encoding e) { return e == Encoding::kRleDictionary; }));
    EXPECT_TRUE(std::all_of(first_plain, ps.data_page_encodings.end(),
                            [](Encoding e) { return e == Encoding::kPlain; }));
    const ColumnMetaData& cm = *s->metadata.row_groups[0].columns[0].meta_data;
    EXPECT_TRUE(cm.dictionary_page_offset.has_value());
    EXPECT_NE(std::find(cm.encodings.begin(), cm.encodings.end(), Encoding::kPlain), cm.encodings.end());
    EXPECT_NE(std::find(cm.encodings.begin(), cm.encodings.end(), Encoding::kRleDictionary),
              cm.encodings.end());
  }
}

TEST(WriterStructure, DictionaryRatioFallbackForUniqueStrings) {
  const WriterCase& c = find_case("dictionary_ratio_fallback_v1");
  TempDir dir;
  auto s = write_and_walk(dir, c.data, c.options);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  const auto& enc = s->columns[0].data_page_encodings;
  size_t dict_pages = std::count(enc.begin(), enc.end(), Encoding::kRleDictionary);
  size_t plain_pages = std::count(enc.begin(), enc.end(), Encoding::kPlain);
  EXPECT_GE(dict_pages, 1u);
  EXPECT_GT(plain_pages, dict_pages) << "unique strings should leave the dictionary soon";
}

TEST(WriterStructure, RepeatedStringsStayDictionaryEncoded) {
  TempDir dir;
  WriterOptions options;
  options.page_bytes = 512;
  auto s = write_and_walk(dir, testing::fallback_dataset(5000, 0, 0, 0), options);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->columns[0].dictionary_pages, 1);
  for (Encoding e : s->columns[0].data_page_encodings) EXPECT_EQ(e, Encoding::kRleDictionary);
}

TEST(WriterStructure, TinyPageBytesGiveOnePagePerValue) {
  const WriterCase& c = find_case("one_value_per_page_v2");
  TempDir dir;
  auto s = write_and_walk(dir, c.data, c.options);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  for (const auto& ps : s->columns) EXPECT_EQ(ps.data_pages, 120);
}

TEST(WriterStructure, RowGroupBytesBoundTheRowGroups) {
  const WriterCase& c = find_case("row_group_bytes_v1");
  TempDir dir;
  auto s = write_and_walk(dir, c.data, c.options);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_GT(s->metadata.row_groups.size(), 3u);
  for (const RowGroup& rg : s->metadata.row_groups) {
    // One row past the threshold at most, plus page headers.
    EXPECT_LT(rg.total_byte_size, 2 * c.options.row_group_bytes);
  }
}

TEST(WriterStructure, CrcAndStatisticsFollowOptions) {
  TempDir dir;
  WriterOptions options;
  options.page_crc = false;
  options.statistics = false;
  std::string path = dir.file("t.parquet");
  ASSERT_TRUE(testing::write_dataset(path, testing::mixed_dataset(50), options).ok());
  auto bytes = read_file(path);
  ASSERT_TRUE(bytes.ok());
  auto s = testing::walk_file(path);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  const ColumnMetaData& cm = *s->metadata.row_groups[0].columns[0].meta_data;
  size_t header_size = 0;
  auto h = parse_page_header(reinterpret_cast<const uint8_t*>(bytes->data()) + *cm.dictionary_page_offset,
                             bytes->size() - *cm.dictionary_page_offset, &header_size);
  ASSERT_TRUE(h.ok()) << h.status().to_string();
  EXPECT_FALSE(h->crc.has_value());
  EXPECT_FALSE(cm.statistics.has_value());

  // With both on (the defaults) every page carries a CRC and statistics.
  ASSERT_TRUE(testing::write_dataset(path, testing::mixed_dataset(50), WriterOptions{}).ok());
  bytes = read_file(path);
  s = testing::walk_file(path);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  const ColumnMetaData& cm2 = *s->metadata.row_groups[0].columns[0].meta_data;
  h = parse_page_header(reinterpret_cast<const uint8_t*>(bytes->data()) + cm2.data_page_offset,
                        bytes->size() - cm2.data_page_offset, &header_size);
  ASSERT_TRUE(h.ok()) << h.status().to_string();
  EXPECT_TRUE(h->crc.has_value());
  ASSERT_TRUE(h->data_page_header.has_value());
  ASSERT_TRUE(h->data_page_header->statistics.has_value());
  EXPECT_EQ(h->data_page_header->statistics->null_count, 7);  // rows 3, 10, ..., 45 of "word"
}

TEST(WriterStructure, KeyValueMetadataAndVersion) {
  TempDir dir;
  WriterOptions options;
  options.key_value_metadata = {{"a", "1"}, {"b", ""}};
  auto s = write_and_walk(dir, testing::nulls_dataset(3, false), options);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->metadata.version, 2);
  ASSERT_EQ(s->metadata.key_value_metadata.size(), 2u);
  EXPECT_EQ(s->metadata.key_value_metadata[0].first, "a");
  EXPECT_EQ(s->metadata.key_value_metadata[0].second, std::optional<std::string>("1"));
}

// ---- API misuse ----

std::vector<ColumnSpec> two_columns() {
  return {{"s", ColumnSpec::Kind::kString, true}, {"n", ColumnSpec::Kind::kInt32, false}};
}

TEST(WriterMisuse, CreateRejectsBadSchemasAndOptions) {
  TempDir dir;
  std::string path = dir.file("x.parquet");
  auto r = ParquetWriter::create(path, {});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  r = ParquetWriter::create(path,
                            {{"a", ColumnSpec::Kind::kString, true}, {"a", ColumnSpec::Kind::kInt64, true}});
  ASSERT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("duplicate"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status().message();
  WriterOptions bad;
  bad.data_page_version = 3;
  EXPECT_EQ(ParquetWriter::create(path, two_columns(), bad).status().code(), StatusCode::kInvalidArgument);
  bad = {};
  bad.page_bytes = 0;
  EXPECT_EQ(ParquetWriter::create(path, two_columns(), bad).status().code(), StatusCode::kInvalidArgument);
  bad = {};
  bad.codec = Codec::kLzo;
  EXPECT_EQ(ParquetWriter::create(path, two_columns(), bad).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(count_entries(dir.path()), 0);
  auto io = ParquetWriter::create(dir.file("no/such/dir/x.parquet"), two_columns());
  EXPECT_EQ(io.status().code(), StatusCode::kIOError);
  EXPECT_NE(io.status().message().find("no/such/dir/x.parquet"), std::string::npos) << io.status().message();
}

TEST(WriterMisuse, RowErrorsAreReportedByEndRowAndTheRowIsDropped) {
  TempDir dir;
  std::string path = dir.file("x.parquet");
  auto w = ParquetWriter::create(path, two_columns());
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  auto& writer = **w;

  writer.append_string(0, "only one cell");  // missing cell
  Status st = writer.end_row();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("'n'"), std::string::npos) << st.message();

  writer.append_string(0, "a");
  writer.append_null(1);  // null in REQUIRED
  st = writer.end_row();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("required"), std::string::npos) << st.message();

  writer.append_int64(0, 5);  // wrong kind
  writer.append_int64(1, 5);
  st = writer.end_row();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("'s'"), std::string::npos) << st.message();

  writer.append_string(0, "a");
  writer.append_double(1, 1.0);  // wrong kind for int32
  EXPECT_EQ(writer.end_row().code(), StatusCode::kInvalidArgument);

  writer.append_string(0, "a");
  writer.append_int64(1, int64_t{1} << 40);  // out of int32 range
  st = writer.end_row();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("range"), std::string::npos) << st.message();

  writer.append_string(0, "a");
  writer.append_string(0, "b");  // second cell
  writer.append_int64(1, 1);
  st = writer.end_row();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("second"), std::string::npos) << st.message();

  writer.append_string(7, "a");  // no such column
  writer.append_string(0, "a");
  writer.append_int64(1, 1);
  EXPECT_EQ(writer.end_row().code(), StatusCode::kInvalidArgument);

  EXPECT_EQ(writer.rows_written(), 0);
  // The writer is still usable: a good row after the bad ones.
  writer.append_string(0, "good");
  writer.append_int64(1, 42);
  ASSERT_TRUE(writer.end_row().ok());
  ASSERT_TRUE(writer.close().ok());
  EXPECT_EQ(writer.rows_written(), 1);
  auto s = testing::walk_file(path);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->metadata.num_rows, 1);
  EXPECT_EQ(writer.close().code(), StatusCode::kInvalidArgument);  // twice
}

TEST(WriterNoPartialOutput, DestroyedWithoutCloseLeavesNothing) {
  TempDir dir;
  std::string path = dir.file("x.parquet");
  {
    WriterOptions options;
    options.row_group_rows = 10;  // row groups already on disk (in the temporary)
    auto w = ParquetWriter::create(path, two_columns(), options);
    ASSERT_TRUE(w.ok());
    for (int i = 0; i < 100; ++i) {
      (*w)->append_string(0, "x");
      (*w)->append_int64(1, i);
      ASSERT_TRUE((*w)->end_row().ok());
    }
    EXPECT_EQ(count_entries(dir.path()), 1);  // the temporary
  }
  EXPECT_FALSE(path_exists(path));
  EXPECT_EQ(count_entries(dir.path()), 0);
}

TEST(WriterNoPartialOutput, ExistingFileIsKeptUntilClose) {
  TempDir dir;
  std::string path = dir.write("x.parquet", "old contents");
  {
    auto w = ParquetWriter::create(path, two_columns());
    ASSERT_TRUE(w.ok());
    (*w)->append_string(0, "x");
    (*w)->append_int64(1, 1);
    ASSERT_TRUE((*w)->end_row().ok());
  }
  EXPECT_EQ(infercost::testing::slurp(path), "old contents");
  EXPECT_EQ(count_entries(dir.path()), 1);
}

}  // namespace
}  // namespace infercost::parquet

namespace infercost::parquet {
namespace {

// Our own reader (ColumnReader) reads every case of the matrix back exactly.
class WriterReaderRoundTrip : public ::testing::TestWithParam<std::string> {};

bool same_value(const testing::Value& want, const ColumnValues& got, size_t i, ColumnSpec::Kind kind) {
  if (std::holds_alternative<std::monostate>(want)) return got.valid[i] == 0;
  if (got.valid[i] == 0) return false;
  if (auto* s = std::get_if<std::string>(&want)) return got.strings.at(i) == *s;
  if (auto* n = std::get_if<int64_t>(&want)) return got.ints[i] == *n;
  double w = std::get<double>(want);
  if (kind == ColumnSpec::Kind::kFloat) w = static_cast<float>(w);
  double g = got.doubles[i];
  if (std::isnan(w)) return std::isnan(g);
  return g == w && std::signbit(g) == std::signbit(w);
}

TEST_P(WriterReaderRoundTrip, ColumnReaderGetsEveryValue) {
  const WriterCase& c = find_case(GetParam());
  TempDir dir;
  std::string path = dir.file("rt.parquet");
  ASSERT_TRUE(testing::write_dataset(path, c.data, c.options).ok());
  auto file = ParquetFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  ASSERT_EQ((*file)->columns().size(), c.data.specs.size());
  for (size_t col = 0; col < c.data.specs.size(); ++col) {
    auto reader = ColumnReader::open(*file, static_cast<int>(col));
    ASSERT_TRUE(reader.ok()) << reader.status().to_string();
    ColumnValues values;
    while (true) {
      auto n = (*reader)->next(777, values);
      ASSERT_TRUE(n.ok()) << c.data.specs[col].name << ": " << n.status().to_string();
      if (*n == 0) break;
    }
    ASSERT_EQ(values.size(), c.data.rows()) << c.data.specs[col].name;
    for (size_t r = 0; r < c.data.rows(); ++r) {
      ASSERT_TRUE(same_value(c.data.columns[col][r], values, r, c.data.specs[col].kind))
          << c.data.specs[col].name << " row " << r;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, WriterReaderRoundTrip, ::testing::ValuesIn(case_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace infercost::parquet
