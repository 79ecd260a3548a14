// `infercost prices`: the price lists infercost knows, with their sources.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cost/prices.h"

namespace infercost::cli {
namespace {

struct PricesFlags {
  std::vector<std::string> files;
  std::string list;
};

// Prints `text` after `lead`, wrapped at word boundaries to `width` columns,
// continuation lines indented by `indent` spaces.
void print_wrapped(const std::string& lead, const std::string& text, size_t indent, size_t width = 100) {
  std::string line = lead;
  size_t at = 0;
  bool first_word = true;
  while (at < text.size()) {
    size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(at, end - at);
    at = end + 1;
    if (word.empty()) continue;
    if (!first_word && line.size() + 1 + word.size() > width) {
      fmt::print("{}\n", line);
      line = std::string(indent, ' ') + word;
    } else {
      line += (first_word ? "" : " ") + word;
    }
    first_word = false;
  }
  fmt::print("{}\n", line);
}

// A price with four decimals, or up to six where the source gives more.
std::string price_text(double usd) {
  std::string text = fmt::format("{:.6f}", usd);
  while (text.size() > 2 && text[text.size() - 5] != '.' && text.back() == '0') text.pop_back();
  return text;
}

// One list: its source, date and notes, a table of its instances, and, when
// instances carry their own sources, a numbered legend the table refers to.
void print_list(const cost::PriceList& list) {
  fmt::print("{}  (date: {})\n", list.name, list.date);
  print_wrapped("  source: ", list.source, 10);
  if (!list.notes.empty()) print_wrapped("  note: ", list.notes, 8);

  std::vector<std::string> sources;  // distinct per-instance sources, in order of appearance
  bool regions = false;
  for (const cost::Instance& i : list.instances) {
    regions = regions || !i.region.empty();
    if (!i.source.empty() && std::find(sources.begin(), sources.end(), i.source) == sources.end()) {
      sources.push_back(i.source);
    }
  }
  const bool per_instance = !sources.empty();
  auto source_ref = [&](const cost::Instance& i) -> std::string {
    if (i.source.empty()) return "-";
    return fmt::format("[{}]", std::find(sources.begin(), sources.end(), i.source) - sources.begin() + 1);
  };

  auto date_of = [&](const cost::Instance& i) -> const std::string& {
    return i.date.empty() ? list.date : i.date;
  };
  size_t name_width = 8, memory_width = 6, region_width = 6, date_width = 4;
  for (const cost::Instance& i : list.instances) {
    name_width = std::max(name_width, i.name.size());
    memory_width = std::max(memory_width, i.memory.size());
    region_width = std::max(region_width, i.region.size());
    date_width = std::max(date_width, date_of(i).size());
  }
  std::string header = fmt::format("  {:<{}} {:>9}  {:<11} {:>6}  {:<{}}", "instance", name_width, "USD/hour",
                                   "GPUs", "vCPUs", "memory", memory_width);
  if (regions) header += fmt::format("  {:<{}}", "region", region_width);
  if (per_instance) header += fmt::format("  {:<{}}  src", "date", date_width);
  fmt::print("{}\n", header.substr(0, header.find_last_not_of(' ') + 1));
  for (const cost::Instance& i : list.instances) {
    const std::string gpus = i.gpus > 0 ? fmt::format("{} x {}", i.gpus, i.gpu) : "-";
    const std::string vcpus = i.vcpus > 0 ? std::to_string(i.vcpus) : "?";
    std::string line =
        fmt::format("  {:<{}} {:>9}  {:<11} {:>6}  {:<{}}", i.name, name_width, price_text(i.usd_per_hour),
                    gpus, vcpus, i.memory.empty() ? "-" : i.memory, memory_width);
    if (regions) line += fmt::format("  {:<{}}", i.region.empty() ? "-" : i.region, region_width);
    if (per_instance) {
      line += fmt::format("  {:<{}}  {}", date_of(i), date_width, source_ref(i));
    }
    fmt::print("{}\n", line.substr(0, line.find_last_not_of(' ') + 1));
  }
  if (per_instance) {
    fmt::print("  sources:\n");
    for (size_t k = 0; k < sources.size(); ++k) print_wrapped(fmt::format("    [{}] ", k + 1), sources[k], 8);
  }
  fmt::print("\n");
}

void execute_prices(const PricesFlags& flags) {
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

void define_prices(CLI::App* cmd) {
  auto flags = bind_flags<PricesFlags>(*cmd, execute_prices);
  cmd->footer(
      "Built in: seed-2021 (the 2021 study's table, kept as published), aws-2026 (AWS us-east-1 on demand)\n"
      "and gcp-2026 (Google Cloud us-central1 on demand); each current price names its source, date and\n"
      "region. Prices change: check them before spending money, and give your own with --prices FILE\n"
      "(docs/cost.md).");
  cmd->add_option("--prices", flags->files, "A JSON price list of your own (see docs/cost.md); repeatable")
      ->check(CLI::ExistingFile)
      ->allow_extra_args(false);  // one file per flag: later words stay inputs
  cmd->add_option("--list", flags->list, "Show only the list with this name (e.g. seed-2021, aws-2026)");
}

}  // namespace infercost::cli
