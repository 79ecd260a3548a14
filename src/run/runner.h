// `infercost run`: classify every row of the inputs and write predictions in
// input order. Stages: read -> tokenize -> batch -> infer -> the head's output
// function (head.h) -> write. `infercost embed` is the same run with
// ModelOptions::task kEmbed: pooled (normalized) vectors written instead.
#pragma once

#include <string>

#include "engine/encoder.h"  // BackendFactory
#include "infercost/metrics.h"
#include "infercost/options.h"
#include "infercost/status.h"
#include "run/engine.h"

namespace infercost::run {

// On error nothing is left at options.output (the temporary is removed; for a
// folder output, the parts this run completed are removed too). Rows whose
// text is null are kept and written with null probabilities and label.
//
// Out of memory: as in Encoder::classify, a batch is split and retried and
// the device keeps the smaller limit for the rest of the run; a single row
// that does not fit fails the run (kResourceExhausted naming the device and
// the row's tokens).
// Device errors: kInvalidArgument for a malformed --device,
// kUnsupported/kUnavailable when CUDA cannot run here (backend::resolve_devices).
// The run opens an Encoder (engine/encoder.h) on options' devices through
// `factory` (tests: fake backends) and classifies every window of rows with
// its workers, in a pipeline. on_model_loaded is called before any row is read.
Result<RunMetrics> run_files(const RunOptions& options, const BackendFactory& factory = {});

// Whether `output` is written as a stream, with no checkpoint: "-" (stdout),
// a character device, a FIFO, or a descriptor by name (/dev/stdout).
bool output_is_stream(const std::string& output);

}  // namespace infercost::run
