// `infercost datagen --lengths-from`: synthetic tweets with the words per row
// of a corpus given to it.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "test_utils.h"

namespace infercost {
namespace {

using testing::slurp;
using testing::TempDir;
using Outcome = infercost::testing::CommandOutcome;

int64_t words_in(const std::string& text) {
  int64_t words = 0;
  bool in_word = false;
  for (char c : text) {
    const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return words;
}

// A text of `n` words.
std::string text_of(int n) {
  std::string t;
  for (int i = 0; i < n; ++i) t += (i > 0 ? " " : "") + std::string("w") + std::to_string(i);
  return t;
}

// Words per row of a written JSON lines file: count -> rows.
std::map<int64_t, int64_t> word_counts(const std::string& jsonl) {
  std::map<int64_t, int64_t> counts;
  std::ifstream in(jsonl);
  std::string line;
  while (std::getline(in, line))
    ++counts[words_in(nlohmann::json::parse(line)["full_text"].get<std::string>())];
  return counts;
}

// 100 rows with text: 50 of 2 words, 30 of 10, 20 of 40; and a null row and
// an empty one, which are left out.
std::string known_corpus(const TempDir& dir) {
  std::string rows;
  for (int i = 0; i < 100; ++i) {
    const int n = i < 50 ? 2 : i < 80 ? 10 : 40;
    rows += nlohmann::json({{"id", i}, {"full_text", text_of(n)}}).dump() + "\n";
  }
  rows += "{\"id\": 100, \"full_text\": null}\n{\"id\": 101, \"full_text\": \"  \"}\n";
  return dir.write("known.jsonl", rows);
}

TEST(DatagenLengthsTest, WordsPerRowFollowTheCorpus) {
  TempDir dir;
  const std::string source = known_corpus(dir);
  const std::string out = dir.file("out.jsonl");
  Outcome o =
      testing::run_infercost("datagen --rows 4000 --seed 5 --out " + out + " --lengths-from " + source);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  // Tolerance: each count's share within 3 percentage points (4 standard deviations at 4,000 rows).
  const std::map<int64_t, int64_t> counts = word_counts(out);
  const std::map<int64_t, double> expected = {{2, 0.5}, {10, 0.3}, {40, 0.2}};
  int64_t rows = 0;
  for (const auto& [words, n] : counts) {
    EXPECT_TRUE(expected.count(words)) << words << " words: not a count of the corpus";
    rows += n;
  }
  EXPECT_EQ(rows, 4000);
  for (const auto& [words, share] : expected) {
    const auto it = counts.find(words);
    ASSERT_NE(it, counts.end()) << words;
    EXPECT_NEAR(static_cast<double>(it->second) / 4000.0, share, 0.03) << words;
  }
  // The distribution matched, source beside what was written.
  EXPECT_NE(o.output.find("2 rows without a word left out"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("p50"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("source         100"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("written       4000"), std::string::npos) << o.output;

  // Same seed, same file; another seed, another.
  const auto written_with_seed = [&](int seed, const std::string& name) {
    const std::string path = dir.file(name);
    EXPECT_EQ(testing::run_infercost("datagen -q --rows 4000 --seed " + std::to_string(seed) + " --out " +
                                     path + " --lengths-from " + source)
                  .exit_code,
              0);
    return slurp(path);
  };
  EXPECT_EQ(written_with_seed(5, "again.jsonl"), slurp(out));
  EXPECT_NE(written_with_seed(6, "other.jsonl"), slurp(out));
}

TEST(DatagenLengthsTest, ReadsCsvAndParquetColumns) {
  TempDir dir;
  std::string csv = "label,text\n";
  for (int i = 0; i < 60; ++i) csv += "x," + text_of(i % 2 == 0 ? 3 : 7) + "\n";
  const std::string source = dir.write("known.csv", csv);
  const std::string out = dir.file("out.jsonl");
  Outcome o = testing::run_infercost("datagen --rows 600 --out " + out + " --lengths-from " + source +
                                     " --lengths-column text");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const std::map<int64_t, int64_t> counts = word_counts(out);
  ASSERT_EQ(counts.size(), 2u) << o.output;
  EXPECT_TRUE(counts.count(3) && counts.count(7));

  // A Parquet corpus (datagen's own), folder and all: the written rows take its counts.
  const std::string parquet = dir.file("corpus");
  ASSERT_EQ(testing::run_infercost("datagen -q --rows 300 --shape parquet-10 --out " + parquet +
                                   " --lengths-from " + out)
                .exit_code,
            0);
  const std::string again = dir.file("again.jsonl");
  Outcome p = testing::run_infercost("datagen --rows 300 --out " + again + " --lengths-from " + parquet);
  ASSERT_EQ(p.exit_code, 0) << p.output;
  for (const auto& [words, n] : word_counts(again)) EXPECT_TRUE(words == 3 || words == 7) << words;
}

TEST(DatagenLengthsTest, MissingEmptyOrWrongSourceFailsNamingIt) {
  TempDir dir;
  const std::string out = dir.file("out.jsonl");
  const std::string missing = dir.file("no-such.jsonl");
  Outcome o = testing::run_infercost("datagen --rows 10 --out " + out + " --lengths-from " + missing);
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.output.find(missing), std::string::npos) << o.output;
  EXPECT_FALSE(std::filesystem::exists(out));

  const std::string empty = dir.write("empty.jsonl", "");
  o = testing::run_infercost("datagen --rows 10 --out " + out + " --lengths-from " + empty);
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.output.find(empty), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("no row with text"), std::string::npos) << o.output;
  EXPECT_FALSE(std::filesystem::exists(out));

  const std::string nulls = dir.write("nulls.jsonl", "{\"full_text\": null}\n{\"full_text\": \"\"}\n");
  o = testing::run_infercost("datagen --rows 10 --out " + out + " --lengths-from " + nulls);
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.output.find(nulls), std::string::npos) << o.output;

  const std::string other_column = dir.write("other.jsonl", "{\"text\": \"a b\"}\n");
  o = testing::run_infercost("datagen --rows 10 --out " + out + " --lengths-from " + other_column);
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.output.find(other_column), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("full_text"), std::string::npos) << o.output;
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace infercost
