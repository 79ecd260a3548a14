#include "plan/scan.h"

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
#include "infercost/pipeline/batching.h"
#include "io/row_source.h"

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

}  // namespace

Result<ScanResult> scan_inputs(const ScanOptions& options, const text::Tokenizer& tokenizer) {
  if (options.inputs.empty()) return invalid_argument("no input files given");
  INFERCOST_RETURN_IF_ERROR(
      pipeline::check_batching_options(options.batch_size, options.max_batch_tokens, options.window_rows));
  if (options.threads < 0) return invalid_argument("--threads must be at least 1 (or 0 for all cores)");
  if (options.tokenizer_threads < 0) return invalid_argument("tokenizer threads must be at least 0");
  INFERCOST_RETURN_IF_ERROR(text::check_max_length(options.max_length));
  const auto start = std::chrono::steady_clock::now();

  INFERCOST_ASSIGN_OR_RETURN(std::vector<std::string> paths, io::expand_inputs(options.inputs));
  std::vector<io::InputFormat> formats;
  uint64_t bytes_all = 0;
  for (const std::string& path : paths) {
    INFERCOST_ASSIGN_OR_RETURN(io::InputFormat format, io::input_format_for(path, options.input_format));
    formats.push_back(format);
    std::error_code ec;
    const uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec) bytes_all += size;
  }

  ScanResult scan;
  scan.max_length = options.max_length;
  scan.threads = resolve_threads(options.threads);
  scan.tokenizer_threads = options.tokenizer_threads > 0 ? options.tokenizer_threads : scan.threads;

  PolicyPadding& seed = scan.seed_padding;
  seed.batching = "seed";
  seed.batch_size = options.batch_size > 0 ? options.batch_size : kSeedRowsPerThread * scan.threads;
  seed.computes_padding = true;
  PolicyPadding& tok = scan.tokens_padding;
  tok.batching = "tokens";
  tok.batch_size = options.batch_size > 0 ? options.batch_size : kDefaultTokensBatchSize;
  tok.max_batch_tokens = options.max_batch_tokens > 0 ? options.max_batch_tokens : kDefaultMaxBatchTokens;
  tok.window_rows = options.window_rows;

  // The tokens policy is the run's own packing (pipeline::pack_by_tokens) over the run's own windows.
  pipeline::BatchPolicy policy;
  policy.batching = pipeline::Batching::kTokens;
  policy.batch_size = tok.batch_size;
  policy.max_batch_tokens = tok.max_batch_tokens;
  policy.pad_id = tokenizer.pad_id();

  io::SourceOptions source_options;
  source_options.column = options.column;
  source_options.on_bad_row = options.on_bad_row;
  uint64_t bytes_before = 0;
  std::vector<int32_t> classify;
  io::RowBatch rows;
  std::vector<std::string_view> texts;
  pipeline::TokenizedRows tokenized;
  for (size_t f = 0; f < paths.size(); ++f) {
    const std::string& path = paths[f];
    INFERCOST_ASSIGN_OR_RETURN(std::unique_ptr<io::RowSource> source,
                               io::open_row_source(path, formats[f], source_options));
    FileScan file;
    file.path = path;
    file.format = io::input_format_name(formats[f]);
    file.bytes = source->bytes_total();
    for (;;) {
      rows = io::RowBatch();
      INFERCOST_ASSIGN_OR_RETURN(size_t got, source->next(static_cast<size_t>(options.window_rows), rows));
      if (got == 0) break;
      rows.is_null.resize(rows.size(), 0);
      texts.assign(rows.texts.begin(), rows.texts.end());
      pipeline::tokenize_rows(tokenizer, texts, rows.is_null, scan.tokenizer_threads, tokenized);
      classify.clear();
      for (size_t i = 0; i < rows.size(); ++i) {
        if (rows.is_null[i]) {
          ++file.rows_null;
          continue;
        }
        if (!tokenized.errors[i].ok()) {
          Status located = tokenized.errors[i].with_context(path + ": " + source->location_unit() + " " +
                                                            std::to_string(rows.lines[i]));
          if (options.on_bad_row == io::OnBadRow::kFail) return located;
          if (scan.first_skip_reason.empty()) scan.first_skip_reason = located.to_string();
          ++file.rows_skipped;
          continue;
        }
        const size_t len = tokenized.ids[i].size();
        classify.push_back(static_cast<int32_t>(i));
        add_at(scan.length_counts, len, 1);
        ++file.rows;
        file.tokens += static_cast<int64_t>(len);
        file.longest = std::max(file.longest, static_cast<int>(len));
        if (static_cast<int>(len) >= options.max_length) ++scan.rows_at_max_length;
      }
      for (const std::vector<int32_t>& batch : pipeline::pack_by_tokens(policy, tokenized.ids, classify)) {
        // Sorted by length: the last row is the batch's longest.
        const int64_t seq_len = static_cast<int64_t>(tokenized.ids[static_cast<size_t>(batch.back())].size());
        const int64_t n = static_cast<int64_t>(batch.size());
        ++tok.batches;
        tok.rows += n;
        for (int32_t r : batch)
          tok.tokens += static_cast<int64_t>(tokenized.ids[static_cast<size_t>(r)].size());
        tok.padded_tokens += n * seq_len;
        add_at(tok.padded_rows_at_length, static_cast<size_t>(seq_len), n);
      }
      if (options.progress) {
        options.progress(scan.rows + file.rows, bytes_before + source->bytes_read(), bytes_all);
      }
    }
    if (source->rows_skipped() > 0) {
      file.rows_skipped += source->rows_skipped();
      if (scan.first_skip_reason.empty()) scan.first_skip_reason = source->first_skip_reason().to_string();
    }
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
  tok.computed_tokens = tok.tokens;  // the CPU backend computes real tokens only
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
