// Instance price lists and cost-to-solution arithmetic.
//
// A price list names where its prices come from and when. Built-in lists, in
// this order: "seed-2021", the hourly prices the 2021 study published ("Are
// GPUs Really Expensive? Benchmarking GPUs for Inference on Databricks
// Clusters", Databricks engineering blog, 2021-12-15), kept as published; "aws-2026" and "gcp-2026", current
// on-demand prices with a source, date and region for every instance
// (docs/cost.md says how they were compiled). Users add their own lists as JSON
// files.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "infercost/cost.h"
#include "infercost/status.h"

namespace infercost::cost {

struct Instance {
  std::string name;         // e.g. "p3.8xlarge"
  double usd_per_hour = 0;  // the whole machine
  int gpus = 0;
  std::string gpu;     // e.g. "V100"; empty for CPU-only machines
  int vcpus = 0;       // 0: not published in the list
  std::string memory;  // as the source gives it, e.g. "64 GB GPU"
  // Where this price comes from when it is not the list's own source (empty:
  // the list's), the date of that source, and the region it was read for
  // (empty: not stated).
  std::string source;
  std::string date;
  std::string region;
};

struct PriceList {
  std::string name;    // e.g. "seed-2021"
  std::string source;  // where the prices come from
  std::string date;    // when they were published or read, as the source says
  std::string notes;
  std::vector<Instance> instances;

  // The instance with this exact name, or null.
  const Instance* find(std::string_view instance) const;
};

// The lists compiled into infercost, in display order.
const std::vector<PriceList>& builtin_price_lists();

// Parses a user price list:
//   {"name": "...", "source": "...", "date": "...", "notes": "...",
//    "instances": [{"name": "...", "usd_per_hour": 1.23, "gpus": 1, "gpu": "T4",
//                   "vcpus": 4, "memory": "16 GiB", "region": "us-east-1",
//                   "source": "...", "date": "..."}, ...]}
// name, source, date and each instance's name and usd_per_hour are required;
// prices must be positive and finite; instance names unique. Errors name
// `origin` (the file) and the offending instance.
Result<PriceList> parse_price_list(std::string_view json, const std::string& origin);
Result<PriceList> load_price_list(const std::string& path);

// The built-in lists followed by those in `paths` (user files), in order.
// List names must be unique: a file whose list is named like a built-in list
// or like an earlier file's is refused (kInvalidArgument naming the file and
// the name), since lists are looked up by name.
Result<std::vector<PriceList>> price_lists_with(const std::vector<std::string>& paths);

// An instance found in a price list.
struct PricedInstance {
  const PriceList* list = nullptr;
  const Instance* instance = nullptr;

  // The instance's own source and date where it has them, else the list's.
  const std::string& source() const;
  const std::string& date() const;
};

// Finds `instance` in the list named `list_name`, or, when it is empty, in
// the user's lists (those not built in), then the current built-in lists,
// then seed-2021 (historical prices: used for a bare name only when no other
// list has it), each group in the order given. Errors (kInvalidArgument)
// name the lists searched.
Result<PricedInstance> find_instance(const std::vector<PriceList>& lists, const std::string& instance,
                                     const std::string& list_name = "");

// How a run's hourly price is made up: the instance's on-demand price, less a
// spot discount (0..1), plus a platform surcharge per machine-hour (e.g.
// Databricks DBUs converted to USD), times the number of machines.
struct Pricing {
  double spot_discount = 0;
  double platform_usd_per_hour = 0;
  int machines = 1;
};

// One machine at the plain on-demand price: no spot discount, no surcharge.
inline bool is_plain_on_demand(const Pricing& p) {
  return p.spot_discount == 0 && p.platform_usd_per_hour == 0 && p.machines == 1;
}

// kInvalidArgument unless 0 <= spot_discount < 1, platform >= 0 (finite) and
// machines >= 1.
Status validate(const Pricing& pricing);

// (usd_per_hour * (1 - spot_discount) + platform_usd_per_hour) * machines.
double hourly_usd(const Instance& instance, const Pricing& pricing);

// Cost of a measured run (wall seconds for `rows` rows with `tokens` real
// tokens) at `usd_per_hour`, and its projection to `corpus_rows` rows (0: the
// run's own rows). A run with no rows or no time has no rate: the per-row,
// per-token and projected figures are then 0. The one cost arithmetic of
// `infercost run --instance`, the bench's records and the plan's predictions.
CostEstimate estimate_cost(double usd_per_hour, double wall_seconds, int64_t rows, int64_t tokens,
                           int64_t corpus_rows = 0);
// The same at hourly_usd(instance, pricing).
CostEstimate estimate_cost(const Instance& instance, const Pricing& pricing, double wall_seconds,
                           int64_t rows, int64_t tokens, int64_t corpus_rows = 0);

}  // namespace infercost::cost
