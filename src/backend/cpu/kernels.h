// Fused fp32 loops of the CPU encoder (everything that is not a big GEMM).
// Internal to the backend; tests include it through the src/ include path.
//
// All matrices are row-major. Functions that take a `rows` count parallelise
// over rows with OpenMP using the caller's current thread count; call them
// from outside any parallel region.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace infercost::backend::cpu {

// A scratch buffer of at least `count` elements. Buffers only grow, so
// steady-state calls with batches no larger than earlier ones do not allocate.
template <typename T>
T* ensure(std::vector<T>& buffer, int64_t count) {
  if (int64_t(buffer.size()) < count) buffer.resize(size_t(count));
  return buffer.data();
}

// y[r] = (x[r] - mean) / sqrt(var + eps) * gamma + beta, with the biased
// variance as in torch.nn.LayerNorm. x and y may be the same buffer.
void layer_norm(const float* x, float* y, int64_t rows, int cols, const float* gamma, const float* beta,
                float eps);

// out[t] = LayerNorm(word[ids[t]] + position[positions[t]] + token_type[t]),
// for t in [0, tokens): token_type[t] is row types[t] of the table at
// `token_type0`, or, with types null, its row 0 (the model's embedding bias,
// one row of `hidden`). `token_type0` may be null (nothing added); so may
// `position` (a model without a position table). ids, positions and types
// must already be validated.
void embed_layer_norm(const int32_t* ids, const int32_t* positions, int64_t tokens, int hidden,
                      const float* word, const float* position, const float* token_type0, const float* gamma,
                      const float* beta, float eps, float* out, const int32_t* types = nullptr);

// In-place softmax of one row of n >= 1 values.
void softmax_row(float* x, int n);

// e^x for one value, with the same vectorisable approximation softmax_row
// uses (relative error below 2e-7 for x in [-87, 88]). Exposed for tests.
float exp_approx(float x);

// Queries per attention task: a task's scores are at most this many rows.
constexpr int64_t kAttentionQueryBlock = 128;

// Multi-head self-attention over packed sequences. `qkv` is [tokens, 3*hidden]
// holding [Q | K | V] per token; sequence s occupies rows
// [seq_offsets[s], seq_offsets[s] + lengths[s]). Writes softmax(Q K^T x
// scale) V per head (scale: 1 / sqrt(head_dim) for a plain encoder) into ctx [tokens, hidden] (head h at
// columns h*head_dim). Sequence s attends to its first key_lengths[s] <= lengths[s] positions only: with
// key_lengths null (all keys real) no mask is needed; with padded sequences the padding is masked out as
// keys, as HF's attention mask does, while padded queries are still computed. With `window` > 0 (local
// attention), query i sees only keys j with |i - j| <= window, and only those are computed. Queries go in
// blocks of kAttentionQueryBlock, so the scores held at once are a block's, never a sequence's length
// squared: `scratch` holds `scratch_floats_per_thread` floats per OpenMP thread, at least
// attention_scratch_floats(max(lengths), window) each.
void attention(const float* qkv, float* ctx, const int64_t* seq_offsets, const int32_t* lengths,
               const int32_t* key_lengths, int sequences, int heads, int head_dim, float scale,
               float* scratch, int64_t scratch_floats_per_thread, int window = 0);
int64_t attention_scratch_floats(int max_length, int window);

// DeBERTa's disentangled attention: what attention() computes (no window),
// each score being (q_i . k_j + q_i . pos_key[r] (c2p) + k_j . pos_query[r]
// (p2c)) x scale, r = index[i - j + max_delta] the relative embeddings' row
// (model::relative_position_index). pos_key / pos_query: [rows, hidden],
// null where the model has no such term. One task per (sequence, head): its
// keys' p2c products against the rows the sequence's deltas reach are formed
// once, and each block of kAttentionQueryBlock queries forms its c2p products
// against the rows its own deltas reach (index is nondecreasing in the
// delta); never a length x length x span tensor.
struct RelativeAttention {
  const float* pos_key = nullptr;
  const float* pos_query = nullptr;
  const int32_t* index = nullptr;  // [2 max_delta + 1]
  int max_delta = 0;               // the largest |i - j|: the model's positions - 1
  float scale = 1.0f;              // 1 / sqrt(head_dim x the number of terms)
};
void disentangled_attention(const float* qkv, float* ctx, const int64_t* seq_offsets, const int32_t* lengths,
                            const int32_t* key_lengths, int sequences, int heads, int head_dim,
                            const RelativeAttention& rel, float* scratch, int64_t scratch_floats_per_thread);
int64_t disentangled_scratch_floats(int max_length, int span);

// Rotates every head's query and key of each token of `qkv` ([tokens,
// 3*hidden], as attention() reads it) by its position's row of `table`
// (backend/rotary.h's rotary_table()).
void apply_rotary(float* qkv, int64_t tokens, const int32_t* positions, int heads, int head_dim,
                  const float* table);

// The GELU GLU: y[r][i] = gelu(x[r][i]) * x[r][cols + i] for x [rows,
// 2*cols] ([input | gate]) and y [rows, cols].
void gelu_glu(const float* x, float* y, int64_t rows, int cols);

// erf(x) with the same kind of vectorisable approximation (Abramowitz and
// Stegun 7.1.26 on top of exp_approx): max abs error below 1e-6 for every
// finite x. Exposed for tests.
float erf_approx(float x);
// GELU as in torch (erf form): 0.5 x (1 + erf(x / sqrt(2))), on erf_approx.
float gelu_erf_approx(float x);

// bf16 round-to-nearest-even of each value, kept as fp32 (the low 16 bits of
// the result are zero). n values; x and y may be the same buffer. Finite
// inputs only (a NaN may become infinity).
void round_to_bf16(const float* x, float* y, int64_t n);
// The same rounding, stored as bf16 bit patterns.
void convert_to_bf16(const float* x, uint16_t* y, int64_t n);

// Dynamic per-row asymmetric uint8 quantization of x [rows, cols]:
// x[r][c] ~= row_scale[r] * (q[r][c] - row_zero[r]). The range of each row is
// widened to include 0, so row_zero is an integer in [0, 255] and a constant
// (or all-zero) row never divides by zero; the error is at most
// row_scale / 2 (plus fp32 rounding). Parallel over rows.
void quantize_rows_u8(const float* x, int64_t rows, int cols, uint8_t* q, float* row_scale, float* row_zero);

// What the int8 epilogue does with y' = row_scale[r] * (acc - row_zero[r] *
// colsum_scaled[c]) + bias[c].
enum class EpilogueOp { kStore, kGelu, kRelu, kAccumulate };

// The int8 linear layer's epilogue over [rows, cols]: kStore y = y',
// kGelu y = gelu_erf(y'), kRelu y = max(y', 0), kAccumulate y += y'. acc and y
// may be the same buffer except for kAccumulate. Parallel over rows.
void int8_epilogue(const float* acc, float* y, int64_t rows, int cols, const float* row_scale,
                   const float* row_zero, const float* colsum_scaled, const float* bias, EpilogueOp op);

}  // namespace infercost::backend::cpu
