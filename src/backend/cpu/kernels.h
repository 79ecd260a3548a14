// Fused fp32 loops of the CPU encoder (everything that is not a big GEMM).
// Internal to the backend; tests include it through the src/ include path.
//
// All matrices are row-major. Functions that take a `rows` count parallelise
// over rows with OpenMP using the caller's current thread count; call them
// from outside any parallel region.
#pragma once

#include <cstdint>

namespace infercost::backend::cpu {

// y[r] = (x[r] - mean) / sqrt(var + eps) * gamma + beta, with the biased
// variance as in torch.nn.LayerNorm. x and y may be the same buffer.
void layer_norm(const float* x, float* y, int64_t rows, int cols, const float* gamma, const float* beta,
                float eps);

// out[t] = LayerNorm(word[ids[t]] + position[positions[t]] + token_type0), for
// t in [0, tokens). `token_type0` (one row of `hidden`) may be null
// (DistilBERT). ids and positions must already be validated.
void embed_layer_norm(const int32_t* ids, const int32_t* positions, int64_t tokens, int hidden,
                      const float* word, const float* position, const float* token_type0, const float* gamma,
                      const float* beta, float eps, float* out);

// In-place softmax of one row of n >= 1 values.
void softmax_row(float* x, int n);

// e^x for one value, with the same vectorisable approximation softmax_row
// uses (relative error below 2e-7 for x in [-87, 88]). Exposed for tests.
float exp_approx(float x);

// Multi-head self-attention over packed sequences. `qkv` is [tokens, 3*hidden]
// holding [Q | K | V] per token; sequence s occupies rows
// [seq_offsets[s], seq_offsets[s] + lengths[s]). Writes softmax(Q K^T /
// sqrt(head_dim)) V per head into ctx [tokens, hidden] (head h at columns
// h*head_dim). Only real tokens exist here, so no mask is needed.
// `scratch` holds `scratch_floats_per_thread` floats per OpenMP thread, at
// least max(lengths)^2 each.
void attention(const float* qkv, float* ctx, const int64_t* seq_offsets, const int32_t* lengths,
               int sequences, int heads, int head_dim, float* scratch, int64_t scratch_floats_per_thread);

}  // namespace infercost::backend::cpu
