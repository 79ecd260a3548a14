// Compatibility and round-trip tests for the Parquet reader and writer.
//
// 1. Fixtures written by pyarrow, DuckDB and pandas
//    (tests/data_files/parquet/compat, made by tools/gen_parquet_fixtures.py)
//    are read column by column with ColumnReader in batches of 1, 7 and 1000
//    rows, rendered with append_value_json and compared with expected.json
//    (pyarrow's reading of the same files). The footer as we parse it is
//    compared too: physical types, levels, codecs and encodings.
// 2. Files written by ParquetWriter across every codec, data page version and
//    dictionary setting are read back and compared value by value; their page
//    headers are walked to check the page kinds and CRCs the options promise.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "parquet/metadata.h"
#include "parquet/reader.h"
#include "parquet/writer.h"
#include "test_utils.h"

namespace infercost::parquet {
namespace {

using nlohmann::json;

const std::string kCompatDir = std::string(INFERCOST_TEST_DATA_DIR) + "/parquet/compat";

const json& expected_json() {
  static const json doc = [] {
    std::ifstream in(kCompatDir + "/expected.json");
    if (!in) return json();
    return json::parse(in, nullptr, /*allow_exceptions=*/false);
  }();
  return doc;
}

std::vector<std::string> fixture_names() {
  std::vector<std::string> names;
  const json& doc = expected_json();
  if (doc.is_object() && doc.contains("files")) {
    for (const auto& [name, _] : doc["files"].items()) names.push_back(name);
  }
  return names;
}

// Compares one rendered value (the text append_value_json wrote) with the
// expected JSON value; returns "" when equal, else a description.
std::string compare_value(const std::string& physical, const std::string& ours_text, const json& expected) {
  json ours = json::parse(ours_text, nullptr, /*allow_exceptions=*/false);
  if (ours.is_discarded()) return "not valid JSON: " + ours_text;
  auto differ = [&] { return "got " + ours_text + ", want " + expected.dump(); };
  if (expected.is_null()) return ours.is_null() ? "" : differ();
  if (ours.is_null()) return differ();
  if (physical == "BYTE_ARRAY" || physical == "FIXED_LEN_BYTE_ARRAY") {
    return ours.is_string() && ours.get<std::string>() == expected.get<std::string>() ? "" : differ();
  }
  if (physical == "INT96") {
    if (!ours.is_string()) return differ();
    std::string a = ours.get<std::string>(), b = expected.get<std::string>();
    auto lower = [](std::string s) {
      for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return s;
    };
    return lower(a) == lower(b) ? "" : differ();
  }
  if (physical == "BOOLEAN") {
    // The header leaves true/false vs 1/0 open; accept either spelling.
    bool want = expected.get<bool>();
    if (ours.is_boolean()) return ours.get<bool>() == want ? "" : differ();
    if (ours.is_number_integer()) return ours.get<int64_t>() == (want ? 1 : 0) ? "" : differ();
    return differ();
  }
  if (physical == "INT32" || physical == "INT64") {
    if (!ours.is_number_integer()) return differ();
    // nlohmann keeps non-negative integers as unsigned, negative as signed.
    if (expected.is_number_unsigned()) {
      return ours.is_number_unsigned() && ours.get<uint64_t>() == expected.get<uint64_t>() ? "" : differ();
    }
    return !ours.is_number_unsigned() && ours.get<int64_t>() == expected.get<int64_t>() ? "" : differ();
  }
  if (physical == "FLOAT" || physical == "DOUBLE") {
    if (expected.is_string()) {  // "NaN", "Infinity", "-Infinity"
      return ours.is_string() && ours.get<std::string>() == expected.get<std::string>() ? "" : differ();
    }
    if (!ours.is_number()) return differ();
    // strtod on the text keeps the sign of "-0", which a JSON integer loses.
    double got = std::strtod(ours_text.c_str(), nullptr);
    double want = expected.get<double>();
    if (physical == "FLOAT") {
      float gf = static_cast<float>(got), wf = static_cast<float>(want);
      return gf == wf && std::signbit(gf) == std::signbit(wf) ? "" : differ();
    }
    return got == want && std::signbit(got) == std::signbit(want) ? "" : differ();
  }
  return "unexpected physical type " + physical;
}

// Reads a whole column with batches of `batch` rows. With `accumulate` the
// batches are appended to one ColumnValues (next() must not clear it);
// otherwise each batch is rendered and cleared. Renders every row.
struct ReadResult {
  std::vector<std::string> rendered;
  std::vector<uint8_t> valid;
  int64_t rows_read = 0;
  uint64_t bytes_read = 0, peak_buffer_bytes = 0;
};

Result<ReadResult> read_column(const std::shared_ptr<ParquetFile>& file, const ColumnDescriptor& column,
                               size_t batch, bool accumulate) {
  INFERCOST_ASSIGN_OR_RETURN(auto reader, ColumnReader::open(file, column.leaf_index));
  ReadResult result;
  ColumnValues values;
  size_t batches = 0;
  auto render = [&](size_t from) {
    for (size_t i = from; i < values.size(); ++i) {
      std::string text;
      append_value_json(column, values, i, text);
      result.rendered.push_back(std::move(text));
      result.valid.push_back(values.valid[i]);
    }
  };
  while (true) {
    size_t before = values.size();
    INFERCOST_ASSIGN_OR_RETURN(size_t n, reader->next(batch, values));
    if (n == 0) break;
    if (n > batch) return internal_error("next() returned more rows than asked for");
    if (values.size() != before + n) return internal_error("next() did not append exactly n rows");
    if (++batches > 10'000'000) return internal_error("no end of column");
    if (accumulate) continue;
    render(0);
    values.clear();
  }
  if (accumulate) render(0);
  // The end is sticky.
  INFERCOST_ASSIGN_OR_RETURN(size_t again, reader->next(batch, values));
  if (again != 0) return internal_error("next() returned rows after the end");
  result.rows_read = reader->rows_read();
  result.bytes_read = reader->bytes_read();
  result.peak_buffer_bytes = reader->peak_buffer_bytes();
  return result;
}

std::set<std::string> json_string_set(const json& array) {
  std::set<std::string> out;
  for (const auto& v : array) out.insert(v.get<std::string>());
  return out;
}

class CompatFixture : public ::testing::TestWithParam<std::string> {};

TEST(CompatFixtures, ExpectedJsonLoadsAndFilesExist) {
  const json& doc = expected_json();
  ASSERT_TRUE(doc.is_object()) << kCompatDir << "/expected.json missing or not JSON; run "
                               << "python3 tools/gen_parquet_fixtures.py";
  ASSERT_GE(fixture_names().size(), 30u);
  for (const auto& name : fixture_names()) {
    EXPECT_TRUE(std::filesystem::exists(kCompatDir + "/" + name)) << name;
  }
}

TEST_P(CompatFixture, ReadsAsPyarrowDoes) {
  const std::string name = GetParam();
  const json& spec = expected_json()["files"][name];
  const json& value_sets = expected_json()["value_sets"];
  const std::string path = kCompatDir + "/" + name;
  SCOPED_TRACE(name + " (" + spec["features"].get<std::string>() + ")");

  auto opened = ParquetFile::open(path);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  std::shared_ptr<ParquetFile> file = *opened;
  const FileMetaData& md = file->metadata();
  EXPECT_EQ(md.num_rows, spec["num_rows"].get<int64_t>());
  EXPECT_EQ(static_cast<int64_t>(md.row_groups.size()), spec["num_row_groups"].get<int64_t>());
  EXPECT_EQ(md.created_by.value_or(""), spec["created_by"].get<std::string>());
  EXPECT_EQ(file->file_size(), std::filesystem::file_size(path));

  const json& columns = spec["columns"];
  ASSERT_EQ(file->columns().size(), columns.size());
  int flat_columns = 0;
  for (size_t c = 0; c < columns.size(); ++c) {
    const json& want = columns[c];
    const ColumnDescriptor& column = file->columns()[c];
    const std::string cname = want["name"].get<std::string>();
    SCOPED_TRACE("column " + cname);
    EXPECT_EQ(column.path, cname);
    EXPECT_EQ(column.leaf_index, static_cast<int>(c));
    ASSERT_NE(column.element, nullptr);
    ASSERT_TRUE(column.element->type.has_value());
    const std::string physical = want["physical_type"].get<std::string>();
    EXPECT_EQ(type_name(*column.element->type), physical);
    EXPECT_EQ(column.max_definition_level, want["max_definition_level"].get<int>());
    EXPECT_EQ(column.max_repetition_level, want["max_repetition_level"].get<int>());
    EXPECT_EQ(column.flat, want["flat"].get<bool>());

    // The footer's codec and encodings, as pyarrow reports them.
    std::set<std::string> codecs, encodings;
    for (const RowGroup& rg : md.row_groups) {
      ASSERT_LT(c, rg.columns.size());
      ASSERT_TRUE(rg.columns[c].meta_data.has_value());
      const ColumnMetaData& cm = *rg.columns[c].meta_data;
      codecs.insert(codec_name(cm.codec));
      for (Encoding e : cm.encodings) encodings.insert(encoding_name(e));
      EXPECT_EQ(type_name(cm.type), physical);
    }
    std::set<std::string> want_codecs;
    for (const auto& codec : want["codecs"]) {
      // pyarrow spells "no codec" UNCOMPRESSED, as parquet-format does.
      want_codecs.insert(codec.get<std::string>());
    }
    EXPECT_EQ(codecs, want_codecs);
    EXPECT_EQ(encodings, json_string_set(want["encodings"]));

    if (!want["flat"].get<bool>()) {
      auto reader = ColumnReader::open(file, column.leaf_index);
      ASSERT_FALSE(reader.ok()) << "nested column opened";
      EXPECT_EQ(reader.status().code(), StatusCode::kUnsupported) << reader.status().message();
      EXPECT_NE(reader.status().message().find(cname), std::string::npos) << reader.status().message();
      auto found = file->find_flat_column(cname);
      ASSERT_FALSE(found.ok());
      EXPECT_EQ(found.status().code(), StatusCode::kUnsupported) << found.status().message();
      continue;
    }
    ++flat_columns;
    auto found = file->find_flat_column(cname);
    ASSERT_TRUE(found.ok()) << found.status().message();
    EXPECT_EQ((*found)->leaf_index, static_cast<int>(c));

    const json& values = value_sets[want["values_id"].get<std::string>()];
    const int64_t num_rows = want["num_rows"].get<int64_t>();
    ASSERT_EQ(static_cast<int64_t>(values.size()), num_rows);
    std::set<int64_t> nulls;
    for (const auto& p : want["null_positions"]) nulls.insert(p.get<int64_t>());

    for (auto [batch, accumulate] : {std::pair<size_t, bool>{1, false}, {7, true}, {1000, false}}) {
      SCOPED_TRACE("batch " + std::to_string(batch) + (accumulate ? " (accumulated)" : ""));
      auto read = read_column(file, column, batch, accumulate);
      ASSERT_TRUE(read.ok()) << read.status().message();
      ASSERT_EQ(static_cast<int64_t>(read->rendered.size()), num_rows);
      EXPECT_EQ(read->rows_read, num_rows);
      EXPECT_GT(read->bytes_read, 0u);
      EXPECT_LE(read->bytes_read, file->file_size());
      EXPECT_GT(read->peak_buffer_bytes, 0u);
      int mismatches = 0;
      for (int64_t i = 0; i < num_rows && mismatches < 5; ++i) {
        bool is_null = nulls.count(i) > 0;
        if ((read->valid[i] == 0) != is_null) {
          ADD_FAILURE() << "row " << i << ": valid=" << int(read->valid[i]) << ", expected "
                        << (is_null ? "null" : "a value");
          ++mismatches;
          continue;
        }
        std::string diff = compare_value(physical, read->rendered[i], values[i]);
        if (!diff.empty()) {
          ADD_FAILURE() << "row " << i << ": " << diff;
          ++mismatches;
        }
      }
    }
  }
  if (name.find("nested") == std::string::npos) {
    EXPECT_EQ(flat_columns, static_cast<int>(columns.size()));
  }
  auto missing = file->find_flat_column("no_such_column");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

std::string param_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string out;
  for (char c : info.param.substr(0, info.param.rfind(".parquet"))) {
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CompatFixture, ::testing::ValuesIn(fixture_names()), param_name);

// ---------------------------------------------------------------------------
// Our writer -> our reader.

struct Row {
  std::optional<std::string> text;  // nullable
  std::string text_req;
  std::optional<int64_t> i32;
  int64_t i64 = 0;
  std::optional<double> f32;  // holds a float value
  std::optional<double> f64;
};

std::vector<Row> make_rows(int n) {
  static const char* kWords[] = {"hello",       "wörld", "日本語",    "😀🚀",   "",      "quote\"",
                                 "back\\slash", "tab\t", "new\nline", "#tag", "@user", "naïve"};
  std::vector<Row> rows;
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  const double kSpecials[] = {std::numeric_limits<double>::quiet_NaN(),
                              std::numeric_limits<double>::infinity(),
                              -std::numeric_limits<double>::infinity(),
                              -0.0,
                              0.0,
                              std::numeric_limits<double>::denorm_min(),
                              std::numeric_limits<double>::max(),
                              0.1};
  for (int i = 0; i < n; ++i) {
    Row r;
    std::string text;
    if (i < n / 2) {
      text = kWords[i % 12];  // repeats: dictionary-friendly
    } else {
      int words = static_cast<int>(next() % 20);
      for (int w = 0; w < words; ++w)
        text += std::string(kWords[next() % 12]) + std::to_string(next() % 1000) + " ";
    }
    if (i % 7 != 3) r.text = text;
    r.text_req =
        i == 17 ? std::string(70'000, 'L') : text + std::to_string(i);  // one value larger than a page
    if (i % 5 != 1)
      r.i32 = (i == 0)   ? std::numeric_limits<int32_t>::min()
              : (i == 2) ? std::numeric_limits<int32_t>::max()
                         : static_cast<int32_t>(static_cast<uint32_t>(next()));
    r.i64 = (i == 1)   ? std::numeric_limits<int64_t>::min()
            : (i == 3) ? std::numeric_limits<int64_t>::max()
                       : static_cast<int64_t>(next());
    if (i % 9 != 2) {
      r.f32 = (i % 50 == 0)
                  ? kSpecials[(i / 50) % 5]
                  : static_cast<double>(static_cast<float>(static_cast<double>(next() % 200000) / 7.0));
    }
    if (i % 11 != 4) r.f64 = (i % 10 == 0) ? kSpecials[(i / 10) % 8] : static_cast<double>(next()) / 1e9;
    rows.push_back(std::move(r));
  }
  return rows;
}

const std::vector<ColumnSpec> kSchema = {
    {"text", ColumnSpec::Kind::kString, true}, {"text_req", ColumnSpec::Kind::kString, false},
    {"i32", ColumnSpec::Kind::kInt32, true},   {"i64", ColumnSpec::Kind::kInt64, false},
    {"f32", ColumnSpec::Kind::kFloat, true},   {"f64", ColumnSpec::Kind::kDouble, true},
};

Status write_rows(const std::string& path, const std::vector<Row>& rows, const WriterOptions& options) {
  INFERCOST_ASSIGN_OR_RETURN(auto writer, ParquetWriter::create(path, kSchema, options));
  for (const Row& r : rows) {
    if (r.text)
      writer->append_string(0, *r.text);
    else
      writer->append_null(0);
    writer->append_string(1, r.text_req);
    if (r.i32)
      writer->append_int64(2, *r.i32);
    else
      writer->append_null(2);
    writer->append_int64(3, r.i64);
    if (r.f32)
      writer->append_double(4, *r.f32);
    else
      writer->append_null(4);
    if (r.f64)
      writer->append_double(5, *r.f64);
    else
      writer->append_null(5);
    INFERCOST_RETURN_IF_ERROR(writer->end_row());
  }
  INFERCOST_RETURN_IF_ERROR(writer->close());
  return Status();
}

bool same_double(double a, double b, bool as_float) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (as_float) return static_cast<float>(a) == static_cast<float>(b) && std::signbit(a) == std::signbit(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

// Walks every page header of every column chunk; counts page types and
// pages carrying a CRC.
struct PageCounts {
  std::map<PageType, int> types;
  int with_crc = 0, total = 0;
};

Result<PageCounts> count_pages(const ParquetFile& file, int column) {
  PageCounts counts;
  for (const RowGroup& rg : file.metadata().row_groups) {
    const ColumnMetaData& cm = *rg.columns[column].meta_data;
    int64_t pos = cm.dictionary_page_offset.value_or(cm.data_page_offset);
    if (cm.dictionary_page_offset && *cm.dictionary_page_offset == 0) pos = cm.data_page_offset;
    const int64_t end = pos + cm.total_compressed_size;
    int64_t values = 0;
    while (pos < end && values < cm.num_values) {
      size_t want = static_cast<size_t>(std::min<int64_t>(end - pos, 1 << 16));
      std::vector<uint8_t> buf(want);
      INFERCOST_RETURN_IF_ERROR(file.read_at(static_cast<uint64_t>(pos), want, buf.data()));
      size_t header_size = 0;
      INFERCOST_ASSIGN_OR_RETURN(PageHeader h, parse_page_header(buf.data(), buf.size(), &header_size));
      counts.types[h.type]++;
      counts.total++;
      if (h.crc) counts.with_crc++;
      if (h.data_page_header) values += h.data_page_header->num_values;
      if (h.data_page_header_v2) values += h.data_page_header_v2->num_values;
      pos += static_cast<int64_t>(header_size) + h.compressed_page_size;
    }
  }
  return counts;
}

std::filesystem::path temp_dir() {
  return testing::process_temp_dir().path();
}

void check_read_back(const std::string& path, const std::vector<Row>& rows, size_t batch) {
  auto opened = ParquetFile::open(path);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  std::shared_ptr<ParquetFile> file = *opened;
  ASSERT_EQ(file->metadata().num_rows, static_cast<int64_t>(rows.size()));
  ASSERT_EQ(file->columns().size(), kSchema.size());
  for (size_t c = 0; c < kSchema.size(); ++c) {
    SCOPED_TRACE("column " + kSchema[c].name);
    const ColumnDescriptor& column = file->columns()[c];
    EXPECT_EQ(column.path, kSchema[c].name);
    EXPECT_EQ(column.max_definition_level, kSchema[c].nullable ? 1 : 0);
    auto reader = ColumnReader::open(file, column.leaf_index);
    ASSERT_TRUE(reader.ok()) << reader.status().message();
    ColumnValues values;
    size_t row = 0;
    int mismatches = 0;
    while (true) {
      values.clear();
      auto n = (*reader)->next(batch, values);
      ASSERT_TRUE(n.ok()) << n.status().message();
      if (*n == 0) break;
      ASSERT_LE(row + *n, rows.size());
      for (size_t i = 0; i < *n && mismatches < 5; ++i, ++row) {
        const Row& r = rows[row];
        bool valid = values.valid[i] != 0;
        bool ok = true;
        switch (c) {
          case 0: ok = valid == r.text.has_value() && (!valid || values.strings.at(i) == *r.text); break;
          case 1: ok = valid && values.strings.at(i) == r.text_req; break;
          case 2: ok = valid == r.i32.has_value() && (!valid || values.ints[i] == *r.i32); break;
          case 3: ok = valid && values.ints[i] == r.i64; break;
          case 4:
            ok = valid == r.f32.has_value() && (!valid || same_double(values.doubles[i], *r.f32, true));
            break;
          case 5:
            ok = valid == r.f64.has_value() && (!valid || same_double(values.doubles[i], *r.f64, false));
            break;
        }
        if (!ok) {
          std::string got;
          append_value_json(column, values, i, got);
          ADD_FAILURE() << "row " << row << ": got " << got;
          ++mismatches;
        }
      }
      if (mismatches >= 5) break;
    }
    if (mismatches == 0) {
      EXPECT_EQ(row, rows.size());
    }
  }
}

TEST(WriterRoundTrip, EveryCodecPageVersionAndDictionarySetting) {
  const auto dir = temp_dir();
  const std::vector<Row> rows = make_rows(2500);
  for (Codec codec :
       {Codec::kUncompressed, Codec::kSnappy, Codec::kGzip, Codec::kZstd, Codec::kLz4Raw, Codec::kBrotli}) {
    for (int page_version : {1, 2}) {
      for (bool dictionary : {true, false}) {
        const std::string label =
            codec_name(codec) + "_v" + std::to_string(page_version) + (dictionary ? "_dict" : "_plain");
        SCOPED_TRACE(label);
        WriterOptions options;
        options.codec = codec;
        options.data_page_version = page_version;
        options.dictionary = dictionary;
        options.page_bytes = 4096;
        options.row_group_rows = 1000;
        options.page_crc = true;
        const std::string path = (dir / (label + ".parquet")).string();
        Status st = write_rows(path, rows, options);
        ASSERT_TRUE(st.ok()) << st.message();
        check_read_back(path, rows, label.size() % 2 ? 333 : 1000);

        auto file = ParquetFile::open(path);
        ASSERT_TRUE(file.ok()) << file.status().message();
        EXPECT_EQ((*file)->metadata().row_groups.size(), 3u);
        for (const RowGroup& rg : (*file)->metadata().row_groups) {
          for (const ColumnChunk& cc : rg.columns) EXPECT_EQ(cc.meta_data->codec, codec);
        }
        for (int c = 0; c < static_cast<int>(kSchema.size()); ++c) {
          auto pages = count_pages(**file, c);
          ASSERT_TRUE(pages.ok()) << pages.status().message();
          const PageType data = page_version == 1 ? PageType::kDataPage : PageType::kDataPageV2;
          const PageType other = page_version == 1 ? PageType::kDataPageV2 : PageType::kDataPage;
          EXPECT_GE(pages->types[data], 3) << kSchema[c].name;
          EXPECT_EQ(pages->types[other], 0) << kSchema[c].name;
          EXPECT_EQ(pages->with_crc, pages->total) << kSchema[c].name;
          if (!dictionary) {
            EXPECT_EQ(pages->types[PageType::kDictionaryPage], 0) << kSchema[c].name;
          }
        }
        if (dictionary) {
          // The first row group's strings repeat 12 words: a dictionary pays.
          auto pages = count_pages(**file, 0);
          ASSERT_TRUE(pages.ok());
          EXPECT_GE(pages->types[PageType::kDictionaryPage], 1);
        }
        std::filesystem::remove(path);
      }
    }
  }
}

TEST(WriterRoundTrip, EmptyFileAndOneRow) {
  const auto dir = temp_dir();
  for (int n : {0, 1}) {
    SCOPED_TRACE(std::to_string(n) + " rows");
    const std::string path = (dir / ("rows" + std::to_string(n) + ".parquet")).string();
    const std::vector<Row> rows = make_rows(n);
    Status st = write_rows(path, rows, WriterOptions{});
    ASSERT_TRUE(st.ok()) << st.message();
    check_read_back(path, rows, 7);
  }
}

}  // namespace
}  // namespace infercost::parquet
