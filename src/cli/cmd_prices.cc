// `infercost prices`: the price lists infercost knows, with their sources.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "cli/commands.h"
#include "infercost/cost/prices.h"

namespace infercost::cli {
namespace {

struct PricesFlags {
  std::vector<std::string> files;
  std::string list;
};

void print_list(const cost::PriceList& list) {
  fmt::print("{}  (source: {}; date: {})\n", list.name, list.source, list.date);
  if (!list.notes.empty()) fmt::print("  {}\n", list.notes);
  fmt::print("  {:<16} {:>10}  {:<12} {:>6}  {}\n", "instance", "USD/hour", "GPUs", "vCPUs", "memory");
  for (const cost::Instance& i : list.instances) {
    const std::string gpus = i.gpus > 0 ? fmt::format("{} x {}", i.gpus, i.gpu) : "-";
    const std::string vcpus = i.vcpus > 0 ? std::to_string(i.vcpus) : "?";
    fmt::print("  {:<16} {:>10.4f}  {:<12} {:>6}  {}\n", i.name, i.usd_per_hour, gpus, vcpus,
               i.memory.empty() ? "-" : i.memory);
  }
  fmt::print("\n");
}

void execute(const PricesFlags& flags) {
  Result<std::vector<cost::PriceList>> loaded = cost::price_lists_with(flags.files);
  if (!loaded.ok()) fail(loaded.status());
  const std::vector<cost::PriceList>& lists = *loaded;
  bool printed = false;
  for (const cost::PriceList& list : lists) {
    if (!flags.list.empty() && list.name != flags.list) continue;
    print_list(list);
    printed = true;
  }
  if (!printed) {
    std::string names;
    for (const cost::PriceList& list : lists) names += (names.empty() ? "" : ", ") + list.name;
    fail(invalid_argument(fmt::format("no price list named '{}' (known: {})", flags.list, names)));
  }
}

}  // namespace

void register_prices(CLI::App& app) {
  auto flags = std::make_shared<PricesFlags>();
  CLI::App* cmd = app.add_subcommand(
      "prices", "List the instance price lists (built in, and --prices files) with their sources and dates");
  cmd->add_option("--prices", flags->files, "A JSON price list of your own (see docs/cost.md); repeatable")
      ->check(CLI::ExistingFile);
  cmd->add_option("--list", flags->list, "Show only the list with this name (e.g. seed-2021)");
  cmd->callback([flags] { execute(*flags); });
}

}  // namespace infercost::cli
