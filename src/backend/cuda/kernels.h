// The CUDA encoder's own kernels (everything that is not a cuBLASLt GEMM),
// declared for host code compiled by g++ (cuda_backend.cc); defined in
// kernels.cu. Every function only enqueues work on `stream` and returns the
// launch error (cudaGetLastError), never synchronizes.
//
// Activations are stored in the backend's dtype (fp32, fp16 or bf16);
// LayerNorm, softmax and every reduction compute in fp32. Matrices are
// row-major. A batch is packed: the tokens of sequence s are rows
// [seq_start[s], seq_start[s+1]) of a [total_tokens, *] matrix, with no
// padding rows unless the batch computes its padding (then each sequence
// keeps all seq_len positions and only its first key_len[s] are attended to).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace infercost::backend::cuda {

enum class DType { kF32, kF16, kBF16 };

// Bytes of one element.
inline int dtype_size(DType t) {
  return t == DType::kF32 ? 4 : 2;
}

enum class Act { kNone, kGelu, kRelu, kTanh };

// out[t] = LayerNorm(word[ids[t]] + position[positions[t]] + type) * gamma + beta
// for t in [0, tokens), type being row types[t] of the table at type0 or,
// with types null, its row 0. word [vocab, hidden], position [max_pos,
// hidden] (null for a model without a position table: ModernBERT) and type0
// (null for DistilBERT: nothing added) are in `t`; gamma, beta fp32 [hidden].
// ids, positions and types are device arrays, already validated on the host.
// hidden <= 1024 (one warp holds a row in registers): cudaErrorInvalidValue
// otherwise, as for any negative count.
cudaError_t embed_layer_norm(DType t, const int32_t* ids, const int32_t* positions, int64_t tokens,
                             int hidden, const void* word, const void* position, const void* type0,
                             const float* gamma, const float* beta, float eps, void* out, cudaStream_t stream,
                             const int32_t* types = nullptr);

// x[r] = LayerNorm(x[r] + residual[r]) * gamma + beta over `rows` rows of
// `hidden`, in place in x (the residual add and the normalization fused; the
// sum is formed in fp32 and rounded once). x and residual in `t`;
// hidden <= 1024 as for embed_layer_norm.
cudaError_t add_layer_norm(DType t, void* x, const void* residual, int64_t rows, int hidden,
                           const float* gamma, const float* beta, float eps, cudaStream_t stream);

// The pre-norm encoder's step (ModernBERT): where `residual` is set, x[r] +=
// residual[r] first (the residual stream, formed in fp32 and rounded once to
// `t`); then y[r] = LayerNorm(x[r]) * gamma + beta, of the rounded sum. y may
// be x (then the sum is not stored, only its norm) or residual; residual may
// be null. hidden <= 1024 as for embed_layer_norm.
cudaError_t residual_layer_norm(DType t, void* x, const void* residual, void* y, int64_t rows, int hidden,
                                const float* gamma, const float* beta, float eps, cudaStream_t stream);

// Rotary position embeddings (the rotate-half form of HF's ModernBERT) on the
// queries and keys of qkv [tokens, 3*hidden] in place: for each head, the
// pair (x[i], x[i + head_dim/2]) of token r becomes (x1 c - x2 s, x2 c + x1 s)
// with c, s = table[positions[r]][i], table[positions[r]][head_dim/2 + i]
// (fp32 [positions, head_dim], rotary_table()'s layout; positions already
// validated against it). Computed in fp32, rounded once. head_dim even.
cudaError_t rotary(DType t, void* qkv, const int32_t* positions, int64_t tokens, int heads, int head_dim,
                   const float* table, cudaStream_t stream);

// The GELU GLU: y[r][i] = gelu(x[r][i]) * x[r][cols + i] for x [rows,
// 2*cols] ([input | gate]) and y [rows, cols], in `t` (exact erf GELU).
cudaError_t gelu_glu(DType t, const void* x, void* y, int64_t rows, int cols, cudaStream_t stream);

// x = act(x) elementwise over n values in `t` (exact erf GELU, as HF's
// "gelu"), for the layers whose GEMM epilogue could not apply it.
cudaError_t activation_inplace(DType t, void* x, int64_t n, Act act, cudaStream_t stream);

// Multi-head self-attention over a packed batch. qkv [total, 3*hidden] holds
// [Q | K | V] per token (head h at columns h*head_dim of each part); ctx
// [total, hidden] gets softmax(Q K^T * scale) V per head. Sequence s has
// seq_start[s+1] - seq_start[s] query rows and attends to its first
// key_len[s] rows (1 <= key_len[s] <= its rows). `max_rows` bounds the rows
// of any sequence (it sizes the grid). head_dim <= 128 and a multiple of 2
// (checked: cudaErrorInvalidValue otherwise, as for qkv or ctx not aligned to
// two elements or heads > 65535). Softmax in fp32 with an online (streaming)
// maximum, so sequences of any length fit in a fixed amount of shared memory
// (under 48 KiB). With `window` > 0 (local attention) query i sees only the
// keys j with |i - j| <= window, and a block of queries streams only the keys
// its queries can see, so the cost grows with length x window. A query that
// sees no key (a padded query past a window; a key_len[s] below 1, outside
// the contract) gives zeros.
cudaError_t attention(DType t, const void* qkv, void* ctx, const int32_t* seq_start, const int32_t* key_len,
                      int sequences, int max_rows, int heads, int head_dim, float scale, cudaStream_t stream,
                      int window = 0);

// DeBERTa's relative position tables for disentangled_attention: pos_key and
// pos_query [rows, heads * head_dim] in the attention's dtype (the relative
// embeddings through this layer's key and query projections; null where the
// model has no c2p or p2c term) and index[i - j + max_delta], the row of the
// offset i - j (model::relative_position_index), for |i - j| <= max_delta.
struct RelativeTables {
  const void* pos_key = nullptr;
  const void* pos_query = nullptr;
  const int32_t* index = nullptr;  // device, [2 max_delta + 1]
  int max_delta = 0;
};

// DeBERTa's disentangled attention: attention() (no window) with each score
// (q_i . k_j + q_i . pos_key[r] + k_j . pos_query[r]) * scale, r =
// index[i - j + max_delta], computed key tile by key tile (the rows of the
// tile's offsets staged in shared memory), never as a length x length x span
// tensor. head_dim <= 64 and even (cudaErrorInvalidValue otherwise, as for a
// null index or pointers not aligned to two elements); max_rows - 1 <=
// max_delta (offsets beyond are clamped).
cudaError_t disentangled_attention(DType t, const void* qkv, void* ctx, const int32_t* seq_start,
                                   const int32_t* key_len, int sequences, int max_rows, int heads,
                                   int head_dim, float scale, const RelativeTables& rel, cudaStream_t stream);

// out[i] = (float) x[rows[i]] for i in [0, n): gathers each sequence's [CLS]
// row out of the packed activations into fp32 [n, hidden] for the head.
cudaError_t gather_rows_f32(DType t, const void* x, const int32_t* rows, int n, int hidden, float* out,
                            cudaStream_t stream);

// How pool_rows_f32 makes one vector of a sequence's rows: Pooling's
// choices (the backend maps one onto the other; the kernels include no
// engine header).
enum class Pool : int { kCls = 0, kMean = 1, kMax = 2, kLastToken = 3 };

// out[s] = the pool of rows [seq_start[s], seq_start[s] + key_len[s]) of x
// [total, hidden] (a sequence's real tokens: its padding rows, where computed,
// follow them), as fp32 [sequences, hidden]: the first row, the mean, the
// element-wise maximum or the last row; sums in fp32. A key_len[s] below 1
// gives zeros.
cudaError_t pool_rows_f32(DType t, const void* x, const int32_t* seq_start, const int32_t* key_len,
                          int sequences, int hidden, Pool pool, float* out, cudaStream_t stream);

// y[i] = act(y[i] + bias[i % cols]) over rows x cols fp32 (the classifier
// head's epilogue where cuBLASLt has none: tanh).
cudaError_t bias_act_f32(float* y, const float* bias, int64_t rows, int cols, Act act, cudaStream_t stream);

// dst[i] = (t) src[i] for n values: uploads fp32 host-converted weights are
// done on the host instead; this converts on the device (tests, the GEMM
// peak benchmark's random data).
cudaError_t convert_from_f32(DType t, const float* src, void* dst, int64_t n, cudaStream_t stream);
cudaError_t convert_to_f32(DType t, const void* src, float* dst, int64_t n, cudaStream_t stream);

}  // namespace infercost::backend::cuda
