// The CUDA backend's host-side arithmetic: packing a TokenBatch for the
// device, validation, fp16/bf16 conversions and device-memory sizing. Pure
// C++ (no CUDA headers), so CI tests it without a GPU; cuda_backend.cc builds
// on it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "infercost/status.h"
#include "model/config.h"
#include "model/weights.h"

namespace infercost::backend::cuda {

// ---- Packing ---------------------------------------------------------------

// A TokenBatch laid out the way the kernels read it (kernels.h): the rows of
// sequence s are rows [seq_start[s], seq_start[s+1]) of a [total, *] matrix.
// Without compute_padding sequence s has lengths[s] rows; with it, seq_len
// rows (padding ids included), of which only the first key_len[s] =
// lengths[s] are attended to, as the CPU backend does.
struct PackedBatch {
  std::vector<int32_t> ids;        // [total]
  std::vector<int32_t> positions;  // [total]: position ids, as the model's PositionScheme numbers them
  std::vector<int32_t> seq_start;  // [sequences + 1]
  std::vector<int32_t> key_len;    // [sequences]
  std::vector<int32_t> cls_rows;   // [sequences]: the [CLS] (first) row of each
  std::vector<int32_t> types;      // [total] token type ids, or empty: none packed
  int64_t total = 0;               // rows of the packed matrix (computed tokens)
  int max_rows = 0;                // the most rows of any sequence
  int sequences() const { return static_cast<int>(key_len.size()); }
};

// Packs a batch that validate_batch() accepted, its positions numbered by
// `scheme` (the model's position_scheme(); the default numbers 0..rows-1),
// and its token type ids where it has them and `types` (the model has a
// type table). The overload taking `out` reuses its vectors' storage.
void pack_batch(const TokenBatch& batch, const model::PositionScheme& scheme, PackedBatch& out,
                bool types = false);
PackedBatch pack_batch(const TokenBatch& batch, const model::PositionScheme& scheme = {}, bool types = false);

// The packed int32 arrays as one contiguous block, so one host-to-device copy
// moves them all: ids [total], positions [total], seq_start [sequences + 1],
// key_len [sequences], cls_rows [sequences] and, with `types`, token type ids
// [total], at these element offsets.
struct PackedOffsets {
  int64_t ids = 0, positions = 0, seq_start = 0, key_len = 0, cls_rows = 0, types = 0;
  int64_t count = 0;  // int32 values in all
};
PackedOffsets packed_offsets(int64_t total, int sequences, bool types = false);
// Writes `packed` at dst in that layout (dst holds packed_offsets(...).count values).
void write_packed(const PackedBatch& packed, int32_t* dst);

// ---- Validation --------------------------------------------------------------

// What the kernels take (kernels.cu): LayerNorm rows of up to 1024 values,
// attention heads of an even size up to 128, DeBERTa's disentangled attention
// heads up to 64 (every DeBERTa-v2/v3 checkpoint's).
inline constexpr int kMaxHiddenSize = 1024;
inline constexpr int kMaxHeadSize = 128;
inline constexpr int kMaxRelativeHeadSize = 64;

// The shared checks of backend/validate.h (the CPU backend's, with its
// messages) plus the kernels' limits above: a model beyond them is
// kUnsupported, naming the limit; the weights of the program with that
// pooling or those token outputs (neither: a classifier's). Batches go
// through validate_batch() as is.
Status validate_gpu_model(const model::ModelConfig& config, const model::EncoderWeights& weights,
                          std::optional<Pooling> pooling = std::nullopt,
                          std::optional<model::TokenOutput> tokens = std::nullopt);

// ---- Conversions -------------------------------------------------------------

// IEEE binary16 and bfloat16 bit patterns, round to nearest, ties to even.
// Overflow rounds to infinity; infinities keep their sign; a NaN stays a
// (quiet) NaN. fp16 subnormals are produced and read exactly.
uint16_t fp32_to_fp16(float x);
float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_bf16(float x);
float bf16_to_fp32(uint16_t b);
void convert_to_fp16(const float* x, uint16_t* y, int64_t n);
void convert_to_bf16(const float* x, uint16_t* y, int64_t n);

// ---- Memory sizing -------------------------------------------------------------

// What the activation memory of a batch depends on.
struct ModelDims {
  int hidden = 0;
  int intermediate = 0;
  int labels = 0;
  bool glu = false;          // the MLP's first GEMM makes [input | gate], 2 x intermediate (ModernBERT)
  bool token_types = false;  // batches may bring token type ids (the model has a type table)
  bool per_token = false;    // the output (and the head's buffers) has a row per token, not per sequence
};

// Bytes of one activation value: 4 for fp32, 2 for fp16 and bf16 (int8 is
// not a GPU precision; it counts as 4 here, the caller refuses it earlier).
int activation_element_bytes(Precision precision);
// "fp32", "fp16", "bf16", "int8" (the module does not link the registry's
// precision_name()).
const char* dtype_name(Precision precision);

// Every sub-buffer starts at a multiple of this many bytes (cuBLASLt's
// preferred alignment; also what cudaMalloc returns).
inline constexpr int64_t kDeviceAlignment = 256;

// Where each activation buffer sits in one device allocation sized for up
// to `tokens` computed tokens and `sequences` sequences. Byte offsets from
// the allocation's start. The streaming attention kernel needs no
// [rows x rows] score buffer, so nothing grows with the square of a length.
//   h      [tokens, hidden]        the residual stream (LayerNorm outputs)
//   qkv    [tokens, 3 * hidden]    fused Q|K|V; reused for the attention
//                                  output projection's result
//   ctx    [tokens, hidden]        attention output; reused for the second
//                                  FFN GEMM's result (and, pre-norm, for
//                                  the norm the next GEMM reads)
//   ffn    [tokens, intermediate]  first FFN GEMM + activation; with a GLU
//                                  [tokens, 2 * intermediate], the GEMM's
//                                  [input | gate]
//   glu    [tokens, intermediate]  with a GLU only: gelu(input) * gate
//   ints   packed_offsets(tokens, sequences, token_types).count int32 (ids, positions, ...)
//   cls    [sequences, hidden] fp32 gathered [CLS] rows
//   pooled [sequences, hidden] fp32 head's first layer
//   logits [sequences, labels] fp32
//   (with per_token outputs, cls, pooled and logits have a row per token:
//   cls the states in fp32, logits the output)
// All but ints, cls, pooled and logits are in the precision's dtype.
struct ActivationLayout {
  int64_t tokens = 0, sequences = 0;
  int64_t h = 0, qkv = 0, ctx = 0, ffn = 0, glu = 0, ints = 0, cls = 0, pooled = 0, logits = 0;
  int64_t bytes = 0;  // the whole allocation
};
ActivationLayout activation_layout(const ModelDims& dims, Precision precision, int64_t tokens,
                                   int64_t sequences);
inline int64_t activation_bytes(const ModelDims& dims, Precision precision, int64_t tokens,
                                int64_t sequences) {
  return activation_layout(dims, precision, tokens, sequences).bytes;
}

// What the backend allocates for a batch of `tokens` computed tokens and
// `sequences` sequences, and what capacity() counts: the layout for tokens
// rounded up to a multiple of kTokenGranule and sequences to one of
// kSequenceGranule, so that batches of slightly different sizes reuse one
// allocation. No other headroom: what capacity() promises is what is taken.
inline constexpr int64_t kTokenGranule = 64;
inline constexpr int64_t kSequenceGranule = 16;
ActivationLayout activation_reservation(const ModelDims& dims, Precision precision, int64_t tokens,
                                        int64_t sequences);

// The most computed tokens one batch may hold whatever the memory: beyond
// it throughput no longer grows while latency and host staging do. It bounds
// the rows too (every row has a token).
inline constexpr int64_t kMaxBatchTokens = 262144;

// Memory kept free on the device besides the activations: 10% of the total
// (fragmentation, the driver, other processes' growth) plus 64 MiB for CUDA
// graph executables and cuBLASLt's own allocations. The cuBLASLt workspace and
// the weights are allocated before capacity() measures, so they are already
// outside the free memory.
int64_t reserve_bytes(int64_t total_bytes);
inline constexpr int64_t kGraphReserveBytes = int64_t(64) << 20;

// The largest batch whose activations fit: with `available` = free_bytes +
// held_bytes (activation memory this backend holds now and would reuse) -
// reserve_bytes(total_bytes), max_rows is the most rows of max_length tokens
// whose activation_reservation() fits and max_tokens the most computed
// tokens of a batch of at most max_rows rows; both capped by
// kMaxBatchTokens, and basis says how they were reached. Any batch within
// both limits then fits, and so does the union of two such batches (the
// backend keeps the larger size in each dimension). kResourceExhausted when not even one row of
// max_length fits; kInvalidArgument for max_length < 1.
Result<BatchCapacity> batch_capacity(const ModelDims& dims, Precision precision, int max_length,
                                     int64_t free_bytes, int64_t total_bytes, int64_t held_bytes,
                                     const std::string& device_name);

// "1.5 GiB", "12.0 MiB", "512 B": for messages.
std::string format_bytes(int64_t bytes);

}  // namespace infercost::backend::cuda
