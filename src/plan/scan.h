// The dry run's scan: read and tokenize the inputs with `infercost run`'s own
// reader and tokenizing (run/run_input.h: same file expansion, formats,
// windows, column, null rows and bad-row rules),
// without inference, and count what each batching policy would pad and
// compute. Memory is bounded by one window of rows and their token ids.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/batching.h"
#include "engine/run_metrics.h"
#include "infercost/metrics.h"
#include "infercost/options.h"
#include "infercost/status.h"
#include "io/rows.h"
#include "text/tokenizer.h"

namespace infercost::plan {

// What the scan reads and how: the settings of the run it predicts, one
// RunOptions (`infercost plan` fills it from the flags `infercost
// run` takes), of which the scan uses the inputs and their reading
// (input_format, column, on_bad_row, window_rows), threads and
// tokenizer_threads (0: the run's default on the CPU,
// engine::resolve_tokenizer_threads; the seed policy's default batch size
// is 100 x threads, as in `infercost run`), batch_size (0: 256 for tokens,
// 100 x threads for seed) and max_batch_tokens. max_length is only counted
// (rows_at_max_length: the rows at the tokenizer's limit, which the caller
// resolves and sets here); truncation is the tokenizer's; 0: none counted.
struct ScanOptions : RunOptions {
  // Called after each window with (rows scanned, input bytes read, input bytes in all files).
  std::function<void(int64_t, uint64_t, uint64_t)> on_progress;
};

struct FileScan {
  std::string path;
  std::string format;        // io::input_format_name
  int64_t rows = 0;          // rows to classify (null and skipped rows excluded)
  int64_t rows_null = 0;     // null texts (written by a run with null outputs)
  int64_t rows_skipped = 0;  // bad rows skipped under OnBadRow::kSkip
  int64_t tokens = 0;        // real tokens, [CLS]/[SEP] included, after truncation
  int longest = 0;           // the file's longest row in tokens (seed pads every row to it)
  uint64_t bytes = 0;
};

// What one batching policy does with the scanned rows, computed with the run
// pipeline's own Batcher (tokens) or its rule (seed: each file's rows padded
// to the file's longest row).
struct PolicyPadding {
  std::string batching;           // "seed" or "tokens"
  int batch_size = 0;             // resolved
  int max_batch_tokens = 0;       // tokens only (0 for seed)
  int window_rows = 0;            // tokens only (0 for seed: batches count from each file's start)
  bool computes_padding = false;  // seed: the padding is computed on every device
  int64_t batches = 0;
  int64_t rows = 0;
  int64_t tokens = 0;         // real
  int64_t padded_tokens = 0;  // sum over batches of rows x batch length
  // What the CPU backend computes: padded for seed, real for tokens.
  int64_t computed_tokens = 0;
  // Rows by the length their batch pads them to: [S] = rows in batches of length S.
  std::vector<int64_t> padded_rows_at_length;

  double padding_efficiency() const {
    return computed_tokens > 0 ? static_cast<double>(tokens) / static_cast<double>(computed_tokens) : 1.0;
  }
  double batch_fill() const {
    return padded_tokens > 0 ? static_cast<double>(tokens) / static_cast<double>(padded_tokens) : 1.0;
  }
};

struct ScanResult {
  std::vector<FileScan> files;
  int64_t rows = 0, rows_null = 0, rows_skipped = 0, tokens = 0;
  uint64_t bytes = 0;
  int max_length = 0;
  int64_t rows_at_max_length = 0;  // rows whose ids reached max_length (truncated or exactly that long)
  std::string first_skip_reason;   // the first bad row skipped, when any
  // Exact token-length histogram: length_counts[L] rows had L tokens.
  std::vector<int64_t> length_counts;
  PolicyPadding seed_padding, tokens_padding;
  // SHA-256 of the input files' bytes in input order (record::DataInfo's
  // content_sha256); empty until hash_inputs() computes it.
  std::string content_sha256;
  int threads = 0;            // resolved
  int tokenizer_threads = 0;  // resolved
  double seconds = 0;         // wall time of the scan

  int longest() const;
  double mean_length() const;
  // The smallest length L with at least q of the rows at L or shorter (q in [0, 1]).
  int length_percentile(double q) const;
  // length_counts binned with `edges` (bucket i: [edges[i], edges[i+1]),
  // the last open); rows shorter than edges[0] go to bucket 0.
  std::vector<int64_t> binned_lengths(const std::vector<int>& edges = length_histogram_edges()) const;
};

// The one check of the settings a plan predicts for, before anything is
// read: every range and choice of the run's (engine::check_settings, in
// settings named by setting_ref), and kInvalidArgument for an "auto" batch size or
// token budget, which a run sizes from a device's memory (a plan has none).
Status check_scan_options(const ScanOptions& options);

// Reads every input once, with `options` that check_scan_options has passed.
// Errors: as `infercost run` (usage: kInvalidArgument or kNotFound; bad rows:
// kCorruption naming the file and line, unless options.on_bad_row is kSkip).
Result<ScanResult> scan_inputs(const ScanOptions& options, const text::Tokenizer& tokenizer);

// Sets scan.content_sha256 from the files scan_inputs() read (a second read
// of every file, so only worth it when a record may have run these inputs).
// Errors name the file.
Status hash_inputs(ScanResult& scan);

}  // namespace infercost::plan
