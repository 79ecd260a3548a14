// Per-token outputs (BackendOptions::tokens) as ForwardOutput lays them out,
// from a backend's packed tokens.
#pragma once

#include "backend/backend.h"
#include "infercost/status.h"

namespace infercost::backend {

// kInvalidArgument where `options` ask for both a pooling and token outputs.
Status check_output_options(const BackendOptions& options);

// Spreads outputs computed on `batch` packed ([computed tokens, width]: row
// r's tokens after the rows before it, seq_len of them with compute_padding,
// else lengths[r]) over `out`: rows, tokens (seq_len) and width set, values
// [rows, seq_len, width] with each row's real tokens first and zeros after.
void unpack_token_outputs(const TokenBatch& batch, const float* packed, int width, ForwardOutput& out);

}  // namespace infercost::backend
