// datagen_tool ROWS OUT.jsonl [SEED]: writes synthetic tweets as JSON lines
// and prints "rows bytes seconds rows_per_s" on stdout.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "corpus/tweets.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: datagen_tool ROWS OUT.jsonl [SEED]\n");
    return 2;
  }
  int64_t rows = std::strtoll(argv[1], nullptr, 10);
  uint64_t seed = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1;
  auto start = std::chrono::steady_clock::now();
  auto result = infercost::corpus::write_tweets_jsonl(argv[2], rows, seed, {});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!result.ok()) {
    std::fprintf(stderr, "datagen_tool: %s\n", result.status().to_string().c_str());
    return 1;
  }
  std::printf("%lld %lld %.3f %.0f\n", static_cast<long long>(result->rows),
              static_cast<long long>(result->bytes), seconds,
              seconds > 0 ? static_cast<double>(result->rows) / seconds : 0.0);
  return 0;
}
