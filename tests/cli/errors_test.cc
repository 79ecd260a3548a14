// What a user sees when a run cannot give an answer, from the command line:
// the exit status (README: 2 bad usage or something this build does not run,
// 3 bad data, 4 device, memory or numeric errors) and a message that says
// what to do; and `cat` on files a user has.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "edit_weights.h"
#include "test_utils.h"

namespace infercost {
namespace {

namespace fs = std::filesystem;
using testing::slurp;
using testing::TempDir;

bool says(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

class ErrorsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    auto synth = testing::run_infercost("model synth --preset tiny --seed 7 --out " + dir_->file("tiny"));
    ASSERT_EQ(synth.exit_code, 0) << synth.output;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  // A copy of the tiny model in `work`.
  static std::string copy_model(const TempDir& work, const std::string& name) {
    const std::string dir = work.file(name);
    fs::copy(dir_->file("tiny"), dir, fs::copy_options::recursive);
    return dir;
  }
  static std::string run_args(const std::string& input, const std::string& model) {
    return "run " + input + " --model " + model + " --threads 1 --precision fp32 --quiet";
  }
  static TempDir* dir_;
};
TempDir* ErrorsTest::dir_ = nullptr;

// Sets every value of the F32 tensor `name` in a safetensors file to `value`.
void set_tensor(const std::string& path, const std::string& name, float value) {
  testing::edit_tensor(path, name, [value](float& v) { v = value; });
}

// A weight file holding NaN passes the loader's checks (it does not read
// every value), and every output is NaN: the run fails naming the rows, the
// precision and the device, or skips and counts the rows with --on-error skip.
TEST_F(ErrorsTest, OutputsThatAreNotFiniteAreAnErrorOrSkippedRows) {
  TempDir work;
  const std::string model = copy_model(work, "nan");
  set_tensor(model + "/model.safetensors", "classifier.bias", std::numeric_limits<float>::quiet_NaN());
  const std::string input =
      work.write("in.jsonl", "{\"full_text\":\"good\"}\n{\"full_text\":null}\n{\"full_text\":\"bad\"}\n");
  auto failed = testing::run_infercost(run_args(input, model) + " --output " + work.file("out.csv"));
  EXPECT_EQ(failed.exit_code, 4) << failed.output;
  EXPECT_TRUE(says(failed.output, input + ": lines 1, 3: the model's outputs are not finite numbers (NaN or "
                                          "infinity) in fp32 on cpu"))
      << failed.output;
  EXPECT_FALSE(fs::exists(work.file("out.csv")));

  auto skipped = testing::run_infercost(run_args(input, model) + " --on-error skip --output " +
                                        work.file("skip.csv") + " --metrics " + work.file("m.json"));
  ASSERT_EQ(skipped.exit_code, 0) << skipped.output;
  const nlohmann::json m = nlohmann::json::parse(slurp(work.file("m.json")));
  EXPECT_EQ(m["rows_skipped"], 2) << m.dump();
  EXPECT_EQ(m["rows_null"], 1) << m.dump();
  EXPECT_TRUE(says(m["first_skip_reason"].get<std::string>(), "not finite")) << m.dump();
  // Only the null row is written.
  EXPECT_EQ(slurp(work.file("skip.csv")), "text,negative,positive,label\n,,,\n");
}

// Finite weights whose logits overflow fp32 (to infinity) are caught too:
// a sigmoid of +inf would pass for a probability of 1.
TEST_F(ErrorsTest, LogitsThatOverflowAreCaught) {
  TempDir work;
  const std::string model = copy_model(work, "huge");
  set_tensor(model + "/model.safetensors", "classifier.weight", 3e38f);
  const std::string input = work.write("in.jsonl", "{\"full_text\":\"good\"}\n");
  for (const char* function : {"softmax", "sigmoid", "none"}) {
    auto o = testing::run_infercost(run_args(input, model) + " --function " + function);
    EXPECT_EQ(o.exit_code, 4) << function << ": " << o.output;
    EXPECT_TRUE(says(o.output, ": line 1: the model's outputs are not finite")) << function << o.output;
  }
}

TEST_F(ErrorsTest, AModelOrPrecisionTheToolCannotRunIsAUsageError) {
  TempDir work;
  const std::string model = copy_model(work, "gpt2");
  std::string config = slurp(model + "/config.json");
  const size_t at = config.find("\"distilbert\"");
  ASSERT_NE(at, std::string::npos) << config;
  config.replace(at, std::strlen("\"distilbert\""), "\"gpt2\"");
  std::ofstream(model + "/config.json", std::ios::trunc) << config;
  const std::string input = work.write("in.jsonl", "{\"full_text\":\"good\"}\n");
  auto family = testing::run_infercost(run_args(input, model));
  EXPECT_EQ(family.exit_code, 2) << family.output;
  EXPECT_TRUE(says(family.output, "gpt2")) << family.output;
  EXPECT_TRUE(says(family.output, "distilbert, bert, roberta")) << family.output;

  auto fp16 = testing::run_infercost("run " + input + " --model " + dir_->file("tiny") + " --precision fp16");
  EXPECT_EQ(fp16.exit_code, 2) << fp16.output;
  EXPECT_TRUE(says(fp16.output, "fp16 runs on GPUs only")) << fp16.output;
  // Refused before any GPU is looked for: the same on a machine without one.
  auto int8 = testing::run_infercost("run " + input + " --model " + dir_->file("tiny") +
                                     " --device cuda --precision int8");
  EXPECT_EQ(int8.exit_code, 2) << int8.output;
  EXPECT_TRUE(says(int8.output, "int8 runs on the CPU backend only")) << int8.output;
}

TEST_F(ErrorsTest, AUtf16OrUtf32FileIsNamedAsSuch) {
  TempDir work;
  const std::string json = "{\"full_text\":\"hi\"}\n";
  std::string utf16 = "\xFF\xFE";
  for (char c : json) utf16 += std::string{c, '\0'};
  std::string utf32 = std::string("\xFF\xFE\0\0", 4);
  for (char c : json) utf32 += std::string{c, '\0', '\0', '\0'};
  std::string utf16be = "\xFE\xFF";
  for (char c : json) utf16be += std::string{'\0', c};
  for (const auto& [name, bytes, encoding] :
       {std::tuple{"a.jsonl", utf16, "UTF-16 LE"}, std::tuple{"b.json", utf32, "UTF-32 LE"},
        std::tuple{"c.csv", utf16be, "UTF-16 BE"}}) {
    const std::string input = work.write(name, bytes);
    auto o = testing::run_infercost(run_args(input, dir_->file("tiny")));
    EXPECT_EQ(o.exit_code, 3) << name << ": " << o.output;
    EXPECT_TRUE(says(o.output, input + ": the file is " + encoding + " text")) << o.output;
    EXPECT_TRUE(says(o.output, "infercost reads UTF-8")) << o.output;
  }
  // A UTF-8 byte order mark is fine.
  const std::string utf8 = work.write("d.jsonl", "\xEF\xBB\xBF" + json);
  EXPECT_EQ(testing::run_infercost(run_args(utf8, dir_->file("tiny"))).exit_code, 0);
}

// `cat` without --column prints whole rows, so it reads any file, our own
// outputs included; --column picks one.
TEST_F(ErrorsTest, CatPrintsWholeRowsOfAnyFile) {
  TempDir work;
  const std::string input =
      work.write("in.jsonl", "{\"full_text\":\"good\",\"id\":1}\n{\"full_text\":null}\n");
  EXPECT_EQ(testing::run_infercost("cat " + input).output,
            "{\"full_text\":\"good\",\"id\":1}\n{\"full_text\":null}\n");
  const std::string csv = work.write("t.csv", "id,full_text\n1,\"hi, there\"\n2,\n");
  EXPECT_EQ(testing::run_infercost("cat " + csv).output,
            "{\"id\":\"1\",\"full_text\":\"hi, there\"}\n{\"id\":\"2\",\"full_text\":null}\n");
  const std::string out = work.file("p.parquet");
  ASSERT_EQ(testing::run_infercost(run_args(input, dir_->file("tiny")) + " --output " + out).exit_code, 0);
  auto rows = testing::run_infercost("cat " + out);
  ASSERT_EQ(rows.exit_code, 0) << rows.output;
  const size_t newline = rows.output.find('\n');
  ASSERT_NE(newline, std::string::npos) << rows.output;
  const nlohmann::json first = nlohmann::json::parse(rows.output.substr(0, newline));
  EXPECT_EQ(first["text"], "good") << rows.output;
  EXPECT_NEAR(first["negative"].get<double>() + first["positive"].get<double>(), 1.0, 1e-5) << rows.output;
  EXPECT_TRUE(first["label"].is_string()) << rows.output;
  EXPECT_TRUE(says(rows.output, "{\"text\":null,\"negative\":null,\"positive\":null,\"label\":null}"))
      << rows.output;
  auto labels = testing::run_infercost("cat " + out + " --column text --limit 1");
  EXPECT_EQ(labels.output, "\"good\"\n") << labels.output;
}

}  // namespace
}  // namespace infercost
