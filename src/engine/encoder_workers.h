// The file runner's seam into an Encoder: its workers, and
// the one function that classifies a batch on one of them. A user of the
// library calls Encoder::classify; the runner drives the workers itself,
// from its own threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "engine/encoder.h"
#include "infercost/status.h"

namespace infercost::engine {

// Thread safety: concurrent calls are allowed on distinct workers, and must
// not overlap Encoder::classify().
class EncoderWorkers {
 public:
  explicit EncoderWorkers(Encoder& classifier) : c_(&classifier) {}

  // One per stream of each device, in device order.
  size_t workers() const;
  // The device each worker runs on (an index into Encoder::devices()).
  size_t worker_device(size_t worker) const;

  // Classifies one batch on worker `worker` (0 <= worker < workers()) into
  // `out` ([batch.batch, labels()], batch row order), the head function
  // applied. Out of memory: a batch whose backend classify() is
  // kResourceExhausted is split in two halves by rows (split_token_batch)
  // and each retried, recursively; the device then keeps a limit of computed
  // tokens per batch (one less than the batch that failed) and splits larger
  // batches before classifying them, from then on. A single row that does
  // not fit is kResourceExhausted naming the device and the row's tokens.
  // Another backend error comes back naming its device once (not "cpu").
  // A row whose logits are not all finite (NaN or infinity: a reduced
  // precision's overflow, a broken weight) gets NaN outputs and its batch row
  // index in `non_finite`; without `non_finite`, such a row fails the call
  // (non_finite_error naming the batch rows).
  Status infer_batch(size_t worker, const backend::TokenBatch& batch, std::span<float> out,
                     std::vector<int32_t>* non_finite = nullptr);

  // kNonFinite for `rows` (how the caller names them: "row 12", "a.jsonl:
  // line 3") whose outputs were not finite on `worker`: names the precision
  // and the device, and (with `advise`, for an error a user reads now rather
  // than a skipped row's recorded reason) what to try.
  Status non_finite_error(const std::string& rows, size_t worker, bool advise = true) const;

 private:
  Encoder* c_;
};

// "row 3", "lines 1, 2, 4, ... and 130 more": `unit` ("row", "line") and
// sorted `numbers`, the first ten named (for errors that name rows).
std::string name_rows(const std::string& unit, const std::vector<int64_t>& numbers);

}  // namespace infercost::engine
