// The seam between the model and the hardware.
//
// A Backend prepares a model's weights once (prepare()) and then classifies
// token batches with it. One Backend object runs one batch at a time;
// concurrent classify() calls on the same object are not allowed.
//
// How to add a backend: implement Backend in src/backend/<name>/, add a
// factory to src/backend/registry.cc, and instantiate the parity test in
// tests/backend/ for it with its tolerance.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "infercost/core/status.h"
#include "infercost/model/config.h"
#include "infercost/model/weights.h"

namespace infercost::backend {

// A right-padded batch of token ids: row r holds lengths[r] real tokens then
// padding up to seq_len. Row-major [batch, seq_len].
struct TokenBatch {
  int batch = 0;
  int seq_len = 0;
  std::vector<int32_t> ids;      // [batch * seq_len]
  std::vector<int32_t> lengths;  // [batch], 1 <= lengths[r] <= seq_len
  // When true the backend computes all seq_len positions of every row, as a
  // framework that pads does (padding ids must then be valid ids too). The
  // padding is masked out of attention, so the logits are the same as without;
  // only the cost differs. `--batching seed` uses it to reproduce the study.
  bool compute_padding = false;
  int64_t real_tokens() const;
  int64_t padded_tokens() const { return int64_t(batch) * seq_len; }
};

// Classifier logits, row-major [rows, labels], one row per batch row.
struct Logits {
  int rows = 0;
  int labels = 0;
  std::vector<float> values;
};

// Arithmetic of the linear layers (attention, LayerNorm and softmax stay fp32):
//   kFp32: fp32 everywhere, the reference.
//   kBf16: bf16 weights and inputs, fp32 accumulation (CPU: needs AVX512_BF16
//          or AMX; see BackendOptions::emulate_bf16).
//   kInt8: dynamic quantization: weights int8 per output channel, inputs
//          uint8 per row with a per-row scale and zero point computed at run
//          time, int32 accumulation, fp32 output.
enum class Precision { kFp32, kBf16, kInt8 };

// "fp32", "bf16", "int8".
const char* precision_name(Precision precision);
// Parses "fp32", "bf16" or "int8"; anything else is kInvalidArgument naming
// the accepted values.
Result<Precision> parse_precision(const std::string& name);

// Resolves a --precision value for a device: "auto" is the device's default
// (CPU: bf16 where the CPU has native bf16 matmuls (AVX512_BF16 or AMX),
// otherwise fp32; GPU: bf16); other names as parse_precision.
Result<Precision> resolve_precision(const std::string& device, const std::string& name);

struct BackendOptions {
  // 0: all hardware threads. The CPU backend runs oneDNN and its own loops
  // on one OpenMP pool of this size: prepare() and classify() call
  // omp_set_num_threads() on the calling thread.
  int threads = 0;
  Precision precision = Precision::kFp32;
  // Tests and accuracy studies only: on a CPU without bf16 instructions, run
  // kBf16 as fp32 GEMMs on bf16-rounded weights and inputs (the same products,
  // summed in fp32) instead of refusing. As slow as fp32; the CLI never sets it.
  bool emulate_bf16 = false;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual Precision precision() const = 0;
  // True when classify() computes only each row's real tokens (padding costs
  // nothing) unless the batch asks for compute_padding; false when it always
  // computes the whole padded [batch, seq_len].
  virtual bool skips_padding() const = 0;
  // Converts/reorders the weights for this device. The backend keeps what it
  // needs; `weights` may be freed afterwards.
  virtual Status prepare(const model::ModelConfig& config, const model::EncoderWeights& weights) = 0;
  // Logits for every row of `batch` (padding ignored through `lengths`).
  virtual Result<Logits> classify(const TokenBatch& batch) = 0;
};

// "cpu" is always available.
Result<std::unique_ptr<Backend>> create_backend(const std::string& device, const BackendOptions& options);

}  // namespace infercost::backend
