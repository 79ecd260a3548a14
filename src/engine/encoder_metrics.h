// The run metrics made from an Encoder: its settings and what its
// counters say it did. The file runner (runner.cc) adds what it counts
// itself (files, reading and writing, checkpoints, GPU samples); a language
// binding reports one classify() or embed() call with measure_call().
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "backend/gpu_monitor.h"
#include "engine/encoder.h"
#include "infercost/metrics.h"
#include "infercost/options.h"

namespace infercost::engine {

// What the options of a run say before its model loads: device as given and
// the `devices` it resolved to, threads and tokenizer threads (resolved),
// batching, max length and the auto flags (all an already complete job
// reports).
void set_option_metrics(RunMetrics& m, const ModelOptions& options, const std::vector<std::string>& devices);

// What the classifier resolved (batch policy, capacity, precision, model,
// head function) and what `stats` counted: rows, tokens, batches, lengths,
// the per-device figures and their sums, busy seconds added to the tokenize,
// batch and infer stages, null and skipped rows added, the model's FLOPs at
// the counted lengths, and the process's peak RSS.
void add_encoder_metrics(RunMetrics& m, const Encoder& c, const EncoderStats& stats);

// The last figures of a run or of a call: its GPU samples (or why there are none)
// and its cost at `cost`'s price (resolve_run_cost of `options`), projected
// to the corpus.
void complete_run_metrics(RunMetrics& m, backend::GpuSampling sampled, const RunOptions& options,
                          const RunCost& cost);

// The counters of what ran between two snapshots of one classifier's
// stats() (`before` taken first): every count and busy time less what
// `before` had; a device's streams and learned limit as `after` has them.
EncoderStats stats_since(const EncoderStats& before, const EncoderStats& after);

// One classify() or embed() call of `c` (`call`, run here) measured as a run
// of its rows, the same for every language binding: the run metrics of its
// rows and wall time (no files, so no read and write stages), the GPUs sampled while it ran (as a run samples
// them; nothing on the CPU), and its cost at `cost`'s price (resolve_run_cost of `options`). `call`'s error,
// or the metrics. One call at a time per classifier, so that its counters are the call's own.
Result<RunMetrics> measure_call(const Encoder& c, const RunOptions& options, const RunCost& cost,
                                const std::function<Status()>& call);

}  // namespace infercost::engine
