// Synthetic tweet-like texts for the embedded default (see docs/datagen.md):
// deterministic for a seed, with mentions, hashtags, URLs, emoji, accented and
// CJK words, and a long-tailed length distribution reaching the 512-token limit.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "infercost/core/status.h"

namespace infercost::data {

class TweetGenerator {
 public:
  explicit TweetGenerator(uint64_t seed);
  // The next text. The same seed gives the same sequence on every platform.
  std::string next();

 private:
  std::mt19937_64 rng_;
  uint64_t count_ = 0;
};

// Every word, tag piece and symbol the generator may emit, for building a
// vocabulary that covers the synthetic corpus (`infercost model synth`).
const std::vector<std::string>& tweet_lexicon();

// Writes `rows` tweets as JSON lines {"id": i, "full_text": "..."} to `path`
// (atomically). Memory use does not grow with `rows`.
Status write_tweets_jsonl(const std::string& path, int64_t rows, uint64_t seed);

}  // namespace infercost::data
