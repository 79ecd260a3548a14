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
  // A recorded reason carries no advice, so no setting the engine names for a front door to spell.
  EXPECT_EQ(m["first_skip_reason"].get<std::string>().find('{'), std::string::npos) << m.dump();
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

// Replaces the first `from` in the model's config.json with `to`.
void edit_config(const std::string& model, const std::string& from, const std::string& to) {
  std::string config = slurp(model + "/config.json");
  const size_t at = config.find(from);
  ASSERT_NE(at, std::string::npos) << from << " in " << config;
  config.replace(at, from.size(), to);
  std::ofstream(model + "/config.json", std::ios::trunc) << config;
}

// Makes `model` a sentence-transformers directory: mean pooling, no
// Normalize, max_seq_length as given.
void make_sentence_transformers(const TempDir& work, const std::string& model, int max_seq_length) {
  const std::string name = fs::path(model).filename().string();
  work.write(name + "/modules.json",
             R"([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                 {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])");
  work.write(name + "/1_Pooling/config.json", R"({"pooling_mode_mean_tokens": true})");
  work.write(name + "/sentence_bert_config.json",
             "{\"max_seq_length\": " + std::to_string(max_seq_length) + ", \"do_lower_case\": false}");
}

// Two labels that would write one column (alike but for case, or named as
// the text or the winning label's column) are refused in every format, before
// anything is written.
TEST_F(ErrorsTest, LabelsThatWouldShareAColumnAreRefused) {
  TempDir work;
  const std::string input = work.write("in.jsonl", "{\"full_text\":\"good\"}\n");
  const struct {
    std::string label;
    std::string says;
  } cases[] = {
      {"Positive",
       "labels 0 'Positive' and 1 'POSITIVE' (config.json's id2label) would both be written as column "
       "'positive'"},
      {"Text",
       "label 0 'Text' (config.json's id2label) would be written as column 'text', which the output "
       "holds already (the input text)"},
      {"LABEL", "label 0 'LABEL' (config.json's id2label) would be written as column 'label'"},
  };
  for (const auto& c : cases) {
    const std::string model = copy_model(work, "labels-" + c.label);
    edit_config(model, "\"NEGATIVE\"", "\"" + c.label + "\"");
    for (const char* format : {"jsonl", "csv", "parquet"}) {
      const std::string out = work.file(c.label + "." + format);
      auto o = testing::run_infercost(run_args(input, model) + " --no-text --output " + out);
      EXPECT_EQ(o.exit_code, 2) << o.output;
      EXPECT_TRUE(says(o.output, c.says)) << o.output;
      EXPECT_FALSE(fs::exists(out));
    }
  }
}

// Thread counts past what any machine has are refused before anything starts.
TEST_F(ErrorsTest, ThreadCountsAreCapped) {
  TempDir work;
  const std::string input = work.write("in.jsonl", "{\"full_text\":\"good\"}\n");
  const std::string run = "run " + input + " --model " + dir_->file("tiny") + " --quiet ";
  auto threads = testing::run_infercost(run + "--threads 65536");
  EXPECT_EQ(threads.exit_code, 2) << threads.output;
  EXPECT_TRUE(says(threads.output, "--threads 65536: must be 1 to 1024 (or 0 for all cores)"))
      << threads.output;
  auto tokenizers = testing::run_infercost(run + "--tokenizer-threads 100000");
  EXPECT_EQ(tokenizers.exit_code, 2) << tokenizers.output;
  EXPECT_TRUE(says(tokenizers.output, "--tokenizer-threads 100000: must be 1 to 1024")) << tokenizers.output;
}

// JSON nested past any real file's depth (a normalizer of 50,000 nested
// Sequences, a config.json of 50,000 nested lists) is bad data named at its
// byte, for every command that reads it, not a crash.
TEST_F(ErrorsTest, DeeplyNestedJsonIsBadDataNotACrash) {
  TempDir work;
  std::string normalizer;
  for (int i = 0; i < 50000; ++i) normalizer += R"({"type":"Sequence","normalizers":[)";
  for (int i = 0; i < 50000; ++i) normalizer += "]}";
  const std::string model = copy_model(work, "nested");
  work.write("nested/tokenizer.json", R"({"version":"1.0","normalizer":)" + normalizer +
                                          R"(,"model":{"type":"WordPiece","vocab":{"[UNK]":0}}})");
  const std::string input = work.write("in.jsonl", "{\"full_text\":\"good\"}\n");
  const std::string says_where = model + "/tokenizer.json: byte 2205: JSON nests deeper than 128 levels";
  for (const std::string& command :
       {run_args(input, model), "tokenize --model " + model + " -- hello", "model info " + model}) {
    auto o = testing::run_infercost(command);
    EXPECT_EQ(o.exit_code, 3) << command << "\n" << o.output;
    EXPECT_TRUE(says(o.output, says_where)) << command << "\n" << o.output;
  }
  const std::string config_model = copy_model(work, "nested-config");
  edit_config(config_model, "{", "{\"deep\": " + std::string(50000, '[') + std::string(50000, ']') + ",");
  auto config = testing::run_infercost(run_args(input, config_model));
  EXPECT_EQ(config.exit_code, 3) << config.output;
  EXPECT_TRUE(says(config.output, config_model + "/config.json: byte 136: JSON nests deeper than 128 levels"))
      << config.output;
}

// What `model info` says is what a run does: the precision a run computes in
// by default, a head it does not run named as such, the truncation embed uses.
TEST_F(ErrorsTest, ModelInfoSaysWhatARunDoes) {
  TempDir work;
  auto devices = testing::run_infercost("devices --json -");
  ASSERT_EQ(devices.exit_code, 0) << devices.output;
  const bool bf16 = nlohmann::json::parse(devices.output)["cpu"]["native_bf16"].get<bool>();
  auto info = testing::run_infercost("model info " + dir_->file("tiny"));
  ASSERT_EQ(info.exit_code, 0) << info.output;
  EXPECT_TRUE(says(info.output, std::string("precision       without --precision, ") +
                                    (bf16 ? "bf16" : "fp32") + " on this CPU"))
      << info.output;
  EXPECT_FALSE(says(info.output, "computed in fp32")) << info.output;
  auto json = testing::run_infercost("model info --json " + dir_->file("tiny"));
  EXPECT_EQ(nlohmann::json::parse(json.output)["default_precision"]["cpu"], bf16 ? "bf16" : "fp32");

  // A token classifier: its head named, not a tensor it lacks.
  const std::string tagger = copy_model(work, "tagger");
  edit_config(tagger, "DistilBertForSequenceClassification", "DistilBertForTokenClassification");
  auto tag_info = testing::run_infercost("model info " + tagger);
  ASSERT_EQ(tag_info.exit_code, 0) << tag_info.output;
  EXPECT_TRUE(says(tag_info.output,
                   "head            none: config.json's architecture is "
                   "DistilBertForTokenClassification, a token classifier (a label per token)"))
      << tag_info.output;
  const std::string input = work.write("in.jsonl", "{\"full_text\":\"good\"}\n");
  auto tag_run = testing::run_infercost(run_args(input, tagger));
  EXPECT_EQ(tag_run.exit_code, 2) << tag_run.output;
  EXPECT_TRUE(
      says(tag_run.output, "a token classifier (a label per token): infercost runs sequence classifiers"))
      << tag_run.output;
  EXPECT_FALSE(says(tag_run.output, "not found")) << tag_run.output;

  // max_seq_length above the tokenizer's model_max_length (100 here) is what
  // embed truncates at, as sentence-transformers takes it.
  const std::string st = copy_model(work, "st");
  std::string tok = slurp(st + "/tokenizer_config.json");
  tok.replace(tok.find("\"model_max_length\": 512"), std::strlen("\"model_max_length\": 512"),
              "\"model_max_length\": 100");
  std::ofstream(st + "/tokenizer_config.json", std::ios::trunc) << tok;
  make_sentence_transformers(work, st, 300);
  auto st_info = testing::run_infercost("model info " + st);
  EXPECT_TRUE(says(st_info.output,
                   "max_seq_length 300 (embed reads 300 tokens, past the tokenizer's 100, as "
                   "sentence-transformers does)"))
      << st_info.output;
  std::string words;
  for (int i = 0; i < 400; ++i) words += " y";
  const std::string long_input = work.write("long.jsonl", "{\"full_text\":\"" + words + "\"}\n");
  auto embed =
      testing::run_infercost("embed " + long_input + " --model " + st + " --threads 1 --quiet --output " +
                             work.file("v.jsonl") + " --metrics " + work.file("m.json"));
  ASSERT_EQ(embed.exit_code, 0) << embed.output;
  EXPECT_EQ(nlohmann::json::parse(slurp(work.file("m.json")))["max_length"], 300);
}

// Embedding outputs: `cat` says which column it cannot print, and a prefix
// that leaves no room for the text is refused, not a vector per row that is
// the prefix's.
TEST_F(ErrorsTest, EmbeddingOutputsAndPrefixes) {
  TempDir work;
  const std::string st = copy_model(work, "st");
  make_sentence_transformers(work, st, 64);
  const std::string input = work.write("in.jsonl", "{\"full_text\":\"good\"}\n{\"full_text\":\"bad\"}\n");
  const std::string out = work.file("v.parquet");
  auto embed =
      testing::run_infercost("embed " + input + " --model " + st + " --threads 1 --quiet --output " + out);
  ASSERT_EQ(embed.exit_code, 0) << embed.output;
  auto cat = testing::run_infercost("cat " + out);
  EXPECT_EQ(cat.exit_code, 0) << cat.output;
  EXPECT_TRUE(
      says(cat.output, out + ": column 'embedding' (a list of FLOAT: the rows' vectors) is not shown"))
      << cat.output;
  EXPECT_TRUE(says(cat.output, "{\"text\":\"good\"}")) << cat.output;

  std::string prefix;
  for (int i = 0; i < 40; ++i) prefix += "word ";
  auto prefixed =
      testing::run_infercost("embed " + input + " --model " + st + " --threads 1 --quiet --prefix '" +
                             prefix + "' --max-length 16 --output " + work.file("p.parquet"));
  EXPECT_EQ(prefixed.exit_code, 2) << prefixed.output;
  EXPECT_TRUE(says(prefixed.output,
                   "--prefix: the prefix alone takes 16 tokens with the special ones, all 16 of "
                   "--max-length"))
      << prefixed.output;
  EXPECT_FALSE(fs::exists(work.file("p.parquet")));
}

}  // namespace
}  // namespace infercost
