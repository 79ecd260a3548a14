// The ParquetWriter test matrix: datasets and option combinations, used by
// the structural tests (writer_test.cc) and the pyarrow/pandas/duckdb checks
// (writer_pyarrow_test.cc).
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "writer_test_util.h"

namespace infercost::parquet::testing {

struct WriterCase {
  std::string name;
  Dataset data;
  WriterOptions options;
  int64_t row_groups = -1;  // expected count, -1: not fixed
};

// Six columns of every kind; some nulls; strings from a small vocabulary
// (dictionary pays) and mostly-unique strings.
inline Dataset mixed_dataset(int rows) {
  static const char* kWords[] = {"alpha", "beta",       "gamma", "délta", "εψιλον",
                                 "数据",  "🙂 smile", "",      "z",     "Zeta"};
  Dataset d;
  d.add_column("word", ColumnSpec::Kind::kString, true);
  d.add_column("text", ColumnSpec::Kind::kString, true);
  d.add_column("i32", ColumnSpec::Kind::kInt32, true);
  d.add_column("i64", ColumnSpec::Kind::kInt64, false);
  d.add_column("f32", ColumnSpec::Kind::kFloat, true);
  d.add_column("f64", ColumnSpec::Kind::kDouble, false);
  for (int i = 0; i < rows; ++i) {
    d.columns[0].push_back(i % 7 == 3 ? Value{} : Value{std::string(kWords[(i * 13) % 10])});
    std::string text = "row ";  // appends, not chained operator+ (a GCC 12 -Wrestrict false positive)
    text += std::to_string(i);
    text.append(static_cast<size_t>(i % 37), 'x');
    d.columns[1].push_back(i % 9 == 0 ? Value{} : Value{text});
    d.columns[2].push_back(i % 5 == 0 ? Value{} : Value{int64_t{(i * 7919LL) % 100000 - 50000}});
    d.columns[3].push_back(Value{int64_t{i * 1'000'000'007LL - 5'000'000'000'000LL}});
    d.columns[4].push_back(i % 11 == 0 ? Value{} : Value{static_cast<double>(i) * 0.25 - 100.0});
    d.columns[5].push_back(Value{std::sin(i) * 1e6});
  }
  return d;
}

inline Dataset extremes_dataset() {
  Dataset d;
  d.add_column("i32", ColumnSpec::Kind::kInt32, true);
  d.add_column("i64", ColumnSpec::Kind::kInt64, true);
  d.add_column("f32", ColumnSpec::Kind::kFloat, true);
  d.add_column("f64", ColumnSpec::Kind::kDouble, true);
  d.add_column("f32_nan", ColumnSpec::Kind::kFloat, true);  // only NaN and nulls: no min/max
  d.add_column("f64_zero", ColumnSpec::Kind::kDouble, false);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<int64_t> i32 = {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(),
                                    0, -1, 1};
  const std::vector<int64_t> i64 = {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                                    0, -1, 1};
  const std::vector<double> f32 = {nan,
                                   inf,
                                   -inf,
                                   -0.0,
                                   std::numeric_limits<float>::max(),
                                   std::numeric_limits<float>::lowest(),
                                   std::numeric_limits<float>::denorm_min(),
                                   1.5};
  const std::vector<double> f64 = {nan,
                                   -inf,
                                   inf,
                                   0.0,
                                   std::numeric_limits<double>::max(),
                                   std::numeric_limits<double>::lowest(),
                                   std::numeric_limits<double>::denorm_min(),
                                   -2.5};
  const int rows = 40;
  for (int i = 0; i < rows; ++i) {
    d.columns[0].push_back(i % 6 == 5 ? Value{} : Value{i32[i % i32.size()]});
    d.columns[1].push_back(i % 6 == 5 ? Value{} : Value{i64[i % i64.size()]});
    d.columns[2].push_back(i % 9 == 8 ? Value{} : Value{f32[i % f32.size()]});
    d.columns[3].push_back(i % 9 == 8 ? Value{} : Value{f64[i % f64.size()]});
    d.columns[4].push_back(i % 2 ? Value{} : Value{nan});
    d.columns[5].push_back(Value{i % 2 ? 0.0 : -0.0});
  }
  return d;
}

// Unicode, empty and long (100 KB) strings; min/max of a long value are left
// out of the statistics.
inline Dataset strings_dataset() {
  Dataset d;
  d.add_column("s", ColumnSpec::Kind::kString, true);
  d.add_column("req", ColumnSpec::Kind::kString, false);
  d.add_column("big", ColumnSpec::Kind::kString, true);  // its max is 100 KB: no min/max
  const std::vector<std::string> values = {"",
                                           "a",
                                           "A",
                                           "é",
                                           "\xf0\x9f\x98\x80 emoji",
                                           "日本語のテキスト",
                                           "tab\tnew\nline \"quoted\" \\",
                                           "\x7f",
                                           std::string(100 * 1024, 'L') + "end",
                                           "zzz"};
  for (int i = 0; i < 60; ++i) {
    d.columns[0].push_back(i % 4 == 1 ? Value{} : Value{values[i % values.size()]});
    d.columns[1].push_back(Value{values[(i * 3) % 8]});  // never the long one
    d.columns[2].push_back(i % 3 == 0 ? Value{std::string(100 * 1024, '~')} : Value{std::string("short")});
  }
  return d;
}

// "v3" from ('v', 3). (Not "v" + std::to_string(3): GCC 12 warns falsely of
// an overlapping memcpy in that operator+ once it is inlined here.)
inline std::string tagged(char tag, int n) {
  std::string s(1, tag);
  s += std::to_string(n);
  return s;
}

inline Dataset nulls_dataset(int rows, bool all_null) {
  Dataset d;
  d.add_column("s", ColumnSpec::Kind::kString, true);
  d.add_column("i", ColumnSpec::Kind::kInt64, true);
  d.add_column("f", ColumnSpec::Kind::kFloat, true);
  for (int i = 0; i < rows; ++i) {
    if (all_null) {
      for (auto& c : d.columns) c.emplace_back();
    } else {
      d.columns[0].emplace_back(std::in_place_type<std::string>, tagged('v', i % 4));
      d.columns[1].push_back(Value{int64_t{i}});
      d.columns[2].push_back(Value{i * 0.5});
    }
  }
  return d;
}

// `repeated` rows from a 5-word vocabulary, then `unique` distinct strings
// of `width` bytes each seen `copies` times.
inline Dataset fallback_dataset(int repeated, int unique, size_t width, int copies) {
  Dataset d;
  d.add_column("s", ColumnSpec::Kind::kString, true);
  for (int i = 0; i < repeated; ++i) {
    d.columns[0].emplace_back(std::in_place_type<std::string>, tagged('w', i % 5));
  }
  for (int u = 0; u < unique; ++u) {
    std::string v = std::to_string(u) + ":";
    v.resize(width, static_cast<char>('a' + u % 26));
    for (int k = 0; k < copies; ++k) d.columns[0].push_back(Value{v});
  }
  return d;
}

// The floats of row `row` of a list column: distinct per row and element,
// with NaN, infinities and signed zeros now and then.
inline std::vector<float> embedding_row(int row, int list_size) {
  std::vector<float> v(list_size);
  for (int k = 0; k < list_size; ++k) v[k] = static_cast<float>(std::sin(row * 31 + k) * (1 + row % 5));
  if (row % 13 == 6) v[0] = std::numeric_limits<float>::quiet_NaN();
  if (row % 17 == 8) v[list_size - 1] = std::numeric_limits<float>::infinity();
  if (row % 19 == 9) v[list_size / 2] = -std::numeric_limits<float>::infinity();
  if (row % 23 == 10) v[0] = -0.0f;
  if (row % 29 == 11) v[list_size - 1] = 0.0f;
  return v;
}

// Embeddings beside flat columns: "id" (string), "emb" (nullable list; null
// in the first and last rows and every 7th from row 3), "score" (float),
// "emb_req" (required list of list_size / 2 + 1).
inline Dataset embeddings_dataset(int rows, int list_size) {
  Dataset d;
  const int required_size = list_size / 2 + 1;
  d.add_column("id", ColumnSpec::Kind::kString, true);
  d.add_column("emb", ColumnSpec::Kind::kFloat, true, list_size);
  d.add_column("score", ColumnSpec::Kind::kFloat, true);
  d.add_column("emb_req", ColumnSpec::Kind::kFloat, false, required_size);
  for (int i = 0; i < rows; ++i) {
    d.columns[0].push_back(i % 5 == 2 ? Value{} : Value{tagged('t', i)});
    bool null_row = i == 0 || i == rows - 1 || i % 7 == 3;
    d.columns[1].push_back(null_row ? Value{} : Value{embedding_row(i, list_size)});
    d.columns[2].push_back(i % 4 == 1 ? Value{} : Value{i * 0.125});
    d.columns[3].push_back(Value{embedding_row(i + 1000, required_size)});
  }
  return d;
}

// One list column, nullable or not, null every `null_every` rows (0: never;
// 1: always).
inline Dataset list_only_dataset(int rows, int list_size, bool nullable, int null_every) {
  Dataset d;
  d.add_column("vec", ColumnSpec::Kind::kFloat, nullable, list_size);
  for (int i = 0; i < rows; ++i) {
    bool null_row = nullable && null_every > 0 && i % null_every == 0;
    d.columns[0].push_back(null_row ? Value{} : Value{embedding_row(i, list_size)});
  }
  return d;
}

// Every case, in a fixed order. Building a case's data costs time (test code
// runs unoptimized, and each ctest test is its own process): with `only`, just
// that case's data is built (the others have their names and options, empty
// data); with names_only, none.
inline std::vector<WriterCase> writer_cases(const std::string& only = "", bool names_only = false) {
  const auto wanted = [&](const std::string& name) { return !names_only && (only.empty() || name == only); };
  std::vector<WriterCase> cases;
  const std::vector<std::pair<std::string, Codec>> codecs = {
      {"none", Codec::kUncompressed}, {"snappy", Codec::kSnappy},  {"gzip", Codec::kGzip},
      {"zstd", Codec::kZstd},         {"lz4_raw", Codec::kLz4Raw}, {"brotli", Codec::kBrotli},
      {"lz4_hadoop", Codec::kLz4}};
  for (int version : {1, 2}) {
    for (const auto& [name, codec] : codecs) {
      WriterCase c{"mixed_" + name + "_v" + std::to_string(version), {}, {}, 3};
      if (wanted(c.name)) c.data = mixed_dataset(2500);
      c.options.codec = codec;
      c.options.data_page_version = version;
      c.options.page_bytes = 2048;
      c.options.row_group_rows = 1000;
      cases.push_back(std::move(c));
    }
    std::string v = "_v" + std::to_string(version);
    {
      WriterCase c{"no_dictionary" + v, {}, {}, 1};
      if (wanted(c.name)) c.data = mixed_dataset(1500);
      c.options.dictionary = false;
      c.options.data_page_version = version;
      c.options.page_bytes = 4096;
      cases.push_back(std::move(c));
    }
    {
      // Distinct 1 KiB strings seen twice: the dictionary pays but passes the
      // 1 MiB cap, so the chunk continues with PLAIN pages.
      WriterCase c{"dictionary_cap_fallback" + v, {}, {}, 1};
      if (wanted(c.name)) c.data = fallback_dataset(200, 1400, 1024, 2);
      c.options.data_page_version = version;
      c.options.page_bytes = 64 << 10;
      c.options.codec = Codec::kZstd;
      cases.push_back(std::move(c));
    }
    {
      // Repeated values first, then only unique ones: the dictionary stops
      // paying and the writer falls back to PLAIN.
      WriterCase c{"dictionary_ratio_fallback" + v, {}, {}, 1};
      if (wanted(c.name)) c.data = fallback_dataset(0, 3000, 40, 1);
      c.options.data_page_version = version;
      c.options.page_bytes = 8192;
      cases.push_back(std::move(c));
    }
    {
      WriterCase c{"extremes" + v, {}, {}, 1};
      if (wanted(c.name)) c.data = extremes_dataset();
      c.options.data_page_version = version;
      c.options.page_bytes = 64;
      cases.push_back(std::move(c));
    }
    {
      WriterCase c{"strings" + v, {}, {}, 2};
      if (wanted(c.name)) c.data = strings_dataset();
      c.options.data_page_version = version;
      c.options.row_group_rows = 30;
      cases.push_back(std::move(c));
    }
    {
      WriterCase c{"strings_no_dictionary" + v, {}, {}, 1};
      if (wanted(c.name)) c.data = strings_dataset();
      c.options.data_page_version = version;
      c.options.dictionary = false;
      c.options.codec = Codec::kGzip;
      cases.push_back(std::move(c));
    }
    {
      WriterCase c{"all_null" + v, {}, {}, 3};
      if (wanted(c.name)) c.data = nulls_dataset(300, true);
      c.options.data_page_version = version;
      c.options.row_group_rows = 100;
      cases.push_back(std::move(c));
    }
    {
      WriterCase c{"no_nulls" + v, {}, {}, 1};
      if (wanted(c.name)) c.data = nulls_dataset(300, false);
      c.options.data_page_version = version;
      cases.push_back(std::move(c));
    }
    {
      WriterCase c{"empty" + v, {}, {}, 0};
      if (wanted(c.name)) c.data = mixed_dataset(0);
      c.options.data_page_version = version;
      cases.push_back(std::move(c));
    }
    {
      WriterCase c{"one_value_per_page" + v, {}, {}, 1};
      if (wanted(c.name)) c.data = mixed_dataset(120);
      c.options.data_page_version = version;
      c.options.page_bytes = 1;
      cases.push_back(std::move(c));
    }
    {
      WriterCase c{"many_row_groups" + v, {}, {}, 29};
      if (wanted(c.name)) c.data = mixed_dataset(200);
      c.options.data_page_version = version;
      c.options.row_group_rows = 7;
      cases.push_back(std::move(c));
    }
    {
      WriterCase c{"row_group_bytes" + v, {}, {}, -1};
      if (wanted(c.name)) c.data = mixed_dataset(3000);
      c.options.data_page_version = version;
      c.options.row_group_bytes = 16 << 10;
      c.options.page_bytes = 4096;
      cases.push_back(std::move(c));
    }
    {
      WriterCase c{"no_statistics_no_crc" + v, {}, {}, 1};
      if (wanted(c.name)) c.data = mixed_dataset(500);
      c.options.data_page_version = version;
      c.options.statistics = false;
      c.options.page_crc = false;
      c.options.key_value_metadata = {{"infercost.model", "distilbert-sst2"}, {"empty", ""}};
      cases.push_back(std::move(c));
    }
    // ---- list columns (fixed-size lists of float) ----
    for (const auto& [name, codec] :
         std::vector<std::pair<std::string, Codec>>{{"none", Codec::kUncompressed},
                                                    {"snappy", Codec::kSnappy},
                                                    {"zstd", Codec::kZstd},
                                                    {"gzip", Codec::kGzip}}) {
      // 16 floats (64 bytes) a row, pages of a few rows, three row groups.
      WriterCase c{"lists_" + name + v, {}, {}, 3};
      if (wanted(c.name)) c.data = embeddings_dataset(250, 16);
      c.options.codec = codec;
      c.options.data_page_version = version;
      c.options.page_bytes = 512;
      c.options.row_group_rows = 100;
      cases.push_back(std::move(c));
    }
    {
      // Embedding-sized rows, several pages per row group.
      WriterCase c{"lists_wide" + v, {}, {}, 2};
      if (wanted(c.name)) c.data = embeddings_dataset(300, 384);
      c.options.data_page_version = version;
      c.options.page_bytes = 64 << 10;
      c.options.row_group_rows = 200;
      c.options.key_value_metadata = {{"infercost.model", "all-MiniLM-L6-v2"}};
      cases.push_back(std::move(c));
    }
    {
      WriterCase c{"lists_required" + v, {}, {}, 1};
      if (wanted(c.name)) c.data = list_only_dataset(120, 5, false, 0);
      c.options.data_page_version = version;
      c.options.page_bytes = 100;
      cases.push_back(std::move(c));
    }
    {
      WriterCase c{"lists_all_null" + v, {}, {}, 2};
      if (wanted(c.name)) c.data = list_only_dataset(90, 8, true, 1);
      c.options.data_page_version = version;
      c.options.row_group_rows = 50;
      cases.push_back(std::move(c));
    }
    {
      WriterCase c{"lists_one_row_per_page" + v, {}, {}, 1};
      if (wanted(c.name)) c.data = list_only_dataset(40, 3, true, 4);
      c.options.data_page_version = version;
      c.options.page_bytes = 1;
      cases.push_back(std::move(c));
    }
    {
      // Two floats a row: the page row limit (20000 rows), not 20000 values,
      // ends the first page.
      WriterCase c{"lists_page_row_limit" + v, {}, {}, 1};
      if (wanted(c.name)) c.data = list_only_dataset(25000, 2, true, 1000);
      c.options.data_page_version = version;
      cases.push_back(std::move(c));
    }
    {
      WriterCase c{"lists_empty" + v, {}, {}, 0};
      if (wanted(c.name)) c.data = embeddings_dataset(0, 4);
      c.options.data_page_version = version;
      cases.push_back(std::move(c));
    }
    {
      WriterCase c{"lists_no_statistics_no_crc" + v, {}, {}, 1};
      if (wanted(c.name)) c.data = embeddings_dataset(60, 6);
      c.options.data_page_version = version;
      c.options.statistics = false;
      c.options.page_crc = false;
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

}  // namespace infercost::parquet::testing
