// Files from ParquetWriter read back by pyarrow, pandas and duckdb
// (tools/check_parquet_with_pyarrow.py): every value, the schema's logical
// types, the Arrow types (fixed_size_list for list columns), statistics,
// codecs, row groups and page CRCs, over the whole matrix of
// writer_test_cases.h; and a resumed file with list columns against one
// written at once.
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

// Runs a Python script with arguments; returns its exit status and output.
int run_python(const std::string& script, const std::vector<std::string>& args, std::string& output) {
  std::string cmd = std::string("\"") + INFERCOST_PYTHON + "\" \"" + script + "\"";
  for (const std::string& a : args) cmd += " \"" + a + "\"";
  cmd += " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) output.append(buf, n);
  return pclose(p);
}

// Runs the checker on a manifest; returns its exit status and output.
int run_checker(const std::string& manifest, std::string& output) {
  return run_python(std::string(INFERCOST_SOURCE_DIR) + "/tools/check_parquet_with_pyarrow.py", {manifest},
                    output);
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

// Every row once, in order, its floats bit for bit: pyarrow reads a file
// continued from a checkpoint (after a crash lost rows past it) as the one
// written at once, with the same fixed_size_list types; the checker passes it
// (pandas and duckdb included).
TEST(WriterPyarrow, ResumedListFileReadsAsOneWrittenAtOnce) {
  if (!python_available()) GTEST_SKIP() << "no Python at " << INFERCOST_PYTHON << " (run `make pyenv`)";
  TempDir dir;
  const testing::Dataset data = testing::embeddings_dataset(300, 24);
  WriterOptions options;
  options.codec = Codec::kZstd;
  options.row_group_rows = 50;
  options.page_bytes = 512;
  const std::string whole = dir.file("whole.parquet"), resumed = dir.file("resumed.parquet");
  ASSERT_TRUE(testing::write_dataset(whole, data, options).ok());
  Status st = testing::write_resumed(resumed, dir.file("resumed.partial"), data, options, 120, 170);
  ASSERT_TRUE(st.ok()) << st.to_string();

  const std::string compare = dir.write("compare.py", R"(import sys
import pyarrow as pa
import pyarrow.parquet as pq
a, b = pq.read_table(sys.argv[1]), pq.read_table(sys.argv[2])
if a.schema != b.schema:
    sys.exit(f"schemas differ: {a.schema} / {b.schema}")
for name in ("emb", "emb_req"):
    t = b.schema.field(name).type
    if not pa.types.is_fixed_size_list(t) or t.value_type != pa.float32():
        sys.exit(f"{name}: {t}")
for name in a.column_names:
    # repr round-trips every double exactly (float32 values widened), NaN and -0.0 included.
    if repr(a.column(name).to_pylist()) != repr(b.column(name).to_pylist()):
        sys.exit(f"column {name} differs")
print("SAME", b.num_rows, b.schema.field("emb").type)
)");
  std::string output;
  EXPECT_EQ(run_python(compare, {whole, resumed}, output), 0) << output;
  EXPECT_NE(output.find("SAME 300 fixed_size_list<element: float not null>[24]"), std::string::npos)
      << output;

  nlohmann::json expected = testing::expected_json(data, options, 7);  // 50, 50, 20, 50, 50, 50, 30
  std::string expected_path = dir.file("resumed.expected.json");
  std::ofstream(expected_path) << expected.dump();
  nlohmann::json manifest = nlohmann::json::array();
  manifest.push_back({{"name", "resumed"}, {"file", resumed}, {"expected", expected_path}});
  std::string manifest_path = dir.file("manifest.json");
  std::ofstream(manifest_path) << manifest.dump();
  output.clear();
  EXPECT_EQ(run_checker(manifest_path, output), 0) << output;
  EXPECT_NE(output.find("PASS resumed"), std::string::npos) << output;
}

}  // namespace
}  // namespace infercost::parquet
