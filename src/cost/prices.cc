#include "infercost/cost/prices.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "infercost/core/file.h"

namespace infercost::cost {

const Instance* PriceList::find(std::string_view instance) const {
  for (const Instance& i : instances) {
    if (i.name == instance) return &i;
  }
  return nullptr;
}

const std::vector<PriceList>& builtin_price_lists() {
  // vCPU counts are AWS's published instance sizes; the study's table gives
  // accelerators and memory only.
  static const std::vector<PriceList> lists = {
      {"seed-2021",
       "the 2021 study's published table (../shared/MISSION.md, \"Instances and hourly prices as published "
       "in the study\")",
       "2021",
       "As published by the study, not AWS's on-demand list prices of the time; kept unchanged so the "
       "study's cost figures can be reproduced.",
       {
           {"g4dn.xlarge", 0.071, 1, "T4", 4, "16 GB"},
           {"g4dn.12xlarge", 0.856, 4, "T4", 48, "192 GB"},
           {"g4dn.16xlarge", 1.141, 1, "T4", 64, "256 GB"},
           {"p2.xlarge", 0.122, 1, "K80", 4, "12 GB"},
           {"p2.8xlarge", 0.976, 8, "K80", 32, "96 GB"},
           {"p3.2xlarge", 0.415, 1, "V100", 8, "16 GB GPU"},
           {"p3.8xlarge", 1.66, 4, "V100", 32, "64 GB GPU"},
           {"p3dn.24xlarge", 4.233, 8, "V100", 96, "256 GB GPU"},
           {"c5.12xlarge", 0.728, 0, "", 48, "96 GB"},
           {"c5.24xlarge", 1.456, 0, "", 96, "192 GB"},
       }},
  };
  return lists;
}

namespace {

Result<std::string> required_string(const nlohmann::json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string() || it->get<std::string>().empty()) {
    return invalid_argument(fmt::format("{}: \"{}\" must be a non-empty string", where, key));
  }
  return it->get<std::string>();
}

Result<int> optional_count(const nlohmann::json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end()) return 0;
  if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > 1000000) {
    return invalid_argument(fmt::format("{}: \"{}\" must be a non-negative integer", where, key));
  }
  return static_cast<int>(it->get<int64_t>());
}

}  // namespace

Result<PriceList> parse_price_list(std::string_view json, const std::string& origin) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return invalid_argument(origin + ": not valid JSON");
  if (!j.is_object()) return invalid_argument(origin + ": a price list must be a JSON object");
  PriceList list;
  INFERCOST_ASSIGN_OR_RETURN(list.name, required_string(j, "name", origin));
  INFERCOST_ASSIGN_OR_RETURN(list.source, required_string(j, "source", origin));
  INFERCOST_ASSIGN_OR_RETURN(list.date, required_string(j, "date", origin));
  if (auto it = j.find("notes"); it != j.end()) {
    if (!it->is_string()) return invalid_argument(origin + ": \"notes\" must be a string");
    list.notes = it->get<std::string>();
  }
  auto instances = j.find("instances");
  if (instances == j.end() || !instances->is_array() || instances->empty()) {
    return invalid_argument(origin + ": \"instances\" must be a non-empty array");
  }
  std::set<std::string> seen;
  for (size_t k = 0; k < instances->size(); ++k) {
    const nlohmann::json& e = (*instances)[k];
    std::string where = fmt::format("{}: instances[{}]", origin, k);
    if (!e.is_object()) return invalid_argument(where + ": must be an object");
    Instance inst;
    INFERCOST_ASSIGN_OR_RETURN(inst.name, required_string(e, "name", where));
    where += " (" + inst.name + ")";
    auto price = e.find("usd_per_hour");
    if (price == e.end() || !price->is_number() || !std::isfinite(price->get<double>()) ||
        price->get<double>() <= 0) {
      return invalid_argument(where + ": \"usd_per_hour\" must be a positive number");
    }
    inst.usd_per_hour = price->get<double>();
    INFERCOST_ASSIGN_OR_RETURN(inst.gpus, optional_count(e, "gpus", where));
    INFERCOST_ASSIGN_OR_RETURN(inst.vcpus, optional_count(e, "vcpus", where));
    for (auto [key, field] : {std::pair{"gpu", &inst.gpu}, std::pair{"memory", &inst.memory}}) {
      auto it = e.find(key);
      if (it == e.end()) continue;
      if (!it->is_string()) return invalid_argument(fmt::format("{}: \"{}\" must be a string", where, key));
      *field = it->get<std::string>();
    }
    if (!seen.insert(inst.name).second) return invalid_argument(where + ": listed twice");
    list.instances.push_back(std::move(inst));
  }
  return list;
}

Result<PriceList> load_price_list(const std::string& path) {
  INFERCOST_ASSIGN_OR_RETURN(std::string text, read_file(path));
  return parse_price_list(text, path);
}

Result<PricedInstance> find_instance(const std::vector<PriceList>& lists, const std::string& instance,
                                     const std::string& list_name) {
  std::string searched;
  for (const PriceList& list : lists) {
    if (!list_name.empty() && list.name != list_name) continue;
    searched += (searched.empty() ? "" : ", ") + list.name;
    if (const Instance* found = list.find(instance)) return PricedInstance{&list, found};
  }
  if (searched.empty()) {
    std::string known;
    for (const PriceList& list : lists) known += (known.empty() ? "" : ", ") + list.name;
    return invalid_argument(fmt::format("no price list named '{}' (known: {})", list_name, known));
  }
  return invalid_argument(
      fmt::format("instance '{}' is not in the price list{} {} (`infercost prices` lists them; --prices FILE "
                  "adds your own)",
                  instance, searched.find(',') == std::string::npos ? "" : "s", searched));
}

Status validate(const Pricing& pricing) {
  if (!(pricing.spot_discount >= 0 && pricing.spot_discount < 1)) {
    return invalid_argument(fmt::format("spot discount {} must be in [0, 1)", pricing.spot_discount));
  }
  if (!(pricing.platform_usd_per_hour >= 0) || !std::isfinite(pricing.platform_usd_per_hour)) {
    return invalid_argument(
        fmt::format("platform surcharge {} USD/hour must be >= 0", pricing.platform_usd_per_hour));
  }
  if (pricing.machines < 1)
    return invalid_argument(fmt::format("machines {} must be >= 1", pricing.machines));
  return Status();
}

Result<std::vector<PriceList>> price_lists_with(const std::vector<std::string>& paths) {
  std::vector<PriceList> lists = builtin_price_lists();
  for (const std::string& path : paths) {
    INFERCOST_ASSIGN_OR_RETURN(PriceList list, load_price_list(path));
    lists.push_back(std::move(list));
  }
  return lists;
}

double hourly_usd(const Instance& instance, const Pricing& pricing) {
  return (instance.usd_per_hour * (1.0 - pricing.spot_discount) + pricing.platform_usd_per_hour) *
         pricing.machines;
}

CostEstimate estimate_cost(double usd_per_hour, double wall_seconds, int64_t rows, int64_t tokens,
                           int64_t corpus_rows) {
  CostEstimate c;
  c.usd_per_hour = usd_per_hour;
  c.cost_to_solution_usd = wall_seconds / 3600.0 * usd_per_hour;
  if (rows <= 0 || wall_seconds <= 0) return c;
  const double rows_per_second = double(rows) / wall_seconds;
  c.usd_per_million_rows = 1e6 / rows_per_second * usd_per_hour / 3600.0;
  if (tokens > 0) c.usd_per_million_tokens = 1e6 / (double(tokens) / wall_seconds) * usd_per_hour / 3600.0;
  c.corpus_seconds = double(corpus_rows > 0 ? corpus_rows : rows) / rows_per_second;
  c.corpus_usd = c.corpus_seconds / 3600.0 * usd_per_hour;
  return c;
}

}  // namespace infercost::cost
