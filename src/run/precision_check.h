// What a reduced precision does to a model's outputs on the user's own rows:
// the rows classified in fp32 (the reference) and in each precision asked,
// compared row by row (`infercost precision-check`).
//
//   Result<PrecisionCheck> check = check_precisions(dir, options, texts, {}, {"int8", "bf16"});
//   check->comparisons[0].agreement()   // share of rows whose label fp32 gives
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/encoder.h"
#include "infercost/options.h"
#include "infercost/status.h"
#include "run/engine.h"

namespace infercost::run {

// A row whose label changed.
struct PrecisionFlip {
  int64_t row = 0;  // index into the texts
  int reference_label = 0, label = 0;
  std::vector<float> reference, scores;  // the head function's outputs, one per label
  // The reference's top score less its second (how far from a tie fp32 was).
  float reference_margin = 0;
};

struct PrecisionComparison {
  std::string precision;  // as asked
  std::string resolved;   // as the devices ran it (Encoder::precision())
  int64_t rows = 0;       // rows compared (null and skipped rows are not)
  int64_t same_label = 0;
  double mean_abs_diff = 0;  // over every output of every row compared
  double max_abs_diff = 0;
  int64_t max_diff_row = -1;
  double seconds = 0;                // wall seconds of classifying the rows
  std::vector<PrecisionFlip> flips;  // every row whose label changed, in row order

  double agreement() const { return rows > 0 ? static_cast<double>(same_label) / rows : 1.0; }
};

struct PrecisionCheck {
  std::string reference = "fp32";
  double reference_seconds = 0;
  int64_t rows = 0;  // rows compared
  int64_t rows_null = 0;
  std::vector<std::string> labels;  // the model's, in id order
  std::string head_function;        // softmax, sigmoid or none: what the outputs are
  std::string device;
  int threads = 0;
  int max_length = 0;  // resolved
  std::vector<PrecisionComparison> comparisons;
};

// Classifies `texts` (is_null: as Encoder::classify) with the model in
// `model_dir` in fp32 and in each of `precisions`, `options` giving the rest
// (its precision is ignored), one model loaded at a time. Errors: those of
// opening and classifying (a precision the device cannot run names it);
// kInvalidArgument for no precision, or fp32 among them.
Result<PrecisionCheck> check_precisions(const std::string& model_dir, const ModelOptions& options,
                                        std::span<const std::string_view> texts,
                                        std::span<const uint8_t> is_null,
                                        std::span<const std::string> precisions);

// Rows read from inputs as `infercost run` reads them (files, folders, globs;
// options.column, options.input_format, options.on_bad_row): the first
// `max_rows` of them, in input order, with where each came from.
struct SampledRows {
  std::vector<std::string> texts;
  std::vector<uint8_t> is_null;
  std::vector<std::string> where;  // "<path>:<unit> <n>" of each row
  int64_t rows_skipped = 0;        // bad rows skipped (on_bad_row kSkip)
};
Result<SampledRows> read_first_rows(const RunOptions& options, int64_t max_rows);

}  // namespace infercost::run
