// Single-threaded byte-level BPE throughput: encodes every text of a JSON
// lines file ({"t": text}; lines with a "v" other than "default" are skipped)
// with roberta-base's tokenizer, truncation 512, or a tokenizer.json
// (ModernBERT's) truncating at MAX_LENGTH, special tokens added; best of 3
// passes of `reps` rounds each. bench/tokenizer_speed.sh runs it beside HF.
//
//   tokenizer_speed_bench VOCAB_JSON MERGES_TXT TEXTS_JSONL [REPS]
//   tokenizer_speed_bench --json TOKENIZER_JSON MAX_LENGTH TEXTS_JSONL [REPS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "text/bpe.h"
#include "text/bpe_json.h"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s VOCAB_JSON MERGES_TXT TEXTS_JSONL [REPS]\n", argv[0]);
    return 2;
  }
  const bool json = std::string(argv[1]) == "--json";
  if (json) ++argv, --argc;
  if (argc < 4) {
    std::fprintf(stderr, "usage: --json TOKENIZER_JSON MAX_LENGTH TEXTS_JSONL [REPS]\n");
    return 2;
  }
  const int reps = argc > 4 ? std::atoi(argv[4]) : 5;
  auto tok = [&]() -> infercost::Result<std::unique_ptr<infercost::text::BpeTokenizer>> {
    if (!json) return infercost::text::BpeTokenizer::load_files(argv[1], argv[2], 512);
    std::ifstream file(argv[1]);
    const auto root = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
    return infercost::text::bpe_from_tokenizer_json(root, argv[1], std::atoi(argv[2]));
  }();
  if (!tok.ok()) {
    std::fprintf(stderr, "%s\n", tok.status().to_string().c_str());
    return 3;
  }
  std::vector<std::string> texts;
  std::ifstream in(argv[3]);
  std::string line;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    if (j.value("v", "default") == "default") texts.push_back(j.at("t").get<std::string>());
  }
  if (texts.empty()) {
    std::fprintf(stderr, "%s: no texts\n", argv[3]);
    return 3;
  }
  std::vector<int32_t> ids;
  double best_s = 1e30;
  size_t tokens = 0;
  for (int pass = 0; pass < 3; ++pass) {
    tokens = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) {
      for (const std::string& t : texts) {
        ids.clear();
        auto n = (*tok)->encode_append(t, ids);
        if (!n.ok()) {
          std::fprintf(stderr, "%s\n", n.status().to_string().c_str());
          return 3;
        }
        tokens += *n;
      }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s < best_s) best_s = s;
  }
  std::printf("infercost texts=%zu reps=%d tokens=%zu seconds=%.4f tokens_per_s=%.0f\n", texts.size(), reps,
              tokens, best_s, static_cast<double>(tokens) / best_s);
  return 0;
}
