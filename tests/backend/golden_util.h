// Replays goldens written by tools/gen_model_golden.py: HF transformers fp32
// logits for token-id inputs, compared with our CPU backend.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "model/config.h"
#include "model/model_dir.h"
#include "model/safetensors.h"
#include "model/synth.h"
#include "model/weights.h"

namespace infercost::backend::testing {

struct GoldenCase {
  std::vector<int32_t> ids;
  std::vector<double> logits;
};

struct Golden {
  nlohmann::json doc;
  std::vector<GoldenCase> cases;
  double tolerance = 1e-4;
};

inline Golden load_golden(const std::string& path) {
  Golden g;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  g.doc = nlohmann::json::parse(ss.str());
  g.tolerance = g.doc.value("tolerance_abs", 1e-4);
  for (const auto& c : g.doc.at("cases")) {
    g.cases.push_back(
        {c.at("input_ids").get<std::vector<int32_t>>(), c.at("logits").get<std::vector<double>>()});
  }
  return g;
}

// `cases` of g's cases of at most `max_ids` ids (0: any), evenly spaced
// through the file; all of those where there are no more.
inline Golden some_cases(const Golden& g, size_t cases, size_t max_ids) {
  Golden out;
  out.doc = g.doc;
  out.tolerance = g.tolerance;
  for (const GoldenCase& c : g.cases) {
    if (max_ids == 0 || c.ids.size() <= max_ids) out.cases.push_back(c);
  }
  if (cases == 0 || out.cases.size() <= cases) return out;
  std::vector<GoldenCase> spaced;
  for (size_t i = 0; i < cases; ++i) spaced.push_back(out.cases[i * out.cases.size() / cases]);
  out.cases = std::move(spaced);
  return out;
}

// Config and weights through the model module's own reader.
inline void load_model(const std::string& dir, model::ModelConfig& config, model::EncoderWeights& weights) {
  auto c = model::load_config(dir + "/config.json");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  config = *c;
  auto file = model::SafeTensorsFile::open(dir + "/model.safetensors");
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  auto w = model::read_encoder_weights(*file, config);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  weights = std::move(w).value();
}

// Synthesizes `preset` (seed 1) into `dir`, loads it, and removes `dir`.
inline void synthesize_and_load(const std::string& preset, const std::string& dir, model::ModelConfig& config,
                                model::EncoderWeights& weights) {
  std::filesystem::remove_all(dir);
  model::SynthOptions opts;
  opts.out_dir = dir;
  opts.preset = preset;
  opts.seed = 1;
  const Status st = model::synthesize_model(opts);
  ASSERT_TRUE(st.ok()) << st.to_string();
  ASSERT_NO_FATAL_FAILURE(load_model(dir, config, weights));
  std::filesystem::remove_all(dir);
}

// Runs the cases in `order`, `chunk` rows per TokenBatch (each padded to its
// longest row with a pad id that must not matter, and computed where
// `compute_padding`), returns max |ours - HF|.
inline double max_diff(Backend& backend, const Golden& g, const std::vector<size_t>& order, size_t chunk,
                       int labels, bool compute_padding = false) {
  double worst = 0;
  for (size_t start = 0; start < order.size(); start += chunk) {
    const size_t end = std::min(order.size(), start + chunk);
    TokenBatch b;
    b.batch = int(end - start);
    b.compute_padding = compute_padding;
    for (size_t i = start; i < end; ++i) b.seq_len = std::max(b.seq_len, int(g.cases[order[i]].ids.size()));
    for (size_t i = start; i < end; ++i) {
      const auto& ids = g.cases[order[i]].ids;
      b.lengths.push_back(int32_t(ids.size()));
      b.ids.insert(b.ids.end(), ids.begin(), ids.end());
      b.ids.insert(b.ids.end(), size_t(b.seq_len) - ids.size(), 1);
    }
    auto got = backend.forward(b);
    EXPECT_TRUE(got.ok()) << got.status().to_string();
    if (!got.ok()) return INFINITY;
    EXPECT_EQ(got->width, labels);
    for (size_t i = start; i < end; ++i) {
      const auto& want = g.cases[order[i]].logits;
      EXPECT_EQ(want.size(), size_t(labels));
      for (int l = 0; l < labels && l < int(want.size()); ++l) {
        worst = std::max(
            worst, std::abs(double(got->values[(i - start) * size_t(labels) + size_t(l)]) - want[size_t(l)]));
      }
    }
  }
  return worst;
}

// All at once, one by one (where `one_by_one`), shuffled in batches of 7 (of
// half the cases, when fewer than 14), and the same with the padding
// computed; each within
// `tolerance` of HF. Prints the differences for the report.
// one_by_one: also every case alone; padded: also the shuffled chunks with
// their padding computed (seed batching); shuffled_too: the shuffled chunks.
inline void check_all_batchings(const std::string& name, Backend& backend, int labels, const Golden& g,
                                double tolerance, bool one_by_one = true, bool padded_too = true,
                                bool shuffled_too = true) {
  ASSERT_GE(g.cases.size(), 6u);
  std::vector<size_t> order(g.cases.size());
  std::iota(order.begin(), order.end(), 0);
  const double all = max_diff(backend, g, order, order.size(), labels);
  const double single = one_by_one ? max_diff(backend, g, order, 1, labels) : 0.0;
  std::mt19937 rng(9);
  std::shuffle(order.begin(), order.end(), rng);
  const size_t chunk = std::min<size_t>(7, order.size() / 2);  // more than one batch
  const double shuffled = shuffled_too ? max_diff(backend, g, order, chunk, labels) : 0.0;
  const double padded =
      padded_too ? max_diff(backend, g, order, chunk, labels, /*compute_padding=*/true) : 0.0;
  char single_text[32] = "skipped", padded_text[32] = "skipped", shuffled_text[32] = "skipped";
  if (one_by_one) std::snprintf(single_text, sizeof(single_text), "%.3g", single);
  if (padded_too) std::snprintf(padded_text, sizeof(padded_text), "%.3g", padded);
  if (shuffled_too) std::snprintf(shuffled_text, sizeof(shuffled_text), "%.3g", shuffled);
  std::printf(
      "[golden] %s: %zu cases, max |logit diff| all-at-once %.3g, one-by-one %s, shuffled-by-%zu %s, "
      "padding computed %s (tolerance %.3g)\n",
      name.c_str(), g.cases.size(), all, single_text, chunk, shuffled_text, padded_text, tolerance);
  ::testing::Test::RecordProperty("max_abs_diff", std::to_string(std::max({all, single, shuffled, padded})));
  EXPECT_LE(all, tolerance);
  EXPECT_LE(single, tolerance);
  EXPECT_LE(shuffled, tolerance);
  EXPECT_LE(padded, tolerance);
}

// The same on a `device` backend (fp32) made and prepared here, within the
// golden's own tolerance.
inline void check_all_batchings(const std::string& name, const model::ModelConfig& config,
                                const model::EncoderWeights& weights, const Golden& g, bool one_by_one = true,
                                const std::string& device = "cpu", bool padded_too = true,
                                bool shuffled_too = true) {
  auto created = create_backend(device, BackendOptions{});
  ASSERT_TRUE(created.ok()) << created.status().to_string();
  auto backend = std::move(created).value();
  const Status st = backend->prepare(config, weights);
  ASSERT_TRUE(st.ok()) << st.to_string();
  ASSERT_GE(g.cases.size(), 50u);
  check_all_batchings(name, *backend, config.num_labels(), g, g.tolerance, one_by_one, padded_too,
                      shuffled_too);
}

}  // namespace infercost::backend::testing
