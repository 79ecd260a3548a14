// Corrupt input: parquet-testing/bad_data, every truncation and thousands of
// random byte flips of real files must give an error or values, never a
// crash, a hang or a giant allocation (the ASan build checks the last).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <random>

#include "core/file.h"
#include "parquet/reader.h"
#include "parquet/reader_test_util.h"

namespace infercost::parquet {
namespace {

namespace fs = std::filesystem;
using testing::read_everything;

const std::string kShared = std::string(INFERCOST_SHARED_DATA_DIR) + "/parquet-testing";

TEST(ParquetBadData, EveryBadDataFileFailsCleanlyNamingThePath) {
  const std::string dir = kShared + "/bad_data";
  if (!fs::is_directory(dir)) GTEST_SKIP() << dir << " is absent (shared data not installed)";
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".parquet") continue;
    const std::string path = entry.path().string();
    SCOPED_TRACE(path);
    ++files;
    Status st;
    auto file = ParquetFile::open(path);
    st = file.ok() ? read_everything(*file) : file.status();
    ASSERT_FALSE(st.ok()) << "read without error";
    EXPECT_TRUE(st.code() == StatusCode::kCorruption || st.code() == StatusCode::kUnsupported)
        << st.to_string();
    EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
    std::printf("%s: %s\n", entry.path().filename().c_str(), st.to_string().c_str());
  }
  EXPECT_GT(files, 0);
}

// The files the truncation and flip tests run on: three from parquet-testing
// when present, and one built here (always).
std::vector<std::pair<std::string, std::string>> corpus() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* name :
       {"datapage_v2.snappy.parquet", "alltypes_dictionary.parquet", "delta_length_byte_array.parquet"}) {
    auto bytes = read_file(kShared + "/data/" + name);
    if (bytes.ok()) out.emplace_back(name, std::move(*bytes));
  }
  using testing::Chunk;
  using testing::Column;
  Chunk strings, dict_chunk;
  strings.bytes = testing::string_page({std::string("alpha"), std::nullopt, std::string("gamma")}) +
                  testing::string_page({std::string("delta"), std::string("eps")});
  strings.num_values = 5;
  std::string dict = testing::dictionary_page({"p", "qq", "rrr"});
  dict_chunk.bytes = dict + testing::index_page({0, 1, 2, 2, 1}, 2);
  dict_chunk.dict_bytes = dict.size();
  dict_chunk.num_values = 5;
  out.emplace_back(
      "built.parquet",
      testing::assemble({Column{"s"}, Column{"d", PhysicalType::kByteArray, Repetition::kRequired}},
                        {{strings, dict_chunk}}, {5}));
  return out;
}

TEST(ParquetBadData, EveryTruncationFailsCleanly) {
  auto files = corpus();
  for (const auto& [name, bytes] : files) {
    SCOPED_TRACE(name);
    // Every length for small files; a sample of 2000 for bigger ones.
    size_t step = std::max<size_t>(1, bytes.size() / 2000);
    int tried = 0;
    for (size_t len = 0; len < bytes.size(); len += step) {
      auto file = ParquetFile::open_memory(name, bytes.substr(0, len));
      Status st = file.ok() ? read_everything(*file) : file.status();
      ++tried;
      // Without its trailing magic no prefix is a valid file.
      ASSERT_FALSE(st.ok()) << "length " << len;
      ASSERT_EQ(st.code(), StatusCode::kCorruption) << st.to_string();
      ASSERT_NE(st.message().find(name), std::string::npos) << st.message();
    }
    EXPECT_GT(tried, 0);
  }
}

TEST(ParquetBadData, RandomByteFlipsGiveErrorsOrValuesNeverCrashes) {
  auto files = corpus();
  ASSERT_FALSE(files.empty());
  std::mt19937_64 rng(20240611);
  for (const auto& [name, bytes] : files) {
    SCOPED_TRACE(name);
    // No bound on the time taken (it depends on the machine, and the ASan
    // build is many times slower); it is printed. A copy that claims endless
    // rows is cut at read_everything's 100'000; a reader that hangs is left
    // to ctest's TIMEOUT; a giant allocation fails in the ASan build.
    const auto start = std::chrono::steady_clock::now();
    int errors = 0, reads = 0;
    for (int i = 0; i < 3000; ++i) {
      std::string copy = bytes;
      // Mostly single flips, sometimes a few.
      int flips = 1 + static_cast<int>(rng() % 8 == 0 ? rng() % 4 : 0);
      for (int f = 0; f < flips; ++f) {
        copy[rng() % copy.size()] ^= static_cast<char>(1 + rng() % 255);
      }
      auto file = ParquetFile::open_memory(name, std::move(copy));
      Status st = file.ok() ? read_everything(*file, 100'000, 1024) : file.status();
      if (st.ok()) {
        ++reads;
      } else {
        ++errors;
        ASSERT_NE(st.message().find(name), std::string::npos) << st.to_string();
        ASSERT_NE(st.code(), StatusCode::kInternal) << st.to_string();
      }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%s: 3000 corrupted copies: %d errors, %d read, %.2f s\n", name.c_str(), errors, reads,
                seconds);
    EXPECT_GT(errors, 0);
  }
}

}  // namespace
}  // namespace infercost::parquet
