// The head's output function (softmax, sigmoid, none), HF's rule for the
// default, and the multi-label `labels` column, through run_files.
#include "engine/head.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "backend/backend.h"
#include "core/file.h"
#include "engine/settings.h"
#include "io/row_source.h"
#include "model/config.h"
#include "pipeline_test_util.h"
#include "run/runner.h"
#include "test_utils.h"

namespace infercost::run {
namespace {

using infercost::testing::slurp;
using infercost::testing::TempDir;

model::ModelConfig labelled(int labels, const std::string& problem_type) {
  model::ModelConfig c;
  c.labels.clear();
  for (int i = 0; i < labels; ++i) c.labels.push_back("LABEL_" + std::to_string(i));
  c.problem_type = problem_type;
  return c;
}

// transformers' TextClassificationPipeline.postprocess, function_to_apply
// "default": regression first, then multi-label or one label, then the rest.
TEST(HeadFunction, DefaultFollowsHfRule) {
  struct Case {
    int labels;
    const char* problem_type;
    HeadFunction function;
    const char* reason;
  };
  const Case cases[] = {
      {2, "", HeadFunction::kSoftmax, "2 labels"},
      {5, "", HeadFunction::kSoftmax, "5 labels"},
      {1, "", HeadFunction::kSigmoid, "1 label"},
      {3, "single_label_classification", HeadFunction::kSoftmax, "problem_type single_label_classification"},
      {3, "multi_label_classification", HeadFunction::kSigmoid, "problem_type multi_label_classification"},
      {1, "multi_label_classification", HeadFunction::kSigmoid, "problem_type multi_label_classification"},
      {1, "regression", HeadFunction::kNone, "problem_type regression"},
      {3, "regression", HeadFunction::kNone, "problem_type regression"},
  };
  for (const Case& c : cases) {
    const HeadChoice choice = default_head_function(labelled(c.labels, c.problem_type));
    EXPECT_EQ(choice.function, c.function) << c.labels << " " << c.problem_type;
    EXPECT_EQ(choice.reason, c.reason);
  }
  EXPECT_TRUE(writes_label_set(HeadFunction::kSigmoid, 2));
  EXPECT_FALSE(writes_label_set(HeadFunction::kSigmoid, 1));
  EXPECT_FALSE(writes_label_set(HeadFunction::kSoftmax, 3));
  EXPECT_FALSE(writes_label_set(HeadFunction::kNone, 3));
}

TEST(HeadFunction, NamesParseBack) {
  for (HeadFunction f : {HeadFunction::kSoftmax, HeadFunction::kSigmoid, HeadFunction::kNone}) {
    EXPECT_EQ(parse_head_function(head_function_name(f)).value(), f);
  }
  EXPECT_EQ(parse_head_function("Softmax").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parse_head_function("default").status().code(), StatusCode::kInvalidArgument);
}

TEST(HeadFunction, ValuesOfEachFunction) {
  const std::vector<float> logits = {-3.5f, 0.0f, 2.25f, 40.0f, -40.0f, 1e-3f};
  std::vector<float> x = logits;
  apply_head_function(HeadFunction::kNone, x.data(), 2, 3);
  EXPECT_EQ(x, logits);
  apply_head_function(HeadFunction::kSigmoid, x.data(), 2, 3);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(x[i], static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(logits[i]))))) << i;
  }
  EXPECT_EQ(x[1], 0.5f);  // exactly: a logit 0 is at the default threshold
  EXPECT_EQ(x[3], 1.0f);
  x = logits;
  apply_head_function(HeadFunction::kSoftmax, x.data(), 2, 3);
  for (int r = 0; r < 2; ++r) {
    double sum = 0;
    for (int l = 0; l < 3; ++l) sum += std::exp(static_cast<double>(logits[r * 3 + l]));
    for (int l = 0; l < 3; ++l) {
      EXPECT_NEAR(x[r * 3 + l], std::exp(static_cast<double>(logits[r * 3 + l])) / sum, 1e-7) << r << l;
    }
  }
}

TEST(Softmax, RowsSumToOneAndAreStable) {
  std::vector<float> x = {1000.f, 1001.f, -3.f, 5.f};
  softmax_rows(x.data(), 2, 2);
  EXPECT_NEAR(x[0] + x[1], 1.f, 1e-6);
  EXPECT_NEAR(x[1], 1.f / (1.f + std::exp(-1.f)), 1e-6);
  EXPECT_NEAR(x[3], 1.f / (1.f + std::exp(-8.f)), 1e-6);
}

// As sentence-transformers' Normalize (torch's normalize, eps 1e-12): unit
// length, directions kept, a zero row stays zero, large values do not overflow.
TEST(NormalizeRows, UnitLengthZeroStaysZero) {
  std::vector<float> x = {3, 4, 0, 0, 0, 0, 3e30f, -4e30f, 0};
  normalize_rows(x.data(), 3, 3);
  EXPECT_EQ(x[0], 0.6f);
  EXPECT_EQ(x[1], 0.8f);
  EXPECT_EQ(x[3], 0.0f);
  EXPECT_EQ(x[4], 0.0f);
  EXPECT_FLOAT_EQ(x[6], 0.6f);
  EXPECT_FLOAT_EQ(x[7], -0.8f);
}

std::vector<nlohmann::json> read_jsonl(const std::string& path) {
  std::vector<nlohmann::json> rows;
  std::istringstream in(slurp(path));
  for (std::string line; std::getline(in, line);) rows.push_back(nlohmann::json::parse(line));
  return rows;
}

// The logits the fake backend gives a row of `length` tokens (one-letter
// words are one token each, plus [CLS] and [SEP]).
std::vector<float> fake_logits(int length) {
  switch (length) {
    case 3: return {0.0f, 0.0f};    // sigmoid 0.5 and 0.5: both at the threshold exactly
    case 4: return {-2.0f, -1.0f};  // none at 0.5
    case 5: return {3.0f, -3.0f};   // the first only
    case 6: return {-0.5f, 40.0f};  // sigmoid(40) is 1.0f: at a threshold 1
    default: return {1.0f, 1.5f};
  }
}

class FixedLogitsBackend : public backend::Backend {
 public:
  std::string name() const override { return "fake"; }
  backend::Precision precision() const override { return backend::Precision::kFp32; }
  bool skips_padding() const override { return true; }
  Status prepare(const model::ModelConfig& config, const model::EncoderWeights&) override {
    labels_ = config.num_labels();
    return labels_ == 2 ? Status() : internal_error("the fake backend gives 2 labels");
  }
  Result<backend::ForwardOutput> forward(const backend::TokenBatch& batch) override {
    backend::ForwardOutput logits;
    logits.rows = batch.batch;
    logits.width = labels_;
    for (int r = 0; r < batch.batch; ++r) {
      for (float v : fake_logits(batch.lengths[static_cast<size_t>(r)])) logits.values.push_back(v);
    }
    return logits;
  }

 private:
  int labels_ = 0;
};

// A tiny synthetic model (2 labels) and a copy of it whose config.json says
// multi_label_classification; an input with rows of 1..5 words and nulls.
class HeadRunTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    make_tiny_model(*dir_, 7);
    std::filesystem::copy(dir_->file("tiny"), dir_->file("multi"), std::filesystem::copy_options::recursive);
    Result<model::ModelConfig> c = model::load_config(dir_->file("multi/config.json"));
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    c->problem_type = "multi_label_classification";
    dir_->write("multi/config.json", model::config_to_json(*c));
    dir_->write("in.jsonl",
                "{\"full_text\": \"a\"}\n{\"full_text\": \"a b\"}\n{\"full_text\": null}\n"
                "{\"full_text\": \"a b c\"}\n{\"full_text\": \"a b c d\"}\n{\"full_text\": \"a b c d e\"}\n");
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  // The fake runs' factory: every device a FixedLogitsBackend.
  static BackendFactory fixed_logits() {
    BackendFactory f;
    f.create_backend = [](const std::string&,
                          const backend::BackendOptions&) -> Result<std::unique_ptr<backend::Backend>> {
      return std::unique_ptr<backend::Backend>(std::make_unique<FixedLogitsBackend>());
    };
    return f;
  }

  static RunOptions options(const std::string& model, const std::string& output) {
    RunOptions o;
    o.inputs = {dir_->file("in.jsonl")};
    o.model_dir = dir_->file(model);
    o.output = output;
    o.threads = 1;
    o.precision = "fp32";
    o.force = true;  // the tests write one output again and again
    return o;
  }

  static TempDir* dir_;
};

TempDir* HeadRunTest::dir_ = nullptr;

// The labels column of each row (null: a null row), read back from any format.
std::vector<std::optional<std::string>> labels_column(const std::string& path, const std::string& column) {
  std::vector<std::optional<std::string>> out;
  if (path.ends_with(".jsonl") || path.ends_with(".json")) {
    for (const nlohmann::json& row : read_jsonl(path)) {
      if (row.at(column).is_null()) {
        out.push_back(std::nullopt);
      } else {
        out.push_back(row.at(column).get<std::string>());
      }
    }
    return out;
  }
  io::SourceOptions source_options;
  source_options.column = column;
  auto source = io::open_row_source(
      path, path.ends_with(".csv") ? io::InputFormat::kCsv : io::InputFormat::kParquet, source_options);
  EXPECT_TRUE(source.ok()) << source.status().to_string();
  if (!source.ok()) return out;
  io::RowBatch rows;
  EXPECT_TRUE((*source)->next(100, rows).ok());
  for (size_t i = 0; i < rows.texts.size(); ++i) {
    if (rows.is_null[i]) {
      out.push_back(std::nullopt);
    } else {
      out.push_back(rows.texts[i]);
    }
  }
  return out;
}

using Column = std::vector<std::optional<std::string>>;

TEST_F(HeadRunTest, MultiLabelModelWritesTheLabelsColumnInEveryFormat) {
  TempDir work;
  const Column labels = {"NEGATIVE,POSITIVE", "", std::nullopt, "NEGATIVE", "POSITIVE", "NEGATIVE,POSITIVE"};
  const Column label = {"NEGATIVE", "POSITIVE", std::nullopt, "NEGATIVE", "POSITIVE", "POSITIVE"};
  for (const char* name : {"out.jsonl", "out.json", "out.csv", "out.parquet"}) {
    const std::string out = work.file(name);
    auto metrics = run_files(options("multi", out), fixed_logits());
    ASSERT_TRUE(metrics.ok()) << metrics.status().to_string();
    EXPECT_EQ(metrics->head_function, "sigmoid");
    EXPECT_TRUE(metrics->labels_column);
    EXPECT_EQ(metrics->threshold, 0.5);
    EXPECT_NE(metrics->to_summary().find("head sigmoid (labels at >= 0.5)"), std::string::npos)
        << metrics->to_summary();
    EXPECT_EQ(labels_column(out, "labels"), labels) << name;
    EXPECT_EQ(labels_column(out, "label"), label) << name;
  }
  // The values are the sigmoids of the fake logits.
  const std::vector<nlohmann::json> rows = read_jsonl(work.file("out.jsonl"));
  ASSERT_EQ(rows.size(), 6u);
  const int lengths[] = {3, 4, 0, 5, 6, 7};
  for (size_t i = 0; i < rows.size(); ++i) {
    if (lengths[i] == 0) {
      EXPECT_TRUE(rows[i]["negative"].is_null());
      continue;
    }
    const std::vector<float> logits = fake_logits(lengths[i]);
    EXPECT_EQ(rows[i]["negative"].get<float>(), static_cast<float>(1 / (1 + std::exp(-double(logits[0])))));
    EXPECT_EQ(rows[i]["positive"].get<float>(), static_cast<float>(1 / (1 + std::exp(-double(logits[1])))));
  }
}

TEST_F(HeadRunTest, ThresholdDecidesTheLabels) {
  TempDir work;
  const std::string out = work.file("out.jsonl");
  struct Case {
    double threshold;
    Column labels;
  };
  const Case cases[] = {
      {0.0,
       {"NEGATIVE,POSITIVE", "NEGATIVE,POSITIVE", std::nullopt, "NEGATIVE,POSITIVE", "NEGATIVE,POSITIVE",
        "NEGATIVE,POSITIVE"}},
      {1.0, {"", "", std::nullopt, "", "POSITIVE", ""}},
      {0.75, {"", "", std::nullopt, "NEGATIVE", "POSITIVE", "POSITIVE"}},
  };
  for (const Case& c : cases) {
    RunOptions o = options("multi", out);
    o.threshold = c.threshold;
    auto metrics = run_files(o, fixed_logits());
    ASSERT_TRUE(metrics.ok()) << metrics.status().to_string();
    EXPECT_EQ(metrics->threshold, c.threshold);
    EXPECT_EQ(labels_column(out, "labels"), c.labels) << c.threshold;
  }
  // A threshold at a written value exactly: sigmoid(1.5) as the output has it.
  RunOptions o = options("multi", out);
  o.threshold = static_cast<double>(static_cast<float>(1 / (1 + std::exp(-1.5))));
  ASSERT_TRUE(run_files(o, fixed_logits()).ok());
  EXPECT_EQ(labels_column(out, "labels")[5], "POSITIVE");
}

// Through the real CPU backend: sigmoid and softmax are those of the logits
// --function none writes, and the default of a 2-label model is the softmax.
TEST_F(HeadRunTest, FunctionsOfTheBackendsLogits) {
  TempDir work;
  std::map<std::string, std::vector<nlohmann::json>> out;
  for (const char* function : {"none", "sigmoid", "softmax", "default"}) {
    RunOptions o = options("tiny", work.file(std::string(function) + ".jsonl"));
    o.function = function;
    auto metrics = run_files(o);
    ASSERT_TRUE(metrics.ok()) << metrics.status().to_string();
    EXPECT_EQ(metrics->head_function, std::string(function) == "default" ? "softmax" : function);
    EXPECT_EQ(metrics->labels_column, std::string(function) == "sigmoid");
    out[function] = read_jsonl(work.file(std::string(function) + ".jsonl"));
  }
  EXPECT_EQ(slurp(work.file("default.jsonl")), slurp(work.file("softmax.jsonl")));
  EXPECT_FALSE(out["none"][0].contains("labels"));
  EXPECT_FALSE(out["softmax"][0].contains("labels"));
  for (size_t i = 0; i < out["none"].size(); ++i) {
    if (out["none"][i]["negative"].is_null()) {
      EXPECT_TRUE(out["sigmoid"][i]["labels"].is_null());
      continue;
    }
    const double neg = out["none"][i]["negative"].get<float>(), pos = out["none"][i]["positive"].get<float>();
    const float sig_neg = static_cast<float>(1 / (1 + std::exp(-neg)));
    const float sig_pos = static_cast<float>(1 / (1 + std::exp(-pos)));
    EXPECT_EQ(out["sigmoid"][i]["negative"].get<float>(), sig_neg) << i;
    EXPECT_EQ(out["sigmoid"][i]["positive"].get<float>(), sig_pos) << i;
    std::string expected;
    if (sig_neg >= 0.5f) expected = "NEGATIVE";
    if (sig_pos >= 0.5f) expected += expected.empty() ? "POSITIVE" : ",POSITIVE";
    EXPECT_EQ(out["sigmoid"][i]["labels"], expected) << i;
    const double e = std::exp(pos - neg);
    EXPECT_NEAR(out["softmax"][i]["positive"].get<double>(), e / (1 + e), 1e-6) << i;
    // The label is the largest value whatever the function.
    const char* top = pos > neg ? "POSITIVE" : "NEGATIVE";
    for (const char* f : {"none", "sigmoid", "softmax"}) EXPECT_EQ(out[f][i]["label"], top) << f << " " << i;
  }
}

// HF's pipeline("text-classification", top_k=None, function_to_apply=f) on
// the committed tiny models with each problem_type (tools/gen_head_golden.py):
// the same function by default, the same values, the same top label.
TEST(HeadGolden, MatchesHfTextClassificationPipeline) {
  const std::string golden_dir = std::string(INFERCOST_TEST_DATA_DIR) + "/golden";
  const nlohmann::json golden = nlohmann::json::parse(slurp(golden_dir + "/head.json"));
  const double tolerance = golden["tolerance_abs"];
  TempDir work;
  std::string input;
  for (const auto& text : golden["texts"]) input += nlohmann::json{{"full_text", text}}.dump() + "\n";
  work.write("in.jsonl", input);
  ASSERT_EQ(golden["cases"].size(), 32u);
  int values = 0, label_sets = 0;
  double max_diff = 0;
  for (const nlohmann::json& c : golden["cases"]) {
    const std::string model = c["model"], function = c["function"], applied = c["applied"];
    const std::string problem = c["problem_type"].is_null() ? "" : c["problem_type"].get<std::string>();
    const std::string what = model + " problem_type '" + problem + "' --function " + function;
    const std::string dir = work.file(model + "-" + (problem.empty() ? "absent" : problem));
    if (!std::filesystem::exists(dir)) {
      std::filesystem::copy(golden_dir + "/" + model, dir, std::filesystem::copy_options::recursive);
      nlohmann::json config = nlohmann::json::parse(slurp(dir + "/config.json"));
      if (!problem.empty()) config["problem_type"] = problem;
      work.write(dir.substr(work.path().size() + 1) + "/config.json", config.dump(2));
    }
    RunOptions o;
    o.inputs = {work.file("in.jsonl")};
    o.model_dir = dir;
    o.output = work.file("out.jsonl");
    o.threads = 1;
    o.precision = "fp32";
    o.max_length = 128;  // the tiny models have 160 positions; the texts are far shorter
    o.function = function;
    o.force = true;  // one output for every case
    auto metrics = run_files(o);
    ASSERT_TRUE(metrics.ok()) << what << ": " << metrics.status().to_string();
    EXPECT_EQ(metrics->head_function, applied) << what;
    const std::vector<std::string> labels = c["labels"];
    const bool multi = applied == "sigmoid" && labels.size() > 1;
    EXPECT_EQ(metrics->labels_column, multi) << what;
    const std::vector<nlohmann::json> rows = read_jsonl(o.output);
    ASSERT_EQ(rows.size(), c["scores"].size()) << what;
    for (size_t r = 0; r < rows.size(); ++r) {
      const std::vector<double> hf = c["scores"][r];
      std::string expected_set;
      bool near_threshold = false;
      for (size_t l = 0; l < labels.size(); ++l) {
        std::string column = labels[l];
        for (char& ch : column) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        EXPECT_NEAR(rows[r][column].get<double>(), hf[l], tolerance)
            << what << ": row " << r << " " << column;
        ++values;
        max_diff = std::max(max_diff, std::abs(rows[r][column].get<double>() - hf[l]));
        near_threshold = near_threshold || std::abs(hf[l] - kDefaultThreshold) < tolerance;
        if (hf[l] >= kDefaultThreshold) expected_set += (expected_set.empty() ? "" : ",") + labels[l];
      }
      const size_t top = static_cast<size_t>(std::max_element(hf.begin(), hf.end()) - hf.begin());
      if (std::abs(hf[0] - hf[1]) > tolerance) {
        EXPECT_EQ(rows[r]["label"], labels[top]) << what << ": row " << r;
      }
      EXPECT_EQ(rows[r].contains("labels"), multi) << what;
      if (multi && !near_threshold) {
        EXPECT_EQ(rows[r]["labels"], expected_set) << what << ": row " << r;
        ++label_sets;
      }
    }
  }
  EXPECT_EQ(values, 32 * 8 * 2);
  EXPECT_GT(label_sets, 0);
  RecordProperty("max_abs_diff", std::to_string(max_diff));
  RecordProperty("label_sets_compared", label_sets);
}

TEST_F(HeadRunTest, BadFunctionAndThresholdAreRefusedNamingTheFlag) {
  TempDir work;
  const std::string out = work.file("out.jsonl");
  RunOptions o = options("tiny", out);
  o.function = "argmax";
  auto bad = run_files(o, fixed_logits());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  // In the C++ API's and Python's words (the engine names it "{function}").
  EXPECT_EQ(spell_settings(bad.status(), Spelling::kName).message().rfind("function 'argmax'", 0), 0u)
      << bad.status().message();
  for (double t : {-0.25, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    o = options("multi", out);
    o.threshold = t;
    auto r = run_files(o, fixed_logits());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << t;
    EXPECT_NE(r.status().message().find("must be in [0, 1]"), std::string::npos) << r.status().message();
  }
  // No labels column for it to decide: softmax, none, or sigmoid of 1 label.
  for (const char* function : {"default", "softmax", "none"}) {
    o = options("tiny", out);
    o.function = function;
    o.threshold = 0.5;
    auto r = run_files(o, fixed_logits());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << function;
    EXPECT_EQ(spell_settings(r.status(), Spelling::kName)
                  .message()
                  .rfind("threshold 0.5: only multi-label outputs (function='sigmoid' over", 0),
              0u)
        << r.status().message();
  }
  EXPECT_FALSE(std::filesystem::exists(out));
  // Forced on a softmax model, sigmoid writes the labels column too.
  o = options("tiny", out);
  o.function = "sigmoid";
  o.threshold = 0.75;
  auto forced = run_files(o, fixed_logits());
  ASSERT_TRUE(forced.ok()) << forced.status().to_string();
  EXPECT_EQ(labels_column(out, "labels"), (Column{"", "", std::nullopt, "NEGATIVE", "POSITIVE", "POSITIVE"}));
}

}  // namespace
}  // namespace infercost::run
