// read_sentence_transformers: a sentence-transformers directory's modules
// and settings, read to one description, and everything the engine does not
// run refused by name.
#include "model/embedding.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "test_utils.h"

namespace infercost::model {
namespace {

namespace fs = std::filesystem;

constexpr int kHidden = 384;

void write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

const char* kModules = R"([
  {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
  {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
  {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}
])";

std::string pooling_config(const std::string& mode, int dimension = kHidden) {
  std::string out = "{\"word_embedding_dimension\": " + std::to_string(dimension);
  for (const char* m : {"pooling_mode_cls_token", "pooling_mode_mean_tokens", "pooling_mode_max_tokens",
                        "pooling_mode_mean_sqrt_len_tokens"}) {
    out += std::string(", \"") + m + "\": " + (mode == m ? "true" : "false");
  }
  return out + "}";
}

// all-MiniLM-L6-v2 as its package ships it: mean pooling, normalized, 256 tokens.
std::string minilm_like(const std::string& name) {
  const std::string dir = testing::scratch_dir(name);
  write(dir + "/modules.json", kModules);
  write(dir + "/1_Pooling/config.json", pooling_config("pooling_mode_mean_tokens"));
  write(dir + "/sentence_bert_config.json", R"({"max_seq_length": 256, "do_lower_case": false})");
  write(dir + "/config_sentence_transformers.json", R"({"__version__": {"sentence_transformers": "2.0.0"}})");
  return dir;
}

Status read_status(const std::string& dir) {
  return read_sentence_transformers(dir, kHidden).status();
}

void expect_refused(const std::string& dir, StatusCode code, const std::string& says) {
  Status s = read_status(dir);
  EXPECT_EQ(s.code(), code) << s.to_string();
  EXPECT_NE(s.message().find(says), std::string::npos) << s.message();
}

TEST(SentenceTransformers, ReadsTheModulesPoolingLengthAndPrompts) {
  const std::string dir = minilm_like("minilm");
  Result<std::optional<EmbeddingConfig>> e = read_sentence_transformers(dir, kHidden);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  ASSERT_TRUE(e->has_value());
  EXPECT_EQ((*e)->pooling, Pooling::kMean);
  EXPECT_TRUE((*e)->normalize);
  EXPECT_EQ((*e)->dimensions, kHidden);
  EXPECT_EQ((*e)->max_seq_length, 256);
  EXPECT_TRUE((*e)->prompts.empty());
  EXPECT_TRUE((*e)->include_prompt);

  // CLS pooling without Normalize, with prompts and a default one.
  write(dir + "/modules.json", R"([{"path": "", "type": "sentence_transformers.models.Transformer"},
                                   {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])");
  write(dir + "/1_Pooling/config.json",
        R"({"word_embedding_dimension": 384, "pooling_mode_cls_token": true, "include_prompt": false})");
  write(dir + "/config_sentence_transformers.json",
        R"({"prompts": {"query": "query: ", "document": "passage: "}, "default_prompt_name": "document"})");
  e = read_sentence_transformers(dir, kHidden);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  EXPECT_EQ((*e)->pooling, Pooling::kCls);
  EXPECT_FALSE((*e)->normalize);
  EXPECT_FALSE((*e)->include_prompt);
  EXPECT_EQ((*e)->prompts.at("query"), "query: ");
  EXPECT_EQ((*e)->default_prompt_name, "document");

  for (const auto& [mode, pooling] : {std::pair{"pooling_mode_max_tokens", Pooling::kMax},
                                      std::pair{"pooling_mode_lasttoken", Pooling::kLastToken}}) {
    write(dir + "/1_Pooling/config.json", std::string("{\"") + mode + "\": true}");
    e = read_sentence_transformers(dir, kHidden);
    ASSERT_TRUE(e.ok()) << e.status().to_string();
    EXPECT_EQ((*e)->pooling, pooling) << mode;
  }
}

// What sentence-transformers 6.3 writes when it saves all-MiniLM-L6-v2: the
// modules by their new packages, "pooling_mode", "embedding_dimension", no
// max_seq_length (tokenizer_config.json's model_max_length holds it), prompts.
TEST(SentenceTransformers, ReadsWhatVersionSixWrites) {
  const std::string dir = testing::scratch_dir("st6");
  write(dir + "/modules.json", R"([
    {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.base.modules.transformer.Transformer"},
    {"idx": 1, "name": "1", "path": "1_Pooling",
     "type": "sentence_transformers.sentence_transformer.modules.pooling.Pooling"},
    {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.base.modules.normalize.Normalize"}
  ])");
  write(dir + "/1_Pooling/config.json",
        R"({"embedding_dimension": 384, "pooling_mode": "mean", "include_prompt": true})");
  write(dir + "/sentence_bert_config.json", R"({"transformer_task": "feature-extraction",
        "module_output_name": "token_embeddings"})");
  write(dir + "/config_sentence_transformers.json", R"({"default_prompt_name": null, "model_type":
        "SentenceTransformer", "prompts": {"document": "", "query": ""}, "similarity_fn_name": "cosine"})");
  Result<std::optional<EmbeddingConfig>> e = read_sentence_transformers(dir, kHidden);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  ASSERT_TRUE(e->has_value());
  EXPECT_EQ((*e)->pooling, Pooling::kMean);
  EXPECT_TRUE((*e)->normalize);
  EXPECT_EQ((*e)->max_seq_length, 0);
  EXPECT_EQ((*e)->prompts.size(), 2u);
  EXPECT_EQ((*e)->default_prompt_name, "");

  write(dir + "/1_Pooling/config.json", R"({"embedding_dimension": 384, "pooling_mode": ["lasttoken"]})");
  e = read_sentence_transformers(dir, kHidden);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  EXPECT_EQ((*e)->pooling, Pooling::kLastToken);

  write(dir + "/1_Pooling/config.json", R"({"pooling_mode": ["cls", "mean"]})");
  expect_refused(dir, StatusCode::kUnsupported, "several pooling modes");
  write(dir + "/1_Pooling/config.json", R"({"pooling_mode": "weightedmean"})");
  expect_refused(dir, StatusCode::kUnsupported, "pooling mode 'weightedmean' is not one infercost runs");
  write(dir + "/1_Pooling/config.json", R"({"pooling_mode": 3})");
  expect_refused(dir, StatusCode::kCorruption, "'pooling_mode' must be a mode's name");
  write(dir + "/1_Pooling/config.json", R"({"embedding_dimension": 768, "pooling_mode": "cls"})");
  expect_refused(dir, StatusCode::kCorruption,
                 "'embedding_dimension' is 768, but the encoder's hidden size is 384");
}

TEST(SentenceTransformers, APlainDirectoryHasNone) {
  const std::string dir = testing::scratch_dir("plain");
  Result<std::optional<EmbeddingConfig>> e = read_sentence_transformers(dir, kHidden);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  EXPECT_FALSE(e->has_value());
}

TEST(SentenceTransformers, WhatTheEngineDoesNotRunIsRefusedByName) {
  std::string dir = minilm_like("dense");
  write(dir + "/modules.json", R"([{"path": "", "type": "sentence_transformers.models.Transformer"},
                                   {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
                                   {"path": "2_Dense", "type": "sentence_transformers.models.Dense"}])");
  expect_refused(dir, StatusCode::kUnsupported, "module 'sentence_transformers.models.Dense'");

  dir = minilm_like("subfolder");
  write(dir + "/modules.json",
        R"([{"path": "0_Transformer", "type": "sentence_transformers.models.Transformer"},
                                   {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])");
  expect_refused(dir, StatusCode::kUnsupported, "subfolder '0_Transformer'");

  dir = minilm_like("order");
  write(dir + "/modules.json", R"([{"path": "", "type": "sentence_transformers.models.Transformer"},
                                   {"path": "2", "type": "sentence_transformers.models.Normalize"},
                                   {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])");
  expect_refused(dir, StatusCode::kUnsupported, "Transformer then Normalize");

  dir = minilm_like("no-pooling");
  write(dir + "/modules.json", R"([{"path": "", "type": "sentence_transformers.models.Transformer"}])");
  expect_refused(dir, StatusCode::kUnsupported, "no Pooling module");

  dir = minilm_like("sqrt");
  write(dir + "/1_Pooling/config.json", pooling_config("pooling_mode_mean_sqrt_len_tokens"));
  expect_refused(dir, StatusCode::kUnsupported, "'pooling_mode_mean_sqrt_len_tokens'");

  dir = minilm_like("two-modes");
  write(dir + "/1_Pooling/config.json",
        R"({"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": true})");
  expect_refused(dir, StatusCode::kUnsupported, "several pooling modes");

  dir = minilm_like("lower");
  write(dir + "/sentence_bert_config.json", R"({"max_seq_length": 128, "do_lower_case": true})");
  expect_refused(dir, StatusCode::kUnsupported, "'do_lower_case'");
}

TEST(SentenceTransformers, BrokenFilesAreNamed) {
  std::string dir = minilm_like("broken");
  write(dir + "/modules.json", "[{\"type\": ");
  expect_refused(dir, StatusCode::kCorruption, "modules.json: not valid JSON");

  dir = minilm_like("no-type");
  write(dir + "/modules.json", R"([{"path": ""}])");
  expect_refused(dir, StatusCode::kCorruption, "string 'type'");

  dir = minilm_like("no-pooling-file");
  fs::remove(dir + "/1_Pooling/config.json");
  expect_refused(dir, StatusCode::kNotFound, "1_Pooling/config.json: not found");

  dir = minilm_like("no-mode");
  write(dir + "/1_Pooling/config.json", R"({"word_embedding_dimension": 384})");
  expect_refused(dir, StatusCode::kCorruption, "no pooling mode is true");

  dir = minilm_like("dimension");
  write(dir + "/1_Pooling/config.json", pooling_config("pooling_mode_mean_tokens", 768));
  expect_refused(dir, StatusCode::kCorruption,
                 "'word_embedding_dimension' is 768, but the encoder's hidden size is 384");

  dir = minilm_like("mode-type");
  write(dir + "/1_Pooling/config.json", R"({"pooling_mode_mean_tokens": "yes"})");
  expect_refused(dir, StatusCode::kCorruption, "'pooling_mode_mean_tokens' must be true or false");

  dir = minilm_like("length");
  write(dir + "/sentence_bert_config.json", R"({"max_seq_length": 0})");
  expect_refused(dir, StatusCode::kCorruption, "'max_seq_length' must be a positive integer");

  dir = minilm_like("prompt");
  write(dir + "/config_sentence_transformers.json",
        R"({"prompts": {"query": "q: "}, "default_prompt_name": "doc"})");
  expect_refused(dir, StatusCode::kCorruption, "'default_prompt_name' 'doc' is not one of its prompts");
}

TEST(SentenceTransformers, PoolingNamesRoundTrip) {
  for (Pooling p : {Pooling::kCls, Pooling::kMean, Pooling::kMax, Pooling::kLastToken}) {
    Result<Pooling> back = parse_pooling(pooling_name(p));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, p);
  }
  Result<Pooling> bad = parse_pooling("average");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("cls, mean, max or lasttoken"), std::string::npos);
}

}  // namespace
}  // namespace infercost::model
