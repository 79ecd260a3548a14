// The installed C++ API (include/infercost/) through the one library a
// program links (infercost::infercost): these tests include nothing else.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "infercost/classifier.h"
#include "infercost/model_info.h"
#include "infercost/runner.h"
#include "test_utils.h"

namespace infercost {
namespace {

std::string golden(const std::string& name) {
  return std::string(INFERCOST_TEST_DATA_DIR) + "/golden/" + name;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

const std::vector<std::string_view> kTexts = {"what a lovely day", "this is awful, never again",
                                              "ok I guess"};

TEST(Api, ClassifiesAsTheFileRunDoes) {
  ModelOptions options;
  options.threads = 2;
  options.precision = "fp32";
  Result<std::unique_ptr<Classifier>> classifier = Classifier::open(golden("tiny-distilbert"), options);
  ASSERT_TRUE(classifier.ok()) << classifier.status().to_string();
  Result<Classification> out = (*classifier)->classify(kTexts);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->rows(), kTexts.size());
  const std::vector<std::string>& labels = (*classifier)->labels();
  ASSERT_EQ(out->labels, static_cast<int>(labels.size()));
  EXPECT_EQ((*classifier)->head_function(), "softmax");
  EXPECT_EQ((*classifier)->precision(), "fp32");
  EXPECT_EQ((*classifier)->devices(), std::vector<std::string>{"cpu"});
  // The call's metrics, made by the engine.
  const RunMetrics m = (*classifier)->last_call_metrics();
  EXPECT_EQ(m.rows, 3);
  EXPECT_GT(m.tokens, 3);
  EXPECT_EQ(m.task, "classify");

  // The same texts through run_files, the file run of `infercost run`.
  testing::TempDir dir;
  std::string jsonl;
  for (std::string_view t : kTexts) jsonl += nlohmann::json{{"full_text", t}}.dump() + "\n";
  RunOptions run;
  static_cast<ModelOptions&>(run) = options;
  run.inputs = {dir.write("in.jsonl", jsonl)};
  run.model_dir = golden("tiny-distilbert");
  run.output = dir.file("out.jsonl");
  Result<RunMetrics> ran = run_files(run);
  ASSERT_TRUE(ran.ok()) << ran.status().to_string();
  EXPECT_EQ(ran->rows, 3);
  std::ifstream written(run.output);
  std::string line;
  size_t rows = 0;
  for (size_t row = 0; std::getline(written, line); row = ++rows) {
    ASSERT_LT(row, kTexts.size()) << line;
    // {"text", one probability per label (in label order), "label"}
    const nlohmann::ordered_json j = nlohmann::ordered_json::parse(line);
    EXPECT_EQ(j["label"], labels[static_cast<size_t>(out->label[row])]) << row;
    std::vector<double> probabilities;
    for (const auto& [key, value] : j.items())
      if (key != "text" && key != "label") probabilities.push_back(value.get<double>());
    ASSERT_EQ(probabilities.size(), labels.size()) << line;
    for (size_t l = 0; l < labels.size(); ++l)
      EXPECT_NEAR(probabilities[l], out->scores[row * labels.size() + l], 1e-6) << row;
  }
  EXPECT_EQ(rows, kTexts.size());
  // Settings are named as the options' members, whoever checks them.
  Result<RunMetrics> again = run_files(run);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("force"), std::string::npos) << again.status().message();
  EXPECT_EQ(again.status().message().find("--force"), std::string::npos) << again.status().message();
  EXPECT_EQ(again.status().message().find("{force}"), std::string::npos) << again.status().message();
}

TEST(Api, ErrorsNameSettingsAsTheOptionsMembers) {
  ModelOptions options;
  options.streams_per_device = kMaxStreamsPerDevice + 1;
  Result<std::unique_ptr<Classifier>> bad = Classifier::open(golden("tiny-distilbert"), options);
  ASSERT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message().rfind("streams_per_device 17", 0), 0u) << bad.status().message();
  options = ModelOptions();
  options.pooling = Pooling::kMean;  // an embedding setting on a classifier
  bad = Classifier::open(golden("tiny-distilbert"), options);
  ASSERT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "pooling applies to embeddings only, not to classification");
  EXPECT_EQ(Embedder::open(golden("no-such-model")).status().code(), StatusCode::kNotFound);
}

// A sentence-transformers directory embeds as sentence-transformers does
// (the golden of tools/gen_embedding_golden.py, within its tolerance).
TEST(Api, EmbedsAsSentenceTransformers) {
  const nlohmann::json g = read_json(golden("embedding.json"));
  const nlohmann::json& st = g["sentence_transformers_dir"];
  ModelOptions options;
  options.precision = "fp32";
  Result<std::unique_ptr<Embedder>> embedder = Embedder::open(golden(st["dir"]), options);
  ASSERT_TRUE(embedder.ok()) << embedder.status().to_string();
  EXPECT_EQ((*embedder)->pooling(), Pooling::kMean);
  EXPECT_TRUE((*embedder)->normalized());
  EXPECT_EQ((*embedder)->max_length(), st["max_seq_length"].get<int>());
  const std::vector<std::string> texts = g["texts"];
  const std::vector<std::string_view> views(texts.begin(), texts.end());
  Result<Embeddings> out = (*embedder)->embed(views);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->rows(), texts.size());
  ASSERT_EQ(out->dimensions, (*embedder)->dimensions());
  const double tolerance = g["tolerance_abs"];
  for (size_t row = 0; row < texts.size(); ++row) {
    const std::vector<double> want = st["vectors"][row];
    ASSERT_EQ(want.size(), static_cast<size_t>(out->dimensions));
    for (size_t d = 0; d < want.size(); ++d)
      ASSERT_NEAR(out->vectors[row * want.size() + d], want[d], tolerance)
          << "row " << row << " dimension " << d;
  }
  EXPECT_EQ((*embedder)->last_call_metrics().rows, static_cast<int64_t>(texts.size()));
  EXPECT_EQ((*embedder)->last_call_metrics().task, "embed");
}

TEST(Api, DescribesAModel) {
  Result<ModelInfo> info = describe_model(golden("tiny-distilbert"));
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  EXPECT_EQ(info->model_type, "distilbert");
  EXPECT_TRUE(info->classification_head);
  EXPECT_EQ(info->default_task, Task::kClassify);
  EXPECT_EQ(info->labels.size(), 2u);
  EXPECT_GT(info->parameters, 0);
  EXPECT_EQ(nlohmann::json::parse(info->json)["model_type"], "distilbert");
  info = describe_model(golden("tiny-st-roberta"));
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  EXPECT_EQ(info->default_task, Task::kEmbed);
  EXPECT_EQ(describe_model(golden("no-such-model")).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace infercost
