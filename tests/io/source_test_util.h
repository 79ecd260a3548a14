// Reading a whole RowSource in small batches, for the io tests.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <string_view>

#include "io/row_source.h"
#include "test_utils.h"

namespace infercost::io::test {

// Whether the status's message contains `what`.
inline bool contains(const Status& s, const std::string& what) {
  return s.message().find(what) != std::string::npos;
}

struct ReadResult {
  RowBatch rows;
  int64_t skipped = 0;
  Status first_skip;
  uint64_t bytes_read = 0;
  uint64_t bytes_total = 0;
};

inline Result<ReadResult> read_all(const std::string& path, InputFormat format, SourceOptions options = {},
                                   size_t chunk = 3) {
  INFERCOST_ASSIGN_OR_RETURN(auto source, open_row_source(path, format, options));
  ReadResult r;
  for (;;) {
    INFERCOST_ASSIGN_OR_RETURN(size_t n, source->next(chunk, r.rows));
    if (n == 0) break;
    if (r.rows.texts.size() != r.rows.is_null.size() || r.rows.texts.size() != r.rows.lines.size()) {
      return internal_error("RowBatch vectors differ in length");
    }
  }
  // At the end, next() keeps returning 0.
  INFERCOST_ASSIGN_OR_RETURN(size_t again, source->next(chunk, r.rows));
  if (again != 0) return internal_error("rows after the end");
  r.skipped = source->rows_skipped();
  r.first_skip = source->first_skip_reason();
  r.bytes_read = source->bytes_read();
  r.bytes_total = source->bytes_total();
  return r;
}

inline SourceOptions skip_options() {
  SourceOptions o;
  o.on_bad_row = OnBadRow::kSkip;
  return o;
}

inline SourceOptions json_options() {
  SourceOptions o;
  o.values_as_json = true;
  return o;
}

// 2000 copies of `base`, each with 1-4 random edits (erase, insert or
// replace a byte from `alphabet`, or cut the file), read in batches of 1 to
// max_rows alternately under kFail and kSkip, as text and as JSON: each read
// ends in rows (at most max_rows) or a clean error, never a crash, a hang or
// kInternal. Both outcomes must occur, so the edits reach the parser.
inline void expect_mutations_never_crash(const std::string& base, std::string_view alphabet,
                                         InputFormat format, const std::string& extension, size_t max_rows,
                                         uint32_t seed) {
  infercost::testing::TempDir dir;
  std::mt19937 rng(seed);
  int ok = 0, failed = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string s = base;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = s.empty() ? 0 : rng() % s.size();
      switch (rng() % 4) {
        case 0:
          if (!s.empty()) s.erase(at, 1);
          break;
        case 1: s.insert(s.begin() + static_cast<long>(at), alphabet[rng() % alphabet.size()]); break;
        case 2:
          if (!s.empty()) s[at] = alphabet[rng() % alphabet.size()];
          break;
        default: s.resize(at); break;
      }
    }
    SourceOptions o;
    o.on_bad_row = (i % 2) ? OnBadRow::kSkip : OnBadRow::kFail;
    o.values_as_json = (i % 3) == 0;
    // A fresh file each time: rewriting one file in place makes ext4 flush it on every close.
    const std::string path = dir.write(std::to_string(i) + extension, s);
    auto r = read_all(path, format, o, 1 + i % max_rows);
    std::filesystem::remove(path);
    if (r.ok()) {
      ++ok;
      EXPECT_LE(r->rows.size(), max_rows);
      EXPECT_EQ(r->bytes_read, r->bytes_total);
    } else {
      ++failed;
      EXPECT_NE(r.status().code(), StatusCode::kInternal) << r.status().message();
    }
  }
  EXPECT_GT(ok, 0);
  EXPECT_GT(failed, 0);
}

}  // namespace infercost::io::test
