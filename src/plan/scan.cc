#include "plan/scan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string_view>

#include "core/sha256.h"
#include "core/threads.h"
#include "engine/batching.h"
#include "engine/encoder.h"
#include "engine/settings.h"
#include "io/row_source.h"
#include "run/run_input.h"

namespace infercost::plan {

int ScanResult::longest() const {
  for (size_t L = length_counts.size(); L > 0; --L) {
    if (length_counts[L - 1] > 0) return static_cast<int>(L - 1);
  }
  return 0;
}

double ScanResult::mean_length() const {
  return rows > 0 ? static_cast<double>(tokens) / static_cast<double>(rows) : 0.0;
}

int ScanResult::length_percentile(double q) const {
  if (rows <= 0) return 0;
  const double want = q * static_cast<double>(rows);
  int64_t seen = 0;
  for (size_t L = 0; L < length_counts.size(); ++L) {
    seen += length_counts[L];
    if (seen > 0 && static_cast<double>(seen) >= want) return static_cast<int>(L);
  }
  return longest();
}

std::vector<int64_t> ScanResult::binned_lengths(const std::vector<int>& edges) const {
  std::vector<int64_t> bins(edges.size(), 0);
  if (edges.empty()) return bins;
  for (size_t L = 0; L < length_counts.size(); ++L) {
    if (length_counts[L] == 0) continue;
    // The last edge <= L; rows shorter than edges[0] count in bucket 0.
    const auto it = std::upper_bound(edges.begin(), edges.end(), static_cast<int>(L));
    const size_t b = it == edges.begin() ? 0 : static_cast<size_t>(it - edges.begin()) - 1;
    bins[b] += length_counts[L];
  }
  return bins;
}

namespace {

void add_at(std::vector<int64_t>& counts, size_t index, int64_t n) {
  if (counts.size() <= index) counts.resize(index + 1, 0);
  counts[index] += n;
}

// The inputs and their formats, as `infercost run` expands them, and the bytes of all.
struct ScanInputs {
  std::vector<std::string> paths;
  std::vector<io::InputFormat> formats;
  uint64_t bytes = 0;
};

Result<ScanInputs> expand_scan_inputs(const ScanOptions& options) {
  ScanInputs in;
  INFERCOST_ASSIGN_OR_RETURN(in.paths, io::expand_inputs(options.inputs));
  for (const std::string& path : in.paths) {
    INFERCOST_ASSIGN_OR_RETURN(io::InputFormat format, io::input_format_for(path, options.input_format));
    in.formats.push_back(format);
    std::error_code ec;
    const uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec) in.bytes += size;
  }
  return in;
}

// The threads and each policy's resolved sizes, as the run resolves them.
void resolve_scan(const ScanOptions& options, ScanResult& scan) {
  scan.max_length = options.max_length;
  scan.threads = resolve_threads(options.threads);
  scan.tokenizer_threads = engine::resolve_tokenizer_threads(options);

  PolicyPadding& seed = scan.seed_padding;
  seed.batching = "seed";
  seed.batch_size = options.batch_size > 0 ? options.batch_size : kSeedRowsPerThread * scan.threads;
  seed.computes_padding = true;
  PolicyPadding& tok = scan.tokens_padding;
  tok.batching = "tokens";
  tok.batch_size = options.batch_size > 0 ? options.batch_size : kDefaultTokensBatchSize;
  tok.max_batch_tokens = options.max_batch_tokens > 0 ? options.max_batch_tokens : kDefaultMaxBatchTokens;
  tok.window_rows = options.window_rows;
}

// Counts a window's rows to classify into `file` and `scan`, and the tokens
// policy's batches of them: the run's own packing (engine::pack_by_tokens)
// over the run's own windows.
void count_window(const run::Window& window, const std::vector<int32_t>& classify,
                  const engine::BatchPolicy& policy, FileScan& file, ScanResult& scan) {
  for (int32_t i : classify) {
    const size_t len = window.ids[static_cast<size_t>(i)].size();
    add_at(scan.length_counts, len, 1);
    ++file.rows;
    file.tokens += static_cast<int64_t>(len);
    file.longest = std::max(file.longest, static_cast<int>(len));
    if (scan.max_length > 0 && static_cast<int>(len) >= scan.max_length) ++scan.rows_at_max_length;
  }
  PolicyPadding& tok = scan.tokens_padding;
  for (const std::vector<int32_t>& batch : engine::pack_by_tokens(policy, window.ids, classify)) {
    // Sorted by length: the last row is the batch's longest.
    const int64_t seq_len = static_cast<int64_t>(window.ids[static_cast<size_t>(batch.back())].size());
    const int64_t n = static_cast<int64_t>(batch.size());
    ++tok.batches;
    tok.rows += n;
    for (int32_t r : batch) tok.tokens += static_cast<int64_t>(window.ids[static_cast<size_t>(r)].size());
    tok.padded_tokens += n * seq_len;
    add_at(tok.padded_rows_at_length, static_cast<size_t>(seq_len), n);
  }
}

// Reads, tokenizes and sorts out the rows of input `f` as the run's reader,
// tokenizers and batcher do (run/run_input.h), and counts them.
Result<FileScan> scan_file(const ScanOptions& options, const ScanInputs& in, size_t f,
                           const text::Tokenizer& tokenizer, const engine::BatchPolicy& policy,
                           uint64_t bytes_before, ScanResult& scan) {
  const std::string& path = in.paths[f];
  io::SourceOptions source_options;
  source_options.column = options.column;
  source_options.on_bad_row = options.on_bad_row;
  INFERCOST_ASSIGN_OR_RETURN(std::unique_ptr<io::RowSource> source,
                             run::open_input(path, in.formats[f], source_options));
  FileScan file;
  file.path = path;
  file.format = io::input_format_name(in.formats[f]);
  file.bytes = source->bytes_total();
  engine::SortedRows sorted;
  for (;;) {
    run::Window window;
    window.file_index = static_cast<int>(f);
    INFERCOST_ASSIGN_OR_RETURN(size_t got,
                               run::read_window(*source, static_cast<size_t>(options.window_rows), window));
    if (got == 0) break;
    run::tokenize_window(tokenizer, window, scan.tokenizer_threads);
    INFERCOST_RETURN_IF_ERROR(run::sort_window_rows(window, path, options.on_bad_row, sorted));
    file.rows_null += sorted.rows_null;
    file.rows_skipped += sorted.rows_skipped;
    if (!sorted.first_skip.ok() && scan.first_skip_reason.empty()) {
      scan.first_skip_reason = sorted.first_skip.to_string();
    }
    count_window(window, sorted.classify, policy, file, scan);
    if (options.on_progress)
      options.on_progress(scan.rows + file.rows, bytes_before + source->bytes_read(), in.bytes);
  }
  if (source->rows_skipped() > 0) {
    file.rows_skipped += source->rows_skipped();
    if (scan.first_skip_reason.empty()) scan.first_skip_reason = source->first_skip_reason().to_string();
  }
  return file;
}

}  // namespace

Status check_scan_options(const ScanOptions& options) {
  INFERCOST_RETURN_IF_ERROR(engine::check_settings(options));
  if (options.batch_size_auto || options.max_batch_tokens_auto) {
    return invalid_argument(fmt::format(
        "{} and {} are sized from a device's memory: plan has no device; "
        "give numbers (bench records tell which sizes a device took)",
        engine::setting_ref("batch_size", "auto"), engine::setting_ref("max_batch_tokens", "auto")));
  }
  return Status();
}

Result<ScanResult> scan_inputs(const ScanOptions& options, const text::Tokenizer& tokenizer) {
  INFERCOST_CHECK(check_scan_options(options).ok());
  if (options.inputs.empty()) return invalid_argument("no input files given");
  const auto start = std::chrono::steady_clock::now();
  INFERCOST_ASSIGN_OR_RETURN(ScanInputs in, expand_scan_inputs(options));

  ScanResult scan;
  resolve_scan(options, scan);
  engine::BatchPolicy policy;
  policy.batching = Batching::kTokens;
  policy.batch_size = scan.tokens_padding.batch_size;
  policy.max_batch_tokens = scan.tokens_padding.max_batch_tokens;
  policy.pad_id = tokenizer.pad_id();

  PolicyPadding& seed = scan.seed_padding;
  uint64_t bytes_before = 0;
  for (size_t f = 0; f < in.paths.size(); ++f) {
    INFERCOST_ASSIGN_OR_RETURN(FileScan file,
                               scan_file(options, in, f, tokenizer, policy, bytes_before, scan));
    // Seed: batch_size rows in input order counted from the file's first row,
    // every one padded to the file's longest row, the padding computed.
    if (file.rows > 0) {
      seed.batches += (file.rows + seed.batch_size - 1) / seed.batch_size;
      seed.rows += file.rows;
      seed.tokens += file.tokens;
      seed.padded_tokens += file.rows * file.longest;
      add_at(seed.padded_rows_at_length, static_cast<size_t>(file.longest), file.rows);
    }
    scan.rows += file.rows;
    scan.rows_null += file.rows_null;
    scan.rows_skipped += file.rows_skipped;
    scan.tokens += file.tokens;
    scan.bytes += file.bytes;
    bytes_before += file.bytes;
    scan.files.push_back(std::move(file));
  }
  seed.computed_tokens = seed.padded_tokens;
  scan.tokens_padding.computed_tokens =
      scan.tokens_padding.tokens;  // the CPU backend computes real tokens only
  scan.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return scan;
}

Status hash_inputs(ScanResult& scan) {
  std::vector<std::string> paths;
  for (const FileScan& f : scan.files) paths.push_back(f.path);
  INFERCOST_ASSIGN_OR_RETURN(FilesDigest digest, sha256_of_files(paths));
  scan.content_sha256 = digest.sha256_hex;
  return Status();
}

}  // namespace infercost::plan
