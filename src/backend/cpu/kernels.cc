#include "backend/cpu/kernels.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

// The row kernels are compiled twice, for x86-64-v3 (AVX2+FMA) and baseline,
// and the loader picks one (GCC function multiversioning), so the library
// still runs on CPUs without AVX2. The big GEMMs are oneDNN's own JIT code.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define INFERCOST_MULTIVERSION __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define INFERCOST_MULTIVERSION
#endif

namespace infercost::backend::cpu {
namespace {

// Branch-free e^x so that the softmax loop vectorises: x = n ln2 + r with
// |r| <= ln2/2, e^r from a degree-6 Taylor polynomial (truncation < 1e-7
// relative), 2^n assembled in the exponent bits.
inline float exp_inline(float x) {
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  // Round to nearest by adding and subtracting 1.5 * 2^23: unlike floor() it
  // vectorises on every x86-64 level, with no libm call.
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = x - n * 0.693145751953125f;  // ln2 split in two for exactness
  r = r - n * 1.428606765330187e-06f;
  float p = 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  return p * std::bit_cast<float>(bits);
}

// erf from Abramowitz and Stegun 7.1.26 (|error| <= 1.5e-7 in exact
// arithmetic): erf(a) = 1 - t P(t) e^{-a^2}, t = 1 / (1 + p a), a = |x|; odd
// symmetry gives the negative half. Branch-free so that loops vectorise.
inline float erf_inline(float x) {
  const float a = std::fabs(x);
  const float t = 1.0f / (1.0f + 0.3275911f * a);
  float p = 1.061405429f;
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  const float r = 1.0f - p * t * exp_inline(-a * a);
  return std::copysign(r, x);
}

inline float gelu_inline(float x) {
  return 0.5f * x * (1.0f + erf_inline(x * 0.70710678118654752f));
}

inline uint32_t bf16_round_bits(float x) {
  // Round to nearest, ties to even, on the bits: add 0x7fff plus the lowest
  // kept bit, then truncate.
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  return (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;
}

INFERCOST_MULTIVERSION
void quantize_row_u8(const float* x, int n, uint8_t* q, float* scale, float* zero) {
  float lo = 0.0f, hi = 0.0f;
#pragma omp simd reduction(min : lo) reduction(max : hi)
  for (int i = 0; i < n; ++i) {
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
  }
  const float range = hi - lo;
  // An all-zero (or denormal-only) row: any scale works, all codes are z = 0.
  const float s = range > 1e-30f ? range / 255.0f : 1.0f;
  const float inv = 1.0f / s;
  const float z = std::nearbyint(-lo * inv);  // in [0, 255] as lo <= 0 <= hi
  *scale = s;
  *zero = z;
#pragma omp simd
  for (int i = 0; i < n; ++i) {
    float v = x[i] * inv + z;
    v = v < 0.0f ? 0.0f : v;
    v = v > 255.0f ? 255.0f : v;
    q[i] = static_cast<uint8_t>(static_cast<int32_t>(v + 0.5f));  // v >= 0: round half up
  }
}

INFERCOST_MULTIVERSION
void epilogue_row(const float* acc, float* y, int n, float s, float z, const float* cs, const float* bias,
                  EpilogueOp op) {
  switch (op) {
    case EpilogueOp::kStore:
#pragma omp simd
      for (int i = 0; i < n; ++i) y[i] = s * (acc[i] - z * cs[i]) + bias[i];
      break;
    case EpilogueOp::kGelu:
#pragma omp simd
      for (int i = 0; i < n; ++i) y[i] = gelu_inline(s * (acc[i] - z * cs[i]) + bias[i]);
      break;
    case EpilogueOp::kRelu:
#pragma omp simd
      for (int i = 0; i < n; ++i) {
        const float v = s * (acc[i] - z * cs[i]) + bias[i];
        y[i] = v > 0.0f ? v : 0.0f;
      }
      break;
    case EpilogueOp::kAccumulate:
#pragma omp simd
      for (int i = 0; i < n; ++i) y[i] += s * (acc[i] - z * cs[i]) + bias[i];
      break;
  }
}

INFERCOST_MULTIVERSION
void round_bf16_impl(const float* x, float* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = std::bit_cast<float>(bf16_round_bits(x[i]));
}

INFERCOST_MULTIVERSION
void convert_bf16_impl(const float* x, uint16_t* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<uint16_t>(bf16_round_bits(x[i]) >> 16);
}

INFERCOST_MULTIVERSION
void layer_norm_row(const float* x, float* y, int n, const float* gamma, const float* beta, float eps) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int i = 0; i < n; ++i) sum += x[i];
  const float mean = sum / static_cast<float>(n);
  float sq = 0.0f;
#pragma omp simd reduction(+ : sq)
  for (int i = 0; i < n; ++i) {
    const float d = x[i] - mean;
    sq += d * d;
  }
  const float inv = 1.0f / std::sqrt(sq / static_cast<float>(n) + eps);
#pragma omp simd
  for (int i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv * gamma[i] + beta[i];
}

INFERCOST_MULTIVERSION
void add3_row(const float* a, const float* b, const float* c, float* y, int n) {
  if (c != nullptr) {
#pragma omp simd
    for (int i = 0; i < n; ++i) y[i] = a[i] + b[i] + c[i];
  } else {
#pragma omp simd
    for (int i = 0; i < n; ++i) y[i] = a[i] + b[i];
  }
}

INFERCOST_MULTIVERSION
void glu_row(const float* x, float* y, int n) {
#pragma omp simd
  for (int i = 0; i < n; ++i) y[i] = gelu_inline(x[i]) * x[n + i];
}

INFERCOST_MULTIVERSION
void softmax_row_impl(float* x, int n) {
  float mx = x[0];
#pragma omp simd reduction(max : mx)
  for (int i = 0; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int i = 0; i < n; ++i) {
    const float e = exp_inline(x[i] - mx);
    x[i] = e;
    sum += e;
  }
  const float inv = 1.0f / sum;
#pragma omp simd
  for (int i = 0; i < n; ++i) x[i] *= inv;
}

}  // namespace

float exp_approx(float x) {
  return exp_inline(x);
}

float erf_approx(float x) {
  return erf_inline(x);
}

float gelu_erf_approx(float x) {
  return gelu_inline(x);
}

void round_to_bf16(const float* x, float* y, int64_t n) {
  constexpr int64_t kChunk = 1 << 16;
#pragma omp parallel for schedule(static) if (n > kChunk)
  for (int64_t start = 0; start < n; start += kChunk) {
    round_bf16_impl(x + start, y + start, std::min(kChunk, n - start));
  }
}

void convert_to_bf16(const float* x, uint16_t* y, int64_t n) {
  constexpr int64_t kChunk = 1 << 16;
#pragma omp parallel for schedule(static) if (n > kChunk)
  for (int64_t start = 0; start < n; start += kChunk) {
    convert_bf16_impl(x + start, y + start, std::min(kChunk, n - start));
  }
}

void quantize_rows_u8(const float* x, int64_t rows, int cols, uint8_t* q, float* row_scale, float* row_zero) {
#pragma omp parallel for schedule(static) if (rows > 16)
  for (int64_t r = 0; r < rows; ++r) {
    quantize_row_u8(x + r * cols, cols, q + r * cols, row_scale + r, row_zero + r);
  }
}

void int8_epilogue(const float* acc, float* y, int64_t rows, int cols, const float* row_scale,
                   const float* row_zero, const float* colsum_scaled, const float* bias, EpilogueOp op) {
#pragma omp parallel for schedule(static) if (rows > 16)
  for (int64_t r = 0; r < rows; ++r) {
    epilogue_row(acc + r * cols, y + r * cols, cols, row_scale[r], row_zero[r], colsum_scaled, bias, op);
  }
}

void softmax_row(float* x, int n) {
  softmax_row_impl(x, n);
}

void layer_norm(const float* x, float* y, int64_t rows, int cols, const float* gamma, const float* beta,
                float eps) {
#pragma omp parallel for schedule(static) if (rows > 16)
  for (int64_t r = 0; r < rows; ++r) {
    layer_norm_row(x + r * cols, y + r * cols, cols, gamma, beta, eps);
  }
}

void embed_layer_norm(const int32_t* ids, const int32_t* positions, int64_t tokens, int hidden,
                      const float* word, const float* position, const float* token_type0, const float* gamma,
                      const float* beta, float eps, float* out, const int32_t* types) {
#pragma omp parallel for schedule(static) if (tokens > 16)
  for (int64_t t = 0; t < tokens; ++t) {
    float* row = out + t * hidden;
    const float* w = word + int64_t(ids[t]) * hidden;
    const float* type =
        token_type0 != nullptr && types != nullptr ? token_type0 + int64_t(types[t]) * hidden : token_type0;
    if (position != nullptr) {
      add3_row(w, position + int64_t(positions[t]) * hidden, type, row, hidden);
    } else if (type != nullptr) {
      add3_row(w, type, nullptr, row, hidden);
    } else {
      std::copy(w, w + hidden, row);
    }
    layer_norm_row(row, row, hidden, gamma, beta, eps);
  }
}

// The attention's tasks: (sequence, head, block of kAttentionQueryBlock
// queries), numbered sequence by sequence. Called inside our parallel
// region, dnnl_sgemm runs single-threaded on the calling thread (oneDNN
// checks omp_in_parallel), so tasks are the unit of parallelism; dynamic
// scheduling evens out mixed lengths.
class AttentionTasks {
 public:
  AttentionTasks(const int32_t* lengths, int sequences, int heads)
      : heads_(heads), lengths_(lengths), first_(size_t(sequences) + 1, 0) {
    for (int s = 0; s < sequences; ++s) {
      const int64_t blocks = (lengths[s] + kAttentionQueryBlock - 1) / kAttentionQueryBlock;
      first_[size_t(s) + 1] = first_[size_t(s)] + blocks * heads;
    }
  }
  int64_t count() const { return first_.back(); }
  struct Task {
    int s, h;
    int64_t q0, rows;  // the block's first query and its queries
  };
  Task operator[](int64_t task) const {
    Task t{};
    t.s = int(std::upper_bound(first_.begin(), first_.end(), task) - first_.begin()) - 1;
    const int64_t local = task - first_[size_t(t.s)];
    t.h = int(local % heads_);
    t.q0 = (local / heads_) * kAttentionQueryBlock;
    t.rows = std::min<int64_t>(kAttentionQueryBlock, lengths_[t.s] - t.q0);
    return t;
  }

 private:
  int heads_;
  const int32_t* lengths_;
  std::vector<int64_t> first_;
};

void attention(const float* qkv, float* ctx, const int64_t* seq_offsets, const int32_t* lengths,
               const int32_t* key_lengths, int sequences, int heads, int head_dim, float scale,
               float* scratch, int64_t scratch_floats_per_thread, int window) {
  if (key_lengths == nullptr) key_lengths = lengths;
  const int64_t hidden = int64_t(heads) * head_dim;
  const int64_t ld_qkv = 3 * hidden;
  const AttentionTasks tasks(lengths, sequences, heads);
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t task = 0; task < tasks.count(); ++task) {
    const auto [s, h, q0, rows] = tasks[task];
    const int64_t keys = key_lengths[s];
    // The keys any query of the block sees.
    const int64_t k0 = window > 0 ? std::max<int64_t>(0, q0 - window) : 0;
    const int64_t k1 = window > 0 ? std::min<int64_t>(keys, q0 + rows + window) : keys;
    const int64_t span = k1 - k0;
    const float* base = qkv + seq_offsets[s] * ld_qkv + int64_t(h) * head_dim;
    const float* q = base + q0 * ld_qkv;
    const float* k = base + hidden + k0 * ld_qkv;
    const float* v = base + 2 * hidden + k0 * ld_qkv;
    float* scores = scratch + int64_t(omp_get_thread_num()) * scratch_floats_per_thread;
    float* out = ctx + (seq_offsets[s] + q0) * hidden + int64_t(h) * head_dim;
    if (span <= 0) {  // no key to see (a padded query past a short window): HF gives the mean of none
      for (int64_t i = 0; i < rows; ++i) std::fill(out + i * hidden, out + i * hidden + head_dim, 0.0f);
      continue;
    }
    dnnl_sgemm('N', 'T', rows, span, head_dim, scale, q, ld_qkv, k, ld_qkv, 0.0f, scores, span);
    for (int64_t i = 0; i < rows; ++i) {
      float* row = scores + i * span;
      int64_t lo = 0, hi = span;  // this query's keys within the span
      if (window > 0) {
        lo = std::max<int64_t>(0, q0 + i - window - k0);
        hi = std::min<int64_t>(span, q0 + i + window + 1 - k0);
      }
      if (hi <= lo) {
        std::fill(row, row + span, 0.0f);
        continue;
      }
      std::fill(row, row + lo, 0.0f);
      softmax_row_impl(row + lo, static_cast<int>(hi - lo));
      std::fill(row + hi, row + span, 0.0f);
    }
    dnnl_sgemm('N', 'N', rows, head_dim, span, 1.0f, scores, span, v, ld_qkv, 0.0f, out, hidden);
  }
}

void disentangled_attention(const float* qkv, float* ctx, const int64_t* seq_offsets, const int32_t* lengths,
                            const int32_t* key_lengths, int sequences, int heads, int head_dim,
                            const RelativeAttention& rel, float* scratch, int64_t scratch_floats_per_thread) {
  if (key_lengths == nullptr) key_lengths = lengths;
  const int64_t hidden = int64_t(heads) * head_dim;
  const int64_t ld_qkv = 3 * hidden;
  const int32_t* index = rel.index + rel.max_delta;  // index[d]: the relative row of offset d
  // One task per (sequence, head): its keys' p2c products serve every block
  // of its queries, so they are formed once.
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t task = 0; task < int64_t(sequences) * heads; ++task) {
    const int s = int(task / heads), h = int(task % heads);
    const int64_t length = lengths[s], keys = key_lengths[s];
    const float* base = qkv + seq_offsets[s] * ld_qkv + int64_t(h) * head_dim;
    const float* k = base + hidden;
    const float* v = base + 2 * hidden;
    // The relative rows the sequence's offsets (-(keys - 1) .. length - 1) reach.
    const int32_t lo_all = index[-(keys - 1)], hi_all = index[length - 1];
    const int64_t nb_all = hi_all - lo_all + 1;
    const int64_t rows_max = std::min(kAttentionQueryBlock, length);
    float* scores = scratch + int64_t(omp_get_thread_num()) * scratch_floats_per_thread;
    float* c2p = scores + rows_max * keys;
    float* p2c = c2p + rows_max * nb_all;  // [keys, nb_all]
    if (rel.pos_query != nullptr) {
      dnnl_sgemm('N', 'T', keys, nb_all, head_dim, 1.0f, k, ld_qkv,
                 rel.pos_query + int64_t(lo_all) * hidden + h * head_dim, hidden, 0.0f, p2c, nb_all);
    }
    for (int64_t q0 = 0; q0 < length; q0 += kAttentionQueryBlock) {
      const int64_t rows = std::min(kAttentionQueryBlock, length - q0);
      const float* q = base + q0 * ld_qkv;
      float* out = ctx + (seq_offsets[s] + q0) * hidden + int64_t(h) * head_dim;
      // The rows this block's offsets (q0 - keys + 1 .. q0 + rows - 1) reach.
      const int32_t lo = index[q0 - (keys - 1)], hi = index[q0 + rows - 1];
      const int64_t nb = hi - lo + 1;
      dnnl_sgemm('N', 'T', rows, keys, head_dim, 1.0f, q, ld_qkv, k, ld_qkv, 0.0f, scores, keys);
      if (rel.pos_key != nullptr) {
        dnnl_sgemm('N', 'T', rows, nb, head_dim, 1.0f, q, ld_qkv,
                   rel.pos_key + int64_t(lo) * hidden + h * head_dim, hidden, 0.0f, c2p, nb);
      }
      for (int64_t i = 0; i < rows; ++i) {
        float* row = scores + i * keys;
        const float* c = c2p + i * nb;
        for (int64_t j = 0; j < keys; ++j) {
          const int64_t r = index[q0 + i - j];
          float sum = row[j];
          if (rel.pos_key != nullptr) sum += c[r - lo];
          if (rel.pos_query != nullptr) sum += p2c[j * nb_all + r - lo_all];
          row[j] = sum * rel.scale;
        }
        softmax_row_impl(row, static_cast<int>(keys));
      }
      dnnl_sgemm('N', 'N', rows, head_dim, keys, 1.0f, scores, keys, v, ld_qkv, 0.0f, out, hidden);
    }
  }
}

int64_t disentangled_scratch_floats(int max_length, int span) {
  const int64_t rows = std::min<int64_t>(kAttentionQueryBlock, max_length);
  const int64_t nb = std::min<int64_t>(2 * int64_t(span), 2 * int64_t(max_length) - 1);
  return rows * max_length + rows * nb + int64_t(max_length) * nb;
}

int64_t attention_scratch_floats(int max_length, int window) {
  const int64_t rows = std::min<int64_t>(kAttentionQueryBlock, max_length);
  const int64_t span = window > 0 ? std::min<int64_t>(max_length, rows + 2 * int64_t(window)) : max_length;
  return rows * span;
}

void apply_rotary(float* qkv, int64_t tokens, const int32_t* positions, int heads, int head_dim,
                  const float* table) {
  const int64_t hidden = int64_t(heads) * head_dim;
  const int half = head_dim / 2;
#pragma omp parallel for schedule(static) if (tokens > 16)
  for (int64_t t = 0; t < tokens; ++t) {
    const float* cs = table + int64_t(positions[t]) * head_dim;
    const float* sn = cs + half;
    float* row = qkv + t * 3 * hidden;
    for (int64_t x = 0; x < 2 * heads; ++x) {  // the q heads, then the k heads
      float* a = row + x * head_dim;
      float* b = a + half;
#pragma omp simd
      for (int i = 0; i < half; ++i) {
        const float x1 = a[i], x2 = b[i];
        a[i] = x1 * cs[i] - x2 * sn[i];
        b[i] = x2 * cs[i] + x1 * sn[i];
      }
    }
  }
}

void gelu_glu(const float* x, float* y, int64_t rows, int cols) {
#pragma omp parallel for schedule(static) if (rows > 16)
  for (int64_t r = 0; r < rows; ++r) glu_row(x + r * 2 * cols, y + r * cols, cols);
}

}  // namespace infercost::backend::cpu
