// The registry of model families (src/model/family.h): each model_type is
// found, each family's data is what the former per-family switches gave, and
// each preset's config.json reads back as the same family.
#include "model/family.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "model/checkpoint_names.h"
#include "model/synth.h"

namespace infercost::model {
namespace {

TEST(Family, EveryModelTypeIsFoundOnceAndListed) {
  std::set<std::string_view> seen;
  std::string listed;
  for (const Family* f : families()) {
    ASSERT_FALSE(f->model_types.empty());
    ASSERT_NE(f->weights.names, nullptr);
    ASSERT_NE(f->config.read, nullptr);
    ASSERT_NE(f->config.write, nullptr);
    ASSERT_NE(f->synth.make_tokenizer, nullptr);
    for (const FamilyModelType& t : f->model_types) {
      EXPECT_TRUE(seen.insert(t.model_type).second) << t.model_type;
      EXPECT_EQ(find_family(t.model_type), f) << t.model_type;
      EXPECT_TRUE(is_classifier_class(t.classifier_class)) << t.classifier_class;
      listed += (listed.empty() ? "" : ", ") + std::string(t.model_type);
    }
    ModelConfig c;
    c.architecture = f->architecture;
    EXPECT_EQ(&family_of(c), f);
  }
  EXPECT_EQ(supported_model_types(), listed);
  EXPECT_EQ(supported_model_types(),
            "distilbert, bert, roberta, xlm-roberta, camembert, modernbert, deberta-v2");
  EXPECT_EQ(find_family("gpt2"), nullptr);
  EXPECT_EQ(find_family("deberta"), nullptr);  // DeBERTa v1: refused with a message of its own
}

// What ModelConfig's accessors switched on the family for, now the family's data.
TEST(Family, HeadActivationAndPositionsAreTheFamilysData) {
  struct Case {
    std::string_view model_type;
    Activation head;
    int offset;  // with pad_token_id 1
  };
  for (const Case& k : {Case{"distilbert", Activation::kRelu, 0}, Case{"bert", Activation::kTanh, 0},
                        Case{"roberta", Activation::kTanh, 2}, Case{"xlm-roberta", Activation::kTanh, 2},
                        Case{"camembert", Activation::kTanh, 2}}) {
    ModelConfig c;
    c.pad_token_id = 1;
    apply_family(*find_family(k.model_type), c);
    EXPECT_EQ(c.head_activation(), k.head) << k.model_type;
    EXPECT_EQ(c.position_offset(), k.offset) << k.model_type;
    EXPECT_EQ(c.position_scheme().first, k.offset) << k.model_type;
    EXPECT_EQ(c.position_scheme().pad_id, k.offset > 0 ? 1 : -1) << k.model_type;
    EXPECT_FALSE(c.token_head_pre) << k.model_type;
  }
  for (std::string_view type : {"modernbert", "deberta-v2"}) {
    ModelConfig c;
    c.classifier_activation = Activation::kGelu;  // read from config.json
    apply_family(*find_family(type), c);
    EXPECT_EQ(c.head_activation(), Activation::kGelu) << type;
    EXPECT_EQ(c.position_offset(), 0) << type;
    // ModernBERT's token classifier runs its head on each token first.
    EXPECT_EQ(c.token_head_pre, type == "modernbert") << type;
  }
}

// A refused model_type is no family's, and its error is the family's own
// message (DeBERTa v1's), not the list of those supported.
TEST(Family, RefusedModelTypesSayWhy) {
  int refused = 0;
  for (const Family* f : families()) {
    for (const RefusedModelType& r : f->refused_model_types) {
      ++refused;
      EXPECT_EQ(find_family(r.model_type), nullptr) << r.model_type;
      const Status s = unsupported_model_type(std::string(r.model_type), "dir/config.json");
      EXPECT_EQ(s.code(), StatusCode::kUnsupported) << r.model_type;
      EXPECT_EQ(s.message(), "dir/config.json: " + std::string(r.message)) << r.model_type;
    }
  }
  EXPECT_EQ(refused, 1);
  EXPECT_EQ(unsupported_model_type("deberta", "dir/config.json").message(),
            "dir/config.json: model_type 'deberta' (DeBERTa v1) is not supported; DeBERTa-v2 and -v3 "
            "(model_type deberta-v2) are");
  EXPECT_EQ(unsupported_model_type("gpt2", "dir/config.json").message(),
            "dir/config.json: model_type 'gpt2' is not supported (supported families: " +
                supported_model_types() + ")");
}

// An Architecture no enumerator names (only a cast makes one) has no family:
// a broken invariant, not a silent default.
TEST(FamilyDeathTest, AnArchitectureWithoutAFamilyAborts) {
  ModelConfig c;
  c.architecture = static_cast<Architecture>(99);
  EXPECT_DEATH(family_of(c), "names a family");
}

// The checkpoint names each family writes its prefix once in: the whole
// names of the embeddings and layers, as HF's checkpoints spell them.
TEST(Family, CheckpointNamesUnderTheirPrefix) {
  struct Case {
    std::string_view model_type, embeddings, layer2;
  };
  for (const Case& k : {Case{"distilbert", "distilbert.embeddings.", "distilbert.transformer.layer.2."},
                        Case{"bert", "bert.embeddings.", "bert.encoder.layer.2."},
                        Case{"roberta", "roberta.embeddings.", "roberta.encoder.layer.2."},
                        Case{"modernbert", "model.embeddings.", "model.layers.2."},
                        Case{"deberta-v2", "deberta.embeddings.", "deberta.encoder.layer.2."}}) {
    const CheckpointNames& n = *find_family(k.model_type)->weights.names;
    EXPECT_EQ(n.embeddings_prefix(), k.embeddings) << k.model_type;
    EXPECT_EQ(n.layer_prefix(2), k.layer2) << k.model_type;
  }
}

TEST(Family, EveryPresetReadsBackAsItsFamily) {
  for (const std::string& preset : synth_presets()) {
    const ModelConfig c = synth_config(preset).value();
    const Family& family = family_of(c);
    EXPECT_EQ(find_family(c.model_type), &family) << preset;
    const Result<ModelConfig> back = parse_config(config_to_json(c), preset);
    ASSERT_TRUE(back.ok()) << preset << ": " << back.status().to_string();
    EXPECT_EQ(back->architecture, c.architecture) << preset;
    EXPECT_EQ(back->model_type, c.model_type) << preset;
    EXPECT_EQ(back->head_activation(), c.head_activation()) << preset;
    EXPECT_EQ(back->position_offset(), c.position_offset()) << preset;
    EXPECT_EQ(std::string(hf_classifier_class(*back)), hf_classifier_class(c)) << preset;
  }
}

}  // namespace
}  // namespace infercost::model
