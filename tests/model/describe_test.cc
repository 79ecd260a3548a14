// describe_model_dir: what loading the directory gives, without reading a
// tensor.
#include "model/describe.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "model/model_dir.h"
#include "model/synth.h"
#include "test_utils.h"

namespace infercost::model {
namespace {

namespace fs = std::filesystem;

// Every tiny model of the repository: the HF-written ones of tests/data_files
// (BERT, DistilBERT with GELU and ReLU, RoBERTa, XLM-R, CamemBERT, a
// multi-label RoBERTa) and the two of the model tests.
std::vector<std::string> committed_model_dirs() {
  std::vector<std::string> dirs;
  const std::string data = INFERCOST_TEST_DATA_DIR;
  for (const auto& e : fs::directory_iterator(data + "/golden")) {
    if (e.is_directory() && fs::exists(e.path() / "model.safetensors")) dirs.push_back(e.path().string());
  }
  std::sort(dirs.begin(), dirs.end());
  dirs.push_back(data + "/model/hf_tiny_bert");
  dirs.push_back(data + "/model/hf_tiny_distilbert");
  return dirs;
}

std::string copy_model_dir(const std::string& from, const std::string& name) {
  const std::string dir = testing::scratch_dir(name);
  for (const auto& e : fs::directory_iterator(from))
    fs::copy(e.path(), dir + "/" + e.path().filename().string());
  return dir;
}

// Rewrites <dir>/model.safetensors with its tensors as `dtype`, after `edit`
// (which may add, drop or reshape tensors) has seen them.
void rewrite_weights(const std::string& dir, DType dtype,
                     const std::function<void(std::map<std::string, TensorToWrite>&,
                                              std::vector<std::vector<float>>&)>& edit = {}) {
  const std::string path = dir + "/model.safetensors";
  std::vector<std::vector<float>> data;
  std::map<std::string, TensorToWrite> tensors;
  {
    Result<SafeTensorsFile> file = SafeTensorsFile::open(path);
    ASSERT_TRUE(file.ok()) << file.status().to_string();
    data.reserve(file->tensors().size() + 4);  // `edit` adds a few; the pointers below stay valid
    for (const auto& [name, info] : file->tensors()) {
      Result<std::vector<float>> values = file->read_f32(name, info.shape);
      ASSERT_TRUE(values.ok()) << values.status().to_string();
      data.push_back(std::move(*values));
      tensors[name] = TensorToWrite{name, info.shape, &data.back()};
    }
  }
  if (edit) edit(tensors, data);
  std::vector<TensorToWrite> list;
  for (const auto& [name, t] : tensors) list.push_back(t);
  ASSERT_TRUE(write_safetensors(path, list, {{"format", "pt"}}, dtype).ok());
}

int64_t header_elements(const std::string& dir) {
  Result<SafeTensorsHeader> header = read_safetensors_header(dir + "/model.safetensors");
  EXPECT_TRUE(header.ok()) << header.status().to_string();
  int64_t n = 0;
  if (header.ok()) {
    for (const auto& [name, info] : header->tensors) n += info.numel();
  }
  return n;
}

// The description equals what load_model_dir gives (an encoder without a
// classification head, such as a sentence-transformers directory, loaded
// as `infercost embed` loads it).
void expect_describes_as_loaded(const std::string& dir) {
  SCOPED_TRACE(dir);
  Result<ModelDescription> d = describe_model_dir(dir);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  LoadOptions load;
  load.classification_head = d->classification_head;
  Result<LoadedModel> m = load_model_dir(dir, load);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(d->dir, m->dir);
  EXPECT_GT(d->parameters, 0);
  EXPECT_EQ(d->parameters, static_cast<int64_t>(m->weights.parameter_count()));
  EXPECT_EQ(d->weights_dtype, m->weights_dtype);
  const ModelConfig &a = d->config, &b = m->config;
  EXPECT_EQ(a.architecture, b.architecture);
  EXPECT_EQ(a.model_type, b.model_type);
  EXPECT_EQ(a.name, b.name);
  EXPECT_FALSE(a.name.empty());
  EXPECT_EQ(a.vocab_size, b.vocab_size);
  EXPECT_EQ(a.hidden_size, b.hidden_size);
  EXPECT_EQ(a.num_layers, b.num_layers);
  EXPECT_EQ(a.num_heads, b.num_heads);
  EXPECT_EQ(a.intermediate_size, b.intermediate_size);
  EXPECT_EQ(a.max_positions(), b.max_positions());
  EXPECT_EQ(a.type_vocab_size, b.type_vocab_size);
  EXPECT_EQ(a.ffn_activation, b.ffn_activation);
  EXPECT_EQ(a.layer_norm_eps, b.layer_norm_eps);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.problem_type, b.problem_type);
  EXPECT_EQ(a.synthetic, b.synthetic);
  EXPECT_EQ(a.synthetic_preset, b.synthetic_preset);
  EXPECT_EQ(a.synthetic_seed, b.synthetic_seed);
  EXPECT_EQ(d->tokenizer.kind, m->tokenizer->kind());
  EXPECT_EQ(d->tokenizer.source, m->tokenizer_source);
  EXPECT_EQ(d->tokenizer.vocab_size, m->tokenizer->vocab_size());
  EXPECT_EQ(d->tokenizer.max_length, m->tokenizer->max_length());
  ASSERT_EQ(d->tokenizer.normalizer.has_value(), m->wordpiece() != nullptr);
  if (const text::WordPieceTokenizer* wordpiece = m->wordpiece()) {
    const text::TokenizerOptions& t = wordpiece->options();
    EXPECT_EQ(d->tokenizer.normalizer->lowercase, t.lowercase);
    EXPECT_EQ(d->tokenizer.normalizer->strip_accents, t.strip_accents.value_or(t.lowercase));
    EXPECT_EQ(d->tokenizer.normalizer->split_cjk, t.tokenize_chinese_chars);
  }
}

TEST(Describe, EqualsWhatLoadingGivesForEveryTinyModel) {
  const std::vector<std::string> dirs = committed_model_dirs();
  ASSERT_GE(dirs.size(), 9u);
  for (const std::string& dir : dirs) expect_describes_as_loaded(dir);
  // Synthetic ones too: the preset and seed come through.
  for (const char* preset : {"tiny"}) {
    SynthOptions o;
    o.out_dir = testing::scratch_dir("describe-synth");
    o.preset = preset;
    o.seed = 7;
    ASSERT_TRUE(synthesize_model(o).ok());
    expect_describes_as_loaded(o.out_dir);
    Result<ModelDescription> d = describe_model_dir(o.out_dir);
    ASSERT_TRUE(d.ok()) << d.status().to_string();
    EXPECT_TRUE(d->config.synthetic);
    EXPECT_EQ(d->config.synthetic_preset, preset);
    EXPECT_EQ(d->config.synthetic_seed, 7u);
  }
}

TEST(Describe, CountsTheTensorsTheEngineLoadsInEveryDtype) {
  const std::string from = std::string(INFERCOST_TEST_DATA_DIR) + "/golden/tiny-roberta";
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    const std::string dir = copy_model_dir(from, "describe-dtype");
    // A pooler RoBERTa's classifier never uses, as some checkpoints carry.
    rewrite_weights(dir, dtype, [](auto& tensors, auto& data) {
      data.emplace_back(8 * 8, 0.5f);
      tensors["roberta.pooler.dense.weight"] =
          TensorToWrite{"roberta.pooler.dense.weight", {8, 8}, &data.back()};
    });
    expect_describes_as_loaded(dir);
    Result<ModelDescription> d = describe_model_dir(dir);
    ASSERT_TRUE(d.ok()) << d.status().to_string();
    EXPECT_EQ(d->weights_dtype, std::string(dtype_name(dtype)));
    EXPECT_EQ(d->parameters + 64, header_elements(dir));
  }
}

// The bytes after the header of a copy of `from`: dropped (the file ends
// with the header), or overwritten with ones that are not the tensors'.
std::string model_with_broken_data(const std::string& from, const std::string& name) {
  const std::string dir = copy_model_dir(from, name);
  const std::string path = dir + "/model.safetensors";
  const std::string bytes = testing::slurp(path);
  uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes.substr(0, 8 + header_len);
  return dir;
}

TEST(Describe, ReadsNoTensorByte) {
  const std::string from = std::string(INFERCOST_TEST_DATA_DIR) + "/model/hf_tiny_bert";
  Result<ModelDescription> whole = describe_model_dir(from);
  ASSERT_TRUE(whole.ok()) << whole.status().to_string();
  // The file ends where its data section should begin: every tensor's
  // offsets point past its end.
  const std::string dir = model_with_broken_data(from, "describe-no-data");
  Result<ModelDescription> d = describe_model_dir(dir);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_EQ(d->parameters, whole->parameters);
  EXPECT_EQ(d->weights_dtype, "F32");
  EXPECT_EQ(d->config.labels, whole->config.labels);
  EXPECT_EQ(d->tokenizer.vocab_size, whole->tokenizer.vocab_size);
  // Loading it fails, naming the file; so does a bare open.
  Result<LoadedModel> loaded = load_model_dir(dir, {});
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kCorruption) << loaded.status().to_string();
  EXPECT_NE(loaded.status().message().find("past the data section"), std::string::npos)
      << loaded.status().to_string();
  EXPECT_NE(loaded.status().message().find(dir + "/model.safetensors"), std::string::npos)
      << loaded.status().to_string();
  // Config and tokenizer alone (tokenize, plan) read only the header too.
  LoadOptions no_weights;
  no_weights.load_weights = false;
  Result<LoadedModel> header_only = load_model_dir(dir, no_weights);
  ASSERT_TRUE(header_only.ok()) << header_only.status().to_string();
  EXPECT_EQ(header_only->weights_dtype, "F32");
}

// Both fail alike: same code, same message.
void expect_same_error(const std::string& dir, const std::string& fragment) {
  SCOPED_TRACE(dir);
  Result<ModelDescription> d = describe_model_dir(dir);
  Result<LoadedModel> m = load_model_dir(dir, {});
  ASSERT_FALSE(d.ok());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(d.status().code(), m.status().code());
  EXPECT_EQ(d.status().message(), m.status().message());
  EXPECT_NE(d.status().message().find(fragment), std::string::npos) << d.status().to_string();
}

TEST(Describe, FailsAsLoadingFails) {
  const std::string from = std::string(INFERCOST_TEST_DATA_DIR) + "/model/hf_tiny_distilbert";
  const std::string absent = testing::scratch_dir("describe-absent") + "/none";
  expect_same_error(absent, absent + "/config.json");

  std::string dir = copy_model_dir(from, "describe-no-weights");
  fs::remove(dir + "/model.safetensors");
  expect_same_error(dir, "no model.safetensors");
  std::ofstream(dir + "/pytorch_model.bin") << "not a pickle";
  expect_same_error(dir, "does not load PyTorch pickle checkpoints");

  dir = copy_model_dir(from, "describe-missing-tensor");
  rewrite_weights(dir, DType::kF32, [](auto& tensors, auto&) { tensors.erase("classifier.bias"); });
  expect_same_error(dir, "tensor 'classifier.bias' not found");

  dir = copy_model_dir(from, "describe-misshapen");
  rewrite_weights(dir, DType::kF32, [](auto& tensors, auto& data) {
    data.emplace_back(3 * 8, 0.0f);
    tensors["classifier.weight"] = TensorToWrite{"classifier.weight", {3, 8}, &data.back()};
  });
  expect_same_error(dir, "tensor 'classifier.weight': expected shape [2, 8], found [3, 8]");

  dir = copy_model_dir(from, "describe-bad-header");
  const std::string text = "{not json}      ";  // 16 bytes after the length
  std::string bytes(8, '\0');
  bytes[0] = static_cast<char>(text.size());
  std::ofstream(dir + "/model.safetensors", std::ios::binary | std::ios::trunc) << bytes + text;
  expect_same_error(dir, "is not valid JSON");
}

// A bare encoder as a sentence-transformers package ships it (all-MiniLM-L6-v2):
// BertModel, keys without "bert.", the pooler, no classifier, modules.json.
std::string bare_encoder_dir(const std::string& name, bool sentence_transformers) {
  const std::string dir = copy_model_dir(std::string(INFERCOST_TEST_DATA_DIR) + "/model/hf_tiny_bert", name);
  rewrite_weights(dir, DType::kF32, [](auto& tensors, auto&) {
    std::map<std::string, TensorToWrite> bare;
    for (auto& [key, t] : tensors) {
      if (key.rfind("classifier.", 0) == 0) continue;
      t.name = key.rfind("bert.", 0) == 0 ? key.substr(5) : key;
      bare[t.name] = t;
    }
    tensors = std::move(bare);
  });
  nlohmann::json config = nlohmann::json::parse(testing::slurp(dir + "/config.json"));
  config["architectures"] = {"BertModel"};
  config.erase("id2label");
  config.erase("label2id");
  std::ofstream(dir + "/config.json", std::ios::trunc) << config.dump(2);
  if (sentence_transformers) std::ofstream(dir + "/modules.json") << R"([{"idx": 0, "path": ""}])";
  return dir;
}

TEST(Describe, ABareEncoderIsDescribedAndRefusedForClassification) {
  const std::string dir = bare_encoder_dir("describe-bare-encoder", true);
  Result<ModelDescription> d = describe_model_dir(dir);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_FALSE(d->classification_head);
  EXPECT_EQ(d->config.architectures, std::vector<std::string>{"BertModel"});
  EXPECT_EQ(architecture_name(d->config), "BertModel");
  // Every tensor of the file: the encoder and its pooler.
  EXPECT_EQ(d->parameters, header_elements(dir));
  LoadOptions header_only;
  header_only.load_weights = false;  // `tokenize`, `plan`
  EXPECT_TRUE(load_model_dir(dir, header_only).ok());

  Result<LoadedModel> m = load_model_dir(dir, {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(m.status().message(), d->no_head);
  for (const std::string& says :
       {dir + ": no classification head", std::string("architecture is BertModel"),
        std::string("sentence-transformers encoder: modules.json"), std::string("'classifier.weight'"),
        std::string("BertForSequenceClassification"), std::string("use `infercost embed`")}) {
    EXPECT_NE(m.status().message().find(says), std::string::npos) << says << "\n" << m.status().to_string();
  }

  // For its token vectors (embeddings) it loads: the encoder and its pooler, no classifier.
  LoadOptions encoder_only;
  encoder_only.classification_head = false;
  Result<LoadedModel> encoder = load_model_dir(dir, encoder_only);
  ASSERT_TRUE(encoder.ok()) << encoder.status().to_string();
  EXPECT_EQ(encoder->weights.layers.size(), size_t(encoder->config.num_layers));
  EXPECT_TRUE(encoder->weights.head.classifier.weight.empty());
  EXPECT_EQ(int64_t(encoder->weights.parameter_count()), d->parameters);

  const std::string plain = bare_encoder_dir("describe-bare-plain", false);
  m = load_model_dir(plain, {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(m.status().message().find("sentence-transformers"), std::string::npos) << m.status().to_string();

  // A classifier that lost its head is a missing tensor, not a bare encoder.
  const std::string broken = copy_model_dir(std::string(INFERCOST_TEST_DATA_DIR) + "/model/hf_tiny_bert",
                                            "describe-headless-classifier");
  rewrite_weights(broken, DType::kF32, [](auto& tensors, auto&) { tensors.erase("classifier.weight"); });
  expect_same_error(broken, "tensor 'classifier.weight' not found");
}

// A sentence-transformers directory's pooling is part of its description;
// what the engine cannot run is described as refused, and the encoder still
// describes.
TEST(Describe, ASentenceTransformersEncoderSaysHowItPools) {
  const std::string dir = bare_encoder_dir("describe-sentence", true);
  std::ofstream(dir + "/modules.json", std::ios::trunc) << R"([
    {"path": "", "type": "sentence_transformers.models.Transformer"},
    {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])";
  std::filesystem::create_directories(dir + "/1_Pooling");
  std::ofstream(dir + "/1_Pooling/config.json") << R"({"pooling_mode": "cls"})";
  Result<ModelDescription> d = describe_model_dir(dir);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  ASSERT_TRUE(d->embedding.has_value());
  EXPECT_EQ(d->embedding->pooling, Pooling::kCls);
  EXPECT_FALSE(d->embedding->normalize);
  EXPECT_EQ(d->embedding->dimensions, d->config.hidden_size);
  EXPECT_EQ(d->embedding_refused, "");

  std::ofstream(dir + "/modules.json", std::ios::trunc) << R"([
    {"path": "", "type": "sentence_transformers.models.Transformer"},
    {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    {"path": "2_Dense", "type": "sentence_transformers.models.Dense"}])";
  d = describe_model_dir(dir);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_FALSE(d->embedding.has_value());
  EXPECT_NE(
      d->embedding_refused.find("module 'sentence_transformers.models.Dense' is not one infercost runs"),
      std::string::npos)
      << d->embedding_refused;

  d = describe_model_dir(bare_encoder_dir("describe-not-sentence", false));
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_FALSE(d->embedding.has_value());
  EXPECT_EQ(d->embedding_refused, "");
}

}  // namespace
}  // namespace infercost::model
