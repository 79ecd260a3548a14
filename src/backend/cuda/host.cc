#include "backend/cuda/host.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "backend/validate.h"

namespace infercost::backend::cuda {
namespace {

uint32_t float_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

float bits_float(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

int64_t align_up(int64_t n) {
  return (n + kDeviceAlignment - 1) / kDeviceAlignment * kDeviceAlignment;
}

}  // namespace

// ---- Packing ---------------------------------------------------------------

void pack_batch(const TokenBatch& b, const model::PositionScheme& scheme, PackedBatch& out, bool types) {
  const int n = std::max(b.batch, 0);
  out.seq_start.resize(size_t(n) + 1);
  out.key_len.resize(size_t(n));
  out.cls_rows.resize(size_t(n));
  int64_t total = 0;
  int max_rows = 0;
  for (int r = 0; r < n; ++r) {
    const int rows = b.compute_padding ? b.seq_len : b.lengths[size_t(r)];
    out.seq_start[size_t(r)] = int32_t(total);
    out.cls_rows[size_t(r)] = int32_t(total);
    out.key_len[size_t(r)] = b.lengths[size_t(r)];
    total += rows;
    max_rows = std::max(max_rows, rows);
  }
  out.seq_start[size_t(n)] = int32_t(total);
  out.total = total;
  out.max_rows = max_rows;
  out.ids.resize(size_t(total));
  out.positions.resize(size_t(total));
  for (int r = 0; r < n; ++r) {
    const int32_t* row = b.ids.data() + int64_t(r) * b.seq_len;
    const int32_t start = out.seq_start[size_t(r)];
    const int32_t rows = out.seq_start[size_t(r) + 1] - start;
    std::memcpy(out.ids.data() + start, row, sizeof(int32_t) * size_t(rows));
    model::fill_position_ids(scheme, row, rows, out.positions.data() + start);
  }
  out.types.clear();
  if (!types || b.type_ids.empty()) return;
  out.types.resize(size_t(total));
  for (int r = 0; r < n; ++r) {
    const int32_t start = out.seq_start[size_t(r)];
    std::memcpy(out.types.data() + start, b.type_ids.data() + int64_t(r) * b.seq_len,
                sizeof(int32_t) * size_t(out.seq_start[size_t(r) + 1] - start));
  }
}

PackedBatch pack_batch(const TokenBatch& batch, const model::PositionScheme& scheme, bool types) {
  PackedBatch out;
  pack_batch(batch, scheme, out, types);
  return out;
}

PackedOffsets packed_offsets(int64_t total, int sequences, bool types) {
  PackedOffsets o;
  o.ids = 0;
  o.positions = total;
  o.seq_start = 2 * total;
  o.key_len = o.seq_start + sequences + 1;
  o.cls_rows = o.key_len + sequences;
  o.types = o.cls_rows + sequences;
  o.count = o.types + (types ? total : 0);
  return o;
}

void write_packed(const PackedBatch& p, int32_t* dst) {
  const PackedOffsets o = packed_offsets(p.total, p.sequences(), !p.types.empty());
  const auto put = [&](int64_t at, const std::vector<int32_t>& v) {
    if (!v.empty()) std::memcpy(dst + at, v.data(), sizeof(int32_t) * v.size());
  };
  put(o.ids, p.ids);
  put(o.positions, p.positions);
  put(o.seq_start, p.seq_start);
  put(o.key_len, p.key_len);
  put(o.cls_rows, p.cls_rows);
  put(o.types, p.types);
}

// ---- Validation --------------------------------------------------------------

Status validate_gpu_model(const model::ModelConfig& config, const model::EncoderWeights& weights,
                          std::optional<Pooling> pooling, std::optional<model::TokenOutput> tokens) {
  INFERCOST_RETURN_IF_ERROR(validate_config(config));
  const int hidden = config.hidden_size;
  if (hidden > kMaxHiddenSize) {
    return unsupported(
        fmt::format("hidden_size {}: the CUDA LayerNorm kernel takes up to {}", hidden, kMaxHiddenSize));
  }
  const int head_dim = hidden / config.num_heads;
  if (head_dim > kMaxHeadSize || head_dim % 2 != 0) {
    return unsupported(fmt::format(
        "head size {} (hidden_size {} / {} heads): the CUDA attention kernel takes even head sizes up to {}",
        head_dim, hidden, config.num_heads, kMaxHeadSize));
  }
  if (config.relative_attention && head_dim > kMaxRelativeHeadSize) {
    return unsupported(fmt::format(
        "head size {} (hidden_size {} / {} heads): the CUDA disentangled attention kernel (DeBERTa) takes "
        "head sizes up to {}; use --device cpu",
        head_dim, hidden, config.num_heads, kMaxRelativeHeadSize));
  }
  return validate_weights(config, weights, pooling, tokens);
}

// ---- Conversions -------------------------------------------------------------

uint16_t fp32_to_fp16(float x) {
  const uint32_t u = float_bits(x);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return uint16_t(sign | 0x7e00u | ((a >> 13) & 0x3ffu));  // NaN, kept quiet
  if (a >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // >= 65520 (or inf) rounds to inf
  if (a >= 0x38800000u) {
    // Normal in fp16: rebias the exponent (127 -> 15) and round the 13
    // dropped mantissa bits; a carry into the exponent is the right answer.
    const uint32_t r = a - 0x38000000u;
    uint32_t h = r >> 13;
    const uint32_t rest = r & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return uint16_t(sign | h);
  }
  // Subnormal in fp16 (below 2^-14): the value in units of 2^-24 is
  // m * 2^(e - 126) with the implicit bit in m; at most 2^-25 rounds to zero.
  if (a <= 0x33000000u) return sign;
  const uint32_t e = a >> 23;
  const uint32_t m = (a & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126u - e;  // 14..24
  uint32_t h = m >> shift;
  const uint32_t rest = m & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  if (rest > half || (rest == half && (h & 1u))) ++h;
  return uint16_t(sign | h);
}

float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu;
  uint32_t m = h & 0x3ffu;
  if (e == 0x1f) return bits_float(sign | 0x7f800000u | (m << 13));
  if (e != 0) return bits_float(sign | ((e + 112u) << 23) | (m << 13));
  if (m == 0) return bits_float(sign);
  // Subnormal: normalize.
  uint32_t exp = 113;
  while ((m & 0x400u) == 0) {
    m <<= 1;
    --exp;
  }
  return bits_float(sign | (exp << 23) | ((m & 0x3ffu) << 13));
}

uint16_t fp32_to_bf16(float x) {
  const uint32_t u = float_bits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x0040u);  // NaN, kept quiet
  return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

float bf16_to_fp32(uint16_t b) {
  return bits_float(uint32_t(b) << 16);
}

void convert_to_fp16(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = fp32_to_fp16(x[i]);
}

void convert_to_bf16(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = fp32_to_bf16(x[i]);
}

// ---- Memory sizing -------------------------------------------------------------

int activation_element_bytes(Precision precision) {
  return precision == Precision::kFp16 || precision == Precision::kBf16 ? 2 : 4;
}

const char* dtype_name(Precision precision) {
  switch (precision) {
    case Precision::kFp32: return "fp32";
    case Precision::kFp16: return "fp16";
    case Precision::kBf16: return "bf16";
    case Precision::kInt8: return "int8";
  }
  return "?";
}

ActivationLayout activation_layout(const ModelDims& d, Precision precision, int64_t tokens,
                                   int64_t sequences) {
  const int64_t es = activation_element_bytes(precision);
  ActivationLayout l;
  l.tokens = tokens;
  l.sequences = sequences;
  int64_t at = 0;
  const auto take = [&](int64_t bytes) {
    const int64_t here = at;
    at += align_up(bytes);
    return here;
  };
  l.h = take(tokens * d.hidden * es);
  l.qkv = take(tokens * 3 * d.hidden * es);
  l.ctx = take(tokens * d.hidden * es);
  l.ffn = take(tokens * d.intermediate * (d.glu ? 2 : 1) * es);
  l.glu = take(d.glu ? tokens * d.intermediate * es : 0);
  l.ints =
      take(packed_offsets(tokens, int(std::min<int64_t>(sequences, INT32_MAX)), d.token_types).count * 4);
  const int64_t outputs = d.per_token ? tokens : sequences;
  l.cls = take(outputs * d.hidden * 4);
  l.pooled = take(outputs * d.hidden * 4);
  l.logits = take(outputs * d.labels * 4);
  l.bytes = at;
  return l;
}

ActivationLayout activation_reservation(const ModelDims& dims, Precision precision, int64_t tokens,
                                        int64_t sequences) {
  const auto round_up = [](int64_t n, int64_t granule) { return (n + granule - 1) / granule * granule; };
  return activation_layout(dims, precision, round_up(tokens, kTokenGranule),
                           round_up(sequences, kSequenceGranule));
}

int64_t reserve_bytes(int64_t total_bytes) {
  return total_bytes / 10 + kGraphReserveBytes;
}

std::string format_bytes(int64_t bytes) {
  const double b = double(bytes);
  if (bytes >= (int64_t(1) << 30)) return fmt::format("{:.1f} GiB", b / double(int64_t(1) << 30));
  if (bytes >= (int64_t(1) << 20)) return fmt::format("{:.1f} MiB", b / double(int64_t(1) << 20));
  if (bytes >= (int64_t(1) << 10)) return fmt::format("{:.1f} KiB", b / double(int64_t(1) << 10));
  return fmt::format("{} B", bytes);
}

Result<BatchCapacity> batch_capacity(const ModelDims& dims, Precision precision, int max_length,
                                     int64_t free_bytes, int64_t total_bytes, int64_t held_bytes,
                                     const std::string& device_name) {
  if (max_length < 1)
    return invalid_argument(fmt::format("capacity: max_length {} must be at least 1", max_length));
  const int64_t reserve = reserve_bytes(total_bytes);
  const int64_t available = free_bytes + held_bytes - reserve;
  const auto fits = [&](int64_t tokens, int64_t sequences) {
    return activation_reservation(dims, precision, tokens, sequences).bytes <= available;
  };
  const std::string memory = fmt::format(
      "{}: {} free of {}{}, less a reserve of {} (10% of the total + {} for CUDA graphs and cuBLASLt)",
      device_name, format_bytes(free_bytes), format_bytes(total_bytes),
      held_bytes > 0 ? fmt::format(" (+ {} of activations it holds)", format_bytes(held_bytes)) : "",
      format_bytes(reserve), format_bytes(kGraphReserveBytes));
  if (!fits(max_length, 1)) {
    return resource_exhausted(fmt::format(
        "{}: not even one row of {} tokens fits ({} of activations in {})", memory, max_length,
        format_bytes(activation_reservation(dims, precision, max_length, 1).bytes), dtype_name(precision)));
  }
  // Largest value in [lo, hi] for which ok() holds, given ok(lo).
  const auto largest = [](int64_t lo, int64_t hi, const auto& ok) {
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (ok(mid)) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return lo;
  };
  const int64_t row_cap = std::max<int64_t>(1, kMaxBatchTokens / max_length);
  const int64_t rows = largest(1, row_cap, [&](int64_t r) { return fits(r * max_length, r); });
  const int64_t tokens = largest(rows * max_length, kMaxBatchTokens,
                                 [&](int64_t t) { return fits(t, std::min<int64_t>(t, rows)); });
  BatchCapacity c;
  c.max_rows = int(rows);
  c.max_tokens = tokens;
  c.free_bytes = free_bytes;
  c.total_bytes = total_bytes;
  const int64_t per_token = activation_bytes(dims, precision, 1 << 16, 0) >> 16;
  const int64_t per_row =
      (activation_bytes(dims, precision, 0, 1 << 16) - activation_bytes(dims, precision, 0, 0)) >> 16;
  std::string limits;
  if (tokens == kMaxBatchTokens) {
    limits =
        fmt::format("; capped at {} tokens per batch (larger batches gain no throughput and cost latency)",
                    kMaxBatchTokens);
  }
  c.basis = fmt::format("{}; {} activations take about {} per token and {} per row{}", memory,
                        dtype_name(precision), format_bytes(per_token), format_bytes(per_row), limits);
  return c;
}

}  // namespace infercost::backend::cuda
