// Synthetic tweet-like texts for the embedded default (see docs/datagen.md):
// deterministic for a seed, with mentions, hashtags, URLs, emoji, accented and
// CJK words, and a long-tailed length distribution reaching the 512-token limit.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "infercost/status.h"

namespace infercost::corpus {

// The version of the texts TweetGenerator produces for a seed: raise it with
// any change to the generator or its lexicon that changes a text, so that
// data cached from an older generator (`infercost bench`'s generated data) is
// not taken for the new one.
inline constexpr int kTweetGeneratorVersion = 1;

// Words in a text: maximal runs of bytes other than ASCII whitespace (' ',
// '\t', '\n', '\v', '\f', '\r'). What `--lengths-from` measures and matches.
int64_t count_words(std::string_view text);

// A distribution of words per text: how many rows have each word count.
// Measured on a real corpus (`infercost datagen --lengths-from`), it makes
// TweetGenerator write texts whose word counts follow it.
class WordCounts {
 public:
  // Adds `rows` rows of `words` words each (words >= 0, rows >= 1).
  void add(int64_t words, int64_t rows = 1);
  int64_t rows() const { return rows_; }
  bool empty() const { return rows_ == 0; }
  // Nearest rank: the smallest count c with at least q * rows() rows <= c
  // (q in [0, 1]; q = 0 gives the smallest). 0 when empty.
  int64_t quantile(double q) const;
  double mean() const;
  // Word count -> rows, ascending.
  const std::map<int64_t, int64_t>& rows_with() const { return rows_with_; }

 private:
  std::map<int64_t, int64_t> rows_with_;
  int64_t rows_ = 0;
  double words_ = 0;
};

// Produces an endless sequence of tweet-like texts. Texts are valid UTF-8,
// never empty, and may contain '\n', '\t', '"' and '\\'. Only the raw
// mt19937_64 output is used (no std:: distributions), so the sequence for a
// seed is identical on every platform and standard library. Not thread-safe:
// use one generator per thread.
class TweetGenerator {
 public:
  explicit TweetGenerator(uint64_t seed);
  // Texts whose word counts (count_words) are drawn from `lengths`: each
  // text has exactly the count drawn, a count of 0 giving 1 word (texts are
  // never empty). The mentions, hashtags, URLs and emoji come as often as
  // without it wherever the count leaves room besides one body word. An
  // empty `lengths` gives the built-in distribution (the constructor above).
  TweetGenerator(uint64_t seed, const WordCounts& lengths);
  // The next text. The same seed gives the same sequence on every platform.
  std::string next();

 private:
  std::mt19937_64 rng_;
  uint64_t count_ = 0;
  // Cumulative rows of lengths' counts, ascending; empty: built-in lengths.
  std::vector<int64_t> length_words_;
  std::vector<int64_t> length_cumulative_;
};

// Every word, tag piece and symbol the generator may emit, for building a
// vocabulary that covers the synthetic corpus (`infercost model synth`).
// Contract: split a generated text on whitespace (' ', '\n', '\t'); every
// piece is a concatenation of lexicon entries once ASCII letters are
// lowercased on both sides (the generator capitalizes or upper-cases ASCII
// words; non-ASCII entries are emitted exactly as listed). Entries are unique,
// non-empty, contain no whitespace, and include the single characters a-z,
// A-Z and 0-9 (random URL codes and numbers are built from them). Entries are
// surface forms: a vocabulary builder should run them through BERT basic
// tokenization (punctuation and CJK ideographs split, accents stripped).
// Built on first use; the reference stays valid for the program's lifetime.
const std::vector<std::string>& tweet_lexicon();

// Writes `rows` tweets as JSON lines {"id": i, "full_text": "..."} to `path`
// (atomically). Memory use does not grow with `rows`.
Status write_tweets_jsonl(const std::string& path, int64_t rows, uint64_t seed);

struct TweetsWriteSummary {
  int64_t rows = 0;
  int64_t bytes = 0;
};
using TweetsProgressFn = std::function<void(int64_t rows_done, int64_t bytes_done)>;

// As above, and calls `on_progress` (when set) after every
// `progress_every_rows` rows. rows < 0 or progress_every_rows < 1 is
// kInvalidArgument; a path that cannot be created is kIOError naming it.
Result<TweetsWriteSummary> write_tweets_jsonl(const std::string& path, int64_t rows, uint64_t seed,
                                              const TweetsProgressFn& on_progress,
                                              int64_t progress_every_rows = 100000);

}  // namespace infercost::corpus

namespace infercost::corpus {

// The study's data shapes (docs/datagen.md). The rows are the same for a
// seed whatever the shape: row i has id i and the generator's i-th text.
enum class DatasetShape {
  kJsonl,      // one JSON lines file
  kJson3,      // a folder of 3 JSON lines files, part-00000.json .. part-00002.json
  kParquet,    // one Parquet file (id INT64, full_text STRING)
  kParquet10,  // a folder of 10 Parquet files, part-00000.parquet .. part-00009.parquet
};

// "jsonl", "json-3", "parquet", "parquet-10"; others: kInvalidArgument listing them.
Result<DatasetShape> dataset_shape_from_name(std::string_view name);

struct DatasetOptions {
  DatasetShape shape = DatasetShape::kJsonl;
  int64_t rows = 0;
  uint64_t seed = 1;
  std::string compression = "snappy";  // Parquet shapes
  int64_t row_group_rows = 1'000'000;  // Parquet shapes: bounds memory
  // Words per text to follow (TweetGenerator's second constructor); empty:
  // the built-in distribution.
  WordCounts lengths;
};

struct DatasetSummary {
  int64_t rows = 0;
  int64_t bytes = 0;
  std::vector<std::string> files;
  // Words per text written, measured when options.lengths was given.
  WordCounts lengths_written;
};

// Writes the dataset to `out`: a file for jsonl/parquet, a folder (created)
// for json-3/parquet-10, rows split as evenly as possible in order. Each file
// is written atomically; on error the files this call completed are removed.
// Memory does not grow with the row count.
Result<DatasetSummary> write_tweets_dataset(const std::string& out, const DatasetOptions& options,
                                            const TweetsProgressFn& on_progress,
                                            int64_t progress_every_rows = 100000);

}  // namespace infercost::corpus
