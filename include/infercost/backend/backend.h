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
  int64_t real_tokens() const;
  int64_t padded_tokens() const { return int64_t(batch) * seq_len; }
};

// Classifier logits, row-major [rows, labels], one row per batch row.
struct Logits {
  int rows = 0;
  int labels = 0;
  std::vector<float> values;
};

enum class Precision { kFp32 };

struct BackendOptions {
  // 0: all hardware threads. The CPU backend runs oneDNN and its own loops
  // on one OpenMP pool of this size: prepare() and classify() call
  // omp_set_num_threads() on the calling thread.
  int threads = 0;
  Precision precision = Precision::kFp32;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // True when classify() computes only each row's real tokens (padding costs
  // nothing); false when it computes the whole padded [batch, seq_len].
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
