#include "model/weights.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "model/model_dir.h"
#include "model/safetensors.h"
#include "test_utils.h"

namespace infercost::model {
namespace {

const std::string kData = std::string(INFERCOST_TEST_DATA_DIR) + "/model/";

nlohmann::json checks() {
  std::ifstream in(kData + "checks.json");
  return nlohmann::json::parse(in);
}

const std::vector<float>& field(const EncoderWeights& w, const std::string& name) {
  if (name == "distilbert.transformer.layer.1.ffn.lin2.weight") return w.layers.at(1).ffn_out.weight;
  if (name == "pre_classifier.weight" || name == "bert.pooler.dense.weight") return w.head.pre.weight;
  if (name == "distilbert.embeddings.position_embeddings.weight") return w.position_embeddings;
  if (name == "bert.encoder.layer.1.output.dense.weight") return w.layers.at(1).ffn_out.weight;
  if (name == "bert.embeddings.token_type_embeddings.weight") return w.token_type_embeddings;
  ADD_FAILURE() << "no field for " << name;
  static std::vector<float> none;
  return none;
}

class HfCheckpoint : public ::testing::TestWithParam<std::string> {};

TEST_P(HfCheckpoint, MapsEveryTensorHfWrote) {
  const std::string dir = kData + GetParam();
  auto config = load_config(dir + "/config.json");
  ASSERT_TRUE(config.ok()) << config.status().to_string();
  auto file = SafeTensorsFile::open(dir + "/model.safetensors");
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  auto w = read_encoder_weights(*file, *config);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  const auto expect = checks()[GetParam()];
  // Same count as torch's model.parameters(): nothing missed, nothing doubled.
  EXPECT_EQ(w->parameter_count(), expect["num_parameters"].get<size_t>());
  size_t in_file = 0;
  for (const auto& [name, info] : file->tensors()) in_file += static_cast<size_t>(info.numel());
  EXPECT_EQ(w->parameter_count(), in_file);
  for (const auto& [name, values] : expect["first_values"].items()) {
    const auto& got = field(*w, name);
    ASSERT_GE(got.size(), 4u) << name;
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(got[i], values[i].get<float>()) << name << "[" << i << "]";
  }
  EXPECT_EQ(w->layers.size(), 2u);
  EXPECT_EQ(w->head.classifier.out, config->num_labels());
}

INSTANTIATE_TEST_SUITE_P(Tiny, HfCheckpoint, ::testing::Values("hf_tiny_distilbert", "hf_tiny_bert"));

// Rewrites the tiny BERT checkpoint through `edit` (name -> new name, or "" to drop).
std::string rewrite_bert(const std::string& out_name,
                         const std::function<std::string(const std::string&)>& edit,
                         std::vector<int64_t> bad_shape_for = {}) {
  auto file = SafeTensorsFile::open(kData + "hf_tiny_bert/model.safetensors").value();
  std::vector<std::vector<float>> store;
  store.reserve(file.tensors().size());
  std::vector<TensorToWrite> out;
  for (const auto& [name, info] : file.tensors()) {
    std::string n = edit(name);
    if (n.empty()) continue;
    store.push_back(file.read_f32(name, info.shape).value());
    std::vector<int64_t> shape = info.shape;
    if (n == "bert.encoder.layer.1.intermediate.dense.weight" && !bad_shape_for.empty()) {
      shape = bad_shape_for;
    }
    out.push_back({n, shape, &store.back()});
  }
  std::string path = testing::process_temp_dir().file(out_name);
  EXPECT_TRUE(write_safetensors(path, out, {{"format", "pt"}}, DType::kBF16).ok());
  return path;
}

TEST(Weights, AcceptsLegacyGammaBetaAndBf16) {
  std::string path = rewrite_bert("legacy.safetensors", [](const std::string& n) {
    std::string s = n;
    if (auto p = s.find("LayerNorm.weight"); p != std::string::npos) s.replace(p, 16, "LayerNorm.gamma");
    if (auto p = s.find("LayerNorm.bias"); p != std::string::npos) s.replace(p, 14, "LayerNorm.beta");
    return s;
  });
  auto config = load_config(kData + "hf_tiny_bert/config.json").value();
  auto file = SafeTensorsFile::open(path).value();
  ASSERT_NE(file.find("bert.embeddings.LayerNorm.gamma"), nullptr);
  auto w = read_encoder_weights(file, config);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  EXPECT_EQ(w->embeddings_ln.gamma, std::vector<float>(8, 1.0f));
  EXPECT_EQ(w->parameter_count(), 2099u);
}

TEST(Weights, MissingTensorIsNamed) {
  std::string path = rewrite_bert("missing.safetensors", [](const std::string& n) {
    return n == "bert.encoder.layer.1.attention.self.value.bias" ? std::string() : n;
  });
  auto config = load_config(kData + "hf_tiny_bert/config.json").value();
  auto w = read_encoder_weights(SafeTensorsFile::open(path).value(), config);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), StatusCode::kNotFound);
  EXPECT_NE(w.status().message().find("'bert.encoder.layer.1.attention.self.value.bias'"), std::string::npos)
      << w.status().to_string();
}

TEST(Weights, ShapeMismatchNamesTensorAndShapes) {
  std::string path = rewrite_bert("shape.safetensors", [](const std::string& n) { return n; }, {8, 16});
  auto config = load_config(kData + "hf_tiny_bert/config.json").value();
  auto w = read_encoder_weights(SafeTensorsFile::open(path).value(), config);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(
      w.status().message().find("'bert.encoder.layer.1.intermediate.dense.weight': expected shape [16, 8], "
                                "found [8, 16]"),
      std::string::npos)
      << w.status().to_string();
}

TEST(Weights, ConfigDisagreeingWithCheckpoint) {
  auto config = load_config(kData + "hf_tiny_distilbert/config.json").value();
  config.labels.push_back("NEUTRAL");  // 3 labels, checkpoint has 2
  auto w = read_encoder_weights(SafeTensorsFile::open(kData + "hf_tiny_distilbert/model.safetensors").value(),
                                config);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("'classifier.weight': expected shape [3, 8], found [2, 8]"),
            std::string::npos)
      << w.status().to_string();
  config = load_config(kData + "hf_tiny_distilbert/config.json").value();
  config.num_layers = 3;
  w = read_encoder_weights(SafeTensorsFile::open(kData + "hf_tiny_distilbert/model.safetensors").value(),
                           config);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("distilbert.transformer.layer.2."), std::string::npos)
      << w.status().to_string();
}

// RoBERTa's head is classifier.dense (the head's first layer) and
// classifier.out_proj; the golden checkpoint HF wrote maps onto them.
TEST(Weights, RobertaHeadAndMissingOutProjIsNamed) {
  const std::string dir = std::string(INFERCOST_TEST_DATA_DIR) + "/golden/tiny-roberta";
  auto config = load_config(dir + "/config.json").value();
  auto file = SafeTensorsFile::open(dir + "/model.safetensors").value();
  auto w = read_encoder_weights(file, config);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  EXPECT_EQ(w->head.classifier.out, 3);
  EXPECT_EQ(w->head.pre.weight, file.read_f32("classifier.dense.weight", {32, 32}).value());
  EXPECT_EQ(w->head.classifier.bias, file.read_f32("classifier.out_proj.bias", {3}).value());
  // type_vocab_size 1: the embedding bias is its only row.
  EXPECT_EQ(w->embedding_bias, w->token_type_embeddings);
  size_t in_file = 0;
  for (const auto& [name, info] : file.tensors()) in_file += static_cast<size_t>(info.numel());
  EXPECT_EQ(w->parameter_count(), in_file);

  std::vector<std::vector<float>> store;
  store.reserve(file.tensors().size());
  std::vector<TensorToWrite> out;
  for (const auto& [name, info] : file.tensors()) {
    if (name == "classifier.out_proj.bias") continue;
    store.push_back(file.read_f32(name, info.shape).value());
    out.push_back({name, info.shape, &store.back()});
  }
  const std::string path = testing::process_temp_dir().file("no_out_proj_bias.safetensors");
  ASSERT_TRUE(write_safetensors(path, out, {{"format", "pt"}}, DType::kF32).ok());
  auto missing = read_encoder_weights(SafeTensorsFile::open(path).value(), config);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), path + ": tensor 'classifier.out_proj.bias' not found");
}

}  // namespace
}  // namespace infercost::model
