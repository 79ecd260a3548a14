// ParquetWriter without Python: file structure checked with our own footer
// and page-header parsers (page CRCs, offsets, sizes, page types, dictionary
// fallback, list levels), the Arrow schema message, API misuse, and the
// no-partial-output contract.
#include "parquet/writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "core/file.h"
#include "parquet/arrow_schema.h"
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

// One case, its data built once per process (and only its own).
const WriterCase& find_case(const std::string& name) {
  static std::map<std::string, WriterCase> built;
  if (auto it = built.find(name); it != built.end()) return it->second;
  for (WriterCase& c : testing::writer_cases(name)) {
    if (c.name == name) return built.emplace(name, std::move(c)).first->second;
  }
  std::abort();
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const WriterCase& c : testing::writer_cases("", /*names_only=*/true)) names.push_back(c.name);
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
  size_t lists = 0;
  for (const ColumnSpec& spec : c.data.specs) lists += spec.list_size > 0 ? 1 : 0;
  ASSERT_EQ(md.schema.size(), c.data.specs.size() + 1 + 2 * lists);  // a list: 3 elements
  EXPECT_EQ(md.schema[0].num_children, static_cast<int>(c.data.specs.size()));
  for (size_t i = 0, at = 1; i < c.data.specs.size(); ++i) {
    const ColumnSpec& spec = c.data.specs[i];
    const SchemaElement& e = md.schema[at];
    EXPECT_EQ(e.name, spec.name);
    EXPECT_EQ(e.repetition, spec.nullable ? Repetition::kOptional : Repetition::kRequired);
    if (spec.kind == ColumnSpec::Kind::kString) {
      EXPECT_EQ(e.logical_type.kind, LogicalType::kString);
      EXPECT_EQ(e.converted_type, ConvertedType::kUtf8);
    }
    if (spec.list_size == 0) {
      EXPECT_EQ(e.num_children, 0);
      at += 1;
      continue;
    }
    // <optional|required> group NAME (LIST) { repeated group list { required float element; } }
    EXPECT_FALSE(e.type.has_value());
    EXPECT_EQ(e.num_children, 1);
    EXPECT_EQ(e.converted_type, ConvertedType::kList);
    EXPECT_EQ(e.logical_type.kind, LogicalType::kList);
    const SchemaElement& list = md.schema[at + 1];
    EXPECT_EQ(list.name, "list");
    EXPECT_FALSE(list.type.has_value());
    EXPECT_EQ(list.repetition, Repetition::kRepeated);
    EXPECT_EQ(list.num_children, 1);
    EXPECT_FALSE(list.converted_type.has_value());
    const SchemaElement& element = md.schema[at + 2];
    EXPECT_EQ(element.name, "element");
    EXPECT_EQ(element.type, PhysicalType::kFloat);
    EXPECT_EQ(element.repetition, Repetition::kRequired);
    EXPECT_EQ(element.num_children, 0);
    at += 3;
  }
  EXPECT_EQ(md.column_orders.size(), c.data.specs.size());
  for (const RowGroup& rg : md.row_groups) {
    for (size_t col = 0; col < rg.columns.size(); ++col) {
      const ColumnMetaData& cm = *rg.columns[col].meta_data;
      EXPECT_EQ(cm.codec, c.options.codec);
      EXPECT_EQ(cm.statistics.has_value(), c.options.statistics);
      const ColumnSpec& spec = c.data.specs[col];
      if (spec.list_size > 0) {
        EXPECT_EQ(cm.path_in_schema, (std::vector<std::string>{spec.name, "list", "element"}));
        EXPECT_EQ(cm.type, PhysicalType::kFloat);
      } else {
        EXPECT_EQ(cm.path_in_schema, std::vector<std::string>{spec.name});
      }
    }
  }
  // The caller's key-value metadata as given, then ARROW:schema when (and
  // only when) there is a list column.
  std::vector<std::pair<std::string, std::optional<std::string>>> kv;
  for (const auto& [k, v] : c.options.key_value_metadata) kv.emplace_back(k, v);
  if (c.data.has_list()) kv.emplace_back(kArrowSchemaKey, arrow_schema_metadata(c.data.specs));
  EXPECT_EQ(md.key_value_metadata, kv);
  const PageType want_type = c.options.data_page_version == 2 ? PageType::kDataPageV2 : PageType::kDataPage;
  for (size_t col = 0; col < summary->columns.size(); ++col) {
    const testing::PageSummary& ps = summary->columns[col];
    EXPECT_EQ(ps.list, c.data.specs[col].list_size > 0) << c.data.specs[col].name;
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
    if (c.data.specs[col].list_size > 0) {
      // Lists are not for our reader: a clear refusal (ListColumnsAreRefusedByOurReader).
      ASSERT_EQ(reader.status().code(), StatusCode::kUnsupported) << reader.status().to_string();
      continue;
    }
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

namespace infercost::parquet {
namespace {

// ---- list columns (fixed-size lists of float) ----

// The cases with a list column: writer_cases() names them "lists_*"
// (WriterList.CaseNamesSayWhichHaveLists checks it).
std::vector<std::string> list_case_names() {
  std::vector<std::string> names;
  for (const std::string& name : case_names()) {
    if (name.rfind("lists_", 0) == 0) names.push_back(name);
  }
  return names;
}

TEST(WriterList, CaseNamesSayWhichHaveLists) {
  for (const WriterCase& c : testing::writer_cases()) {
    EXPECT_EQ(c.data.has_list(), c.name.rfind("lists_", 0) == 0) << c.name;
  }
}

// Min/max/null_count our writer should record for rows [begin, end) of a
// list column: NaN left out, a zero bound written as -0.0 (min) / +0.0 (max).
Statistics expected_list_statistics(const std::vector<Value>& rows, size_t begin, size_t end) {
  Statistics s;
  s.null_count = 0;
  bool has = false;
  float lo = 0, hi = 0;
  for (size_t r = begin; r < end; ++r) {
    const auto* v = std::get_if<std::vector<float>>(&rows[r]);
    if (!v) {
      ++*s.null_count;
      continue;
    }
    for (float x : *v) {
      if (std::isnan(x)) continue;
      lo = has ? std::min(lo, x) : x;
      hi = has ? std::max(hi, x) : x;
      has = true;
    }
  }
  if (has) {
    if (lo == 0) lo = -0.0f;
    if (hi == 0) hi = 0.0f;
    s.min_value = std::string(reinterpret_cast<const char*>(&lo), 4);
    s.max_value = std::string(reinterpret_cast<const char*>(&hi), 4);
  }
  return s;
}

class WriterListTest : public ::testing::TestWithParam<std::string> {};

// The levels and floats decoded from every page give back the rows written:
// a null row is one entry (rep 0, def 0, no value), an element rep 0 for a
// row's first and 1 for the rest with def 2 (1 when REQUIRED); every page
// starts a row; num_values counts entries, row groups rows; statistics hold
// the null rows and the floats' bounds.
TEST_P(WriterListTest, LevelsValuesAndStatisticsAreTheRows) {
  const WriterCase& c = find_case(GetParam());
  TempDir dir;
  auto s = write_and_walk(dir, c.data, c.options);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  const FileMetaData& md = s->metadata;
  for (size_t col = 0; col < c.data.specs.size(); ++col) {
    const ColumnSpec& spec = c.data.specs[col];
    if (spec.list_size == 0) continue;
    const testing::PageSummary& ps = s->columns[col];
    ASSERT_TRUE(ps.list);
    const uint32_t max_def = spec.nullable ? 2 : 1;
    EXPECT_EQ(ps.max_definition_level, static_cast<int>(max_def));
    // Rebuild the rows from the levels.
    std::vector<Value> rows;
    size_t next_value = 0;
    for (size_t k = 0; k < ps.rep_levels.size(); ++k) {
      if (ps.rep_levels[k] == 0) {
        if (ps.def_levels[k] == 0) {
          rows.emplace_back();
          continue;
        }
        rows.emplace_back(std::vector<float>());
      }
      ASSERT_FALSE(rows.empty());
      auto* list = std::get_if<std::vector<float>>(&rows.back());
      ASSERT_NE(list, nullptr) << spec.name << ": an element after a null row at entry " << k;
      ASSERT_EQ(ps.def_levels[k], max_def) << spec.name << " entry " << k;
      ASSERT_LT(next_value, ps.values.size());
      list->push_back(ps.values[next_value++]);
    }
    EXPECT_EQ(next_value, ps.values.size());
    ASSERT_EQ(rows.size(), c.data.rows()) << spec.name;
    for (size_t r = 0; r < rows.size(); ++r) {
      const auto* want = std::get_if<std::vector<float>>(&c.data.columns[col][r]);
      const auto* got = std::get_if<std::vector<float>>(&rows[r]);
      ASSERT_EQ(want == nullptr, got == nullptr) << spec.name << " row " << r << ": null where not written";
      if (want) {
        ASSERT_TRUE(testing::same_float_bits(*want, *got)) << spec.name << " row " << r;
      }
    }
    int64_t page_rows = 0;
    for (int64_t n : ps.page_rows) {
      EXPECT_GT(n, 0);
      page_rows += n;
    }
    EXPECT_EQ(page_rows, static_cast<int64_t>(c.data.rows()));
    // Per row group: entries, null rows, bounds.
    size_t begin = 0;
    for (const RowGroup& rg : md.row_groups) {
      const size_t end = begin + static_cast<size_t>(rg.num_rows);
      const ColumnMetaData& cm = *rg.columns[col].meta_data;
      int64_t entries = 0;
      for (size_t r = begin; r < end; ++r) {
        const auto* v = std::get_if<std::vector<float>>(&c.data.columns[col][r]);
        entries += v ? static_cast<int64_t>(v->size()) : 1;
      }
      EXPECT_EQ(cm.num_values, entries) << spec.name;
      EXPECT_EQ(cm.encodings, (std::vector<Encoding>{Encoding::kPlain, Encoding::kRle}));
      EXPECT_FALSE(cm.dictionary_page_offset.has_value());
      if (c.options.statistics) {
        ASSERT_TRUE(cm.statistics.has_value());
        Statistics want = expected_list_statistics(c.data.columns[col], begin, end);
        EXPECT_EQ(cm.statistics->null_count, want.null_count) << spec.name;
        EXPECT_EQ(cm.statistics->min_value, want.min_value) << spec.name;
        EXPECT_EQ(cm.statistics->max_value, want.max_value) << spec.name;
      }
      begin = end;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, WriterListTest, ::testing::ValuesIn(list_case_names()),
                         [](const auto& info) { return info.param; });

TEST(WriterList, PagesEndOnRowsAndFollowPageBytes) {
  const WriterCase& c = find_case("lists_wide_v1");
  TempDir dir;
  auto s = write_and_walk(dir, c.data, c.options);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  const testing::PageSummary& emb = s->columns[1];
  const int64_t row_bytes = 384 * 4;
  // 300 rows (44 null) of 1536 bytes in 64 KiB pages: a page ends at the
  // first row that takes its estimate (floats plus the levels as if
  // bit-packed) past page_bytes, so it holds less than page_bytes and a
  // row of floats, and more than half of page_bytes unless it ends a chunk.
  ASSERT_EQ(emb.page_floats.size(), static_cast<size_t>(emb.data_pages));
  int small_pages = 0;
  for (int64_t floats : emb.page_floats) {
    EXPECT_LE(floats * 4, c.options.page_bytes + row_bytes);
    small_pages += floats * 4 < c.options.page_bytes / 2 ? 1 : 0;
  }
  EXPECT_LE(small_pages, 2);  // the last of each row group
  EXPECT_GE(emb.data_pages, 6);
}

TEST(WriterList, OneRowPerPageWithTinyPageBytes) {
  for (int version : {1, 2}) {
    const WriterCase& c = find_case("lists_one_row_per_page_v" + std::to_string(version));
    TempDir dir;
    auto s = write_and_walk(dir, c.data, c.options);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    EXPECT_EQ(s->columns[0].data_pages, 40);
    EXPECT_EQ(s->columns[0].page_rows, std::vector<int64_t>(40, 1));
  }
}

TEST(WriterList, PageRowLimitCountsRowsNotValues) {
  for (int version : {1, 2}) {
    const WriterCase& c = find_case("lists_page_row_limit_v" + std::to_string(version));
    TempDir dir;
    auto s = write_and_walk(dir, c.data, c.options);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    EXPECT_EQ(s->columns[0].page_rows, (std::vector<int64_t>{20000, 5000}));
  }
}

TEST(WriterList, V2PageHeadersCountRowsLevelsAndNulls) {
  // Rows 0 and 249 are null rows of "emb" (16 floats); walk_file checked
  // num_rows and num_nulls against the decoded levels; here the first page.
  const WriterCase& c = find_case("lists_snappy_v2");
  TempDir dir;
  std::string path = dir.file("t.parquet");
  ASSERT_TRUE(testing::write_dataset(path, c.data, c.options).ok());
  auto bytes = read_file(path);
  ASSERT_TRUE(bytes.ok());
  auto s = testing::walk_file(path);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  const ColumnMetaData& cm = *s->metadata.row_groups[0].columns[1].meta_data;
  size_t header_size = 0;
  auto h = parse_page_header(reinterpret_cast<const uint8_t*>(bytes->data()) + cm.data_page_offset,
                             bytes->size() - cm.data_page_offset, &header_size);
  ASSERT_TRUE(h.ok()) << h.status().to_string();
  ASSERT_TRUE(h->data_page_header_v2.has_value());
  const DataPageHeaderV2& v2 = *h->data_page_header_v2;
  const int64_t rows = s->columns[1].page_rows[0];
  ASSERT_GE(rows, 5);  // rows 0..4: null, 4 lists, null (row 3)
  int64_t nulls = 0;
  for (int64_t r = 0; r < rows; ++r) nulls += r == 0 || r % 7 == 3 ? 1 : 0;
  EXPECT_EQ(v2.num_rows, rows);
  EXPECT_EQ(v2.num_nulls, nulls);
  EXPECT_EQ(v2.num_values, nulls + (rows - nulls) * 16);
  EXPECT_GT(v2.repetition_levels_byte_length, 0);
  EXPECT_GT(v2.definition_levels_byte_length, 0);
  ASSERT_TRUE(v2.statistics.has_value());
  EXPECT_EQ(v2.statistics->null_count, nulls);
}

TEST(WriterList, CallerArrowSchemaIsKeptAsGiven) {
  TempDir dir;
  WriterOptions options;
  options.key_value_metadata = {{"ARROW:schema", "theirs"}};
  auto s = write_and_walk(dir, testing::list_only_dataset(3, 2, true, 0), options);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  ASSERT_EQ(s->metadata.key_value_metadata.size(), 1u);
  EXPECT_EQ(s->metadata.key_value_metadata[0].second, std::optional<std::string>("theirs"));
}

// ---- the ARROW:schema message, read back with a minimal FlatBuffers reader ----

class FlatBufferView {
 public:
  FlatBufferView(const std::string& buffer, size_t table) : buf_(&buffer), table_(table) {
    EXPECT_EQ(table % 4, 0u) << "table at " << table;
    vtable_ = table - static_cast<int32_t>(read(table, 4));
    EXPECT_EQ(vtable_ % 2, 0u);
  }
  // Position of `slot`'s field, 0 when absent.
  size_t field(int slot) const {
    size_t vsize = read(vtable_, 2);
    if (4 + 2 * static_cast<size_t>(slot) >= vsize) return 0;
    size_t offset = read(vtable_ + 4 + 2 * slot, 2);
    return offset == 0 ? 0 : table_ + offset;
  }
  uint64_t scalar(int slot, int size, uint64_t fallback = 0) const {
    size_t at = field(slot);
    if (at == 0) return fallback;
    EXPECT_EQ(at % size, 0u) << "unaligned scalar in slot " << slot;
    return read(at, size);
  }
  FlatBufferView table(int slot) const { return FlatBufferView(*buf_, target(slot)); }
  std::string string(int slot) const {
    size_t at = target(slot);
    size_t n = read(at, 4);
    EXPECT_EQ((*buf_)[at + 4 + n], '\0');
    return buf_->substr(at + 4, n);
  }
  std::vector<FlatBufferView> tables(int slot) const {
    size_t at = target(slot);
    std::vector<FlatBufferView> out;
    for (size_t k = 0; k < read(at, 4); ++k) {
      size_t element = at + 4 + 4 * k;
      out.emplace_back(*buf_, element + read(element, 4));
    }
    return out;
  }
  uint64_t read(size_t at, int size) const {
    EXPECT_LE(at + size, buf_->size());
    uint64_t v = 0;
    for (int i = 0; i < size && at + i < buf_->size(); ++i)
      v |= static_cast<uint64_t>(static_cast<uint8_t>((*buf_)[at + i])) << (8 * i);
    return v;
  }

 private:
  size_t target(int slot) const {
    size_t at = field(slot);
    EXPECT_NE(at, 0u) << "no slot " << slot;
    EXPECT_EQ(at % 4, 0u);
    return at + read(at, 4);
  }
  const std::string* buf_;
  size_t table_, vtable_ = 0;
};

TEST(ArrowSchema, Base64MatchesRfc4648Vectors) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foo"), "Zm9v");
  EXPECT_EQ(base64_encode("foob"), "Zm9vYg==");
  EXPECT_EQ(base64_encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64_encode(std::string("\xff\xfe\x00", 3)), "//4A");
}

TEST(ArrowSchema, EncapsulatedSchemaMessageDescribesEveryColumn) {
  const std::vector<ColumnSpec> specs = {
      {"s", ColumnSpec::Kind::kString, true},       {"i32", ColumnSpec::Kind::kInt32, false},
      {"i64", ColumnSpec::Kind::kInt64, true},      {"f", ColumnSpec::Kind::kFloat, true},
      {"d", ColumnSpec::Kind::kDouble, false},      {"emb", ColumnSpec::Kind::kFloat, true, 384},
      {"small", ColumnSpec::Kind::kFloat, false, 3}};
  const std::string message = arrow_schema_message(specs);
  ASSERT_GE(message.size(), 16u);
  EXPECT_EQ(message.size() % 8, 0u);
  EXPECT_EQ(message.substr(0, 4), std::string(4, '\xff'));  // continuation marker
  const std::string fb = message.substr(8);
  uint32_t length = 0;
  std::memcpy(&length, message.data() + 4, 4);
  EXPECT_EQ(length, message.size() - 8);
  uint32_t root = 0;
  std::memcpy(&root, fb.data(), 4);
  FlatBufferView msg(fb, root);
  EXPECT_EQ(msg.scalar(0, 2), 4u);  // MetadataVersion V5
  EXPECT_EQ(msg.scalar(1, 1), 1u);  // MessageHeader Schema
  EXPECT_EQ(msg.scalar(3, 8), 0u);  // bodyLength
  FlatBufferView schema = msg.table(2);
  EXPECT_EQ(schema.scalar(0, 2), 0u);  // Little endian
  std::vector<FlatBufferView> fields = schema.tables(1);
  ASSERT_EQ(fields.size(), specs.size());
  struct Want {
    uint64_t type_id;
    uint64_t arg0;  // bitWidth, precision or listSize
  };
  const std::vector<Want> want = {{5, 0}, {2, 32}, {2, 64}, {3, 1}, {3, 2}, {16, 384}, {16, 3}};
  for (size_t i = 0; i < specs.size(); ++i) {
    const FlatBufferView& f = fields[i];
    EXPECT_EQ(f.string(0), specs[i].name);
    EXPECT_EQ(f.scalar(1, 1), specs[i].nullable ? 1u : 0u) << specs[i].name;
    EXPECT_EQ(f.scalar(2, 1), want[i].type_id) << specs[i].name;
    FlatBufferView type = f.table(3);
    std::vector<FlatBufferView> children = f.tables(5);
    switch (want[i].type_id) {
      case 2:  // Int{bitWidth, is_signed}
        EXPECT_EQ(type.scalar(0, 4), want[i].arg0);
        EXPECT_EQ(type.scalar(1, 1), 1u);
        break;
      case 3: EXPECT_EQ(type.scalar(0, 2), want[i].arg0); break;  // FloatingPoint{precision}
      case 16: {                                                  // FixedSizeList{listSize}
        EXPECT_EQ(type.scalar(0, 4), want[i].arg0);
        ASSERT_EQ(children.size(), 1u);
        const FlatBufferView& element = children[0];
        EXPECT_EQ(element.string(0), "element");
        EXPECT_EQ(element.scalar(1, 1), 0u);           // not nullable
        EXPECT_EQ(element.scalar(2, 1), 3u);           // FloatingPoint
        EXPECT_EQ(element.table(3).scalar(0, 2), 1u);  // SINGLE
        EXPECT_TRUE(element.tables(5).empty());
        break;
      }
      default: break;
    }
    if (want[i].type_id != 16) {
      EXPECT_TRUE(children.empty()) << specs[i].name;
    }
  }
  EXPECT_EQ(arrow_schema_metadata(specs), base64_encode(message));
}

// ---- list misuse ----

TEST(WriterListMisuse, CreateRejectsListSizeOnOtherKindsAndNegative) {
  TempDir dir;
  std::string path = dir.file("x.parquet");
  for (ColumnSpec::Kind kind : {ColumnSpec::Kind::kString, ColumnSpec::Kind::kInt32, ColumnSpec::Kind::kInt64,
                                ColumnSpec::Kind::kDouble}) {
    auto r = ParquetWriter::create(path, {{"ok", ColumnSpec::Kind::kFloat, true, 4}, {"bad", kind, true, 4}});
    ASSERT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("'bad'"), std::string::npos) << r.status().message();
    auto resumable =
        ParquetWriter::create_resumable(path, dir.file("p"), {{"bad", kind, false, 2}}, {}, nullptr);
    EXPECT_EQ(resumable.status().code(), StatusCode::kInvalidArgument);
  }
  auto r = ParquetWriter::create(path, {{"neg", ColumnSpec::Kind::kFloat, true, -1}});
  ASSERT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("'neg'"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("-1"), std::string::npos) << r.status().message();
  EXPECT_EQ(count_entries(dir.path()), 0);
}

TEST(WriterListMisuse, WrongCellsAreReportedByEndRow) {
  TempDir dir;
  std::string path = dir.file("x.parquet");
  auto w = ParquetWriter::create(path, {{"emb", ColumnSpec::Kind::kFloat, true, 3},
                                        {"req", ColumnSpec::Kind::kFloat, false, 2},
                                        {"f", ColumnSpec::Kind::kFloat, true}});
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  auto& writer = **w;
  const std::vector<float> three = {1, 2, 3}, two = {4, 5};

  writer.append_floats(0, two);  // wrong count
  writer.append_floats(1, two);
  writer.append_double(2, 1);
  Status st = writer.end_row();
  ASSERT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("'emb'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("3"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("2"), std::string::npos) << st.message();

  writer.append_double(0, 1.0);  // a scalar in a list column
  writer.append_floats(1, two);
  writer.append_double(2, 1);
  st = writer.end_row();
  ASSERT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("'emb' is a list of 3 floats"), std::string::npos) << st.message();

  writer.append_floats(0, three);
  writer.append_floats(1, two);
  writer.append_floats(2, std::vector<float>{1});  // a list in a flat column
  st = writer.end_row();
  ASSERT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("'f' is float"), std::string::npos) << st.message();

  writer.append_floats(0, three);
  writer.append_null(1);  // null in a REQUIRED list
  writer.append_double(2, 1);
  st = writer.end_row();
  ASSERT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("required"), std::string::npos) << st.message();

  for (auto append : {+[](ParquetWriter& w) { w.append_string(0, "x"); },
                      +[](ParquetWriter& w) { w.append_int64(0, 1); }}) {
    append(writer);
    writer.append_floats(1, two);
    writer.append_double(2, 1);
    EXPECT_EQ(writer.end_row().code(), StatusCode::kInvalidArgument);
  }

  writer.append_floats(0, three);
  writer.append_floats(0, three);  // second cell
  writer.append_floats(1, two);
  writer.append_double(2, 1);
  st = writer.end_row();
  EXPECT_NE(st.message().find("second"), std::string::npos) << st.message();

  writer.append_floats(0, three);  // the list column missing its cell is named
  writer.append_double(2, 1);
  st = writer.end_row();
  EXPECT_NE(st.message().find("'req'"), std::string::npos) << st.message();

  EXPECT_EQ(writer.rows_written(), 0);
  writer.append_null(0);  // a null row
  writer.append_floats(1, two);
  writer.append_null(2);
  ASSERT_TRUE(writer.end_row().ok());
  writer.append_floats(0, three);
  writer.append_floats(1, two);
  writer.append_double(2, 0.5);
  ASSERT_TRUE(writer.end_row().ok());
  ASSERT_TRUE(writer.close().ok());
  auto s = testing::walk_file(path);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->metadata.num_rows, 2);
  EXPECT_EQ(s->columns[0].rep_levels, (std::vector<uint32_t>{0, 0, 1, 1}));
  EXPECT_EQ(s->columns[0].def_levels, (std::vector<uint32_t>{0, 2, 2, 2}));
  EXPECT_EQ(s->columns[0].values, three);
  EXPECT_EQ(s->columns[1].rep_levels, (std::vector<uint32_t>{0, 1, 0, 1}));
  EXPECT_EQ(s->columns[1].def_levels, (std::vector<uint32_t>{1, 1, 1, 1}));
}

// ---- our reader and list columns ----

TEST(WriterList, ListColumnsAreRefusedByOurReader) {
  const WriterCase& c = find_case("lists_snappy_v1");
  TempDir dir;
  std::string path = dir.file("emb.parquet");
  ASSERT_TRUE(testing::write_dataset(path, c.data, c.options).ok());
  auto file = ParquetFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  const auto& columns = (*file)->columns();
  ASSERT_EQ(columns.size(), 4u);
  EXPECT_EQ(columns[1].path, "emb.list.element");
  EXPECT_FALSE(columns[1].flat);
  EXPECT_EQ(columns[1].max_definition_level, 2);
  EXPECT_EQ(columns[1].max_repetition_level, 1);
  EXPECT_EQ(columns[3].path, "emb_req.list.element");
  EXPECT_EQ(columns[3].max_definition_level, 1);
  EXPECT_EQ(columns[3].max_repetition_level, 1);
  for (const char* name : {"emb", "emb.list.element", "emb_req"}) {
    auto found = (*file)->find_flat_column(name);
    ASSERT_EQ(found.status().code(), StatusCode::kUnsupported) << name;
    EXPECT_NE(found.status().message().find(std::string("'") + name + "'"), std::string::npos)
        << found.status().message();
  }
  auto reader = ColumnReader::open(*file, 1);
  ASSERT_EQ(reader.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(reader.status().message().find("'emb.list.element'"), std::string::npos)
      << reader.status().message();
  // The flat columns beside it still read.
  auto score = (*file)->find_flat_column("score");
  ASSERT_TRUE(score.ok()) << score.status().to_string();
  auto score_reader = ColumnReader::open(*file, (*score)->leaf_index);
  ASSERT_TRUE(score_reader.ok());
  ColumnValues values;
  while (true) {
    auto n = (*score_reader)->next(100, values);
    ASSERT_TRUE(n.ok()) << n.status().to_string();
    if (*n == 0) break;
  }
  EXPECT_EQ(values.size(), c.data.rows());
  // `inspect` describes the file, the list as not readable.
  std::string description = describe_file(**file);
  EXPECT_NE(description.find("emb.list.element"), std::string::npos) << description;
  EXPECT_NE(description.find("not readable"), std::string::npos) << description;
}

}  // namespace
}  // namespace infercost::parquet
