// The CUDA encoder's own kernels (see kernels.h). Storage is float, __half
// or __nv_bfloat16; every value is converted to fp32 on load and rounded
// once on store. Only conversions are used on the 16-bit types, so the same
// code compiles for sm_75 (no native bf16 arithmetic) and newer.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "backend/cuda/device_math.cuh"
#include "backend/cuda/kernels.h"

namespace infercost::backend::cuda {
namespace {

// ---- LayerNorm --------------------------------------------------------------
//
// One warp per row with the row held in registers (hidden <= 1024 = 32 lanes
// x 32 values), so the mean and the variance take two passes over
// registers (no Welford needed) and the input is read once. Lane l holds the
// V-element chunks l, l + 32, l + 64, ...: V = 16 bytes of T when every row
// and parameter is 16-byte aligned, else 1.

constexpr int kLnWarps = 4;
constexpr int kLnMaxHidden = 1024;
constexpr int kLnPerLane = kLnMaxHidden / 32;

template <int V>
__device__ __forceinline__ void load_params(const float* p, float (&out)[V]) {
  if constexpr (V % 4 == 0) {
#pragma unroll
    for (int j = 0; j < V; j += 4) {
      const float4 f = *reinterpret_cast<const float4*>(p + j);
      out[j] = f.x;
      out[j + 1] = f.y;
      out[j + 2] = f.z;
      out[j + 3] = f.w;
    }
  } else {
#pragma unroll
    for (int j = 0; j < V; ++j) out[j] = p[j];
  }
}

// Normalizes the row in v (zeros past hidden) and stores it to y.
template <typename T, int V>
__device__ __forceinline__ void layer_norm_store(float (&v)[kLnPerLane], int hidden, const float* gamma,
                                                 const float* beta, float eps, T* y) {
  constexpr int kChunks = kLnPerLane / V;
  const int lane = threadIdx.x % 32;
  // Centering on the row's first value keeps the fp32 sums small when the
  // mean is large against the spread (the padding past hidden stays 0).
  const float shift = __shfl_sync(kFullMask, v[0], 0);
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    if ((lane + 32 * k) * V < hidden) {
#pragma unroll
      for (int j = 0; j < V; ++j) v[k * V + j] -= shift;
    }
  }
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < kLnPerLane; ++i) sum += v[i];
  const float mean = warp_sum(sum) / static_cast<float>(hidden);
  float sq = 0.0f;
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    if ((lane + 32 * k) * V < hidden) {
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const float d = v[k * V + j] - mean;
        sq += d * d;
      }
    }
  }
  const float inv = rsqrtf(warp_sum(sq) / static_cast<float>(hidden) + eps);
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const int c = (lane + 32 * k) * V;
    if (c < hidden) {
      float g[V], b[V], out[V];
      load_params<V>(gamma + c, g);
      load_params<V>(beta + c, b);
#pragma unroll
      for (int j = 0; j < V; ++j) out[j] = (v[k * V + j] - mean) * inv * g[j] + b[j];
      store_vec<T, V>(y + c, out);
    }
  }
}

template <typename T, int V>
__global__ void __launch_bounds__(kLnWarps * 32)
    embed_layer_norm_kernel(const int32_t* ids, const int32_t* positions, int64_t tokens, int hidden,
                            const T* word, const T* position, const T* type0, const int32_t* types,
                            const float* gamma, const float* beta, float eps, T* out) {
  constexpr int kChunks = kLnPerLane / V;
  const int64_t row = int64_t(blockIdx.x) * kLnWarps + threadIdx.x / 32;
  if (row >= tokens) return;  // the whole warp leaves together
  const int lane = threadIdx.x % 32;
  const T* w = word + int64_t(ids[row]) * hidden;
  const T* p = position != nullptr ? position + int64_t(positions[row]) * hidden : nullptr;
  const T* type = type0 != nullptr && types != nullptr ? type0 + int64_t(types[row]) * hidden : type0;
  float v[kLnPerLane];
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const int c = (lane + 32 * k) * V;
    float a[V] = {}, b[V] = {}, t[V] = {};
    if (c < hidden) {
      load_vec<T, V>(w + c, a);
      if (p != nullptr) load_vec<T, V>(p + c, b);
      if (type != nullptr) load_vec<T, V>(type + c, t);
    }
#pragma unroll
    for (int j = 0; j < V; ++j) v[k * V + j] = a[j] + b[j] + t[j];
  }
  layer_norm_store<T, V>(v, hidden, gamma, beta, eps, out + row * hidden);
}

// y = LayerNorm(x + residual) (residual may be null). kRoundSum: the sum is
// rounded to T first and, where x is not y, stored in x (the pre-norm
// residual stream); otherwise it stays fp32 and y is x (the post-norm add).
// Each lane reads its own values before it writes them, so y may alias x or
// residual.
template <typename T, int V, bool kRoundSum>
__global__ void __launch_bounds__(kLnWarps * 32)
    residual_layer_norm_kernel(T* x, const T* residual, T* y, int64_t rows, int hidden, const float* gamma,
                               const float* beta, float eps) {
  constexpr int kChunks = kLnPerLane / V;
  const int64_t row = int64_t(blockIdx.x) * kLnWarps + threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32;
  T* xr = x + row * hidden;
  const T* rr = residual != nullptr ? residual + row * hidden : nullptr;
  T* yr = y + row * hidden;
  const bool keep_sum = kRoundSum && rr != nullptr && x != y;
  float v[kLnPerLane];
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const int c = (lane + 32 * k) * V;
    float a[V] = {}, b[V] = {};
    if (c < hidden) {
      load_vec<T, V>(xr + c, a);
      if (rr != nullptr) load_vec<T, V>(rr + c, b);
    }
#pragma unroll
    for (int j = 0; j < V; ++j) v[k * V + j] = kRoundSum ? to_float(from_float<T>(a[j] + b[j])) : a[j] + b[j];
    if (keep_sum && c < hidden) {
      float sum[V];
#pragma unroll
      for (int j = 0; j < V; ++j) sum[j] = v[k * V + j];
      store_vec<T, V>(xr + c, sum);
    }
  }
  layer_norm_store<T, V>(v, hidden, gamma, beta, eps, yr);
}

unsigned ln_blocks(int64_t rows) {
  return static_cast<unsigned>((rows + kLnWarps - 1) / kLnWarps);
}

bool ln_args_ok(int64_t rows, int hidden) {
  return rows >= 0 && hidden >= 1 && hidden <= kLnMaxHidden && (rows + kLnWarps - 1) / kLnWarps <= INT_MAX;
}

// ---- Elementwise ------------------------------------------------------------

// x = act(x) over n values, V at a time (x 16-byte aligned when V > 1); the
// n % V tail is done by the first block.
template <typename T, int V>
__global__ void activation_kernel(T* x, int64_t n, Act act) {
  const int64_t vecs = n / V;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vecs; i += stride) {
    float v[V];
    load_vec<T, V>(x + i * V, v);
#pragma unroll
    for (int j = 0; j < V; ++j) v[j] = apply_act(act, v[j]);
    store_vec<T, V>(x + i * V, v);
  }
  if (blockIdx.x == 0) {
    for (int64_t i = vecs * V + threadIdx.x; i < n; i += blockDim.x)
      x[i] = from_float<T>(apply_act(act, to_float(x[i])));
  }
}

// One thread per (token, q or k head, i < head_dim / 2), grid-stride.
template <typename T>
__global__ void rotary_kernel(T* qkv, const int32_t* positions, int64_t tokens, int heads, int head_dim,
                              const float* table) {
  const int half = head_dim / 2;
  const int64_t per_token = int64_t(2) * heads * half;
  const int64_t n = tokens * per_token;
  const int64_t hidden = int64_t(heads) * head_dim;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t t = i / per_token;
    const int64_t rest = i - t * per_token;
    const int64_t head = rest / half;  // q heads, then k heads
    const int j = int(rest - head * half);
    const float* cs = table + int64_t(positions[t]) * head_dim;
    T* a = qkv + t * 3 * hidden + head * head_dim;
    const float x1 = to_float(a[j]), x2 = to_float(a[j + half]);
    const float c = cs[j], sn = cs[half + j];
    a[j] = from_float<T>(x1 * c - x2 * sn);
    a[j + half] = from_float<T>(x2 * c + x1 * sn);
  }
}

template <typename T>
__global__ void gelu_glu_kernel(const T* x, T* y, int64_t rows, int cols) {
  const int64_t n = rows * cols;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t r = i / cols;
    const int64_t c = i - r * cols;
    const T* xr = x + r * 2 * cols;
    y[i] = from_float<T>(apply_act(Act::kGelu, to_float(xr[c])) * to_float(xr[cols + c]));
  }
}

template <typename T>
__global__ void gather_rows_kernel(const T* x, const int32_t* rows, int hidden, float* out) {
  const T* src = x + int64_t(rows[blockIdx.x]) * hidden;
  float* dst = out + int64_t(blockIdx.x) * hidden;
  for (int c = threadIdx.x; c < hidden; c += blockDim.x) dst[c] = to_float(src[c]);
}

// One block per sequence: each thread pools its columns over the sequence's
// key_len[s] real rows (rows from seq_start[s]); sums in fp32.
template <typename T>
__global__ void pool_rows_kernel(const T* x, const int32_t* seq_start, const int32_t* key_len, int hidden,
                                 Pool pool, float* out) {
  const int s = blockIdx.x;
  const int64_t first = seq_start[s];
  const int n = key_len[s];
  float* dst = out + int64_t(s) * hidden;
  for (int c = threadIdx.x; c < hidden; c += blockDim.x) {
    const T* col = x + first * hidden + c;
    float v = 0.0f;
    if (n < 1) {
      v = 0.0f;
    } else if (pool == Pool::kCls) {
      v = to_float(col[0]);
    } else if (pool == Pool::kLastToken) {
      v = to_float(col[int64_t(n - 1) * hidden]);
    } else if (pool == Pool::kMax) {
      v = to_float(col[0]);
      for (int r = 1; r < n; ++r) v = fmaxf(v, to_float(col[int64_t(r) * hidden]));
    } else {
      for (int r = 0; r < n; ++r) v += to_float(col[int64_t(r) * hidden]);
      v /= float(n);
    }
    dst[c] = v;
  }
}

__global__ void bias_act_kernel(float* y, const float* bias, int64_t rows, int cols, Act act) {
  const int64_t n = rows * cols;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    y[i] = apply_act(act, y[i] + bias[i % cols]);
  }
}

template <typename S, typename D>
__global__ void convert_kernel(const S* src, D* dst, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    dst[i] = from_float<D>(to_float(src[i]));
  }
}

// ---- Attention ----------------------------------------------------------------
//
// A block of kAttnWarps warps takes one (sequence, head, tile of query rows);
// each warp owns R consecutive query rows. The keys are streamed through
// shared memory 32 at a time: lane j scores key j of the tile against the
// warp's R rows (q in shared memory, pre-scaled by scale * log2(e) so the
// softmax uses exp2), the running maximum is warp-uniform, and each lane
// keeps its own partial row sums, reduced once at the end. For P V, the
// probabilities go through a per-warp shared buffer and lane l accumulates
// the output pairs 2l and 2l + 64 (NP = 1 for head_dim <= 64, else 2).
//
// Shared memory (fp32): q [QT][d4], K [32][ks], V [32][head_dim],
// P [warps][R][32], with d4 = head_dim rounded up to 4 (zero padded) and ks
// = d4 or d4 + 4 so that ks / 4 is odd: the lanes' 16-byte K reads then fall
// on distinct banks in every quarter warp.
//
// DeBERTa's disentangled attention (kRel) adds two terms to each score: for
// query i and key j at relative row r = index[i - j + max_delta], q_i . pk[r]
// (c2p) and k_j . pq[r] (p2c). A key tile's 32 keys and the block's QT
// queries are at QT + 31 distinct offsets i - j, so each key tile also
// stages those offsets' rows of pk and pq (this head's columns, [QT + 31][ks]
// each): the products are formed tile by tile, never as a length x length x
// span tensor. With QT = 16 the buffers stay under 48 KiB for head_dim <= 64,
// which every DeBERTa-v2/v3 checkpoint has.

constexpr int kAttnWarps = 4;
constexpr int kKeyTile = 32;
constexpr int kMaxHeadDim = 128;
constexpr int kMaxRelHeadDim = 64;  // the disentangled attention's (kRel)
constexpr float kLog2e = 1.4426950408889634f;

// The block's query rows: R a warp, 16 accumulators per lane either way; with
// DeBERTa's relative terms (kRel) 4 a warp, so that the staged relative rows
// fit too (below).
template <int NP, bool kRel = false>
struct AttnTile {
  static constexpr int kRowsPerWarp = kRel ? 4 : NP == 1 ? 8 : 4;
  static constexpr int kQueryRows = kAttnWarps * kRowsPerWarp;
  // The offsets i - j between the block's queries and a key tile's keys.
  static constexpr int kOffsets = kQueryRows + kKeyTile - 1;
};

__host__ __device__ inline int attn_d4(int head_dim) {
  return (head_dim + 3) & ~3;
}
__host__ __device__ inline int attn_ks(int head_dim) {
  const int d4 = attn_d4(head_dim);
  return (d4 / 4) % 2 == 1 ? d4 : d4 + 4;
}

template <int NP, bool kRel = false>
size_t attn_smem_bytes(int head_dim) {
  using Tile = AttnTile<NP, kRel>;
  const size_t ks = size_t(attn_ks(head_dim));
  return sizeof(float) *
         (size_t(Tile::kQueryRows) * attn_d4(head_dim) + size_t(kKeyTile) * ks + size_t(kKeyTile) * head_dim +
          size_t(kAttnWarps) * Tile::kRowsPerWarp * kKeyTile + (kRel ? 2 * size_t(Tile::kOffsets) * ks : 0));
}

template <typename T>
__device__ __forceinline__ float2 load_pair(const T* p) {
  float v[2];
  load_vec<T, 2>(p, v);
  return make_float2(v[0], v[1]);
}

__device__ __forceinline__ float component(const float4& f, int j) {
  return j == 0 ? f.x : j == 1 ? f.y : j == 2 ? f.z : f.w;
}

// The block's threads share the staging of `rows` rows of head_dim values
// into shared memory as fp32 pairs: stage(r, c) for each row r and pair c
// (columns 2c, 2c + 1) up to the padded width attn_d4(head_dim); the pairs
// from head_dim / 2 on are padding, which stage() fills with zeros.
template <typename Stage>
__device__ __forceinline__ void attn_stage_pairs(int rows, int head_dim, Stage stage) {
  const int pairs4 = attn_d4(head_dim) / 2;
  for (int i = threadIdx.x; i < rows * pairs4; i += blockDim.x) {
    const int r = i / pairs4;
    stage(r, i - r * pairs4);
  }
}

// Stages the block's QT query rows in q_s as fp32 [QT][d4], scaled by
// q_scale; rows past `rows` and columns past head_dim are zeros.
template <typename T, int QT>
__device__ __forceinline__ void attn_stage_queries(float* q_s, const T* q_g, int row0, int rows, int64_t ld,
                                                   int head_dim, float q_scale) {
  const int d4 = attn_d4(head_dim);
  const int pairs = head_dim / 2;
  attn_stage_pairs(QT, head_dim, [&](int r, int c) {
    float2 q = make_float2(0.0f, 0.0f);
    if (row0 + r < rows && c < pairs) {
      q = load_pair(q_g + int64_t(row0 + r) * ld + 2 * c);
      q.x *= q_scale;
      q.y *= q_scale;
    }
    *reinterpret_cast<float2*>(q_s + r * d4 + 2 * c) = q;
  });
}

// Stages keys k0 .. k0 + nk - 1 in k_s ([32][ks]) and their values in v_s
// ([32][head_dim]); keys past nk are zeros, and so are K's columns past
// head_dim.
template <typename T>
__device__ __forceinline__ void attn_stage_keys(float* k_s, float* v_s, const T* k_g, const T* v_g, int k0,
                                                int nk, int64_t ld, int head_dim) {
  const int ks = attn_ks(head_dim);
  const int pairs = head_dim / 2;
  attn_stage_pairs(kKeyTile, head_dim, [&](int j, int c) {
    float2 kv = make_float2(0.0f, 0.0f), vv = make_float2(0.0f, 0.0f);
    if (j < nk && c < pairs) {
      const int64_t off = int64_t(k0 + j) * ld + 2 * c;
      kv = load_pair(k_g + off);
      vv = load_pair(v_g + off);
    }
    *reinterpret_cast<float2*>(k_s + j * ks + 2 * c) = kv;
    if (c < pairs) *reinterpret_cast<float2*>(v_s + j * head_dim + 2 * c) = vv;
  });
}

// sc[r]: the score of the warp's query row r (qr, [R][d4]) against key
// `lane` of the tile; -inf for a lane past the nk keys.
template <int R>
__device__ __forceinline__ void attn_scores(float (&sc)[R], const float* qr, const float* k_s, int lane,
                                            int nk, int head_dim) {
  // (The local window's mask is applied by attn_window_mask.)
  const int d4 = attn_d4(head_dim);
#pragma unroll
  for (int r = 0; r < R; ++r) sc[r] = 0.0f;
  if (lane < nk) {
    const float* kr = k_s + lane * attn_ks(head_dim);
#pragma unroll 4
    for (int d = 0; d < d4; d += 4) {
      const float4 kk = *reinterpret_cast<const float4*>(kr + d);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const float4 qq = *reinterpret_cast<const float4*>(qr + r * d4 + d);
        sc[r] += qq.x * kk.x + qq.y * kk.y + qq.z * kk.z + qq.w * kk.w;
      }
    }
  } else {
#pragma unroll
    for (int r = 0; r < R; ++r) sc[r] = -INFINITY;
  }
}

// Local attention: the score of query row first + r against key `key` is
// -inf where they are more than `window` apart.
template <int R>
__device__ __forceinline__ void attn_window_mask(float (&sc)[R], int first, int key, int window) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int d = first + r - key;
    if (d > window || d < -window) sc[r] = -INFINITY;
  }
}

// Online softmax over one tile of scores: rescales the running maximum m,
// sums l and accumulators acc, and writes the tile's probabilities to p_s
// ([R][32]). A row whose scores so far are all -inf (a local window's first
// tiles) keeps m = -inf, l = 0 and acc = 0: it subtracts 0 instead, and
// exp2(-inf) = 0.
template <int R, int NP>
__device__ __forceinline__ void attn_softmax_tile(const float (&sc)[R], float (&m)[R], float (&l)[R],
                                                  float (&acc)[R][2 * NP], float* p_s, int lane) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const float m_new = fmaxf(m[r], warp_max(sc[r]));
    const float m_sub = m_new == -INFINITY ? 0.0f : m_new;
    const float alpha = exp2f(m[r] - m_sub);
    const float p = exp2f(sc[r] - m_sub);
    l[r] = l[r] * alpha + p;
#pragma unroll
    for (int i = 0; i < 2 * NP; ++i) acc[r][i] *= alpha;
    m[r] = m_new;
    p_s[r * kKeyTile + lane] = p;
  }
}

// acc += P V over the tile's nk keys: lane l holds output pairs 2l and
// 2l + 64. Keys past nk have p = 0 and V = 0; P is read in whole float4s.
template <int R, int NP>
__device__ __forceinline__ void attn_accumulate_pv(float (&acc)[R][2 * NP], const float* p_s,
                                                   const float* v_s, int nk, int lane, int head_dim) {
  const int nk4 = (nk + 3) & ~3;
  for (int j = 0; j < nk4; j += 4) {
    float4 pr[R];
#pragma unroll
    for (int r = 0; r < R; ++r) pr[r] = *reinterpret_cast<const float4*>(p_s + r * kKeyTile + j);
#pragma unroll
    for (int jj = 0; jj < 4; ++jj) {
#pragma unroll
      for (int n = 0; n < NP; ++n) {
        // Lanes past head_dim read a valid pair and never store it.
        const int d = min(2 * (lane + 32 * n), head_dim - 2);
        const float2 vv = *reinterpret_cast<const float2*>(v_s + (j + jj) * head_dim + d);
#pragma unroll
        for (int r = 0; r < R; ++r) {
          const float pj = component(pr[r], jj);
          acc[r][2 * n] += pj * vv.x;
          acc[r][2 * n + 1] += pj * vv.y;
        }
      }
    }
  }
}

// Writes acc / (the warp's sum of l) for the warp's rows first .. (before
// `rows`) to o_g; zeros for a row that saw no key (sum 0, acc 0).
template <typename T, int R, int NP>
__device__ __forceinline__ void attn_store(T* o_g, const float (&acc)[R][2 * NP], const float (&l)[R],
                                           int first, int rows, int64_t hidden, int lane, int head_dim) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const float sum = warp_sum(l[r]);
    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
    const int row = first + r;
    if (row >= rows) continue;
#pragma unroll
    for (int n = 0; n < NP; ++n) {
      const int d = 2 * (lane + 32 * n);
      if (d < head_dim) {
        const float out[2] = {acc[r][2 * n] * inv, acc[r][2 * n + 1] * inv};
        store_vec<T, 2>(o_g + int64_t(row) * hidden + d, out);
      }
    }
  }
}

// DeBERTa's relative tables as a kernel reads them (kernels.h's
// RelativeTables, typed): pk, pq at this layer's [rows, hidden] tables.
template <typename T>
struct RelArgs {
  const T* pos_key = nullptr;
  const T* pos_query = nullptr;
  const int32_t* index = nullptr;
  int max_delta = 0;
};

// Stages the rows of table (pk or pq, this head's columns at `table`) for the
// offsets d0 .. d0 + offsets - 1 in rel_s ([offsets][ks]), zeros past
// head_dim; offsets beyond +-max_delta (outside the contract) are clamped to
// it; a null table stages nothing.
template <typename T>
__device__ __forceinline__ void rel_stage(float* rel_s, const T* table, const int32_t* index, int max_delta,
                                          int d0, int offsets, int64_t hidden, int head_dim) {
  if (table == nullptr) return;
  const int ks = attn_ks(head_dim);
  const int pairs = head_dim / 2;
  attn_stage_pairs(offsets, head_dim, [&](int t, int c) {
    float2 v = make_float2(0.0f, 0.0f);  // columns past head_dim: zeros, as q's and k's
    if (c < pairs) {
      const int d = min(max(d0 + t, -max_delta), max_delta);
      v = load_pair(table + int64_t(index[d + max_delta]) * hidden + 2 * c);
    }
    *reinterpret_cast<float2*>(rel_s + t * ks + 2 * c) = v;
  });
}

__device__ __forceinline__ float dot_d4(const float* a, const float* b, int d4) {
  float sum = 0.0f;
  for (int d = 0; d < d4; d += 4) {
    const float4 x = *reinterpret_cast<const float4*>(a + d);
    const float4 y = *reinterpret_cast<const float4*>(b + d);
    sum += x.x * y.x + x.y * y.y + x.z * y.z + x.w * y.w;
  }
  return sum;
}

// sc[r] += q_r . pk[t] + k_lane . pq[t] * k_scale for the warp's rows (qr,
// already scaled), t the staged row of the offset between query `first` + r
// (counted from the block's first) and key `lane` of the tile; null pk_s or
// pq_s: no such term.
template <int R>
__device__ __forceinline__ void rel_scores(float (&sc)[R], const float* qr, const float* k_s,
                                           const float* pk_s, const float* pq_s, int first, int lane, int nk,
                                           int head_dim, float k_scale) {
  if (lane >= nk) return;  // -inf already
  const int d4 = attn_d4(head_dim), ks = attn_ks(head_dim);
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int t = first + r - lane + kKeyTile - 1;
    if (pk_s != nullptr) sc[r] += dot_d4(qr + r * d4, pk_s + t * ks, d4);
    if (pq_s != nullptr) sc[r] += dot_d4(k_s + lane * ks, pq_s + t * ks, d4) * k_scale;
  }
}

template <typename T, int NP, bool kRel>
__global__ void __launch_bounds__(kAttnWarps * 32)
    attention_kernel(const T* qkv, T* ctx, const int32_t* seq_start, const int32_t* key_len, int tiles,
                     int heads, int head_dim, float q_scale, int window, RelArgs<T> rel) {
  using Tile = AttnTile<NP, kRel>;
  constexpr int R = Tile::kRowsPerWarp;
  constexpr int QT = Tile::kQueryRows;
  extern __shared__ float4 smem4[];

  const int s = blockIdx.x / tiles;
  const int row0 = (blockIdx.x % tiles) * QT;
  const int h = blockIdx.y;
  const int start = seq_start[s];
  const int rows = seq_start[s + 1] - start;
  if (row0 >= rows) return;  // block-uniform, before any barrier
  const int keys = min(key_len[s], rows);

  const int64_t hidden = int64_t(heads) * head_dim;
  const int64_t ld = 3 * hidden;
  const T* q_g = qkv + int64_t(start) * ld + int64_t(h) * head_dim;
  const T* k_g = q_g + hidden;
  const T* v_g = q_g + 2 * hidden;
  T* o_g = ctx + int64_t(start) * hidden + int64_t(h) * head_dim;

  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int first = row0 + warp * R;  // this warp's first query row
  const bool active = first < rows;

  if (keys < 1) {  // outside the contract (key_len >= 1): defined zeros rather than NaN
    if (active) {
      for (int r = 0; r < R && first + r < rows; ++r) {
        for (int d = lane; d < head_dim; d += 32) o_g[int64_t(first + r) * hidden + d] = from_float<T>(0.0f);
      }
    }
    return;
  }

  const int d4 = attn_d4(head_dim), ks = attn_ks(head_dim);
  float* q_s = reinterpret_cast<float*>(smem4);
  float* k_s = q_s + QT * d4;
  float* v_s = k_s + kKeyTile * ks;
  float* p_all = v_s + kKeyTile * head_dim;
  float* p_s = p_all + warp * R * kKeyTile;
  float* pk_s = p_all + kAttnWarps * R * kKeyTile;  // kRel only
  float* pq_s = pk_s + Tile::kOffsets * ks;
  const T* pk_g = rel.pos_key == nullptr ? nullptr : rel.pos_key + int64_t(h) * head_dim;
  const T* pq_g = rel.pos_query == nullptr ? nullptr : rel.pos_query + int64_t(h) * head_dim;
  attn_stage_queries<T, QT>(q_s, q_g, row0, rows, ld, head_dim, q_scale);

  float m[R], l[R], acc[R][2 * NP];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    m[r] = -INFINITY;
    l[r] = 0.0f;
#pragma unroll
    for (int i = 0; i < 2 * NP; ++i) acc[r][i] = 0.0f;
  }

  // The keys the block's queries see: all, or those within `window` of one.
  const int k_begin = window > 0 ? max(0, row0 - window) : 0;
  const int k_end = window > 0 ? min(keys, row0 + QT + window) : keys;
  for (int k0 = k_begin; k0 < k_end; k0 += kKeyTile) {
    const int nk = min(kKeyTile, k_end - k0);
    __syncthreads();  // the previous tile is no longer read
    attn_stage_keys(k_s, v_s, k_g, v_g, k0, nk, ld, head_dim);
    // The offsets i - j of this tile: row0 - (k0 + 31) .. row0 + QT - 1 - k0.
    const int d0 = row0 - k0 - (kKeyTile - 1);
    if (kRel) {
      rel_stage(pk_s, pk_g, rel.index, rel.max_delta, d0, Tile::kOffsets, hidden, head_dim);
      rel_stage(pq_s, pq_g, rel.index, rel.max_delta, d0, Tile::kOffsets, hidden, head_dim);
    }
    __syncthreads();
    if (!active) continue;
    float sc[R];
    attn_scores<R>(sc, q_s + warp * R * d4, k_s, lane, nk, head_dim);
    if (kRel) {
      rel_scores<R>(sc, q_s + warp * R * d4, k_s, pk_g == nullptr ? nullptr : pk_s,
                    pq_g == nullptr ? nullptr : pq_s, warp * R, lane, nk, head_dim, q_scale);
    }
    if (window > 0) attn_window_mask<R>(sc, first, k0 + lane, window);
    attn_softmax_tile<R, NP>(sc, m, l, acc, p_s, lane);
    __syncwarp();
    attn_accumulate_pv<R, NP>(acc, p_s, v_s, nk, lane, head_dim);
    __syncwarp();  // P is rewritten by the next tile
  }

  if (!active) return;
  attn_store<T, R, NP>(o_g, acc, l, first, rows, hidden, lane, head_dim);
}

template <typename T, int NP, bool kRel = false>
cudaError_t launch_attention(const void* qkv, void* ctx, const int32_t* seq_start, const int32_t* key_len,
                             int sequences, int max_rows, int heads, int head_dim, float scale, int window,
                             cudaStream_t stream, const RelativeTables& tables = {}) {
  constexpr int QT = AttnTile<NP, kRel>::kQueryRows;
  const int tiles = (max_rows + QT - 1) / QT;
  if (int64_t(tiles) * sequences > INT_MAX) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(tiles * sequences), static_cast<unsigned>(heads));
  RelArgs<T> rel;
  rel.pos_key = static_cast<const T*>(tables.pos_key);
  rel.pos_query = static_cast<const T*>(tables.pos_query);
  rel.index = tables.index;
  rel.max_delta = tables.max_delta;
  attention_kernel<T, NP, kRel><<<grid, kAttnWarps * 32, attn_smem_bytes<NP, kRel>(head_dim), stream>>>(
      static_cast<const T*>(qkv), static_cast<T*>(ctx), seq_start, key_len, tiles, heads, head_dim,
      scale * kLog2e, window, rel);
  return cudaGetLastError();
}

// Checks the arguments of a layer norm of `rows` rows of `hidden` values,
// then returns launch(Tag<T>{}, width) for the storage type T of `t` and the
// values its kernel reads at once (std::integral_constant): 16 bytes' worth
// where `hidden` is a multiple of that and every one of `pointers` is 16-byte
// aligned, else 1.
template <typename F>
cudaError_t launch_layer_norm(DType t, int64_t rows, int hidden, std::initializer_list<const void*> pointers,
                              F&& launch) {
  if (!ln_args_ok(rows, hidden)) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  return dispatch(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int kVec = 16 / sizeof(T);
    bool vec = hidden % kVec == 0;
    for (const void* p : pointers) vec = vec && aligned(p, 16);
    if (vec) return launch(tag, std::integral_constant<int, kVec>());
    return launch(tag, std::integral_constant<int, 1>());
  });
}

// Converts n values from float to `t` (kToF32 false) or from `t` to float.
template <bool kToF32>
cudaError_t convert_f32(DType t, const void* src, void* dst, int64_t n, cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  return dispatch(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using From = std::conditional_t<kToF32, T, float>;
    using To = std::conditional_t<kToF32, float, T>;
    convert_kernel<From, To><<<grid_for(n, kThreads), kThreads, 0, stream>>>(static_cast<const From*>(src),
                                                                             static_cast<To*>(dst), n);
    return cudaGetLastError();
  });
}

}  // namespace

cudaError_t embed_layer_norm(DType t, const int32_t* ids, const int32_t* positions, int64_t tokens,
                             int hidden, const void* word, const void* position, const void* type0,
                             const float* gamma, const float* beta, float eps, void* out, cudaStream_t stream,
                             const int32_t* types) {
  const std::initializer_list<const void*> pointers = {word, position, type0, gamma, beta, out};
  return launch_layer_norm(t, tokens, hidden, pointers, [&](auto tag, auto width) {
    using T = typename decltype(tag)::type;
    embed_layer_norm_kernel<T, decltype(width)::value><<<ln_blocks(tokens), kLnWarps * 32, 0, stream>>>(
        ids, positions, tokens, hidden, static_cast<const T*>(word), static_cast<const T*>(position),
        static_cast<const T*>(type0), types, gamma, beta, eps, static_cast<T*>(out));
    return cudaGetLastError();
  });
}

cudaError_t add_layer_norm(DType t, void* x, const void* residual, int64_t rows, int hidden,
                           const float* gamma, const float* beta, float eps, cudaStream_t stream) {
  return launch_layer_norm(t, rows, hidden, {x, residual, gamma, beta}, [&](auto tag, auto width) {
    using T = typename decltype(tag)::type;
    residual_layer_norm_kernel<T, decltype(width)::value, false>
        <<<ln_blocks(rows), kLnWarps * 32, 0, stream>>>(static_cast<T*>(x), static_cast<const T*>(residual),
                                                        static_cast<T*>(x), rows, hidden, gamma, beta, eps);
    return cudaGetLastError();
  });
}

cudaError_t residual_layer_norm(DType t, void* x, const void* residual, void* y, int64_t rows, int hidden,
                                const float* gamma, const float* beta, float eps, cudaStream_t stream) {
  return launch_layer_norm(t, rows, hidden, {x, residual, y, gamma, beta}, [&](auto tag, auto width) {
    using T = typename decltype(tag)::type;
    residual_layer_norm_kernel<T, decltype(width)::value, true>
        <<<ln_blocks(rows), kLnWarps * 32, 0, stream>>>(static_cast<T*>(x), static_cast<const T*>(residual),
                                                        static_cast<T*>(y), rows, hidden, gamma, beta, eps);
    return cudaGetLastError();
  });
}

cudaError_t rotary(DType t, void* qkv, const int32_t* positions, int64_t tokens, int heads, int head_dim,
                   const float* table, cudaStream_t stream) {
  if (tokens < 0 || heads < 1 || head_dim < 2 || head_dim % 2 != 0) return cudaErrorInvalidValue;
  if (tokens == 0) return cudaSuccess;
  return dispatch(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = tokens * heads * head_dim;  // pairs: tokens x 2 heads x head_dim / 2
    rotary_kernel<T><<<grid_for(n, kThreads), kThreads, 0, stream>>>(static_cast<T*>(qkv), positions, tokens,
                                                                     heads, head_dim, table);
    return cudaGetLastError();
  });
}

cudaError_t gelu_glu(DType t, const void* x, void* y, int64_t rows, int cols, cudaStream_t stream) {
  if (rows < 0 || cols < 0) return cudaErrorInvalidValue;
  if (rows == 0 || cols == 0) return cudaSuccess;
  return dispatch(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    gelu_glu_kernel<T><<<grid_for(rows * cols, kThreads), kThreads, 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(y), rows, cols);
    return cudaGetLastError();
  });
}

cudaError_t activation_inplace(DType t, void* x, int64_t n, Act act, cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0 || act == Act::kNone) return cudaSuccess;
  return dispatch(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int kVec = 16 / sizeof(T);
    auto* xt = static_cast<T*>(x);
    if (aligned(x, 16)) {
      activation_kernel<T, kVec><<<grid_for(n / kVec + 1, kThreads), kThreads, 0, stream>>>(xt, n, act);
    } else {
      activation_kernel<T, 1><<<grid_for(n, kThreads), kThreads, 0, stream>>>(xt, n, act);
    }
    return cudaGetLastError();
  });
}

cudaError_t attention(DType t, const void* qkv, void* ctx, const int32_t* seq_start, const int32_t* key_len,
                      int sequences, int max_rows, int heads, int head_dim, float scale, cudaStream_t stream,
                      int window) {
  if (window < 0) return cudaErrorInvalidValue;
  if (head_dim < 2 || head_dim > kMaxHeadDim || head_dim % 2 != 0) return cudaErrorInvalidValue;
  if (sequences < 0 || max_rows < 0 || heads < 1 || heads > 65535) return cudaErrorInvalidValue;
  if (sequences == 0 || max_rows == 0) return cudaSuccess;
  return dispatch(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // Pairs of T are read and written as one access.
    if (!aligned(qkv, 2 * sizeof(T)) || !aligned(ctx, 2 * sizeof(T))) return cudaErrorInvalidValue;
    return head_dim <= 64 ? launch_attention<T, 1>(qkv, ctx, seq_start, key_len, sequences, max_rows, heads,
                                                   head_dim, scale, window, stream)
                          : launch_attention<T, 2>(qkv, ctx, seq_start, key_len, sequences, max_rows, heads,
                                                   head_dim, scale, window, stream);
  });
}

cudaError_t disentangled_attention(DType t, const void* qkv, void* ctx, const int32_t* seq_start,
                                   const int32_t* key_len, int sequences, int max_rows, int heads,
                                   int head_dim, float scale, const RelativeTables& rel,
                                   cudaStream_t stream) {
  if (head_dim < 2 || head_dim > kMaxRelHeadDim || head_dim % 2 != 0) return cudaErrorInvalidValue;
  if (sequences < 0 || max_rows < 0 || heads < 1 || heads > 65535) return cudaErrorInvalidValue;
  if (rel.index == nullptr || rel.max_delta < 0) return cudaErrorInvalidValue;
  if (sequences == 0 || max_rows == 0) return cudaSuccess;
  return dispatch(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (const void* p : {qkv, static_cast<const void*>(ctx), rel.pos_key, rel.pos_query}) {
      if (!aligned(p, 2 * sizeof(T))) return cudaErrorInvalidValue;
    }
    return launch_attention<T, 1, true>(qkv, ctx, seq_start, key_len, sequences, max_rows, heads, head_dim,
                                        scale, 0, stream, rel);
  });
}

cudaError_t gather_rows_f32(DType t, const void* x, const int32_t* rows, int n, int hidden, float* out,
                            cudaStream_t stream) {
  if (n < 0 || hidden < 0) return cudaErrorInvalidValue;
  if (n == 0 || hidden == 0) return cudaSuccess;
  return dispatch(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    gather_rows_kernel<T><<<n, kThreads, 0, stream>>>(static_cast<const T*>(x), rows, hidden, out);
    return cudaGetLastError();
  });
}

cudaError_t pool_rows_f32(DType t, const void* x, const int32_t* seq_start, const int32_t* key_len,
                          int sequences, int hidden, Pool pool, float* out, cudaStream_t stream) {
  if (sequences < 0 || hidden < 0) return cudaErrorInvalidValue;
  if (sequences == 0 || hidden == 0) return cudaSuccess;
  return dispatch(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    pool_rows_kernel<T>
        <<<sequences, kThreads, 0, stream>>>(static_cast<const T*>(x), seq_start, key_len, hidden, pool, out);
    return cudaGetLastError();
  });
}

cudaError_t bias_act_f32(float* y, const float* bias, int64_t rows, int cols, Act act, cudaStream_t stream) {
  if (rows < 0 || cols < 0) return cudaErrorInvalidValue;
  if (rows == 0 || cols == 0) return cudaSuccess;
  bias_act_kernel<<<grid_for(rows * cols, kThreads), kThreads, 0, stream>>>(y, bias, rows, cols, act);
  return cudaGetLastError();
}

cudaError_t convert_from_f32(DType t, const float* src, void* dst, int64_t n, cudaStream_t stream) {
  return convert_f32<false>(t, src, dst, n, stream);
}

cudaError_t convert_to_f32(DType t, const void* src, float* dst, int64_t n, cudaStream_t stream) {
  return convert_f32<true>(t, src, dst, n, stream);
}

}  // namespace infercost::backend::cuda
