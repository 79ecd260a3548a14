// Reads one column of a Parquet file with ColumnReader, single-threaded, and
// prints one JSON object: wall seconds (best of --reps, each run opening the
// file afresh), rows, file bytes, value bytes (uncompressed text for string
// columns, 8 per value otherwise), MB/s and rows/s over the value bytes, the
// process's peak RSS and the reader's peak buffer bytes. bench/parquet_read.sh
// runs it beside pyarrow.
//
// Usage: parquet_read_bench FILE [--column NAME] [--batch ROWS] [--reps N]
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "parquet/reader.h"

namespace {

using infercost::parquet::ColumnReader;
using infercost::parquet::ColumnValues;
using infercost::parquet::ParquetFile;

struct RunResult {
  double seconds = 0;
  double cpu_seconds = 0;  // user + system: less sensitive to a busy machine than wall time
  int64_t rows = 0;
  uint64_t value_bytes = 0;
  uint64_t checksum = 0;  // keeps the values live
  uint64_t peak_buffer_bytes = 0;
  uint64_t file_bytes = 0;
};

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "parquet_read_bench: %s\n", message.c_str());
  std::exit(1);
}

double cpu_now() {
  struct rusage u {};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

RunResult run_once(const std::string& path, const std::string& column_name, size_t batch) {
  RunResult r;
  const double cpu_start = cpu_now();
  const auto start = std::chrono::steady_clock::now();
  auto file = ParquetFile::open(path);
  if (!file.ok()) die(file.status().message());
  auto column = (*file)->find_flat_column(column_name);
  if (!column.ok()) die(column.status().message());
  auto reader = ColumnReader::open(*file, (*column)->leaf_index);
  if (!reader.ok()) die(reader.status().message());
  ColumnValues values;
  while (true) {
    values.clear();
    auto n = (*reader)->next(batch, values);
    if (!n.ok()) die(n.status().message());
    if (*n == 0) break;
    r.rows += static_cast<int64_t>(*n);
    if (values.strings.size() > 0) {
      r.value_bytes += values.strings.bytes.size();
      r.checksum +=
          static_cast<unsigned char>(values.strings.bytes.empty() ? 0 : values.strings.bytes.back());
    } else {
      r.value_bytes += 8 * *n;
      r.checksum += values.ints.empty() ? 0 : static_cast<uint64_t>(values.ints.back());
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.cpu_seconds = cpu_now() - cpu_start;
  r.peak_buffer_bytes = (*reader)->peak_buffer_bytes();
  r.file_bytes = (*file)->file_size();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path, column = "full_text";
  size_t batch = 4096;
  int reps = 1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--column") {
      column = value();
    } else if (arg == "--batch") {
      batch = std::strtoull(value().c_str(), nullptr, 10);
    } else if (arg == "--reps") {
      reps = std::atoi(value().c_str());
    } else if (arg == "-h" || arg == "--help") {
      std::printf("usage: parquet_read_bench FILE [--column NAME] [--batch ROWS] [--reps N]\n");
      return 0;
    } else if (path.empty() && arg[0] != '-') {
      path = arg;
    } else {
      die("unknown argument " + arg);
    }
  }
  if (path.empty() || batch == 0 || reps < 1)
    die("usage: parquet_read_bench FILE [--column NAME] [--batch ROWS] [--reps N]");

  RunResult best;
  for (int rep = 0; rep < reps; ++rep) {
    RunResult r = run_once(path, column, batch);
    if (rep == 0 || r.seconds < best.seconds) best = r;
  }
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  const double mb = static_cast<double>(best.value_bytes) / 1e6;
  std::printf(
      "{\"reader\": \"infercost\", \"file\": \"%s\", \"column\": \"%s\", \"batch\": %zu, "
      "\"seconds\": %.6f, \"cpu_seconds\": %.6f, \"rows\": %lld, \"file_bytes\": %llu, "
      "\"text_bytes\": %llu, \"mb_per_s\": %.1f, \"file_mb_per_s\": %.1f, \"rows_per_s\": %.0f, "
      "\"peak_rss\": %lld, \"peak_buffer_bytes\": %llu, \"checksum\": %llu}\n",
      path.c_str(), column.c_str(), batch, best.seconds, best.cpu_seconds, static_cast<long long>(best.rows),
      static_cast<unsigned long long>(best.file_bytes), static_cast<unsigned long long>(best.value_bytes),
      mb / best.seconds, static_cast<double>(best.file_bytes) / 1e6 / best.seconds,
      static_cast<double>(best.rows) / best.seconds, static_cast<long long>(usage.ru_maxrss) * 1024,
      static_cast<unsigned long long>(best.peak_buffer_bytes),
      static_cast<unsigned long long>(best.checksum));
  return 0;
}
