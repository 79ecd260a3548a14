// What the engine, bench and plan need of the run metrics beyond the
// installed RunMetrics (include/infercost/metrics.h): the token-length
// histogram, reading the metrics JSON back and the process's peak memory.
// Implemented in metrics.cc.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "infercost/metrics.h"
#include "infercost/status.h"

namespace infercost {

// Bucket edges of the token-length histogram in the metrics JSON: bucket i
// holds lengths in [edges[i], edges[i+1]), the last one is open-ended.
const std::vector<int>& length_histogram_edges();

// Bins counts per exact length (counts_by_length[L] = rows of L tokens) into
// the buckets of `edges` (ascending). Lengths below edges[0] are dropped.
std::vector<int64_t> bin_lengths(const std::vector<int64_t>& counts_by_length, const std::vector<int>& edges);

// Reads what RunMetrics::to_json() wrote (`infercost bench` reads its child
// runs' metrics so). Every field the writer always writes is required, the
// ones it writes only sometimes (first_skip_reason, capacity, the GPU figures,
// gpu_monitor, resume) and head (metrics from before it lack it) keep their
// defaults when missing; the derived figures (padding_efficiency,
// rows_per_second, ...) are not read: the methods compute them again. length_counts come back with each
// histogram bucket's rows at the bucket's lower edge (the file holds the buckets, not the exact lengths), so
// that to_json() writes the same histogram again. Errors: kCorruption starting
// with `origin` and naming the field ("m.json: no \"rows\"").
Result<RunMetrics> parse_run_metrics(std::string_view json, const std::string& origin);

// Peak resident set size of this process so far, in bytes: VmHWM of
// /proc/self/status (the program's own, from its exec on), else getrusage.
int64_t peak_rss_bytes();

}  // namespace infercost
