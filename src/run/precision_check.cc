#include "run/precision_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include "engine/head.h"
#include "io/row_source.h"
#include "run/run_input.h"

namespace infercost::run {
namespace {

struct Classified {
  Classification result;
  std::string precision;  // as resolved
  double seconds = 0;
};

Result<Classified> classify_in(const std::string& model_dir, ModelOptions options,
                               const std::string& precision, std::span<const std::string_view> texts,
                               std::span<const uint8_t> is_null, PrecisionCheck* describe) {
  options.precision = precision;
  INFERCOST_ASSIGN_OR_RETURN(std::unique_ptr<Encoder> classifier, Encoder::open(model_dir, options));
  const auto start = std::chrono::steady_clock::now();
  INFERCOST_ASSIGN_OR_RETURN(Classification result, classifier->classify(texts, is_null));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (describe != nullptr) {
    describe->labels = classifier->config().labels;
    describe->head_function = head_function_name(classifier->head_function());
    describe->device = options.device;
    describe->threads = classifier->threads();
    describe->max_length = classifier->max_length();
  }
  return Classified{std::move(result), classifier->precision(), seconds};
}

// The top output less the second (the top alone for one label).
float margin_of(std::span<const float> scores) {
  float first = -INFINITY, second = -INFINITY;
  for (float s : scores) {
    if (s > first) {
      second = first;
      first = s;
    } else if (s > second) {
      second = s;
    }
  }
  return scores.size() > 1 ? first - second : first;
}

PrecisionComparison compare(const Classification& reference, const Classified& other) {
  PrecisionComparison c;
  c.resolved = other.precision;
  c.seconds = other.seconds;
  const size_t labels = static_cast<size_t>(reference.labels);
  double sum = 0;
  for (size_t row = 0; row < reference.rows(); ++row) {
    if (reference.is_null[row] || other.result.is_null[row]) continue;
    const std::span<const float> want(reference.scores.data() + row * labels, labels);
    const std::span<const float> got(other.result.scores.data() + row * labels, labels);
    ++c.rows;
    for (size_t k = 0; k < labels; ++k) {
      const double diff = std::fabs(static_cast<double>(got[k]) - want[k]);
      sum += diff;
      if (diff > c.max_abs_diff) {
        c.max_abs_diff = diff;
        c.max_diff_row = static_cast<int64_t>(row);
      }
    }
    if (reference.label[row] == other.result.label[row]) {
      ++c.same_label;
      continue;
    }
    c.flips.push_back(PrecisionFlip{static_cast<int64_t>(row), reference.label[row], other.result.label[row],
                                    std::vector<float>(want.begin(), want.end()),
                                    std::vector<float>(got.begin(), got.end()), margin_of(want)});
  }
  c.mean_abs_diff = c.rows > 0 ? sum / (static_cast<double>(c.rows) * labels) : 0;
  return c;
}

}  // namespace

Result<PrecisionCheck> check_precisions(const std::string& model_dir, const ModelOptions& options,
                                        std::span<const std::string_view> texts,
                                        std::span<const uint8_t> is_null,
                                        std::span<const std::string> precisions) {
  if (precisions.empty()) return invalid_argument("no precision to check against fp32");
  PrecisionCheck check;
  for (const std::string& p : precisions) {
    if (p == check.reference) {
      return invalid_argument("fp32 is the reference every precision is compared with: name others");
    }
  }
  INFERCOST_ASSIGN_OR_RETURN(Classified reference,
                             classify_in(model_dir, options, check.reference, texts, is_null, &check));
  check.reference_seconds = reference.seconds;
  for (size_t row = 0; row < reference.result.rows(); ++row) {
    check.rows_null += reference.result.is_null[row];
  }
  check.rows = static_cast<int64_t>(reference.result.rows()) - check.rows_null;
  for (const std::string& p : precisions) {
    INFERCOST_ASSIGN_OR_RETURN(Classified other, classify_in(model_dir, options, p, texts, is_null, nullptr));
    PrecisionComparison c = compare(reference.result, other);
    c.precision = p;
    check.comparisons.push_back(std::move(c));
  }
  return check;
}

Result<SampledRows> read_first_rows(const RunOptions& options, int64_t max_rows) {
  io::SourceOptions source_options;
  source_options.column = options.column;
  source_options.on_bad_row = options.on_bad_row;
  SampledRows out;
  constexpr size_t kBatchRows = 4096;
  const auto left = [&] {
    return static_cast<size_t>(std::max<int64_t>(0, max_rows - std::ssize(out.texts)));
  };
  const auto keep = [&](const std::string& path, const io::RowSource& source, io::RowBatch& batch) {
    for (size_t i = 0; i < batch.size(); ++i) {
      out.texts.push_back(std::move(batch.texts[i]));
      out.is_null.push_back(batch.is_null[i]);
      out.where.push_back(fmt::format("{}:{} {}", path, source.location_unit(), batch.lines[i]));
    }
    return std::min(left(), kBatchRows);
  };
  INFERCOST_ASSIGN_OR_RETURN(out.rows_skipped,
                             io::read_inputs(options.inputs, options.input_format, source_options,
                                             std::min(left(), kBatchRows), keep));
  return out;
}

}  // namespace infercost::run
