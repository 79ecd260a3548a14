#include "engine/head.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace infercost::engine {

const char* head_function_name(HeadFunction function) {
  switch (function) {
    case HeadFunction::kSoftmax: return "softmax";
    case HeadFunction::kSigmoid: return "sigmoid";
    case HeadFunction::kNone: return "none";
  }
  return "?";
}

Result<HeadFunction> parse_head_function(const std::string& name) {
  for (HeadFunction f : {HeadFunction::kSoftmax, HeadFunction::kSigmoid, HeadFunction::kNone}) {
    if (name == head_function_name(f)) return f;
  }
  return invalid_argument("unknown function '" + name + "' (accepted: softmax, sigmoid, none)");
}

HeadChoice default_head_function(const model::ModelConfig& config) {
  const std::string& problem = config.problem_type;
  const int labels = config.num_labels();
  if (problem == "regression") return {HeadFunction::kNone, "problem_type regression"};
  if (problem == "multi_label_classification") {
    return {HeadFunction::kSigmoid, "problem_type multi_label_classification"};
  }
  if (labels == 1) return {HeadFunction::kSigmoid, "1 label"};
  if (problem == "single_label_classification") {
    return {HeadFunction::kSoftmax, "problem_type single_label_classification"};
  }
  return {HeadFunction::kSoftmax, fmt::format("{} labels", labels)};
}

void softmax_rows(float* logits, int rows, int labels) {
  for (int r = 0; r < rows; ++r) {
    float* x = logits + static_cast<size_t>(r) * labels;
    const float max = *std::max_element(x, x + labels);
    double sum = 0;
    for (int l = 0; l < labels; ++l) sum += std::exp(static_cast<double>(x[l] - max));
    for (int l = 0; l < labels; ++l)
      x[l] = static_cast<float>(std::exp(static_cast<double>(x[l] - max)) / sum);
  }
}

void apply_head_function(HeadFunction function, float* values, int rows, int labels) {
  switch (function) {
    case HeadFunction::kSoftmax: softmax_rows(values, rows, labels); return;
    case HeadFunction::kSigmoid: {
      const size_t n = static_cast<size_t>(rows) * static_cast<size_t>(labels);
      for (size_t i = 0; i < n; ++i) {
        values[i] = static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(values[i]))));
      }
      return;
    }
    case HeadFunction::kNone: return;
  }
}

void normalize_rows(float* values, int rows, int dims) {
  for (int r = 0; r < rows; ++r) {
    float* row = values + static_cast<size_t>(r) * static_cast<size_t>(dims);
    double sum = 0;
    for (int i = 0; i < dims; ++i) sum += static_cast<double>(row[i]) * row[i];
    const double scale = 1.0 / std::max(std::sqrt(sum), 1e-12);
    for (int i = 0; i < dims; ++i) row[i] = static_cast<float>(row[i] * scale);
  }
}

}  // namespace infercost::engine
