// Replaying tokenizer golden files ({"v": variant, "t": text, "ids": [...]}
// per line, written by the tools/gen_*_golden.py oracles) through the
// Tokenizer interface, on one thread or on every hardware thread at once.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "text/tokenizer.h"

namespace infercost::text::golden {

struct Case {
  std::string variant;
  std::string text;
  std::vector<int32_t> ids;
};

// Every line of `path`; a file that cannot be opened gives none (and fails the test).
inline std::vector<Case> read_cases(const std::string& path) {
  std::vector<Case> cases;
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot open " << path;
  std::string line;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    cases.push_back({j.at("v").get<std::string>(), j.at("t").get<std::string>(),
                     j.at("ids").get<std::vector<int32_t>>()});
  }
  return cases;
}

// The goldens a tools/ generator writes: runs `INFERCOST_PYTHON tools/SCRIPT
// ARGS --out-dir DIR` into a temporary folder, reads DIR/FILE and removes the
// folder (generated ids belong in no commit; the build's Python, build/pyenv,
// has transformers). Empty, with *why_not saying why (the generator's log),
// when it fails.
inline std::vector<Case> generate_cases(const std::string& script, const std::string& args,
                                        const std::string& file, std::string* why_not) {
  char tmpl[] = "/tmp/infercost-golden-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) {
    *why_not = "cannot make a temporary folder";
    return {};
  }
  const std::string dir = tmpl;
  const std::string root = std::string(INFERCOST_TEST_DATA_DIR) + "/../..";
  const std::string cmd = std::string("'") + INFERCOST_PYTHON + "' '" + root + "/tools/" + script + "' " +
                          args + " --out-dir '" + dir + "' > '" + dir + "/log' 2>&1";
  std::vector<Case> cases;
  if (std::system(cmd.c_str()) == 0) {
    cases = read_cases(dir + "/" + file);
  } else {
    std::ifstream log(dir + "/log");
    const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    *why_not = "tools/" + script + " failed: " + (text.empty() ? std::string("(no log)") : text);
  }
  std::filesystem::remove_all(dir);
  return cases;
}

// The goldens of FILE: INFERCOST_GOLDENS_DIR/FILE (build/goldens) where ctest's
// setup test made it (made once per build, or by a build sharing the folder:
// infercost_generated_golden in tests/CMakeLists.txt), else generated here by
// generate_cases (a test run on its own).
inline std::vector<Case> generated_cases(const std::string& script, const std::string& args,
                                         const std::string& file, std::string* why_not) {
  const std::string made = std::string(INFERCOST_GOLDENS_DIR) + "/" + file;
  if (std::filesystem::exists(made)) return read_cases(made);
  return generate_cases(script, args, file, why_not);
}

// The tokenizer of a variant, or null to skip its cases.
using TokenizerOf = std::function<const Tokenizer*(const std::string& variant)>;

// Number of cases whose ids differ from the golden ones; with `report`, the
// first ten are reported as failures.
inline size_t replay(const std::vector<Case>& cases, const TokenizerOf& tokenizer_of, bool report) {
  size_t mismatches = 0;
  std::vector<int32_t> ids;
  for (const Case& c : cases) {
    const Tokenizer* tok = tokenizer_of(c.variant);
    if (tok == nullptr) continue;
    ids.clear();
    auto n = tok->encode_append(c.text, ids);
    if (n.ok() && *n == ids.size() && ids == c.ids) continue;  // the count encode_append returns too
    ++mismatches;
    if (report && mismatches <= 10) {
      ADD_FAILURE() << "variant " << c.variant << ", text " << nlohmann::json(c.text).dump()
                    << "\n  expected " << nlohmann::json(c.ids).dump() << "\n  got      "
                    << (n.ok() ? nlohmann::json(ids).dump() : n.status().to_string());
    }
  }
  return mismatches;
}

// The same on every hardware thread (at least two) at once, the tokenizers
// shared: the total number of mismatches.
inline size_t replay_on_all_threads(const std::vector<Case>& cases, const TokenizerOf& tokenizer_of,
                                    unsigned* n_threads_out = nullptr) {
  const unsigned n_threads = std::max(2u, std::thread::hardware_concurrency());
  if (n_threads_out) *n_threads_out = n_threads;
  std::atomic<size_t> mismatches{0};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < n_threads; ++t) {
    threads.emplace_back([&] { mismatches += replay(cases, tokenizer_of, false); });
  }
  for (auto& t : threads) t.join();
  return mismatches.load();
}

// How many "default" cases there are, and how many of them were cut at 512
// ids: a golden test checks both, so that a short file cannot pass.
struct DefaultCounts {
  size_t rows = 0, truncated = 0;
};
inline DefaultCounts count_default(const std::vector<Case>& cases) {
  DefaultCounts n;
  for (const Case& c : cases) {
    n.rows += c.variant == "default";
    n.truncated += c.variant == "default" && c.ids.size() == 512;
  }
  return n;
}

}  // namespace infercost::text::golden
