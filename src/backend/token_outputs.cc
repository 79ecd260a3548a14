#include "backend/token_outputs.h"

#include <algorithm>
#include <cstdint>

namespace infercost::backend {

Status check_output_options(const BackendOptions& options) {
  if (options.pooling && options.tokens) {
    return invalid_argument("a backend gives pooled vectors or outputs per token, not both");
  }
  return Status();
}

void unpack_token_outputs(const TokenBatch& batch, const float* packed, int width, ForwardOutput& out) {
  out.rows = batch.batch;
  out.tokens = batch.seq_len;
  out.width = width;
  out.values.assign(size_t(batch.batch) * size_t(batch.seq_len) * size_t(width), 0.0f);
  int64_t at = 0;  // the row's first packed token
  for (int r = 0; r < batch.batch; ++r) {
    const int32_t length = batch.lengths[size_t(r)];
    std::copy(packed + at * width, packed + (at + length) * width,
              out.values.begin() + int64_t(r) * batch.seq_len * width);
    at += batch.compute_padding ? batch.seq_len : length;
  }
}

}  // namespace infercost::backend
