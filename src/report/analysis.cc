#include "report/analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "core/device.h"
#include "report/format.h"

namespace infercost::report {

// ---- Durations ----

Result<double> parse_duration(std::string_view text) {
  const std::string quoted = fmt::format("'{}'", text);
  const char* accepted = "use hours, minutes and seconds as h, m and s, e.g. 2h, 90m, 3600s or 1h30m";
  size_t i = 0;
  const size_t n = text.size();
  auto skip_spaces = [&] {
    while (i < n && text[i] == ' ') ++i;
  };
  skip_spaces();
  if (i == n) return invalid_argument(fmt::format("duration {} is empty: {}", quoted, accepted));
  double total = 0;
  int last_rank = -1;
  while (i < n) {
    const size_t start = i;
    bool digits = false, point = false;
    while (i < n && (std::isdigit(static_cast<unsigned char>(text[i])) || (text[i] == '.' && !point))) {
      if (text[i] == '.')
        point = true;
      else
        digits = true;
      ++i;
    }
    if (!digits) {
      return invalid_argument(
          fmt::format("duration {}: expected a number at '{}': {}", quoted, text.substr(start), accepted));
    }
    const double value = std::strtod(std::string(text.substr(start, i - start)).c_str(), nullptr);
    skip_spaces();
    const size_t unit_start = i;
    while (i < n && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    const std::string_view unit = text.substr(unit_start, i - unit_start);
    int rank = -1;
    double seconds_per_unit = 0;
    if (unit == "h") rank = 0, seconds_per_unit = 3600;
    if (unit == "m") rank = 1, seconds_per_unit = 60;
    if (unit == "s") rank = 2, seconds_per_unit = 1;
    if (unit.empty()) {
      return invalid_argument(fmt::format("duration {}: '{}' has no unit: {}", quoted,
                                          text.substr(start, unit_start - start), accepted));
    }
    if (rank < 0)
      return invalid_argument(fmt::format("duration {}: unknown unit '{}': {}", quoted, unit, accepted));
    if (rank <= last_rank) {
      return invalid_argument(fmt::format(
          "duration {}: units must come in the order h, m, s, each at most once: {}", quoted, accepted));
    }
    last_rank = rank;
    total += value * seconds_per_unit;
    skip_spaces();
  }
  if (!(total > 0)) return invalid_argument(fmt::format("duration {} must be longer than 0 s", quoted));
  if (!std::isfinite(total) || total > 1e9) {
    return invalid_argument(fmt::format("duration {} is too long (at most 1e9 s)", quoted));
  }
  return total;
}

// ---- Loading and pricing ----

Status reprice(std::vector<record::SourcedRecord>& records, const std::vector<cost::PriceList>& lists,
               const std::string& list_name) {
  for (record::SourcedRecord& sourced : records) {
    record::Record& r = sourced.record;
    if (!r.instance) continue;
    record::InstanceInfo& info = *r.instance;
    Result<cost::PricedInstance> found = cost::find_instance(lists, info.name, list_name);
    if (!found.ok()) return found.status().with_context(sourced.origin);
    cost::Pricing pricing;
    pricing.spot_discount = info.spot_discount;
    pricing.platform_usd_per_hour = info.platform_usd_per_hour;
    pricing.machines = std::max(1, info.machines);
    INFERCOST_RETURN_IF_ERROR(
        cost::validate(pricing).with_context(fmt::format("{}: instance '{}'", sourced.origin, info.name)));
    const cost::Instance& instance = *found->instance;
    info.price_list = found->list->name;
    info.price_source = found->source();
    info.price_date = found->date();
    info.on_demand_usd_per_hour = instance.usd_per_hour;
    info.usd_per_hour = cost::hourly_usd(instance, pricing);
    if (instance.gpus > 0) info.gpus = instance.gpus;
    if (!instance.gpu.empty()) info.gpu = instance.gpu;
    if (instance.vcpus > 0) info.vcpus = instance.vcpus;
    // The record's own cost figures were at the old price; the report
    // computes its own from usd_per_hour.
    r.cost.reset();
  }
  return Status::ok_status();
}

// ---- Choosing points ----

namespace {

bool cheaper(const TimeCost& a, size_t ia, const TimeCost& b, size_t ib) {
  return std::tie(a.usd, a.seconds, ia) < std::tie(b.usd, b.seconds, ib);
}
bool faster(const TimeCost& a, size_t ia, const TimeCost& b, size_t ib) {
  return std::tie(a.seconds, a.usd, ia) < std::tie(b.seconds, b.usd, ib);
}

}  // namespace

std::vector<size_t> pareto_front(const std::vector<TimeCost>& points) {
  std::vector<size_t> front;
  for (size_t i = 0; i < points.size(); ++i) {
    bool dominated = false;
    for (size_t j = 0; j < points.size() && !dominated; ++j) {
      const TimeCost& a = points[j];
      const TimeCost& b = points[i];
      dominated = a.seconds <= b.seconds && a.usd <= b.usd && (a.seconds < b.seconds || a.usd < b.usd);
    }
    if (!dominated) front.push_back(i);
  }
  std::sort(front.begin(), front.end(),
            [&](size_t a, size_t b) { return faster(points[a], a, points[b], b); });
  return front;
}

std::optional<size_t> cheapest(const std::vector<TimeCost>& points) {
  std::optional<size_t> best;
  for (size_t i = 0; i < points.size(); ++i) {
    if (!best || cheaper(points[i], i, points[*best], *best)) best = i;
  }
  return best;
}

std::optional<size_t> fastest(const std::vector<TimeCost>& points) {
  std::optional<size_t> best;
  for (size_t i = 0; i < points.size(); ++i) {
    if (!best || faster(points[i], i, points[*best], *best)) best = i;
  }
  return best;
}

DeadlineChoice choose_for_deadline(const std::vector<TimeCost>& points, double deadline_seconds) {
  DeadlineChoice choice;
  for (size_t i = 0; i < points.size(); ++i) {
    if (points[i].seconds > deadline_seconds) continue;
    if (!choice.meets || cheaper(points[i], i, points[*choice.meets], *choice.meets)) choice.meets = i;
  }
  if (!choice.meets) choice.closest = fastest(points);
  return choice;
}

// ---- The model ----

namespace {

double hourly_price(const record::Record& r) {
  if (r.instance && r.instance->usd_per_hour > 0) return r.instance->usd_per_hour;
  if (r.cost && r.cost->usd_per_hour > 0) return r.cost->usd_per_hour;
  if (r.instance && r.instance->on_demand_usd_per_hour > 0) {
    const record::InstanceInfo& i = *r.instance;
    cost::Instance instance;
    instance.usd_per_hour = i.on_demand_usd_per_hour;
    cost::Pricing pricing;
    pricing.spot_discount = i.spot_discount;
    pricing.platform_usd_per_hour = i.platform_usd_per_hour;
    pricing.machines = std::max(1, i.machines);
    return cost::hourly_usd(instance, pricing);
  }
  return 0;
}

// The file of an origin "results.jsonl: line 3" (record::SourcedRecord).
std::string origin_file(const std::string& origin) {
  const size_t at = origin.rfind(": line ");
  if (at == std::string::npos) return origin;
  const std::string number = origin.substr(at + 7);
  if (number.empty() || number.find_first_not_of("0123456789") != std::string::npos) return origin;
  return origin.substr(0, at);
}

void add_once(std::vector<std::string>& list, const std::string& item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

int64_t record_data_rows(const record::Record& r) {
  return r.data.rows > 0 ? r.data.rows : r.rows;
}

std::string threads_text(int threads) {
  return threads > 0 ? fmt::format("{} threads", threads) : "threads auto";
}

std::string tokenizer_threads_text(int threads) {
  return threads > 0 ? fmt::format("{} tokenizer {}", threads, threads == 1 ? "thread" : "threads")
                     : "tokenizer threads auto";
}

std::string max_length_text(int max_length) {
  return max_length > 0 ? fmt::format("max length {}", max_length) : "max length auto";
}

// Every field of a configuration but the machine, for tables and the list
// of failed points; `data_text` stands for the shape and data set.
std::string describe(const record::Setup& s, const std::string& data_text) {
  std::string d = fmt::format("{} {} {} {}, {}, {}, {}", s.device.empty() ? "?" : s.device,
                              s.precision.empty() ? "?" : s.precision, s.batching.empty() ? "?" : s.batching,
                              data_text.empty() ? "?" : data_text, threads_text(s.threads),
                              tokenizer_threads_text(s.tokenizer_threads), max_length_text(s.max_length));
  if (s.max_batch_tokens > 0) d += fmt::format(", at most {} tokens per batch", count(s.max_batch_tokens));
  if (!s.label.empty()) d += ", label " + s.label;
  if (s.task == "embed") d += ", embedding";
  return d;
}

double median_of(std::vector<double> v) {
  return record::spread_of(std::move(v)).median;
}

struct GpuFigures {
  int gpus = 0;
  int64_t total = 0;
  double peak = 0, peak_max = 0, mean = 0, utilization = 0;
};

// Only a GPU point's GPUs count: a CPU point's monitor.gpus (idle GPUs of
// the machine, in records of older benches) says nothing about its run.
GpuFigures gpu_figures(const record::Record& r) {
  GpuFigures g;
  if (!is_gpu_device(r.config.device)) return g;
  for (const GpuUsage& u : r.monitor.gpus) {
    if (u.memory_total_bytes <= 0) continue;
    const double total = double(u.memory_total_bytes);
    const double peak = double(u.memory_used_peak_bytes) / total;
    g.peak += peak;
    g.peak_max = std::max(g.peak_max, peak);
    g.mean += u.memory_used_mean_bytes / total;
    g.utilization += u.utilization_mean;
    g.total = std::max(g.total, u.memory_total_bytes);
    ++g.gpus;
  }
  if (g.gpus > 0) {
    g.peak /= g.gpus;
    g.mean /= g.gpus;
    g.utilization /= g.gpus;
  }
  return g;
}

// The usable records: the model's sources and the span of their start
// times are noted first, and records without a usable timing go to
// m.failed with the reason.
std::vector<const record::SourcedRecord*> usable_records(const std::vector<record::SourcedRecord>& records,
                                                         ReportModel& m) {
  for (const record::SourcedRecord& r : records) {
    add_once(m.sources, origin_file(r.origin));
    const std::string& t = r.record.started_at;
    if (t.empty()) continue;
    if (m.first_started_at.empty() || t < m.first_started_at) m.first_started_at = t;
    if (m.last_started_at.empty() || t > m.last_started_at) m.last_started_at = t;
  }
  std::vector<const record::SourcedRecord*> usable;
  for (const record::SourcedRecord& loaded : records) {
    const record::Record& r = loaded.record;
    std::string reason;
    if (!r.ok()) {
      reason = r.error.empty() ? "failed (no reason recorded)" : r.error;
    } else if (!(r.wall_seconds.median > 0) || r.classified_rows() <= 0) {
      reason = "no usable timing (wall_seconds.median or rows is 0)";
    }
    if (reason.empty()) {
      usable.push_back(&loaded);
    } else {
      const record::Setup setup = record::setup_of(r, 0);
      m.failed.push_back(
          {r.machine(), describe(setup, setup.shape), r.config.batch_size, reason, loaded.origin});
    }
  }
  return usable;
}

// The distinct data sets (same content hash and rows) into m.data_sets,
// numbered in order of shape, rows and hash; returns each usable record's
// data set number.
std::vector<int> number_data_sets(const std::vector<const record::SourcedRecord*>& usable, ReportModel& m) {
  std::map<std::tuple<std::string, int64_t, std::string>, int> data_index;
  std::vector<std::set<std::string>> data_machines;
  std::vector<int> record_data(usable.size());
  for (size_t k = 0; k < usable.size(); ++k) {
    const record::Record& r = usable[k]->record;
    auto key = std::make_tuple(r.data.content_sha256, record_data_rows(r),
                               r.data.content_sha256.empty() ? r.data.shape : std::string());
    auto [it, inserted] = data_index.emplace(key, int(m.data_sets.size()) + 1);
    if (inserted) {
      DataSet d;
      d.index = it->second;
      d.shape = r.data.shape.empty() ? "?" : r.data.shape;
      d.content_sha256 = r.data.content_sha256;
      d.rows = record_data_rows(r);
      d.tokens = r.data.tokens > 0 ? r.data.tokens : r.tokens;
      m.data_sets.push_back(d);
      data_machines.emplace_back();
    }
    record_data[k] = it->second;
    data_machines[it->second - 1].insert(r.machine());
  }
  for (size_t i = 0; i < m.data_sets.size(); ++i) {
    m.data_sets[i].machines.assign(data_machines[i].begin(), data_machines[i].end());
  }
  // Number the data sets in a fixed order (not the records' order).
  std::sort(m.data_sets.begin(), m.data_sets.end(), [](const DataSet& a, const DataSet& b) {
    return std::tie(a.shape, a.rows, a.content_sha256, a.index) <
           std::tie(b.shape, b.rows, b.content_sha256, b.index);
  });
  std::vector<int> renumber(m.data_sets.size() + 1);
  for (size_t i = 0; i < m.data_sets.size(); ++i) {
    renumber[m.data_sets[i].index] = int(i) + 1;
    m.data_sets[i].index = int(i) + 1;
  }
  for (int& d : record_data) d = renumber[d];
  return record_data;
}

// Setup -> batch size -> the usable records of that point (indices).
using Groups = std::map<record::Setup, std::map<int, std::vector<size_t>>>;

Groups group_by_setup(const std::vector<const record::SourcedRecord*>& usable,
                      const std::vector<int>& record_data) {
  Groups grouped;
  for (size_t k = 0; k < usable.size(); ++k) {
    const record::Record& r = usable[k]->record;
    record::Setup setup = record::setup_of(r, hourly_price(r));
    setup.data_set = record_data[k];
    grouped[setup][r.config.batch_size].push_back(k);
  }
  return grouped;
}

// Which fields tell configurations apart, for short names.
enum Field {
  kDevice,
  kPrecision,
  kBatching,
  kShape,
  kThreads,
  kLabel,
  kModel,
  kPrice,
  kMaxBatchTokens,
  kMaxLength,
  kTokenizerThreads,
  kTask,
  kFields
};

struct Naming {
  bool varies[kFields] = {};
  std::map<std::string, std::set<int>> data_by_shape;  // shape -> its data sets
};

Naming naming_of(const Groups& grouped) {
  Naming n;
  std::map<std::string, std::set<std::string>> values[kFields];
  for (const auto& [key, _] : grouped) {
    values[kDevice][key.machine].insert(key.device);
    values[kPrecision][key.machine].insert(key.precision);
    values[kBatching][key.machine].insert(key.batching);
    values[kShape][key.machine].insert(fmt::format("{}\n{}", key.shape, key.data_set));
    values[kThreads][key.machine].insert(std::to_string(key.threads));
    values[kLabel][key.machine].insert(key.label);
    values[kModel][key.machine].insert(fmt::format("{}\n{}", key.model, key.synthetic));
    values[kPrice][key.machine].insert(fmt::format("{}", key.usd_per_hour));
    // Seed batching has no token budget: only "tokens" configurations can
    // differ in it.
    if (key.max_batch_tokens > 0)
      values[kMaxBatchTokens][key.machine].insert(std::to_string(key.max_batch_tokens));
    values[kMaxLength][key.machine].insert(std::to_string(key.max_length));
    values[kTokenizerThreads][key.machine].insert(std::to_string(key.tokenizer_threads));
    values[kTask][key.machine].insert(key.task);
    n.data_by_shape[key.shape].insert(key.data_set);
  }
  // Precision, batching, data and the task are what the report compares
  // across machines: named whenever they differ anywhere. The others (device,
  // threads, label, model, price, token budget, max length, tokenizer
  // threads) mostly follow from the machine: named only when they differ
  // within one.
  for (int f = 0; f < kFields; ++f) {
    std::set<std::string> all;
    for (const auto& [machine, set] : values[f]) {
      n.varies[f] |= set.size() > 1;
      all.insert(set.begin(), set.end());
    }
    if (f == kPrecision || f == kBatching || f == kShape || f == kTask) n.varies[f] = all.size() > 1;
  }
  return n;
}

// GPUs a configuration ran on: those cuda:N,M names; for cuda and cuda:all
// every GPU of the machine (the instance's, else the hardware's); 0 on the CPU.
int configuration_gpus(const std::string& device, const record::Record& first) {
  Result<DeviceSpec> spec = parse_device(device);
  if (!spec.ok() || !spec->gpu()) return 0;
  if (!spec->all) return int(spec->indices.size());
  if (first.instance && first.instance->gpus > 0) return first.instance->gpus;
  return int(first.hardware.gpus.size());
}

Configuration make_configuration(const record::Setup& setup, const record::Record& first, const Naming& n) {
  Configuration c;
  static_cast<record::Setup&>(c) = setup;
  if (first.instance) c.price_list = first.instance->price_list;
  c.gpus = configuration_gpus(c.device, first);
  const bool shape_ambiguous = n.data_by_shape.at(c.shape).size() > 1;
  const std::string data_text =
      (c.shape.empty() ? "?" : c.shape) + (shape_ambiguous ? fmt::format(" (data set {})", c.data_set) : "");
  const bool* varies = n.varies;
  c.name = c.machine;
  if (varies[kDevice]) c.name += " " + c.device;
  if (varies[kPrecision]) c.name += " " + c.precision;
  if (varies[kBatching]) c.name += " " + c.batching;
  if (varies[kShape]) c.name += " " + data_text;
  if (varies[kThreads]) c.name += " " + threads_text(c.threads);
  if (varies[kTokenizerThreads]) c.name += " " + tokenizer_threads_text(c.tokenizer_threads);
  if (varies[kMaxLength]) c.name += " " + max_length_text(c.max_length);
  if (varies[kMaxBatchTokens] && c.max_batch_tokens > 0)
    c.name += fmt::format(" {} tokens/batch", c.max_batch_tokens);
  if (varies[kLabel] && !c.label.empty()) c.name += " " + c.label;
  if (varies[kModel]) c.name += c.synthetic ? " synthetic" : "";
  if (varies[kPrice]) {
    c.name += c.usd_per_hour > 0 ? " at " + hourly(c.usd_per_hour) : " unpriced";
  }
  if (varies[kTask] && c.task == "embed") c.name += " embed";
  c.description = describe(c, data_text);
  return c;
}

// One point: the records of one configuration at one batch size, merged
// (the median of their medians, the least minimum, the greatest maximum).
Point merge_point(const std::vector<const record::SourcedRecord*>& usable, const std::vector<size_t>& members,
                  size_t config_index, int batch, const Configuration& c, ReportModel& m) {
  Point p;
  p.config = config_index;
  p.batch_size = batch;
  p.records = int(members.size());
  std::vector<double> wall, wall_min, wall_max, rps, rps_min, rps_max, tps, tps_min, tps_max;
  std::vector<double> gpu_mean, gpu_util;
  const record::Record& r0 = usable[members.front()]->record;
  p.batch_size_rule = r0.config.batch_size_rule;
  p.rows = r0.classified_rows();
  p.tokens = r0.tokens;
  p.padded_tokens = r0.padded_tokens;
  p.computed_tokens = r0.computed_tokens;
  std::vector<double> padding, fill, rss_mean;
  for (size_t k : members) {
    const record::Record& r = usable[k]->record;
    add_once(p.sources, origin_file(usable[k]->origin));
    wall.push_back(r.wall_seconds.median);
    wall_min.push_back(r.wall_seconds.min > 0 ? r.wall_seconds.min : r.wall_seconds.median);
    wall_max.push_back(std::max(r.wall_seconds.max, r.wall_seconds.median));
    rps.push_back(r.rows_per_second.median);
    rps_min.push_back(r.rows_per_second.min);
    rps_max.push_back(r.rows_per_second.max);
    tps.push_back(r.tokens_per_second.median);
    tps_min.push_back(r.tokens_per_second.min);
    tps_max.push_back(r.tokens_per_second.max);
    padding.push_back(r.padding_efficiency);
    fill.push_back(r.batch_fill);
    p.peak_rss_bytes = std::max({p.peak_rss_bytes, r.peak_rss_bytes, r.monitor.rss_peak_bytes});
    rss_mean.push_back(r.monitor.rss_mean_bytes);
    const GpuFigures g = gpu_figures(r);
    if (g.gpus > 0) {
      p.gpus_monitored = std::max(p.gpus_monitored, g.gpus);
      p.gpu_memory_total_bytes = std::max(p.gpu_memory_total_bytes, g.total);
      p.gpu_memory_peak = std::max(p.gpu_memory_peak, g.peak);
      p.gpu_memory_peak_max = std::max(p.gpu_memory_peak_max, g.peak_max);
      gpu_mean.push_back(g.mean);
      gpu_util.push_back(g.utilization);
    }
  }
  p.wall_seconds = {median_of(wall), *std::min_element(wall_min.begin(), wall_min.end()),
                    *std::max_element(wall_max.begin(), wall_max.end())};
  p.rows_per_second = {median_of(rps), *std::min_element(rps_min.begin(), rps_min.end()),
                       *std::max_element(rps_max.begin(), rps_max.end())};
  p.tokens_per_second = {median_of(tps), *std::min_element(tps_min.begin(), tps_min.end()),
                         *std::max_element(tps_max.begin(), tps_max.end())};
  // Older or hand-made records may lack the rate spreads: derive them.
  if (!(p.rows_per_second.median > 0)) {
    p.rows_per_second = {p.rows / p.wall_seconds.median, p.rows / p.wall_seconds.max,
                         p.rows / p.wall_seconds.min};
  }
  if (!(p.tokens_per_second.median > 0) && p.tokens > 0) {
    p.tokens_per_second = {p.tokens / p.wall_seconds.median, p.tokens / p.wall_seconds.max,
                           p.tokens / p.wall_seconds.min};
  }
  p.padding_efficiency = median_of(padding);
  p.batch_fill = median_of(fill);
  p.rss_mean_bytes = median_of(rss_mean);
  if (!gpu_mean.empty()) {
    p.gpu_memory_mean = median_of(gpu_mean);
    p.gpu_utilization_mean = median_of(gpu_util);
    m.any_gpu_monitor = true;
  }
  p.gpus = p.gpus_monitored > 0 ? p.gpus_monitored : c.gpus;
  return p;
}

// Names must tell configurations apart even where the fields do not (e.g.
// two real models of the same shape): number the repeats.
void number_repeated_names(std::vector<Configuration>& configs) {
  std::map<std::string, int> seen;
  for (Configuration& c : configs) {
    const int n = ++seen[c.name];
    if (n > 1) c.name += fmt::format(" #{}", n);
  }
}

// Every point's time and cost for the corpus (--corpus-rows, else the
// largest data set), at the median, least and greatest wall time; an
// unpriced point (price 0) still gets its corpus time.
void project_to_corpus(ReportModel& m, const Options& options) {
  m.corpus_rows_given = options.corpus_rows > 0;
  m.corpus_rows = options.corpus_rows;
  if (!m.corpus_rows_given) {
    for (const DataSet& d : m.data_sets) m.corpus_rows = std::max(m.corpus_rows, d.rows);
  }
  for (Point& p : m.points) {
    const Configuration& c = m.configs[p.config];
    auto at = [&](double wall_seconds) {
      return cost::estimate_cost(std::max(0.0, c.usd_per_hour), wall_seconds, p.rows, p.tokens,
                                 m.corpus_rows);
    };
    const cost::CostEstimate mid = at(p.wall_seconds.median), lo = at(p.wall_seconds.min),
                             hi = at(p.wall_seconds.max);
    p.corpus_seconds = {mid.corpus_seconds, lo.corpus_seconds, hi.corpus_seconds};
    if (c.usd_per_hour > 0) {
      p.priced = true;
      p.run_usd = {mid.cost_to_solution_usd, lo.cost_to_solution_usd, hi.cost_to_solution_usd};
      p.usd_per_million_rows = {mid.usd_per_million_rows, lo.usd_per_million_rows, hi.usd_per_million_rows};
      p.usd_per_million_tokens = mid.usd_per_million_tokens;
      p.corpus_usd = {mid.corpus_usd, lo.corpus_usd, hi.corpus_usd};
    }
  }
}

// Price sources, which list and date priced which instances, and whether
// that mixes lists or dates.
void note_prices(const std::vector<const record::SourcedRecord*>& usable, ReportModel& m) {
  std::set<std::string> price_sources;
  std::map<std::pair<std::string, std::string>, std::set<std::string>> uses;
  for (const record::SourcedRecord* loaded : usable) {
    const record::Record& r = loaded->record;
    if (hourly_price(r) <= 0) continue;
    if (r.instance) {
      uses[{r.instance->price_list, r.instance->price_date}].insert(r.instance->name);
    } else {
      uses[{"", ""}].insert(r.machine());
    }
  }
  for (const auto& [list_date, instances] : uses) {
    m.price_uses.push_back({list_date.first, list_date.second, {instances.begin(), instances.end()}});
  }
  for (const record::SourcedRecord* loaded : usable) {
    const record::Record& r = loaded->record;
    if (!r.instance || hourly_price(r) <= 0) continue;
    const record::InstanceInfo& i = *r.instance;
    std::string text = i.price_list.empty() ? "an unnamed price list" : i.price_list;
    std::vector<std::string> details;
    if (!i.price_source.empty()) details.push_back(i.price_source);
    if (!i.price_date.empty()) details.push_back(i.price_date);
    if (!details.empty()) text += " (" + join(details, "; ", "; ") + ")";
    price_sources.insert(text);
  }
  m.price_sources.assign(price_sources.begin(), price_sources.end());
  std::set<std::string> lists;
  std::map<std::string, int> uses_of_instance;
  for (const ReportModel::PriceUse& u : m.price_uses) {
    lists.insert(u.list);
    for (const std::string& i : u.instances) ++uses_of_instance[i];
  }
  m.prices_mixed = lists.size() > 1;
  for (const auto& [instance, n] : uses_of_instance) m.prices_mixed |= n > 1;
}

// The time/cost front among priced points, and the points the answer names.
void choose_points(ReportModel& m) {
  std::vector<size_t> priced;
  std::vector<TimeCost> priced_tc;
  std::vector<TimeCost> all_tc;
  for (size_t i = 0; i < m.points.size(); ++i) {
    const Point& p = m.points[i];
    all_tc.push_back({p.corpus_seconds.median, p.priced ? p.corpus_usd.median : 0});
    if (!p.priced) continue;
    priced.push_back(i);
    priced_tc.push_back({p.corpus_seconds.median, p.corpus_usd.median});
  }
  for (size_t k : pareto_front(priced_tc)) m.pareto.push_back(priced[k]);
  ReportModel::Choices& c = m.choices;
  c.fastest = fastest(all_tc);
  if (priced.empty()) return;
  c.cheapest = priced[*cheapest(priced_tc)];
  c.fastest_priced = priced[*fastest(priced_tc)];
  if (!m.deadline_seconds) return;
  const DeadlineChoice choice = choose_for_deadline(priced_tc, *m.deadline_seconds);
  if (choice.meets) c.deadline.meets = priced[*choice.meets];
  if (choice.closest) c.deadline.closest = priced[*choice.closest];
}

}  // namespace

Result<ReportModel> build_model(const std::vector<record::SourcedRecord>& records, const Options& options) {
  if (records.empty()) return invalid_argument("no benchmark records to report on (the files hold none)");
  ReportModel m;
  m.title = options.title;
  m.records = records.size();
  m.deadline_seconds = options.deadline_seconds;
  m.deadline_text = options.deadline_text;
  m.pricing_note = options.pricing_note;
  const std::vector<const record::SourcedRecord*> usable = usable_records(records, m);
  const Groups grouped = group_by_setup(usable, number_data_sets(usable, m));
  const Naming naming = naming_of(grouped);
  for (const auto& [setup, by_batch] : grouped) {
    const size_t config_index = m.configs.size();
    m.configs.push_back(make_configuration(setup, usable[by_batch.begin()->second.front()]->record, naming));
    for (const auto& [batch, members] : by_batch) {
      m.points.push_back(merge_point(usable, members, config_index, batch, m.configs.back(), m));
    }
  }
  number_repeated_names(m.configs);
  project_to_corpus(m, options);
  note_prices(usable, m);
  choose_points(m);
  return m;
}

}  // namespace infercost::report
