// The model of work the dry run predicts with: floating-point operations of
// the encoder per row (the engine's encoder FLOP model, engine/flops.h,
// which says what it counts and leaves out: the one the run metrics count
// with), and a benchmark record's measured rate in FLOP/s.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/flops.h"
#include "infercost/metrics.h"
#include "infercost/status.h"
#include "model/config.h"
#include "record/record.h"

namespace infercost::plan {

inline constexpr const char* kWorkFormula = engine::kEncoderRowFlopsFormula;

// The encoder's shape as the FLOP model reads it (layers, hidden, FFN, a
// GLU, local windows): engine::EncoderShape.
using ModelShape = engine::EncoderShape;

ModelShape shape_of(const model::ModelConfig& config);
ModelShape shape_of(const record::ModelInfo& model);

// The encoder FLOP model (engine::encoder_row_flops and its parts) for `shape`.
// FLOPs of one row of `length` tokens.
double row_flops(const ModelShape& shape, double length);
// FLOPs of the linear layers per token: layers x 2 (4 h^2 + 2 h f) (3 h f with a GLU).
double linear_flops_per_token(const ModelShape& shape);
// FLOPs of the attention of one row of `length` tokens: layers x 4 h x length^2
// where every layer is global, fewer pairs on local layers.
double attention_flops(const ModelShape& shape, double length);
// Sum over L of rows_at_length[L] x row_flops(L).
double flops_of_lengths(const ModelShape& shape, const std::vector<int64_t>& rows_at_length);

// Whether the device a record ran on computes the padding of "tokens"
// batches. From the record itself when it ran "tokens" batching (computed ==
// real tokens: padding skipped); otherwise by device: the CPU backend skips
// padding, other devices are assumed to compute it. `why` says which.
bool record_skips_padding(const record::Record& r, std::string* why = nullptr);

// A record's measured rate: the FLOPs of its own run over its median wall time.
struct RecordRate {
  ModelShape shape;
  double flops = 0;    // work of the record's run
  double seconds = 0;  // median wall seconds
  double flops_per_second = 0;
  std::string method;  // how `flops` was computed, for humans
};

// The record's FLOPs: the linear terms exactly from its computed_tokens (real
// tokens when it has none); the attention term (attention_flops) from its binned length
// histogram at bucket midpoints when it computed real tokens only and the
// histogram accounts for every row, else from its mean computed length
// (every row at computed_tokens / rows). kInvalidArgument, saying why, when
// the record cannot give a rate: failed, no model shape, no rows or tokens,
// no wall time.
Result<RecordRate> record_rate(const record::Record& r);

}  // namespace infercost::plan
