// The seam between the model and the hardware.
//
// A Backend prepares a model's weights once (prepare()) and then classifies
// token batches with it. One Backend object runs one batch at a time;
// concurrent forward() calls on the same object are not allowed.
//
// How to add a backend: implement Backend in src/backend/<name>/, add a
// factory to src/backend/registry.cc, and instantiate the parity suite
// (tests/backend/parity_suite.h: HF's fp32 logits in any batching) for it
// with its tolerance, as golden_test.cc does for the CPU.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/device.h"
#include "infercost/options.h"
#include "infercost/status.h"
#include "model/config.h"
#include "model/embedding.h"
#include "model/token_output.h"
#include "model/weights.h"

namespace infercost::backend {

// A right-padded batch of token ids: row r holds lengths[r] real tokens then
// padding up to seq_len. Row-major [batch, seq_len].
struct TokenBatch {
  int batch = 0;
  int seq_len = 0;
  std::vector<int32_t> ids;      // [batch * seq_len]
  std::vector<int32_t> lengths;  // [batch], 1 <= lengths[r] <= seq_len
  // Token type ids (segment ids: 0 for a pair's first text, 1 for its
  // second), [batch * seq_len] like ids, or empty: every token of type 0. A
  // model without a token type table ignores them, as HF's do.
  std::vector<int32_t> type_ids;
  // When true the backend computes all seq_len positions of every row, as a
  // framework that pads does (padding ids must then be valid ids too). The
  // padding is masked out of attention, so the logits are the same as without;
  // only the cost differs. `--batching seed` uses it to reproduce the study.
  bool compute_padding = false;
  int64_t real_tokens() const;
  int64_t padded_tokens() const { return int64_t(batch) * seq_len; }
};

// What forward() returns: the output of the model's forward program
// (model::forward_program), row-major [rows, width], one row per batch row:
// the classifier's logits (width: the labels), or, for a backend made with a
// pooling (BackendOptions::pooling), each row's pooled token vector (width:
// the hidden size). For a backend made with token outputs
// (BackendOptions::tokens) it is [rows, tokens, width]: each position of the
// batch's rows (tokens: its seq_len), each token's state (width: the hidden
// size) or its classifier's logits (the labels), zeros at padded positions.
struct ForwardOutput {
  int rows = 0;
  int tokens = 0;  // positions per row with token outputs; 0: one vector per row
  int width = 0;   // values per row, or per position with token outputs
  std::vector<float> values;
};

// Arithmetic of the linear layers (attention, LayerNorm and softmax stay fp32):
//   kFp32: fp32 everywhere, the reference.
//   kBf16: bf16 weights and inputs, fp32 accumulation (CPU: needs AVX512_BF16
//          or AMX; see BackendOptions::emulate_bf16. CUDA: compute
//          capability 8.0 or newer).
//   kFp16: fp16 weights and activations, fp32 accumulation (CUDA only).
//   kInt8: dynamic quantization: weights int8 per output channel, inputs
//          uint8 per row with a per-row scale and zero point computed at run
//          time, int32 accumulation, fp32 output (CPU only).
enum class Precision { kFp32, kBf16, kInt8, kFp16 };

// "fp32", "bf16", "int8", "fp16".
const char* precision_name(Precision precision);
// Parses "fp32", "bf16", "fp16" or "int8"; anything else is kInvalidArgument
// naming the accepted values.
Result<Precision> parse_precision(const std::string& name);

// The --device grammar (include/infercost/core/device.h).
using infercost::DeviceSpec;
using infercost::parse_device;

// Resolves a --precision value for a device: "auto" is the device's default
// (CPU: bf16 where the CPU has native bf16 matmuls (AVX512_BF16 or AMX),
// otherwise fp32; GPU: bf16, which a GPU older than compute capability 8.0
// turns into fp16, see BackendOptions::precision_is_default); other names as
// parse_precision.
Result<Precision> resolve_precision(const DeviceSpec& device, const std::string& name);
// The same for a device as written ("cpu", "cuda:0"; through parse_device).
Result<Precision> resolve_precision(const std::string& device, const std::string& name);

// The device names one worker each runs on: {"cpu"} for cpu, {"cuda:0",
// "cuda:1", ...} for cuda (asking the CUDA module how many GPUs there are for
// "all"). kUnavailable with the reason when CUDA cannot run here (no module,
// no driver, no GPU); kInvalidArgument for an ordinal that does not exist.
Result<std::vector<std::string>> resolve_devices(const DeviceSpec& spec);

// One GPU as the CUDA runtime sees it.
struct CudaDeviceInfo {
  int index = 0;
  std::string name;
  int64_t memory_total_bytes = 0;
  int compute_major = 0, compute_minor = 0;
};
// Whether this build and machine can run the CUDA backend, and on which GPUs:
// kUnavailable naming why not (this build has no CUDA module; the module or a
// library it needs failed to load; no driver; no GPU). The module is loaded
// once per process.
Result<std::vector<CudaDeviceInfo>> cuda_devices();
// Where the CUDA module is looked for, in order: $INFERCOST_CUDA_MODULE (only
// that, when set), else libinfercost_cuda.so beside the shared object the
// engine was loaded from (dladdr; a Python native module, whose executable
// is python3) where that is not the executable, then beside the executable,
// then ../lib/infercost/ from it.
std::vector<std::string> cuda_module_candidates();

struct BackendOptions {
  // 0: all hardware threads. The CPU backend runs oneDNN and its own loops
  // on one OpenMP pool of this size: prepare() and forward() call
  // omp_set_num_threads() on the calling thread.
  int threads = 0;
  Precision precision = Precision::kFp32;
  // Tests and accuracy studies only: on a CPU without bf16 instructions, run
  // kBf16 as fp32 GEMMs on bf16-rounded weights and inputs (the same products,
  // summed in fp32) instead of refusing. As slow as fp32; the CLI never sets it.
  bool emulate_bf16 = false;
  // GPU backends: the CUDA device ordinal this backend runs on.
  int device_index = 0;
  // True when `precision` came from "auto": a GPU without bf16 (compute
  // capability below 8.0) then runs fp16 instead of refusing, and
  // Backend::precision() says so.
  bool precision_is_default = false;
  // CUDA: capture a CUDA graph for a batch shape seen before and replay it
  // (the env INFERCOST_CUDA_GRAPHS=0 turns this off too).
  bool cuda_graphs = true;
  // Set: the backend returns each row's last hidden states pooled over its
  // real tokens (embeddings) instead of the classification head's logits;
  // prepare() then needs no head.
  std::optional<Pooling> pooling;
  // Set: the backend returns outputs per token instead (token
  // classification): each token's last hidden state, or the model's token
  // classifier on it (ForwardOutput describes the layout). Not with pooling.
  std::optional<model::TokenOutput> tokens;
};

// The most one batch may hold on a backend (`--batch-size auto`,
// `--max-batch-tokens auto`).
struct BatchCapacity {
  // Computed tokens per batch (rows x length when padding is computed).
  int64_t max_tokens = 0;
  int max_rows = 0;
  // Device memory when it was measured (GPU); 0 on the CPU.
  int64_t free_bytes = 0, total_bytes = 0;
  // How the figures were reached, for the run summary.
  std::string basis;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual Precision precision() const = 0;
  // True when forward() computes only each row's real tokens (padding costs
  // nothing) unless the batch asks for compute_padding; false when it always
  // computes the whole padded [batch, seq_len].
  virtual bool skips_padding() const = 0;
  // Converts/reorders the weights for this device. The backend keeps what it
  // needs; `weights` may be freed afterwards.
  virtual Status prepare(const model::ModelConfig& config, const model::EncoderWeights& weights) = 0;
  // The output of every row of `batch` (padding ignored through `lengths`).
  // kResourceExhausted when the batch does not fit in the device's memory:
  // the backend stays usable, and a smaller batch may succeed.
  virtual Result<ForwardOutput> forward(const TokenBatch& batch) = 0;
  // After prepare(): the largest batch that fits, for rows of up to
  // `max_length` tokens, from the memory free now. The default is the CPU's
  // fixed default (memory is rarely what binds there).
  virtual Result<BatchCapacity> capacity(int max_length) {
    BatchCapacity c;
    c.max_tokens = kDefaultMaxBatchTokens;  // options.h: the defaults of tokens batching
    c.max_rows = kDefaultTokensBatchSize;
    c.basis = "the CPU defaults (memory does not bind on the CPU)";
    return c;
  }
  // After prepare(): another backend on the same device that shares this
  // one's prepared weights but has its own stream and scratch, so that two
  // batches can be in flight on one device (one copies while the other
  // computes). kUnsupported where that gains nothing (the CPU).
  virtual Result<std::unique_ptr<Backend>> fork() {
    return unsupported("backend '" + name() + "' runs one batch at a time per device");
  }
};

// "cpu" is always available; "cuda" / "cuda:N" load the CUDA module (see
// cuda_devices()) and make a backend on ordinal N (0 for "cuda").
Result<std::unique_ptr<Backend>> create_backend(const std::string& device, const BackendOptions& options);

}  // namespace infercost::backend
