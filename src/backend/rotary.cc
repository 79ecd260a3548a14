#include "backend/rotary.h"

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace infercost::backend {

void rotary_table(double theta, int head_dim, int positions, std::vector<float>& table) {
  const int half = head_dim / 2;
  std::vector<float> inv_freq(static_cast<size_t>(half));
  for (int i = 0; i < half; ++i) {
    // As HF computes it in fp32: 1 / theta^(2i / d), then position * that.
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(head_dim);
    inv_freq[size_t(i)] = 1.0f / std::pow(static_cast<float>(theta), exponent);
  }
  table.resize(size_t(positions) * size_t(head_dim));
  for (int p = 0; p < positions; ++p) {
    float* row = table.data() + int64_t(p) * head_dim;
    for (int i = 0; i < half; ++i) {
      const float angle = static_cast<float>(p) * inv_freq[size_t(i)];
      row[i] = static_cast<float>(std::cos(static_cast<double>(angle)));
      row[half + i] = static_cast<float>(std::sin(static_cast<double>(angle)));
    }
  }
}

}  // namespace infercost::backend
