// Windows of rows as they move through the file runner's pipeline, and the
// batcher that turns their token ids into backend batches under a Batching
// policy (its packing is batching.h's, shared with Encoder::classify).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "engine/batching.h"
#include "infercost/status.h"
#include "io/row_source.h"
#include "io/rows.h"
#include "run/engine.h"

namespace infercost::run {

// Up to window_rows consecutive rows of one input file. The reader fills
// rows; tokenizer workers fill ids/errors (disjoint ranges); the inference
// thread fills probs of the rows it classified; the writer consumes it.
struct Window {
  int file_index = 0;
  // kSeed first pass over a file: only the token lengths matter; never written.
  bool scan = false;
  bool last_in_file = false;           // the file's final window (possibly 0 rows)
  std::string location_unit = "line";  // RowSource::location_unit(), for messages
  io::RowBatch rows;
  std::vector<std::vector<int32_t>> ids;  // per row; empty for null rows
  std::vector<Status> errors;             // per row tokenizer error
  std::vector<uint8_t> dropped;           // per row: skipped as bad (not written)
  std::string first_drop_reason;          // why the first dropped row was bad, located
  std::vector<float> probs;               // [rows, labels]; zero for null/dropped rows
  // The reader's error right after these rows (in-band, so errors surface in
  // input order); when set, this is the stream's final window.
  Status read_status;
  // The real pass: where the source stands after these rows, and the rows it
  // skipped as bad so far (in this reading of the file); on last_in_file
  // windows also why it skipped the first.
  io::SourcePosition end_position;
  int64_t source_rows_skipped = 0;
  Status source_first_skip;
  int tasks_left = 0;  // tokenize tasks not finished (guarded by the pipeline's mutex)
};

// One backend batch and where each of its rows goes back to.
struct Batch {
  backend::TokenBatch tokens;
  struct Target {
    Window* window;
    int32_t row;
  };
  std::vector<Target> targets;  // one per batch row
  // Keeps the targeted windows alive while the batch is queued.
  std::vector<std::shared_ptr<Window>> windows;
};

// Not thread-safe; one batcher per run, fed windows in input order.
//   kTokens: each window's rows are packed by pack_by_tokens (batching.h).
//            No rows are held between windows.
//   kSeed:   rows keep input order in batches of batch_size counted from the
//            file's first classifiable row (a batch may span windows), each
//            padded to the file's longest row (begin_file), compute_padding set.
class Batcher {
 public:
  explicit Batcher(BatchPolicy policy) : policy_(policy) {}

  // kSeed: the padded length of the file's batches (its longest row).
  void begin_file(int seq_len);
  // Adds rows `rows` (indices into window->ids, in input order, none empty)
  // and appends the batches that became complete to `out`.
  void add(const std::shared_ptr<Window>& window, const std::vector<int32_t>& rows, std::vector<Batch>& out);
  // Flushes a partial kSeed batch at the end of a file.
  void end_file(std::vector<Batch>& out);
  // True while rows were added but not yet emitted in a batch (kSeed only).
  bool holds_rows() const { return !pending_.empty(); }
  const BatchPolicy& policy() const { return policy_; }

 private:
  struct Pending {
    std::shared_ptr<Window> window;
    int32_t row;
  };
  void emit(const std::vector<Pending>& rows, int seq_len, bool compute_padding,
            std::vector<Batch>& out) const;

  BatchPolicy policy_;
  int file_seq_len_ = 0;
  std::vector<Pending> pending_;  // kSeed rows of an unfinished batch
};

}  // namespace infercost::run
