// The file run of `infercost run` and `infercost embed` as a function:
// read every row of options.inputs, classify (or embed, options.task) it
// with the model of options.model_dir, and write the outputs in input order
// to options.output, resumable from a checkpoint (docs/checkpoint.md).
//
//   infercost::RunOptions run;
//   run.inputs = {"tweets.parquet"};
//   run.model_dir = "models/sst2";
//   run.output = "labels.parquet";
//   infercost::Result<infercost::RunMetrics> metrics = infercost::run_files(run);
#pragma once

#include "infercost/metrics.h"
#include "infercost/options.h"
#include "infercost/status.h"

namespace infercost {

// On error nothing is left at options.output (for a folder output, the parts
// this run completed are removed too), or, for a run stopped through
// options.stop, a checkpoint to resume from (kCancelled). Settings are named
// in errors as RunOptions' members.
Result<RunMetrics> run_files(const RunOptions& options);

}  // namespace infercost
