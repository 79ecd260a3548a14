// Every file of parquet-testing/data against what pyarrow reads from it
// (tests/data_files/parquet/parquet_testing_expected.json, written by
// tools/gen_parquet_testing_expect.py).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "parquet/reader.h"

namespace infercost::parquet {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kDataDir = std::string(INFERCOST_SHARED_DATA_DIR) + "/parquet-testing/data";

json load_expected() {
  std::ifstream in(std::string(INFERCOST_TEST_DATA_DIR) + "/parquet/parquet_testing_expected.json");
  EXPECT_TRUE(in.good()) << "missing parquet_testing_expected.json";
  return in.good() ? json::parse(in) : json();
}

bool same_value(const json& want, const json& got, PhysicalType type) {
  if (want.is_number()) {
    if (!got.is_number()) return false;
    if (type == PhysicalType::kFloat)
      return static_cast<float>(want.get<double>()) == static_cast<float>(got.get<double>());
    if (type == PhysicalType::kDouble) return want.get<double>() == got.get<double>();
    return want.dump() == got.dump();
  }
  return want == got;
}

// Reads flat column `col` of `file` and compares it with pyarrow's `spec`.
void check_column(const std::shared_ptr<ParquetFile>& file, const std::string& col, const json& spec,
                  int* columns_read) {
  SCOPED_TRACE(col);
  auto column = file->find_flat_column(col);
  ASSERT_TRUE(column.ok()) << column.status().to_string();
  auto reader = ColumnReader::open(file, (*column)->leaf_index);
  ASSERT_TRUE(reader.ok()) << reader.status().to_string();
  ColumnValues values;
  for (;;) {
    auto n = (*reader)->next(7, values);
    ASSERT_TRUE(n.ok()) << n.status().to_string();
    if (*n == 0) break;
  }
  ASSERT_EQ(values.size(), spec["rows"].get<size_t>());
  size_t nulls = 0;
  for (uint8_t v : values.valid) nulls += !v;
  EXPECT_EQ(nulls, spec["nulls"].get<size_t>());
  const json& want_values = spec["values"];
  int mismatches = 0;
  for (size_t i = 0; i < values.size() && mismatches < 5; ++i) {
    std::string text;
    append_value_json(**column, values, i, text);
    json got = json::parse(text, nullptr, false);
    ASSERT_FALSE(got.is_discarded()) << "not JSON: " << text;
    if (!same_value(want_values[i], got, values.type)) {
      ++mismatches;
      ADD_FAILURE() << "row " << i << ": want " << want_values[i].dump() << ", got " << text;
    }
  }
  ++*columns_read;
}

TEST(ParquetTestingData, EveryFileReadsLikePyarrow) {
  if (!fs::is_directory(kDataDir)) GTEST_SKIP() << kDataDir << " is absent (shared data not installed)";
  json expected = load_expected();
  ASSERT_TRUE(expected.contains("files"));
  int files = 0, columns_read = 0, columns_refused = 0;
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(kDataDir)) {
    if (entry.path().extension() == ".parquet") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  for (const fs::path& path : paths) {
    const std::string name = path.filename().string();
    SCOPED_TRACE(name);
    ASSERT_TRUE(expected["files"].contains(name))
        << name << " has no expectations: rerun tools/gen_parquet_testing_expect.py";
    const json& want = expected["files"][name];
    ++files;
    auto file = ParquetFile::open(path.string());
    if (want.contains("pyarrow_error")) {
      if (!file.ok()) {
        EXPECT_NE(file.status().message().find(name), std::string::npos);
      }
      continue;
    }
    ASSERT_TRUE(file.ok()) << file.status().to_string();
    std::set<std::string> checked;
    for (const auto& [col, spec] : want["columns"].items()) {
      checked.insert(col);
      check_column(*file, col, spec, &columns_read);
    }
    // Every flat column we see was checked; every nested field is refused by name.
    for (const ColumnDescriptor& c : (*file)->columns()) {
      if (c.flat) {
        EXPECT_TRUE(checked.count(c.path)) << "flat column " << c.path << " has no expectation";
        continue;
      }
      auto found = (*file)->find_flat_column(c.path);
      ASSERT_FALSE(found.ok());
      EXPECT_EQ(found.status().code(), StatusCode::kUnsupported);
      EXPECT_NE(found.status().message().find(c.path), std::string::npos) << found.status().message();
      auto reader = ColumnReader::open(*file, c.leaf_index);
      ASSERT_FALSE(reader.ok());
      EXPECT_EQ(reader.status().code(), StatusCode::kUnsupported);
      EXPECT_NE(reader.status().message().find(c.path), std::string::npos);
      ++columns_refused;
    }
    for (const auto& field : want["nested"]) {
      auto found = (*file)->find_flat_column(field.get<std::string>());
      EXPECT_EQ(found.status().code(), StatusCode::kUnsupported) << field;
    }
    std::string description = describe_file(**file);
    EXPECT_NE(description.find("rows: "), std::string::npos);
  }
  EXPECT_EQ(files, static_cast<int>(expected["files"].size()));
  std::printf("parquet-testing: %d files, %d flat columns match pyarrow, %d nested leaves refused\n", files,
              columns_read, columns_refused);
}

TEST(ParquetTestingData, NestedListsRefusesColumnAByName) {
  const std::string path = kDataDir + "/nested_lists.snappy.parquet";
  if (!fs::exists(path)) GTEST_SKIP() << path << " is absent (shared data not installed)";
  auto file = ParquetFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  auto a = (*file)->find_flat_column("a");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(a.status().message().find("'a'"), std::string::npos) << a.status().message();
  auto b = (*file)->find_flat_column("b");
  ASSERT_TRUE(b.ok()) << b.status().to_string();
}

}  // namespace
}  // namespace infercost::parquet
