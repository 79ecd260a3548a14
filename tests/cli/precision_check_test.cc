// `infercost precision-check`: fp32 against reduced precisions on the first
// rows of the inputs, as a user runs it: the figures, the JSON report with
// every flipped row, and the errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "test_utils.h"

namespace infercost {
namespace {

using testing::slurp;
using testing::TempDir;

bool check_says(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

class PrecisionCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto synth = testing::run_infercost("model synth --preset tiny --seed 11 --out " + work_.file("tiny"));
    ASSERT_EQ(synth.exit_code, 0) << synth.output;
    std::string rows;
    for (int i = 0; i < 60; ++i) {
      rows += i == 5 ? std::string("{\"full_text\":null}\n")
                     : "{\"full_text\":\"tweet " + std::to_string(i) + " about things and more things\"}\n";
    }
    input_ = work_.write("in.jsonl", rows);
  }
  std::string args(const std::string& more) const {
    return "precision-check " + input_ + " --model " + work_.file("tiny") + " --threads 1 " + more;
  }
  TempDir work_;
  std::string input_;
};

TEST_F(PrecisionCheckTest, ComparesTheFirstRowsWithFp32) {
  const std::string report = work_.file("check.json");
  auto ran = testing::run_infercost(args("--precision int8 --rows 40 --json " + report));
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  EXPECT_TRUE(check_says(ran.output, "precision-check: 39 rows (1 null)")) << ran.output;
  EXPECT_TRUE(check_says(ran.output, "int8    label agreement")) << ran.output;
  const nlohmann::json check = nlohmann::json::parse(slurp(report));
  EXPECT_EQ(check["rows"], 39);
  EXPECT_EQ(check["rows_null"], 1);
  EXPECT_EQ(check["reference"], "fp32");
  ASSERT_EQ(check["comparisons"].size(), 1u);
  const nlohmann::json& c = check["comparisons"][0];
  EXPECT_EQ(c["precision"], "int8");
  EXPECT_EQ(c["rows"], 39);
  EXPECT_EQ(c["flips"].size(), c["rows"].get<size_t>() - c["same_label"].get<size_t>());
  EXPECT_DOUBLE_EQ(c["agreement"].get<double>(), c["same_label"].get<double>() / 39.0);
  // int8 moves the outputs, a little: a comparison of fp32 with itself would not.
  EXPECT_GT(c["max_abs_diff"].get<double>(), 0.0);
  EXPECT_LT(c["max_abs_diff"].get<double>(), 0.2);
  EXPECT_LE(c["mean_abs_diff"].get<double>(), c["max_abs_diff"].get<double>());
  for (const nlohmann::json& f : c["flips"]) {
    EXPECT_NE(f["reference_label"], f["label"]);
    EXPECT_TRUE(check_says(f["where"].get<std::string>(), input_ + ":line ")) << f.dump();
  }
}

TEST_F(PrecisionCheckTest, RefusesWhatItCannotCompare) {
  auto fp32 = testing::run_infercost(args("--precision fp32"));
  EXPECT_EQ(fp32.exit_code, 2) << fp32.output;
  EXPECT_TRUE(check_says(fp32.output, "fp32 is the reference")) << fp32.output;
  auto rows = testing::run_infercost(args("--precision int8 --rows 0"));
  EXPECT_EQ(rows.exit_code, 2) << rows.output;
  EXPECT_TRUE(check_says(rows.output, "--rows must be at least 1")) << rows.output;
  auto unknown = testing::run_infercost(args("--precision int4"));
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_TRUE(check_says(unknown.output, "int4")) << unknown.output;
  const std::string empty = work_.write("empty.jsonl", "");
  auto none = testing::run_infercost("precision-check " + empty + " --model " + work_.file("tiny"));
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_TRUE(check_says(none.output, "the inputs hold no rows")) << none.output;
}

}  // namespace
}  // namespace infercost
