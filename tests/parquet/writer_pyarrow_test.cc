// Files from ParquetWriter read back by pyarrow, pandas and duckdb
// (tools/check_parquet_with_pyarrow.py): every value, the schema's logical
// types, statistics, codecs, row groups and page CRCs, over the whole matrix
// of writer_test_cases.h.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "test_utils.h"
#include "writer_test_cases.h"

namespace infercost::parquet {
namespace {

using infercost::testing::TempDir;
using testing::WriterCase;

bool python_available() {
  return std::ifstream(INFERCOST_PYTHON).good();
}

// Runs the checker on a manifest; returns its exit status and output.
int run_checker(const std::string& manifest, std::string& output) {
  std::string cmd = std::string("\"") + INFERCOST_PYTHON + "\" \"" + INFERCOST_SOURCE_DIR +
                    "/tools/check_parquet_with_pyarrow.py\" \"" + manifest + "\" 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) output.append(buf, n);
  return pclose(p);
}

TEST(WriterPyarrow, EveryCaseReadsBackExactly) {
  if (!python_available()) GTEST_SKIP() << "no Python at " << INFERCOST_PYTHON << " (run `make pyenv`)";
  TempDir dir;
  nlohmann::json manifest = nlohmann::json::array();
  std::vector<WriterCase> cases = testing::writer_cases();
  for (WriterCase& c : cases) {
    std::string file = dir.file(c.name + ".parquet");
    Status st = testing::write_dataset(file, c.data, c.options);
    ASSERT_TRUE(st.ok()) << c.name << ": " << st.to_string();
    nlohmann::json expected = testing::expected_json(c.data, c.options, c.row_groups);
    for (size_t i = 0; i < c.data.specs.size(); ++i) {
      auto& col = expected["columns"][i];
      bool is_string = c.data.specs[i].kind == ColumnSpec::Kind::kString;
      if (!is_string || !c.options.dictionary) {
        col["dictionary_page"] = false;
        col["encodings_exclude"] = {"RLE_DICTIONARY", "PLAIN_DICTIONARY"};
      } else if (c.data.rows() > 0) {
        col["dictionary_page"] = true;
        col["encodings_include"] = {"RLE_DICTIONARY"};
      }
      if (c.name.rfind("dictionary_cap_fallback", 0) == 0)
        col["encodings_include"] = {"RLE_DICTIONARY", "PLAIN"};
    }
    std::string expected_path = dir.file(c.name + ".expected.json");
    std::ofstream(expected_path) << expected.dump();
    manifest.push_back({{"name", c.name}, {"file", file}, {"expected", expected_path}});
    c.data = {};  // keep memory down
  }
  std::string manifest_path = dir.file("manifest.json");
  std::ofstream(manifest_path) << manifest.dump();
  std::string output;
  int rc = run_checker(manifest_path, output);
  // One PASS line per case, and the failures by name.
  std::map<std::string, std::string> verdicts;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("PASS ", 0) == 0) verdicts[line.substr(5)] = "PASS";
    if (line.rfind("FAIL ", 0) == 0) {
      std::string rest = line.substr(5);
      verdicts[rest.substr(0, rest.find(':'))] = rest;
    }
  }
  for (const WriterCase& c : cases) {
    auto it = verdicts.find(c.name);
    if (it == verdicts.end()) {
      ADD_FAILURE() << c.name << ": no verdict from the checker";
    } else {
      EXPECT_EQ(it->second, "PASS") << it->second;
    }
  }
  EXPECT_EQ(rc, 0) << output;
}

}  // namespace
}  // namespace infercost::parquet
