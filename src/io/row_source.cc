#include "io/row_source.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "file_names.h"
#include "parquet_source.h"
#include "text_sources.h"

namespace infercost::io {

namespace {

// A .json file holds either JSON lines or one array: the first byte that is
// not blank (after a byte order mark) decides. Reads only that far.
Result<InputFormat> sniff_json(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    int err = errno;
    std::string msg = path + ": " + std::strerror(err);
    return err == ENOENT ? not_found(msg) : io_error(msg);
  }
  char buf[4096];
  bool first_chunk = true;
  InputFormat format = InputFormat::kJsonl;
  for (;;) {
    size_t n = std::fread(buf, 1, sizeof(buf), f);
    if (n == 0) break;
    if (first_chunk) {
      if (Status s = check_utf8_bom(path, std::string_view(buf, n)); !s.ok()) {
        std::fclose(f);
        return s;
      }
    }
    size_t i = first_chunk ? bom_length(std::string_view(buf, n)) : 0;
    first_chunk = false;
    while (i < n && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n')) ++i;
    if (i < n) {
      if (buf[i] == '[') format = InputFormat::kJsonArray;
      break;
    }
  }
  bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return io_error(path + ": read failed");
  return format;
}

constexpr const char* kChoices = "jsonl, json, csv or parquet";

}  // namespace

std::string input_format_name(InputFormat format) {
  switch (format) {
    case InputFormat::kJsonl: return "jsonl";
    case InputFormat::kJsonArray: return "json";
    case InputFormat::kCsv: return "csv";
    case InputFormat::kParquet: return "parquet";
  }
  return "unknown";
}

Result<InputFormat> input_format_for(const std::string& path, const std::string& format_flag) {
  std::string f = lowercase_ascii(format_flag);
  if (f == "jsonl" || f == "ndjson") return InputFormat::kJsonl;
  if (f == "json") return sniff_json(path);
  if (f == "csv") return InputFormat::kCsv;
  if (f == "parquet") return InputFormat::kParquet;
  if (!f.empty()) {
    return invalid_argument("unknown input format '" + format_flag + "' (expected " + kChoices + ")");
  }
  std::string p = lowercase_ascii(path);
  if (p.ends_with(".jsonl") || p.ends_with(".ndjson")) return InputFormat::kJsonl;
  if (p.ends_with(".json")) return sniff_json(path);
  if (p.ends_with(".csv")) return InputFormat::kCsv;
  if (p.ends_with(".parquet") || p.ends_with(".parq") || p.ends_with(".pq")) return InputFormat::kParquet;
  return invalid_argument(path +
                          ": cannot tell the input format from the extension; use .jsonl, .ndjson, .json, "
                          ".csv, .parquet, .parq or .pq, or --input-format " +
                          kChoices);
}

Result<std::unique_ptr<RowSource>> open_row_source(const std::string& path, InputFormat format,
                                                   const SourceOptions& options) {
  switch (format) {
    case InputFormat::kJsonl: return open_jsonl_source(path, options);
    case InputFormat::kJsonArray: return open_json_array_source(path, options);
    case InputFormat::kCsv: return open_csv_source(path, options);
    case InputFormat::kParquet: return open_parquet_source(path, options);
  }
  return internal_error("open_row_source: unknown format");
}

Result<int64_t> rows_stated(const std::string& path, InputFormat format) {
  if (format == InputFormat::kParquet) return parquet_rows(path);
  return int64_t{-1};
}

}  // namespace infercost::io
