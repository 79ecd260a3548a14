// The RoBERTa family end to end, as a user meets it: HF-saved model
// directories (RoBERTa with byte-level BPE, a multi-label RoBERTa, XLM-R with
// Unigram, CamemBERT with its Unigram layout: <s>/</s> at 5/6, the *NOTUSED
// tokens) through `infercost run` and the model directory's tokenizer, against
// what HF transformers' text-classification pipeline gives for the same texts
// (tests/data_files/golden/family.json, tools/gen_family_golden.py). The same
// for the tiny ModernBERT directories (byte-level BPE with NFC, `[CLS] $A
// [SEP]`; tests/data_files/golden/modernbert-texts.json,
// tools/gen_modernbert_models.py) and the tiny DeBERTa-v3 directories
// (Unigram in DebertaV2Tokenizer's pipeline; deberta-texts.json,
// tools/gen_deberta_models.py), run at the length the model gives.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "model/model_dir.h"
#include "test_utils.h"

namespace infercost {
namespace {

using testing::slurp;
using testing::TempDir;

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

int run(const std::string& args, std::string* output) {
  TempDir scratch;
  const std::string log = scratch.file("log");
  const std::string cmd = std::string(INFERCOST_BINARY_DIR) + "/infercost " + args + " > " + log + " 2>&1";
  const int status = std::system(cmd.c_str());
  *output = slurp(log);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A golden file and how many models it holds.
struct FamilyGolden {
  std::string file;
  size_t models;
};

void PrintTo(const FamilyGolden& g, std::ostream* os) {
  *os << g.file;
}

class FamilyTest : public ::testing::TestWithParam<FamilyGolden> {
 protected:
  void SetUp() override {
    const std::string path = std::string(INFERCOST_TEST_DATA_DIR) + "/golden/" + GetParam().file;
    std::ifstream in(path);
    ASSERT_TRUE(in) << path;
    golden_ = nlohmann::json::parse(in);
    // modernbert-texts.json and deberta-texts.json name their models by key and have no max_length:
    // the model's own (its tokenizer's model_max_length) is what both ran.
    if (golden_["models"].is_object()) {
      nlohmann::json list = nlohmann::json::array();
      for (auto& [name, m] : golden_["models"].items()) {
        m["dir"] = name;
        list.push_back(m);
      }
      golden_["models"] = list;
    }
    ASSERT_EQ(golden_["models"].size(), GetParam().models);
  }
  nlohmann::json golden_;
};

INSTANTIATE_TEST_SUITE_P(Goldens, FamilyTest,
                         ::testing::Values(FamilyGolden{"family.json", 4},
                                           FamilyGolden{"modernbert-texts.json", 3},
                                           FamilyGolden{"deberta-texts.json", 3}),
                         [](const ::testing::TestParamInfo<FamilyGolden>& info) {
                           if (info.param.file == "family.json") return std::string("RobertaFamily");
                           return info.param.file == "deberta-texts.json" ? std::string("Deberta")
                                                                          : std::string("ModernBert");
                         });

TEST_P(FamilyTest, TheModelDirectoriesTokenizeAsHf) {
  size_t texts = 0;
  for (const auto& m : golden_["models"]) {
    const std::string dir = std::string(INFERCOST_TEST_DATA_DIR) + "/golden/" + m["dir"].get<std::string>();
    model::LoadOptions options;
    options.load_weights = false;
    auto loaded = model::load_model_dir(dir, options);
    ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
    if (m.contains("max_length")) {
      EXPECT_EQ(loaded->tokenizer->max_length(), m["max_length"].get<int>()) << dir;
    }
    for (size_t i = 0; i < golden_["texts"].size(); ++i) {
      const std::string text = golden_["texts"][i];
      auto ids = loaded->tokenizer->encode(text);
      ASSERT_TRUE(ids.ok()) << ids.status().to_string();
      EXPECT_EQ(nlohmann::json(*ids), m["ids"][i]) << dir << ": text " << i << " '" << text << "'";
      ++texts;
    }
  }
  EXPECT_EQ(texts, GetParam().models * golden_["texts"].size());
}

TEST_P(FamilyTest, RunGivesHfsProbabilitiesLabelsAndMultiLabelLabels) {
  TempDir work;
  std::string input;
  for (const auto& t : golden_["texts"]) input += nlohmann::json{{"full_text", t}}.dump() + "\n";
  const std::string in = work.write("in.jsonl", input);
  const double tolerance = golden_["tolerance_abs"];
  double worst = 0;
  for (const auto& m : golden_["models"]) {
    const std::string name = m["dir"];
    SCOPED_TRACE(name);
    const std::string dir = std::string(INFERCOST_TEST_DATA_DIR) + "/golden/" + name;
    const std::string out = work.file(name + ".jsonl");
    std::string log;
    // The tiny RoBERTa models have fewer than the default 512 positions.
    const std::string max_length =
        m.contains("max_length") ? " --max-length " + std::to_string(m["max_length"].get<int>()) : "";
    ASSERT_EQ(run("run " + in + " --model " + dir + max_length +
                      " --precision fp32 --threads 2 --no-text -o " + out,
                  &log),
              0)
        << log;
    std::ifstream rows(out);
    std::string line;
    std::vector<std::string> labels;
    for (const auto& l : m["labels"]) labels.push_back(l);
    const bool multi = m["function"] == "sigmoid" && labels.size() > 1;
    size_t r = 0;
    for (; std::getline(rows, line); ++r) {
      ASSERT_LT(r, m["scores"].size());
      const auto row = nlohmann::json::parse(line);
      const auto& want = m["scores"][r];
      size_t top = 0;
      for (size_t k = 0; k < labels.size(); ++k) {
        const double got = row.at(lowercase(labels[k])).get<double>(), hf = want[k].get<double>();
        EXPECT_NEAR(got, hf, tolerance) << "row " << r << " label " << labels[k];
        worst = std::max(worst, std::abs(got - hf));
        if (hf > want[top].get<double>()) top = k;
      }
      std::vector<double> sorted;
      for (const auto& v : want) sorted.push_back(v);
      std::sort(sorted.rbegin(), sorted.rend());
      if (sorted.size() < 2 || sorted[0] - sorted[1] > 1e-4) {
        EXPECT_EQ(row.at("label"), labels[top]) << "row " << r;
      }
      if (multi) {
        std::string above;
        bool clear = true;
        for (size_t k = 0; k < labels.size(); ++k) {
          const double hf = want[k].get<double>();
          clear = clear && std::abs(hf - 0.5) > 1e-4;
          if (hf >= 0.5) above += (above.empty() ? "" : ",") + labels[k];
        }
        if (clear) {
          EXPECT_EQ(row.at("labels"), above) << "row " << r;
        }
      } else {
        EXPECT_FALSE(row.contains("labels")) << "row " << r;
      }
    }
    EXPECT_EQ(r, m["scores"].size());
  }
  std::printf("%s end to end: %zu models x %zu texts, max |ours - HF| %.3g\n", GetParam().file.c_str(),
              GetParam().models, golden_["texts"].size(), worst);
}

}  // namespace
}  // namespace infercost
