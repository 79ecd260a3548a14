// DeBERTa's relative positions (config.h): apart from the rest of the model
// code so that the CUDA module, which links no JSON or file code, shares them.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "model/config.h"

namespace infercost::model {

int relative_position_index(const ModelConfig& c, int delta) {
  const int span = c.relative_span();
  int bucket = delta;
  if (c.position_buckets > 0 && c.max_relative_positions > 0) {
    // make_log_bucket_position, in fp32 as torch computes it.
    const int mid = c.position_buckets / 2;
    const int abs_pos = delta < mid && delta > -mid ? mid - 1 : std::abs(delta);
    if (abs_pos > mid) {
      const float ratio = static_cast<float>(abs_pos) / static_cast<float>(mid);
      const float base = static_cast<float>(static_cast<double>(c.max_relative_positions - 1) / mid);
      const float log_pos =
          std::ceil(std::log(ratio) / std::log(base) * static_cast<float>(mid - 1)) + static_cast<float>(mid);
      bucket = static_cast<int>(log_pos) * (delta < 0 ? -1 : 1);
    }
  }
  return std::clamp(bucket + span, 0, 2 * span - 1);
}

std::vector<int32_t> relative_position_table(const ModelConfig& config) {
  std::vector<int32_t> table;
  if (!config.relative_attention) return table;
  const int max_delta = config.max_positions() - 1;
  table.reserve(size_t(2 * max_delta + 1));
  for (int d = -max_delta; d <= max_delta; ++d) table.push_back(relative_position_index(config, d));
  return table;
}

}  // namespace infercost::model
