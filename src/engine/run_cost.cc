#include "engine/run_cost.h"

#include <fmt/format.h>

#include "cost/prices.h"
#include "engine/settings.h"

namespace infercost::engine {

cost::Pricing pricing_of(const RunOptions& options) {
  return {options.spot_discount, options.platform_usd_per_hour, options.machines};
}

Result<RunCost> resolve_run_cost(const RunOptions& options) {
  RunCost c;
  auto name = [&](std::string_view setting) { return setting_ref(setting); };
  if (options.instance.empty()) {
    if (!options.price_list.empty() || !options.price_files.empty() || options.corpus_rows > 0) {
      return invalid_argument(fmt::format("{}, {} and {} price a run: give {} too", name("price_list"),
                                          name("price_files"), name("corpus_rows"),
                                          setting_ref("instance", "NAME")));
    }
    return c;
  }
  const cost::Pricing pricing = pricing_of(options);
  if (Status valid = cost::validate(pricing); !valid.ok()) {
    return invalid_argument(fmt::format("{}/{}/{}: {}", name("spot_discount"), name("platform_usd_per_hour"),
                                        name("machines"), valid.message()));
  }
  INFERCOST_ASSIGN_OR_RETURN(std::vector<cost::PriceList> lists, cost::price_lists_with(options.price_files));
  Result<cost::PricedInstance> found = cost::find_instance(lists, options.instance, options.price_list);
  if (!found.ok()) return invalid_argument(fmt::format("{}: {}", name("instance"), found.status().message()));
  c.instance = found->instance->name;
  c.price_list = found->list->name;
  c.price_source = found->source();
  c.price_date = found->date();
  c.instance_usd_per_hour = found->instance->usd_per_hour;
  c.spot_discount = pricing.spot_discount;
  c.platform_usd_per_hour = pricing.platform_usd_per_hour;
  c.machines = pricing.machines;
  c.estimate.usd_per_hour = cost::hourly_usd(*found->instance, pricing);
  return c;
}

void estimate_run_cost(const RunOptions& options, const RunMetrics& metrics, RunCost& c) {
  if (c.instance.empty()) return;
  c.estimate = cost::estimate_cost(c.estimate.usd_per_hour, metrics.wall_seconds, metrics.rows,
                                   metrics.tokens, options.corpus_rows);
}

}  // namespace infercost::engine
