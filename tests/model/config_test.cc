#include "model/config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

namespace infercost::model {
namespace {

// The config.json of distilbert-base-uncased-finetuned-sst-2-english, as published.
const char* kSst2Config = R"({
  "activation": "gelu",
  "architectures": ["DistilBertForSequenceClassification"],
  "attention_dropout": 0.1,
  "dim": 768,
  "dropout": 0.1,
  "finetuning_task": "sst-2",
  "hidden_dim": 3072,
  "id2label": {"0": "NEGATIVE", "1": "POSITIVE"},
  "initializer_range": 0.02,
  "label2id": {"NEGATIVE": 0, "POSITIVE": 1},
  "max_position_embeddings": 512,
  "model_type": "distilbert",
  "n_heads": 12,
  "n_layers": 6,
  "output_past": true,
  "pad_token_id": 0,
  "qa_dropout": 0.1,
  "seq_classif_dropout": 0.2,
  "sinusoidal_pos_embds": false,
  "tie_weights_": true,
  "vocab_size": 30522
})";

const char* kBertConfig = R"({
  "architectures": ["BertForSequenceClassification"],
  "hidden_act": "gelu", "hidden_size": 256, "intermediate_size": 1024,
  "layer_norm_eps": 1e-5, "max_position_embeddings": 128, "model_type": "bert",
  "num_attention_heads": 4, "num_hidden_layers": 3, "pad_token_id": 0,
  "type_vocab_size": 3, "vocab_size": 1000,
  "id2label": {"2": "c", "0": "a", "1": "b"}
})";

// The config.json of roberta-base with a 3-label head (as cardiffnlp's
// twitter-roberta-base-sentiment-latest publishes it, trimmed).
const char* kRobertaConfig = R"({
  "architectures": ["RobertaForSequenceClassification"],
  "attention_probs_dropout_prob": 0.1, "bos_token_id": 0, "eos_token_id": 2,
  "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 768,
  "id2label": {"0": "negative", "1": "neutral", "2": "positive"},
  "initializer_range": 0.02, "intermediate_size": 3072,
  "label2id": {"negative": 0, "neutral": 1, "positive": 2},
  "layer_norm_eps": 1e-05, "max_position_embeddings": 514, "model_type": "roberta",
  "num_attention_heads": 12, "num_hidden_layers": 12, "pad_token_id": 1,
  "position_embedding_type": "absolute", "type_vocab_size": 1, "vocab_size": 50265
})";

TEST(Config, ParsesDistilBertSst2) {
  auto c = parse_config(kSst2Config, "config.json");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->architecture, Architecture::kDistilBert);
  EXPECT_EQ(c->hidden_size, 768);
  EXPECT_EQ(c->num_layers, 6);
  EXPECT_EQ(c->num_heads, 12);
  EXPECT_EQ(c->head_dim(), 64);
  EXPECT_EQ(c->intermediate_size, 3072);
  EXPECT_EQ(c->vocab_size, 30522);
  EXPECT_EQ(c->type_vocab_size, 0);
  EXPECT_EQ(c->layer_norm_eps, 1e-12f);
  EXPECT_EQ(c->labels, (std::vector<std::string>{"NEGATIVE", "POSITIVE"}));
  EXPECT_FALSE(c->synthetic);
  EXPECT_EQ(c->ffn_activation, Activation::kGelu);
  EXPECT_EQ(c->head_activation(), Activation::kRelu);  // pre_classifier + ReLU
}

// What the backends apply is decided here, by the family: they never read
// `architecture` (see validate.cc and the backends).
TEST(Config, TheFamilyDecidesTheActivations) {
  std::string relu = kSst2Config;
  relu.replace(relu.find("\"activation\": \"gelu\""), 20, "\"activation\": \"relu\"");
  auto d = parse_config(relu, "config.json");
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_EQ(d->ffn_activation, Activation::kRelu);
  EXPECT_EQ(d->head_activation(), Activation::kRelu);
  EXPECT_NE(config_to_json(*d).find("\"activation\": \"relu\""), std::string::npos);
  auto b = parse_config(kBertConfig, "config.json");
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(b->ffn_activation, Activation::kGelu);
  EXPECT_EQ(b->head_activation(), Activation::kTanh);  // the pooler
  EXPECT_STREQ(activation_name(Activation::kTanh), "tanh");
}

TEST(Config, ParsesBert) {
  auto c = parse_config(kBertConfig, "config.json");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->architecture, Architecture::kBert);
  EXPECT_EQ(c->hidden_size, 256);
  EXPECT_EQ(c->num_layers, 3);
  EXPECT_EQ(c->num_heads, 4);
  EXPECT_EQ(c->intermediate_size, 1024);
  EXPECT_EQ(c->type_vocab_size, 3);
  EXPECT_EQ(c->max_position_embeddings, 128);
  EXPECT_FLOAT_EQ(c->layer_norm_eps, 1e-5f);
  EXPECT_EQ(c->labels, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(Config, ParsesEachRobertaFamily) {
  for (const char* type : {"roberta", "xlm-roberta", "camembert"}) {
    auto j = nlohmann::json::parse(kRobertaConfig);
    j["model_type"] = type;
    auto c = parse_config(j.dump(), "config.json");
    ASSERT_TRUE(c.ok()) << type << ": " << c.status().to_string();
    EXPECT_EQ(c->architecture, Architecture::kRoberta) << type;
    EXPECT_EQ(c->model_type, type);  // kept as written
    EXPECT_EQ(c->hidden_size, 768);
    EXPECT_EQ(c->num_layers, 12);
    EXPECT_EQ(c->type_vocab_size, 1);
    EXPECT_FLOAT_EQ(c->layer_norm_eps, 1e-5f);
    EXPECT_EQ(c->pad_token_id, 1);
    EXPECT_EQ(c->max_position_embeddings, 514);
    EXPECT_EQ(c->position_offset(), 2);
    EXPECT_EQ(c->max_positions(), 512);
    EXPECT_EQ(c->head_activation(), Activation::kTanh);  // classifier.dense + tanh
    EXPECT_EQ(c->labels, (std::vector<std::string>{"negative", "neutral", "positive"}));
  }
}

// HF's create_position_ids_from_input_ids: from pad + 1, counting only the
// tokens that are not the pad id; a pad id gets the pad row. BERT and
// DistilBERT number 0..len-1 whatever the ids.
TEST(Config, PositionIdsByFamily) {
  const ModelConfig roberta = parse_config(kRobertaConfig, "config.json").value();
  const std::vector<int32_t> ids = {0, 1, 7, 1, 1, 9, 2};
  std::vector<int32_t> got(ids.size());
  fill_position_ids(roberta.position_scheme(), ids.data(), int(ids.size()), got.data());
  EXPECT_EQ(got, (std::vector<int32_t>{2, 1, 3, 1, 1, 4, 5}));
  const ModelConfig bert = parse_config(kBertConfig, "config.json").value();
  EXPECT_EQ(bert.position_offset(), 0);
  EXPECT_EQ(bert.max_positions(), bert.max_position_embeddings);
  fill_position_ids(bert.position_scheme(), ids.data(), int(ids.size()), got.data());
  EXPECT_EQ(got, (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6}));
  const ModelConfig distilbert = parse_config(kSst2Config, "config.json").value();
  fill_position_ids(distilbert.position_scheme(), ids.data(), int(ids.size()), got.data());
  EXPECT_EQ(got, (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6}));
}

TEST(Config, RobertaDefaultsLikeHf) {
  // RobertaConfig's defaults (transformers 5.24): type_vocab_size 2,
  // layer_norm_eps 1e-12, 512 positions, pad 1.
  auto c = parse_config(R"({"model_type": "roberta", "vocab_size": 10, "hidden_size": 8,
                            "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 16,
                            "pad_token_id": 1})",
                        "c.json");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->type_vocab_size, 2);
  EXPECT_EQ(c->layer_norm_eps, 1e-12f);
  EXPECT_EQ(c->max_positions(), 510);
}

TEST(Config, DefaultsLikeHf) {
  auto c = parse_config(R"({"model_type": "bert", "vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 1,
                            "num_attention_heads": 2, "intermediate_size": 16})",
                        "c.json");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->type_vocab_size, 2);
  EXPECT_EQ(c->ffn_activation, Activation::kGelu);
  EXPECT_EQ(c->max_position_embeddings, 512);
  EXPECT_EQ(c->labels, (std::vector<std::string>{"LABEL_0", "LABEL_1"}));
}

struct BadCase {
  const char* what;
  std::string json;
  StatusCode code;
  const char* needle;
};

nlohmann::json sst2() {
  return nlohmann::json::parse(kSst2Config);
}
std::string without(const char* key) {
  auto j = sst2();
  j.erase(key);
  return j.dump();
}
template <typename V>
std::string with(const char* key, V v) {
  auto j = sst2();
  j[key] = v;
  return j.dump();
}

TEST(Config, ClearErrors) {
  std::vector<BadCase> cases = {
      {"not json", "{", StatusCode::kCorruption, "not valid JSON"},
      {"array", "[]", StatusCode::kCorruption, "not a JSON object"},
      {"no model_type", without("model_type"), StatusCode::kNotFound, "model_type"},
      {"gpt2", with("model_type", "gpt2"), StatusCode::kUnsupported,
       "'gpt2' is not supported (supported families: distilbert, bert, roberta, xlm-roberta, camembert, "
       "modernbert, deberta-v2)"},
      {"roberta relative", R"({"model_type": "roberta", "vocab_size": 10, "hidden_size": 8,
          "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 16,
          "position_embedding_type": "relative_key_query"})",
       StatusCode::kUnsupported, "relative_key_query"},
      {"roberta no positions", R"({"model_type": "xlm-roberta", "vocab_size": 10, "hidden_size": 8,
          "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 16, "pad_token_id": 1,
          "max_position_embeddings": 2})",
       StatusCode::kCorruption, "max_position_embeddings 2 leaves no position"},
      {"no dim", without("dim"), StatusCode::kNotFound, "'dim'"},
      {"no n_layers", without("n_layers"), StatusCode::kNotFound, "'n_layers'"},
      {"no vocab", without("vocab_size"), StatusCode::kNotFound, "'vocab_size'"},
      {"string dim", with("dim", "768"), StatusCode::kCorruption, "'dim' must be an integer"},
      {"zero heads", with("n_heads", 0), StatusCode::kCorruption, "'n_heads'"},
      {"heads not dividing", with("n_heads", 7), StatusCode::kCorruption, "not divisible"},
      {"activation", with("activation", "silu"), StatusCode::kUnsupported, "silu"},
      {"pad outside vocab", with("pad_token_id", 40000), StatusCode::kCorruption, "pad_token_id"},
      {"id2label gap", with("id2label", nlohmann::json{{"0", "a"}, {"2", "b"}}), StatusCode::kCorruption,
       "'2'"},
      {"id2label word key", with("id2label", nlohmann::json{{"x", "a"}}), StatusCode::kCorruption, "'x'"},
      {"id2label non-string", with("id2label", nlohmann::json{{"0", 1}}), StatusCode::kCorruption,
       "id2label[0]"},
      {"id2label empty", with("id2label", nlohmann::json::object()), StatusCode::kCorruption, "id2label"},
      {"problem_type unknown", with("problem_type", "ordinal_regression"), StatusCode::kCorruption,
       "'problem_type' is 'ordinal_regression'; expected single_label_classification, "
       "multi_label_classification or regression"},
      {"problem_type number", with("problem_type", 2), StatusCode::kCorruption,
       "'problem_type' must be a string"},
      {"bert abs pos", R"({"model_type": "bert", "vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 1,
          "num_attention_heads": 2, "intermediate_size": 16, "position_embedding_type": "relative_key"})",
       StatusCode::kUnsupported, "relative_key"},
      {"bert gelu_new", R"({"model_type": "bert", "vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 1,
          "num_attention_heads": 2, "intermediate_size": 16, "hidden_act": "gelu_new"})",
       StatusCode::kUnsupported, "gelu_new"},
  };
  for (const auto& c : cases) {
    auto r = parse_config(c.json, "dir/config.json");
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_EQ(r.status().code(), c.code) << c.what << ": " << r.status().to_string();
    EXPECT_NE(r.status().message().find(c.needle), std::string::npos)
        << c.what << ": " << r.status().to_string();
    EXPECT_EQ(r.status().message().rfind("dir/config.json", 0), 0u)
        << c.what << ": " << r.status().to_string();
  }
}

// problem_type decides the head's output function (engine/head.h): read,
// kept absent when absent, and written back for HF.
TEST(Config, ProblemTypeIsReadAndWrittenBack) {
  EXPECT_EQ(parse_config(kSst2Config, "config.json").value().problem_type, "");
  EXPECT_EQ(config_to_json(parse_config(kSst2Config, "config.json").value()).find("problem_type"),
            std::string::npos);
  for (const char* problem : {"single_label_classification", "multi_label_classification", "regression"}) {
    for (const char* base : {kSst2Config, kBertConfig}) {
      auto j = nlohmann::json::parse(base);
      j["problem_type"] = problem;
      ModelConfig c = parse_config(j.dump(), "config.json").value();
      EXPECT_EQ(c.problem_type, problem);
      const std::string out = config_to_json(c);
      EXPECT_EQ(nlohmann::json::parse(out)["problem_type"], problem) << out;
      EXPECT_EQ(parse_config(out, "again").value().problem_type, problem);
    }
  }
  auto null = nlohmann::json::parse(kSst2Config);
  null["problem_type"] = nullptr;  // null reads as absent
  EXPECT_EQ(parse_config(null.dump(), "config.json").value().problem_type, "");
  // As HF: single-label classification needs two labels at least.
  auto one = nlohmann::json::parse(kSst2Config);
  one["problem_type"] = "single_label_classification";
  one["id2label"] = {{"0", "score"}};
  auto refused = parse_config(one.dump(), "dir/config.json");
  EXPECT_EQ(refused.status().code(), StatusCode::kCorruption);
  EXPECT_EQ(refused.status().message(),
            "dir/config.json: 'problem_type' single_label_classification needs at least 2 labels; the config "
            "has 1");
  one["problem_type"] = "regression";
  EXPECT_EQ(parse_config(one.dump(), "config.json").value().num_labels(), 1);
}

TEST(Config, ToJsonRoundTrips) {
  for (const char* text : {kSst2Config, kBertConfig, kRobertaConfig}) {
    ModelConfig a = parse_config(text, "a").value();
    a.synthetic = true;
    a.synthetic_preset = "tiny";
    a.synthetic_seed = 7;
    a.name = "x";
    std::string out = config_to_json(a);
    auto j = nlohmann::json::parse(out);
    EXPECT_EQ(j["label2id"][a.labels[1]], 1);
    EXPECT_EQ(j["architectures"][0], a.architecture == Architecture::kBert ? "BertForSequenceClassification"
                                     : a.architecture == Architecture::kRoberta
                                         ? "RobertaForSequenceClassification"
                                         : "DistilBertForSequenceClassification");
    ModelConfig b = parse_config(out, "b").value();
    EXPECT_EQ(b.architecture, a.architecture);
    EXPECT_EQ(b.hidden_size, a.hidden_size);
    EXPECT_EQ(b.num_layers, a.num_layers);
    EXPECT_EQ(b.num_heads, a.num_heads);
    EXPECT_EQ(b.intermediate_size, a.intermediate_size);
    EXPECT_EQ(b.vocab_size, a.vocab_size);
    EXPECT_EQ(b.type_vocab_size, a.type_vocab_size);
    EXPECT_EQ(b.max_position_embeddings, a.max_position_embeddings);
    EXPECT_EQ(b.layer_norm_eps, a.layer_norm_eps);
    EXPECT_EQ(b.labels, a.labels);
    EXPECT_TRUE(b.synthetic);
    EXPECT_EQ(b.synthetic_preset, "tiny");
    EXPECT_EQ(b.synthetic_seed, 7u);
    EXPECT_EQ(b.name, "x");
    EXPECT_EQ(b.model_type, a.model_type);
    EXPECT_EQ(b.pad_token_id, a.pad_token_id);
  }
  // XLM-R and CamemBERT keep their model_type and name their own HF class.
  for (const auto& [type, cls] : {std::pair{"xlm-roberta", "XLMRobertaForSequenceClassification"},
                                  std::pair{"camembert", "CamembertForSequenceClassification"}}) {
    auto j = nlohmann::json::parse(kRobertaConfig);
    j["model_type"] = type;
    const std::string out = config_to_json(parse_config(j.dump(), "a").value());
    const auto back = nlohmann::json::parse(out);
    EXPECT_EQ(back["model_type"], type);
    EXPECT_EQ(back["architectures"][0], cls);
    EXPECT_EQ(back["type_vocab_size"], 1);
    EXPECT_EQ(back["layer_norm_eps"], 1e-5);
  }
  ModelConfig bert = parse_config(kBertConfig, "a").value();
  bert.layer_norm_eps = 1e-12f;
  EXPECT_NE(config_to_json(bert).find("\"layer_norm_eps\": 1e-12"), std::string::npos)
      << config_to_json(bert);
}

// answerdotai/ModernBERT-base's config.json (transformers 4 keys), trimmed,
// with a 2-label head.
const char* kModernBertV4 = R"({
  "architectures": ["ModernBertForSequenceClassification"], "attention_bias": false,
  "classifier_activation": "gelu", "classifier_bias": false, "classifier_pooling": "mean",
  "global_attn_every_n_layers": 3, "global_rope_theta": 160000.0, "hidden_activation": "gelu",
  "hidden_size": 768, "intermediate_size": 1152, "local_attention": 128, "local_rope_theta": 10000.0,
  "max_position_embeddings": 8192, "mlp_bias": false, "model_type": "modernbert", "norm_bias": false,
  "norm_eps": 1e-05, "num_attention_heads": 12, "num_hidden_layers": 22, "pad_token_id": 50283,
  "vocab_size": 50368, "id2label": {"0": "NEGATIVE", "1": "POSITIVE"}
})";

// The same model as transformers 5 writes its config: layer_types and rope_parameters.
nlohmann::json modernbert_v5() {
  auto j = nlohmann::json::parse(kModernBertV4);
  for (const char* legacy : {"global_attn_every_n_layers", "global_rope_theta", "local_rope_theta"})
    j.erase(legacy);
  j["layer_types"] = nlohmann::json::array();
  for (int i = 0; i < 22; ++i)
    j["layer_types"].push_back(i % 3 == 0 ? "full_attention" : "sliding_attention");
  j["rope_parameters"] = {{"full_attention", {{"rope_theta", 160000.0}, {"rope_type", "default"}}},
                          {"sliding_attention", {{"rope_theta", 10000.0}, {"rope_type", "default"}}}};
  return j;
}

TEST(Config, ModernBertConfigsOfTransformers4And5ReadAlike) {
  auto v4 = parse_config(kModernBertV4, "v4/config.json");
  ASSERT_TRUE(v4.ok()) << v4.status().to_string();
  auto v5 = parse_config(modernbert_v5().dump(), "v5/config.json");
  ASSERT_TRUE(v5.ok()) << v5.status().to_string();
  for (const ModelConfig* c : {&*v4, &*v5}) {
    EXPECT_EQ(c->architecture, Architecture::kModernBert);
    EXPECT_EQ(c->norm_placement, NormPlacement::kPre);
    EXPECT_FALSE(c->position_table);
    EXPECT_TRUE(c->glu);
    EXPECT_TRUE(c->head_norm);
    EXPECT_TRUE(c->head_mean_pooling);
    EXPECT_FALSE(c->attention_bias || c->mlp_bias || c->norm_bias || c->head_bias);
    EXPECT_EQ(c->max_positions(), 8192);
    EXPECT_EQ(c->type_vocab_size, 0);
    EXPECT_FLOAT_EQ(c->layer_norm_eps, 1e-5f);
    EXPECT_EQ(c->head_activation(), Activation::kGelu);
    ASSERT_EQ(c->attention_window.size(), 22u);
    ASSERT_EQ(c->rope_theta.size(), 22u);
    for (int i = 0; i < 22; ++i) {
      EXPECT_EQ(c->global_layer(i), i % 3 == 0) << i;
      EXPECT_EQ(c->attention_window[size_t(i)], i % 3 == 0 ? 0 : 64) << i;
      EXPECT_EQ(c->rope_theta[size_t(i)], i % 3 == 0 ? 160000.0 : 10000.0) << i;
    }
    EXPECT_STREQ(hf_classifier_class(*c), "ModernBertForSequenceClassification");
  }
  // The legacy keys are read, not HF's defaults assumed.
  auto legacy = nlohmann::json::parse(kModernBertV4);
  legacy["global_attn_every_n_layers"] = 2;
  legacy["global_rope_theta"] = 50000.0;
  legacy["local_rope_theta"] = 2000.0;
  legacy["local_attention"] = 32;
  auto odd = parse_config(legacy.dump(), "legacy/config.json");
  ASSERT_TRUE(odd.ok()) << odd.status().to_string();
  for (int i = 0; i < 22; ++i) {
    EXPECT_EQ(odd->attention_window[size_t(i)], i % 2 == 0 ? 0 : 16) << i;
    EXPECT_EQ(odd->rope_theta[size_t(i)], i % 2 == 0 ? 50000.0 : 2000.0) << i;
  }
  // What config_to_json writes reads back as the same model.
  auto again = parse_config(config_to_json(*v4), "again/config.json");
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(again->attention_window, v4->attention_window);
  EXPECT_EQ(again->rope_theta, v4->rope_theta);
  EXPECT_EQ(again->head_mean_pooling, v4->head_mean_pooling);
}

TEST(Config, ModernBertRefusesWhatItDoesNotComputeByName) {
  struct Case {
    const char* key;
    nlohmann::json value;
    StatusCode code;
    const char* needle;
  };
  const Case cases[] = {
      {"hidden_activation", "silu", StatusCode::kUnsupported, "'hidden_activation' is 'silu'"},
      {"classifier_activation", "gelu_new", StatusCode::kUnsupported,
       "'classifier_activation' is 'gelu_new'"},
      {"classifier_pooling", "max", StatusCode::kUnsupported, "classifier_pooling 'max'"},
      {"rope_scaling", {{"rope_type", "yarn"}, {"factor", 4.0}}, StatusCode::kUnsupported, "rope_scaling"},
      {"rope_parameters",
       {{"full_attention", {{"rope_theta", 1e6}, {"rope_type", "linear"}, {"factor", 2.0}}}},
       StatusCode::kUnsupported,
       "rope_parameters.full_attention.factor"},
      {"layer_types", nlohmann::json::array({"full_attention"}), StatusCode::kCorruption,
       "one type per layer"},
      {"norm_bias", "yes", StatusCode::kCorruption, "'norm_bias' must be true or false"},
      {"head_dim", 32, StatusCode::kUnsupported, "head_dim 32"},
  };
  for (const Case& c : cases) {
    auto j = nlohmann::json::parse(kModernBertV4);
    j[c.key] = c.value;
    auto r = parse_config(j.dump(), "dir/config.json");
    ASSERT_FALSE(r.ok()) << c.key;
    EXPECT_EQ(r.status().code(), c.code) << c.key << ": " << r.status().to_string();
    EXPECT_NE(r.status().message().find(c.needle), std::string::npos)
        << c.key << ": " << r.status().to_string();
  }
  auto types = modernbert_v5();
  types["layer_types"][4] = "chunked_attention";
  auto r = parse_config(types.dump(), "dir/config.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("layer_types[4] is \"chunked_attention\""), std::string::npos)
      << r.status().to_string();
}

// DeBERTa-v3-base's config.json as microsoft publishes it.
constexpr const char* kDebertaV3Base = R"json({
  "model_type": "deberta-v2", "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu",
  "hidden_dropout_prob": 0.1, "hidden_size": 768, "initializer_range": 0.02, "intermediate_size": 3072,
  "max_position_embeddings": 512, "relative_attention": true, "position_buckets": 256,
  "norm_rel_ebd": "layer_norm", "share_att_key": true, "pos_att_type": "p2c|c2p", "layer_norm_eps": 1e-7,
  "max_relative_positions": -1, "position_biased_input": false, "num_attention_heads": 12,
  "num_hidden_layers": 12, "type_vocab_size": 0, "vocab_size": 128100})json";

TEST(Config, DebertaV3ReadsItsDisentangledAttention) {
  auto r = parse_config(kDebertaV3Base, "dir/config.json");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->architecture, Architecture::kDebertaV2);
  EXPECT_TRUE(r->relative_attention);
  EXPECT_TRUE(r->c2p);
  EXPECT_TRUE(r->p2c);
  EXPECT_EQ(r->position_buckets, 256);
  EXPECT_EQ(r->max_relative_positions, 512);  // -1: max_position_embeddings
  EXPECT_EQ(r->relative_span(), 256);
  EXPECT_TRUE(r->share_att_key);
  EXPECT_TRUE(r->norm_relative_embeddings);
  EXPECT_FALSE(r->position_table);
  EXPECT_EQ(r->type_vocab_size, 0);
  EXPECT_FLOAT_EQ(r->layer_norm_eps, 1e-7f);
  EXPECT_EQ(r->head_activation(), Activation::kGelu);  // pooler_hidden_act's default
  EXPECT_EQ(architecture_name(*r), "DebertaV2ForSequenceClassification");
  struct Case {
    const char* key;
    nlohmann::json value;
    const char* needle;
  };
  const Case refused[] = {
      {"conv_kernel_size", 3, "conv_kernel_size 3"},
      {"pos_att_type", "p2p|c2p", "pos_att_type 'p2p'"},
      {"norm_rel_ebd", "layer_norm|batch_norm", "norm_rel_ebd 'batch_norm'"},
      {"pooler_hidden_size", 1024, "pooler_hidden_size 1024"},
      {"pooler_hidden_act", "gelu_fast", "'pooler_hidden_act' is 'gelu_fast'"},
      {"attention_head_size", 32, "attention_head_size 32"},
  };
  for (const Case& c : refused) {
    auto j = nlohmann::json::parse(kDebertaV3Base);
    j[c.key] = c.value;
    auto bad = parse_config(j.dump(), "dir/config.json");
    ASSERT_FALSE(bad.ok()) << c.key;
    EXPECT_EQ(bad.status().code(), StatusCode::kUnsupported) << c.key;
    EXPECT_NE(bad.status().message().find(c.needle), std::string::npos) << bad.status().to_string();
  }
  auto v1 = nlohmann::json::parse(kDebertaV3Base);
  v1["model_type"] = "deberta";
  auto refused_v1 = parse_config(v1.dump(), "dir/config.json");
  ASSERT_FALSE(refused_v1.ok());
  EXPECT_NE(refused_v1.status().message().find("DeBERTa v1"), std::string::npos)
      << refused_v1.status().to_string();
}

// The relative embedding row of every delta q - k within 511, against
// transformers' own build_relative_position (tools/gen_deberta_models.py) for
// the tiny models' settings and DeBERTa-v3-base's (256 log buckets over 512
// positions).
TEST(Config, RelativePositionIndexIsTransformers) {
  std::ifstream in(std::string(INFERCOST_TEST_DATA_DIR) + "/golden/deberta-relative-index.json");
  ASSERT_TRUE(in) << "deberta-relative-index.json";
  const auto doc = nlohmann::json::parse(in);
  const int max_delta = doc["max_delta"];
  ASSERT_EQ(doc["settings"].size(), 4u);
  for (const auto& s : doc["settings"]) {
    ModelConfig c;
    c.architecture = Architecture::kDebertaV2;
    c.relative_attention = true;
    c.position_buckets = std::max(0, s["position_buckets"].get<int>());
    c.max_relative_positions = s["max_relative_positions"];
    const auto& want = s["index"];
    ASSERT_EQ(want.size(), size_t(2 * max_delta + 1));
    int mismatches = 0;
    for (int d = -max_delta; d <= max_delta; ++d) {
      const int expected = want[size_t(d + max_delta)];
      if (relative_position_index(c, d) != expected && ++mismatches <= 5) {
        ADD_FAILURE() << s["name"] << ": delta " << d << " gives " << relative_position_index(c, d)
                      << ", transformers " << expected;
      }
    }
    EXPECT_EQ(mismatches, 0) << s["name"];
  }
}

}  // namespace
}  // namespace infercost::model
