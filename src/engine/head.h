// The classifier head's output function: what a run writes in the per-label
// columns, chosen as Hugging Face's text-classification pipeline chooses it
// (docs/formats.md, "Output function").
#pragma once

#include <string>

#include "infercost/status.h"
#include "model/config.h"

namespace infercost::engine {

//   kSoftmax: exp(x - max) / sum, over the labels of a row (they sum to 1).
//   kSigmoid: 1 / (1 + exp(-x)) of each label alone (multi-label).
//   kNone:    the logits as the model gives them.
enum class HeadFunction { kSoftmax, kSigmoid, kNone };
const char* head_function_name(HeadFunction function);  // "softmax", "sigmoid", "none"
// "softmax", "sigmoid" or "none"; kInvalidArgument naming the accepted ones.
Result<HeadFunction> parse_head_function(const std::string& name);

// The function a run applies when none is asked for, and what decided it.
struct HeadChoice {
  HeadFunction function = HeadFunction::kSoftmax;
  // "problem_type multi_label_classification", "1 label", "2 labels", ...
  std::string reason;
};
// HF's rule (TextClassificationPipeline.postprocess, function_to_apply
// "default"), in its order: problem_type regression -> none;
// multi_label_classification or a single label -> sigmoid; otherwise
// (single_label_classification, or absent with several labels) -> softmax.
HeadChoice default_head_function(const model::ModelConfig& config);

// Multi-label outputs: the value at or above which a label is in a row's
// `labels` column (--threshold).
inline constexpr double kDefaultThreshold = 0.5;
// Whether outputs of `function` over `labels` labels get a `labels` column:
// sigmoid over more than one label.
constexpr bool writes_label_set(HeadFunction function, int labels) {
  return function == HeadFunction::kSigmoid && labels > 1;
}

// Applies `function` to each row of `values` ([rows, labels], row-major) in
// place, in double precision, each result rounded once to float.
void apply_head_function(HeadFunction function, float* values, int rows, int labels);
// Scales each row of `values` ([rows, dims]) to unit length (L2) in place,
// as sentence-transformers' Normalize module does (torch's normalize: a row
// is divided by max(its norm, 1e-12), so a zero row stays zero); the norm
// summed in double.
void normalize_rows(float* values, int rows, int dims);
// Numerically stable softmax of each row of `logits` ([rows, labels]) in place.
void softmax_rows(float* logits, int rows, int labels);

}  // namespace infercost::engine
