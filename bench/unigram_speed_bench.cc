// Single-threaded Unigram tokenization speed (bench/unigram_speed.sh runs it
// beside bench/peers/hf_unigram_speed.py on the same texts):
//
//   unigram_speed_bench --tokenizer PATH --texts FILE [--passes 5] [--dump OUT]
//
// FILE holds one JSON string per line. Prints one JSON line: the load time
// (file read, nlohmann parse, our build, each alone), texts and tokens per
// pass, the median pass's tokens/s, and a checksum of the ids (the sum of
// id * position-in-row) for comparing with the peer. --dump writes each
// text's ids, a JSON array a line, to OUT (to find where the two differ).
#include <algorithm>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_util.h"
#include "core/file.h"
#include "text/unigram_json.h"

using infercost::bench::now_s;

int main(int argc, char** argv) {
  const std::string tok_path = infercost::bench::arg_str(argc, argv, "--tokenizer", "");
  const std::string texts_path = infercost::bench::arg_str(argc, argv, "--texts", "");
  const int passes = std::max(1, infercost::bench::arg_int(argc, argv, "--passes", 5));
  const std::string dump = infercost::bench::arg_str(argc, argv, "--dump", "");
  if (tok_path.empty() || texts_path.empty()) {
    std::cerr << "usage: unigram_speed_bench --tokenizer PATH --texts FILE [--passes N]\n";
    return 2;
  }
  const double t0 = now_s();
  auto data = infercost::read_file(tok_path);
  if (!data.ok()) {
    std::cerr << data.status().to_string() << "\n";
    return 1;
  }
  const double t1 = now_s();
  const nlohmann::json root = nlohmann::json::parse(*data, nullptr, false);
  if (root.is_discarded()) {
    std::cerr << tok_path << ": not JSON\n";
    return 1;
  }
  const double t2 = now_s();
  auto tok = infercost::text::unigram_from_tokenizer_json(root, tok_path, 512);
  if (!tok.ok()) {
    std::cerr << tok.status().to_string() << "\n";
    return 1;
  }
  const double t3 = now_s();

  std::vector<std::string> texts;
  std::ifstream in(texts_path);
  for (std::string line; std::getline(in, line);)
    texts.push_back(nlohmann::json::parse(line).get<std::string>());
  if (texts.empty()) {
    std::cerr << texts_path << ": no texts\n";
    return 1;
  }

  std::vector<double> seconds;
  size_t tokens = 0;
  uint64_t checksum = 0;
  std::vector<int32_t> ids;
  for (int p = 0; p < passes + 1; ++p) {  // the first pass warms up
    size_t n = 0;
    uint64_t sum = 0;
    const double s = now_s();
    for (const std::string& t : texts) {
      ids.clear();
      auto r = (*tok)->encode_append(t, ids);
      if (!r.ok()) {
        std::cerr << r.status().to_string() << "\n";
        return 1;
      }
      n += ids.size();
      for (size_t i = 0; i < ids.size(); ++i) sum += static_cast<uint64_t>(ids[i]) * (i + 1);
    }
    if (p > 0) seconds.push_back(now_s() - s);
    tokens = n;
    checksum = sum;
  }
  if (!dump.empty()) {
    std::ofstream d(dump);
    for (const std::string& t : texts) {
      ids.clear();
      (void)(*tok)->encode_append(t, ids);
      d << nlohmann::json(ids).dump() << "\n";
    }
  }
  const double med = infercost::bench::median(seconds);
  nlohmann::json out = {{"impl", "infercost"},
                        {"read_s", t1 - t0},
                        {"parse_s", t2 - t1},
                        {"build_s", t3 - t2},
                        {"load_s", t3 - t0},
                        {"texts", texts.size()},
                        {"tokens", tokens},
                        {"pass_s", med},
                        {"tokens_per_s", static_cast<double>(tokens) / med},
                        {"texts_per_s", static_cast<double>(texts.size()) / med},
                        {"checksum", checksum}};
  std::cout << out.dump() << "\n";
  return 0;
}
