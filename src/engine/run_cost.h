// A run's price (RunOptions::instance ...), resolved before the run and
// estimated after it into RunMetrics::cost: the one pricing of a run, for
// every front door (the CLI, infercost.run()).
#pragma once

#include "cost/prices.h"
#include "infercost/metrics.h"
#include "infercost/options.h"
#include "infercost/status.h"

namespace infercost::engine {

// The instance and pricing `options` ask for, looked up and checked (the
// price lists read) before anything of the run is read: a RunCost with the
// price filled in, or one with an empty instance when the run is not priced.
// kInvalidArgument naming the settings (setting_ref) for pricing
// settings without an instance, a pricing out of range or an unknown
// instance; a price file's own errors.
Result<RunCost> resolve_run_cost(const RunOptions& options);

// The terms `options` price on: spot discount, platform surcharge, machines.
cost::Pricing pricing_of(const RunOptions& options);

// `cost` (from resolve_run_cost) with the estimate of `metrics`' run
// (cost::estimate_cost of its wall seconds, rows and tokens, projected to
// options.corpus_rows): nothing when the run is not priced.
void estimate_run_cost(const RunOptions& options, const RunMetrics& metrics, RunCost& cost);

}  // namespace infercost::engine
