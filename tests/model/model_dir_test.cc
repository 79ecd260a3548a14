#include "model/model_dir.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "test_utils.h"

namespace infercost::model {
namespace {

namespace fs = std::filesystem;
const std::string kData = std::string(INFERCOST_TEST_DATA_DIR) + "/model/";

using testing::scratch_dir;

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(ModelDir, LoadsVocabTxtWithTokenizerConfigFlags) {
  auto m = load_model_dir(kData + "hf_tiny_distilbert", {});
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->tokenizer_source, "vocab.txt");
  EXPECT_FALSE(m->wordpiece()->options().lowercase);  // tokenizer_config.json: do_lower_case false
  EXPECT_EQ(m->weights_dtype, "F32");
  EXPECT_EQ(m->weights.layers.size(), 2u);
  EXPECT_EQ(m->config.labels, (std::vector<std::string>{"NEGATIVE", "POSITIVE"}));
  EXPECT_EQ(m->wordpiece()->cls_id(), 2);
  EXPECT_EQ(m->wordpiece()->options().max_length, 32);  // capped by max_position_embeddings
  EXPECT_FALSE(m->config.synthetic);
}

TEST(ModelDir, OptionsOverrideTokenizerFlags) {
  LoadOptions o;
  o.lowercase = true;
  o.load_weights = false;
  o.max_length = 16;
  auto m = load_model_dir(kData + "hf_tiny_distilbert", o);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_TRUE(m->wordpiece()->options().lowercase);
  EXPECT_EQ(m->wordpiece()->options().max_length, 16);
  EXPECT_TRUE(m->weights.layers.empty());
  EXPECT_EQ(m->weights_dtype, "F32");  // header read even without weights
}

TEST(ModelDir, PrefersTokenizerJson) {
  auto m = load_model_dir(kData + "hf_tiny_bert", {});
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->tokenizer_source, "tokenizer.json");
  EXPECT_EQ(m->tokenizer->kind(), text::TokenizerKind::kWordPiece);
  EXPECT_TRUE(m->wordpiece()->options().lowercase);
  EXPECT_EQ(m->config.num_labels(), 3);
  EXPECT_EQ(m->weights.token_type_embeddings.size(), 16u);
  // Every text is segment 0: BERT's embedding bias is the token type row 0.
  const size_t hidden = size_t(m->config.hidden_size);
  EXPECT_EQ(m->weights.embedding_bias,
            std::vector<float>(m->weights.token_type_embeddings.begin(),
                               m->weights.token_type_embeddings.begin() + std::ptrdiff_t(hidden)));
  auto distil = load_model_dir(kData + "hf_tiny_distilbert", {});
  ASSERT_TRUE(distil.ok()) << distil.status().to_string();
  EXPECT_EQ(distil->weights.embedding_bias, std::vector<float>(size_t(distil->config.hidden_size), 0.0f));
  auto ids = m->tokenizer->encode("The good");
  ASSERT_TRUE(ids.ok()) << ids.status().to_string();
  EXPECT_EQ(*ids, (std::vector<int32_t>{2, 61, 62, 3}));  // [CLS] the good [SEP]
}

std::string copy_of(const std::string& src, const std::string& name) {
  std::string dir = scratch_dir(name);
  for (const auto& e : fs::directory_iterator(kData + src))
    fs::copy(e.path(), dir + "/" + e.path().filename().string());
  return dir;
}

TEST(ModelDir, RefusesPickleCheckpoints) {
  for (const char* pickle : {"pytorch_model.bin", "model.pt", "weights.pth", "last.ckpt"}) {
    std::string dir = copy_of("hf_tiny_distilbert", "pickle");
    fs::remove(dir + "/model.safetensors");
    write(dir + "/" + pickle, "not really a pickle");
    auto m = load_model_dir(dir, {});
    ASSERT_FALSE(m.ok()) << pickle;
    EXPECT_EQ(m.status().code(), StatusCode::kUnsupported);
    const std::string& msg = m.status().message();
    EXPECT_NE(msg.find(pickle), std::string::npos) << msg;
    EXPECT_NE(msg.find("arbitrary code"), std::string::npos) << msg;
    EXPECT_NE(msg.find("save_pretrained('" + dir + "', safe_serialization=True)"), std::string::npos) << msg;
  }
}

TEST(ModelDir, SafetensorsWinsOverPickle) {
  std::string dir = copy_of("hf_tiny_distilbert", "both");
  write(dir + "/pytorch_model.bin", "ignored");
  EXPECT_TRUE(load_model_dir(dir, {}).ok());
}

TEST(ModelDir, ClearErrors) {
  EXPECT_EQ(load_model_dir(kData + "no_such_dir", {}).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(load_model_dir(kData + "checks.json", {}).status().code(), StatusCode::kInvalidArgument);

  std::string dir = copy_of("hf_tiny_distilbert", "noconfig");
  fs::remove(dir + "/config.json");
  auto m = load_model_dir(dir, {});
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
  EXPECT_NE(m.status().message().find("config.json"), std::string::npos);

  dir = copy_of("hf_tiny_distilbert", "novocab");
  fs::remove(dir + "/vocab.txt");
  m = load_model_dir(dir, {});
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
  EXPECT_NE(m.status().message().find("vocab.txt"), std::string::npos);

  dir = copy_of("hf_tiny_distilbert", "noweights");
  fs::remove(dir + "/model.safetensors");
  m = load_model_dir(dir, {});
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
  EXPECT_NE(m.status().message().find("model.safetensors"), std::string::npos);

  // A tokenizer with ids past the embedding table would index out of range.
  dir = copy_of("hf_tiny_distilbert", "bigvocab");
  std::string vocab;
  for (int i = 0; i < 70; ++i)
    vocab += (i < 5 ? std::vector<std::string>{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}[i]
                    : "tok" + std::to_string(i)) +
             "\n";
  write(dir + "/vocab.txt", vocab);
  m = load_model_dir(dir, {});
  EXPECT_EQ(m.status().code(), StatusCode::kCorruption);
  EXPECT_NE(m.status().message().find("vocab_size is 64"), std::string::npos) << m.status().to_string();

  dir = copy_of("hf_tiny_distilbert", "badtokconfig");
  write(dir + "/tokenizer_config.json", R"({"do_lower_case": "yes"})");
  m = load_model_dir(dir, {});
  EXPECT_EQ(m.status().code(), StatusCode::kCorruption);
  EXPECT_NE(m.status().message().find("do_lower_case"), std::string::npos);

  dir = copy_of("hf_tiny_distilbert", "corrupt");
  write(dir + "/model.safetensors", std::string("\x10\0\0\0\0\0\0\0{\"a\": [1, 2, 3]}", 24));
  m = load_model_dir(dir, {});
  EXPECT_EQ(m.status().code(), StatusCode::kCorruption);
  EXPECT_NE(m.status().message().find("model.safetensors"), std::string::npos) << m.status().to_string();
}

}  // namespace
}  // namespace infercost::model
