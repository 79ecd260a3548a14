// `infercost bench`: runs every point of a sweep (spec.h) as repeated child
// processes (`infercost run ... --metrics`), and writes one benchmark record
// per point (record.h) as each point finishes. A point whose run fails is
// recorded as failed, with the reason, and the sweep goes on.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "bench/spec.h"
#include "cost/prices.h"
#include "engine/run_metrics.h"
#include "infercost/metrics.h"
#include "infercost/status.h"
#include "record/record.h"

namespace infercost::bench {

// Fills a record's measurements from its timed runs (at least one; their
// --metrics as parse_run_metrics reads them): the repetitions,
// spreads of wall time and throughput, median stage seconds, counts, the
// resolved config (batch_size_rule kept), data rows, tokens and length
// histogram. A repetition's peak RSS is the larger of
// `peak_rss_bytes[i]` (the largest VmHWM the bench sampled; 0: none) and the
// run's own figure (its VmHWM at the end of the run).
void fill_measurements(record::Record& r, const std::vector<RunMetrics>& runs,
                       const std::vector<int64_t>& peak_rss_bytes);

// A spread as the bench summary and `infercost report` print it: "± x%",
// half the min-max range as a percentage of the median ("" when the median
// is 0).
std::string spread_text(const record::Spread& spread);

// The record's instance block for a priced instance: price_source and
// price_date are the instance's own where it has them, else its list's.
record::InstanceInfo instance_info(const cost::PricedInstance& priced, const cost::Pricing& pricing);
// Cost of a measured point at `instance.usd_per_hour` (from the median wall
// time); corpus_rows 0 projects the point's own rows.
record::CostInfo cost_info(const record::InstanceInfo& instance, double wall_seconds, int64_t rows,
                           int64_t tokens, int64_t corpus_rows);

// Where generated data of `shape` lives for this spec:
// <data_dir>/<shape>-<rows>rows-seed<seed>-gen<G>[.jsonl|.parquet], G being
// corpus::kTweetGeneratorVersion; a folder for json-3 and parquet-10. Complete
// when "<path>.complete" exists.
std::string dataset_path(const SweepSpec& spec, const std::string& shape);

// The `infercost run` arguments of a point (after argv[0]): inputs, model,
// output folder and metrics file, then the point's and the sweep's settings.
// batch_size 0 leaves the run's default.
std::vector<std::string> run_arguments(const SweepSpec& spec, const Point& point,
                                       const std::vector<std::string>& inputs, int batch_size,
                                       const std::string& output_dir, const std::string& metrics_path);

struct BenchOptions {
  SweepSpec spec;  // fill_defaults() and validate() done
  // The infercost executable each run starts; /proc/self/exe by default.
  std::string executable = "/proc/self/exe";
  std::vector<std::string> command;  // the bench command line, for the records
  std::FILE* log = stderr;           // progress and summaries
  bool terminal = false;             // one updating progress line instead of plain lines
  std::string nvml_library = "libnvidia-ml.so.1";
};

struct BenchSummary {
  int points = 0;
  int failed = 0;
};

// Checks what can be checked before any run (the instance in the price
// lists, the model's config.json), then makes or reuses the data, runs every
// point and writes its record to spec.out as it finishes (flushed, so an
// interrupted sweep keeps its finished points; without spec.append the file
// is replaced when the first record is written, never before). Runs happen
// in a TempDir under $TMPDIR, removed at the end and on SIGINT/SIGTERM/SIGHUP
// once main() has installed core's signal cleanup. Points that fail are
// counted in the summary, not returned as errors.
Result<BenchSummary> run_bench(const BenchOptions& options);

// The instance a spec prices, looked up in the built-in lists and spec.prices;
// nullopt when spec.instance is empty. kInvalidArgument for an unknown one.
// `lists` keeps the loaded lists alive (the result points into them).
Result<std::optional<cost::PricedInstance>> find_spec_instance(const SweepSpec& spec,
                                                               std::vector<cost::PriceList>& lists);

// The --dry-run listing: one line per point with its run arguments.
std::string describe_points(const SweepSpec& spec, const std::vector<Point>& points);

}  // namespace infercost::bench
