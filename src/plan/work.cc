#include "plan/work.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/device.h"

namespace infercost::plan {

ModelShape shape_of(const model::ModelConfig& config) {
  return engine::encoder_shape(config);
}

ModelShape shape_of(const record::ModelInfo& model) {
  return {model.layers,        model.hidden, model.intermediate, model.glu, model.attention_windows,
          model.relative_terms};
}

double linear_flops_per_token(const ModelShape& s) {
  return engine::encoder_linear_flops_per_token(s);
}

double attention_flops(const ModelShape& s, double length) {
  return engine::encoder_attention_flops(s, length);
}

double row_flops(const ModelShape& s, double length) {
  return engine::encoder_row_flops(s, length);
}

double flops_of_lengths(const ModelShape& s, const std::vector<int64_t>& rows_at_length) {
  return engine::encoder_flops_of_lengths(s, rows_at_length);
}

bool record_skips_padding(const record::Record& r, std::string* why) {
  if (r.config.batching == "tokens" && r.tokens > 0 && r.padded_tokens > r.tokens && r.computed_tokens > 0) {
    const bool skips = r.computed_tokens == r.tokens;
    if (why) {
      *why = skips ? "its tokens run computed real tokens only" : "its tokens run computed the padding";
    }
    return skips;
  }
  const bool cpu = r.config.device.empty() || is_cpu_device(r.config.device);
  if (why) {
    *why = cpu ? "the CPU backend computes real tokens only"
               : "device " + r.config.device + " assumed to compute the padding of tokens batches";
  }
  return cpu;
}

Result<RecordRate> record_rate(const record::Record& r) {
  if (!r.ok()) return invalid_argument("a failed point (" + r.error + ")");
  RecordRate rate;
  rate.shape = shape_of(r.model);
  if (!rate.shape.known()) return invalid_argument("no model shape (model.layers/hidden/intermediate)");
  const int64_t rows = r.classified_rows();
  const int64_t real = r.classified_tokens();
  if (rows <= 0) return invalid_argument("no rows");
  if (real <= 0 && r.computed_tokens <= 0) return invalid_argument("no token counts");
  if (!(r.wall_seconds.median > 0)) return invalid_argument("no median wall time");
  const bool have_computed = r.computed_tokens > 0;
  const int64_t computed = have_computed ? r.computed_tokens : real;
  rate.seconds = r.wall_seconds.median;
  const double linear = linear_flops_per_token(rate.shape) * static_cast<double>(computed);
  // The attention over the lengths it ran at.
  double attention = 0;
  std::string attention_how;
  int64_t histogram_rows = 0;
  for (int64_t c : r.data.length_counts) histogram_rows += c;
  const std::vector<int>& edges = r.data.length_edges;
  if (computed == real && !edges.empty() && histogram_rows == rows) {
    for (size_t i = 0; i < edges.size(); ++i) {
      // Integer lengths in [edges[i], edges[i+1] - 1]; the open last bucket
      // ends at the run's max length when that is longer.
      const double lo = edges[i];
      double hi = i + 1 < edges.size() ? edges[i + 1] - 1.0 : std::max<double>(lo, r.config.max_length);
      if (hi < lo) hi = lo;
      const double mid = 0.5 * (lo + hi);
      attention += static_cast<double>(r.data.length_counts[i]) * attention_flops(rate.shape, mid);
    }
    attention_how = "attention from its length histogram at bucket midpoints";
  } else {
    const double mean = static_cast<double>(computed) / static_cast<double>(rows);
    attention = static_cast<double>(rows) * attention_flops(rate.shape, mean);
    attention_how = fmt::format("attention at its mean computed length {:.1f}", mean);
  }
  rate.flops = linear + attention;
  rate.flops_per_second = rate.flops / rate.seconds;
  rate.method =
      fmt::format("{} {} tokens{} ({}), {}", computed, have_computed ? "computed" : "real",
                  have_computed ? "" : " (no computed_tokens)", rate.shape.describe(), attention_how);
  return rate;
}

}  // namespace infercost::plan
