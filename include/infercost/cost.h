// What a measured run costs (cost::estimate_cost, src/cost/prices.h): the
// figures `infercost run --instance`'s metrics, the bench's records and the
// plan's predictions carry, with their JSON keys listed once.
#pragma once

#include <cstdint>

namespace infercost::cost {

struct CostEstimate {
  double usd_per_hour = 0;
  double cost_to_solution_usd = 0;    // wall_seconds / 3600 * usd_per_hour
  double usd_per_million_rows = 0;    // 1e6 / rows_per_second * usd_per_hour / 3600
  double usd_per_million_tokens = 0;  // the same per real token
  int64_t corpus_rows = 0;            // the rows projected to: the run's own unless others were asked for
  double corpus_seconds = 0;          // corpus_rows at the measured rows/s
  double corpus_usd = 0;

  bool operator==(const CostEstimate&) const = default;
};

// f(key, member) for each field of `e` (const or not), in the order the
// JSON of the metrics and the records writes them.
template <typename Estimate, typename F>
void for_each_cost_estimate_field(Estimate& e, F&& f) {
  f("usd_per_hour", e.usd_per_hour);
  f("cost_to_solution_usd", e.cost_to_solution_usd);
  f("usd_per_million_rows", e.usd_per_million_rows);
  f("usd_per_million_tokens", e.usd_per_million_tokens);
  f("corpus_rows", e.corpus_rows);
  f("corpus_seconds", e.corpus_seconds);
  f("corpus_usd", e.corpus_usd);
}

}  // namespace infercost::cost
