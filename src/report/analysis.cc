#include "infercost/report/analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "infercost/core/device.h"
#include "infercost/report/format.h"

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

// ---- Small pieces ----

int precision_rank(const std::string& precision) {
  static const char* kOrder[] = {"fp32", "bf16", "fp16", "int8"};
  for (int i = 0; i < 4; ++i) {
    if (precision == kOrder[i]) return i;
  }
  return 4;
}

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

namespace {
constexpr double kSame = 1.05;  // ratios within 5% read "about the same"
}

std::string speed_phrase(double seconds, double other_seconds) {
  if (!(seconds > 0) || !(other_seconds > 0)) return "of unknown speed";
  const double ratio = other_seconds / seconds;
  if (ratio >= kSame) return times(ratio) + " faster";
  if (1 / ratio >= kSame) return times(1 / ratio) + " slower";
  return "about as fast";
}

std::string cost_phrase(double usd, double other_usd) {
  if (!(usd > 0) || !(other_usd > 0)) return "of unknown cost";
  const double ratio = usd / other_usd;
  if (ratio >= kSame) return "costs " + times(ratio) + " more";
  if (1 / ratio >= kSame) return fmt::format("costs {:.0f}% less", (1 - ratio) * 100);
  return "costs about the same";
}

std::string comparison_sentence(const std::string& a, const TimeCost& a_tc, const std::string& b,
                                const TimeCost& b_tc) {
  return fmt::format("Compared with {}, {} is {} and {}.", b, a, speed_phrase(a_tc.seconds, b_tc.seconds),
                     cost_phrase(a_tc.usd, b_tc.usd));
}

// ---- The model ----

namespace {

struct ConfigKey {
  std::string machine, device, precision, batching;
  int max_batch_tokens = 0;  // 0 for seed batching, which has no token budget
  int max_length = 0;
  std::string shape;
  int data_set = 0;
  int threads = 0;
  int tokenizer_threads = 0;
  std::string label, model;
  bool synthetic = false;
  double usd_per_hour = 0;

  auto tied() const {
    return std::tie(machine, device, precision, batching, max_batch_tokens, max_length, shape, data_set,
                    threads, tokenizer_threads, label, model, synthetic, usd_per_hour);
  }
  bool operator<(const ConfigKey& o) const {
    const int pa = precision_rank(precision), pb = precision_rank(o.precision);
    if (machine != o.machine) return machine < o.machine;
    if (device != o.device) return device < o.device;
    if (pa != pb) return pa < pb;
    return tied() < o.tied();
  }
};

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

// The token budget that matters: seed batching fills batches by rows only.
int token_budget(const record::Config& c) {
  return c.batching == "seed" ? 0 : c.max_batch_tokens;
}

// The file of an origin "results.jsonl: line 3" (record::SourcedRecord).
std::string origin_file(const std::string& origin) {
  const size_t at = origin.rfind(": line ");
  if (at == std::string::npos) return origin;
  const std::string number = origin.substr(at + 7);
  if (number.empty() || number.find_first_not_of("0123456789") != std::string::npos) return origin;
  return origin.substr(0, at);
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
// of failed points.
std::string describe(const std::string& device, const std::string& precision, const std::string& batching,
                     int max_batch_tokens, int max_length, const std::string& data_text, int threads,
                     int tokenizer_threads, const std::string& label) {
  std::string d = fmt::format("{} {} {} {}, {}, {}, {}", device.empty() ? "?" : device,
                              precision.empty() ? "?" : precision, batching.empty() ? "?" : batching,
                              data_text.empty() ? "?" : data_text, threads_text(threads),
                              tokenizer_threads_text(tokenizer_threads), max_length_text(max_length));
  if (max_batch_tokens > 0) d += fmt::format(", at most {} tokens per batch", count(max_batch_tokens));
  if (!label.empty()) d += ", label " + label;
  return d;
}

std::string describe(const record::Record& r) {
  return describe(r.config.device, r.config.precision, r.config.batching, token_budget(r.config),
                  r.config.max_length, r.data.shape, r.config.threads, r.config.tokenizer_threads,
                  r.label == r.machine() ? "" : r.label);
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
  for (const record::GpuUsage& u : r.monitor.gpus) {
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

std::string point_name(const ReportModel& m, const Point& p) {
  return fmt::format("{}, batch size {}", m.configs[p.config].name, p.batch_size);
}

std::string join(const std::vector<std::string>& items, const std::string& sep, const std::string& last_sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += (i + 1 == items.size()) ? last_sep : sep;
    out += items[i];
  }
  return out;
}

std::string short_sha(const std::string& sha) {
  return sha.empty() ? "no content hash" : "sha256 " + sha.substr(0, 12);
}

// A warning when the priced points were priced from more than one price
// list, or one instance from more than one list or date; "" otherwise.
std::string price_mix_warning(const ReportModel& m) {
  std::set<std::string> lists;
  std::map<std::string, int> uses_of_instance;
  for (const ReportModel::PriceUse& u : m.price_uses) {
    lists.insert(u.list);
    for (const std::string& i : u.instances) ++uses_of_instance[i];
  }
  bool mixed = lists.size() > 1;
  for (const auto& [instance, n] : uses_of_instance) mixed |= n > 1;
  if (!mixed) return "";
  std::vector<std::string> parts;
  std::vector<std::string> named;
  for (const ReportModel::PriceUse& u : m.price_uses) {
    const std::string list = u.list.empty() ? "an unnamed price list" : u.list;
    if (!u.list.empty()) named.push_back(u.list);
    parts.push_back(fmt::format("{} ({}) for {}", list, u.date.empty() ? "no date" : u.date,
                                join(u.instances, ", ", " and ")));
  }
  // Suggest a current list over the historical seed-2021.
  std::string example = "NAME";
  for (const std::string& n : named) {
    if (example == "NAME" || (example == "seed-2021" && n != "seed-2021")) example = n;
  }
  return fmt::format(
      "Warning: the costs below mix prices from different price lists or dates: {}. Such prices are not "
      "like for like, so the cost comparisons partly compare the price lists rather than the machines. To "
      "compare on one list, re-price every record: infercost report --price-list {} (with --prices FILE "
      "for a list of your own).",
      join(parts, "; ", "; "), example);
}

void write_answer(ReportModel& m) {
  std::vector<std::string>& a = m.answer;
  const std::string corpus = fmt::format("{} rows", count(m.corpus_rows));
  if (m.points.empty()) {
    a.push_back("No benchmark point succeeded, so there is nothing to compare.");
  } else {
    a.push_back(fmt::format(
        "All times and costs below are projected to a corpus of {} ({}), at each point's measured rows per "
        "second, so that points measured on different data compare fairly.",
        corpus,
        m.corpus_rows_given ? "--corpus-rows"
                            : "the largest data.rows among the records; set it with --corpus-rows"));
  }

  std::vector<size_t> priced;
  std::vector<TimeCost> priced_tc;
  std::vector<TimeCost> all_tc;
  for (size_t i = 0; i < m.points.size(); ++i) {
    const Point& p = m.points[i];
    all_tc.push_back({p.corpus_seconds.median, p.priced ? p.corpus_usd.median : 0});
    if (p.priced) {
      priced.push_back(i);
      priced_tc.push_back({p.corpus_seconds.median, p.corpus_usd.median});
    }
  }
  auto describe_point = [&](size_t i) {
    const Point& p = m.points[i];
    const Configuration& c = m.configs[p.config];
    if (!p.priced)
      return fmt::format("{}: {} for the corpus (unpriced)", point_name(m, p),
                         duration(p.corpus_seconds.median));
    return fmt::format("{}: {} and {} for the corpus (at {}; {} per million rows)", point_name(m, p),
                       duration(p.corpus_seconds.median), usd(p.corpus_usd.median), hourly(c.usd_per_hour),
                       usd(p.usd_per_million_rows.median));
  };

  if (const std::string warning = price_mix_warning(m); !warning.empty()) a.push_back(warning);

  if (!m.points.empty()) {
    const size_t fast_all = *fastest(all_tc);
    if (priced.empty()) {
      a.push_back(
          "No record names an instance with an hourly price, so cost questions cannot be answered: give the "
          "runs "
          "--instance NAME, or re-price the records with --prices FILE / --price-list NAME.");
      a.push_back("Fastest: " + describe_point(fast_all) + ".");
    } else {
      const size_t cheap = priced[*cheapest(priced_tc)];
      const size_t fast = priced[*fastest(priced_tc)];
      a.push_back("Cheapest: " + describe_point(cheap) + ".");
      if (fast_all != fast) {
        a.push_back("Fastest: " + describe_point(fast_all) + "; it cannot be compared on cost.");
        a.push_back("Fastest priced: " + describe_point(fast) + ".");
      } else {
        a.push_back("Fastest: " + describe_point(fast) + ".");
      }
      if (cheap == fast) {
        a.push_back("The cheapest configuration is also the fastest.");
      } else {
        const Point& pf = m.points[fast];
        const Point& pc = m.points[cheap];
        a.push_back(comparison_sentence(
            fmt::format("the fastest{} ({})", fast_all != fast ? " priced" : "", point_name(m, pf)),
            {pf.corpus_seconds.median, pf.corpus_usd.median},
            fmt::format("the cheapest ({})", point_name(m, pc)),
            {pc.corpus_seconds.median, pc.corpus_usd.median}));
      }
      if (m.deadline_seconds) {
        const double deadline = *m.deadline_seconds;
        const std::string dl = fmt::format("Deadline {} ({})", m.deadline_text, duration(deadline));
        DeadlineChoice choice = choose_for_deadline(priced_tc, deadline);
        if (choice.meets) {
          const size_t i = priced[*choice.meets];
          a.push_back(
              fmt::format("{}: the cheapest configuration that finishes the corpus within it is {}{}.", dl,
                          describe_point(i), i == cheap ? "; it is also the cheapest overall" : ""));
        } else {
          const size_t i = priced[*choice.closest];
          const Point& p = m.points[i];
          a.push_back(fmt::format(
              "{}: no priced configuration finishes the corpus within it. The closest is {}, which takes {} "
              "({} the deadline) and costs {}.",
              dl, point_name(m, p), duration(p.corpus_seconds.median),
              times(p.corpus_seconds.median / deadline), usd(p.corpus_usd.median)));
        }
      } else {
        a.push_back(
            "No --deadline was given: pass one (e.g. --deadline 2h) to get the cheapest configuration that "
            "finishes the corpus in time.");
      }
    }
  }

  // Synthetic models, grouped by model name.
  std::map<std::string, std::vector<std::string>> synthetic;
  for (const Configuration& c : m.configs) {
    if (c.synthetic) synthetic[c.model.empty() ? "unnamed" : c.model].push_back(c.name);
  }
  if (synthetic.empty()) {
    if (!m.configs.empty()) a.push_back("No result comes from a synthetic model.");
  } else {
    for (const auto& [model, names] : synthetic) {
      a.push_back(
          fmt::format("Synthetic model: {} ran '{}', a synthetic model with random weights: {} speed is "
                      "real, {} predictions "
                      "are not.",
                      join(names, ", ", " and "), model, names.size() == 1 ? "its" : "their",
                      names.size() == 1 ? "its" : "their"));
    }
  }

  if (m.data_sets.size() > 1) {
    std::vector<std::string> sets;
    for (const DataSet& d : m.data_sets) {
      sets.push_back(fmt::format("data set {}: {}, {} rows, {} ({})", d.index, d.shape, count(d.rows),
                                 short_sha(d.content_sha256), join(d.machines, ", ", " and ")));
    }
    a.push_back(fmt::format(
        "The records cover {} different data sets ({}). Their run times and run costs are not directly "
        "comparable: compare the corpus projections or the per-million-row figures.",
        m.data_sets.size(), join(sets, "; ", "; ")));
  } else if (m.data_sets.size() == 1) {
    const DataSet& d = m.data_sets[0];
    a.push_back(fmt::format("Every point classified the same data: {}, {} rows, {}.", d.shape, count(d.rows),
                            short_sha(d.content_sha256)));
  }

  std::vector<std::string> unpriced;
  for (const Configuration& c : m.configs) {
    if (c.usd_per_hour <= 0) unpriced.push_back(c.name);
  }
  if (!unpriced.empty() && !priced.empty()) {
    a.push_back(fmt::format(
        "Unpriced (no instance with an hourly price in the records): {}; {} in the time charts only.",
        join(unpriced, ", ", " and "), unpriced.size() == 1 ? "it appears" : "they appear"));
  }

  if (m.failed.empty()) {
    a.push_back("No point failed.");
  } else {
    std::vector<std::string> items;
    for (const FailedPoint& f : m.failed) {
      items.push_back(
          fmt::format("{} {}, batch size {}: {}", f.machine, f.description, f.batch_size, f.reason));
    }
    a.push_back(fmt::format("{} {} failed and {} left out of the charts: {}.", m.failed.size(),
                            m.failed.size() == 1 ? "point" : "points", m.failed.size() == 1 ? "is" : "are",
                            join(items, "; ", "; ")));
  }
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
  for (const record::SourcedRecord& r : records) {
    const std::string file = origin_file(r.origin);
    if (std::find(m.sources.begin(), m.sources.end(), file) == m.sources.end()) m.sources.push_back(file);
    const std::string& t = r.record.started_at;
    if (t.empty()) continue;
    if (m.first_started_at.empty() || t < m.first_started_at) m.first_started_at = t;
    if (m.last_started_at.empty() || t > m.last_started_at) m.last_started_at = t;
  }

  // Usable records; the others are failures with a reason.
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
      m.failed.push_back({r.machine(), describe(r), r.config.batch_size, reason, loaded.origin});
    }
  }

  // Distinct data sets.
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

  // Configurations and points.
  std::map<ConfigKey, std::map<int, std::vector<size_t>>> grouped;  // key -> batch size -> usable index
  for (size_t k = 0; k < usable.size(); ++k) {
    const record::Record& r = usable[k]->record;
    ConfigKey key;
    key.machine = r.machine();
    key.device = r.config.device;
    key.precision = r.config.precision;
    key.batching = r.config.batching;
    key.max_batch_tokens = token_budget(r.config);
    key.max_length = r.config.max_length;
    key.shape = r.data.shape;
    key.data_set = record_data[k];
    key.threads = r.config.threads;
    key.tokenizer_threads = r.config.tokenizer_threads;
    key.label = r.label == r.machine() ? "" : r.label;
    key.model = r.model.name;
    key.synthetic = r.model.synthetic;
    key.usd_per_hour = hourly_price(r);
    grouped[key][r.config.batch_size].push_back(k);
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
    kFields
  };
  std::map<std::string, std::set<std::string>> values[kFields];
  std::map<std::string, std::set<int>> data_by_shape;
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
    data_by_shape[key.shape].insert(key.data_set);
  }
  // Precision, batching and data are what the report compares across
  // machines: named whenever they differ anywhere. The others (device,
  // threads, label, model, price, token budget, max length, tokenizer
  // threads) mostly follow from the machine: named only when they differ
  // within one.
  bool varies[kFields] = {};
  for (int f = 0; f < kFields; ++f) {
    std::set<std::string> all;
    for (const auto& [machine, set] : values[f]) {
      varies[f] |= set.size() > 1;
      all.insert(set.begin(), set.end());
    }
    if (f == kPrecision || f == kBatching || f == kShape) varies[f] = all.size() > 1;
  }

  for (const auto& [key, by_batch] : grouped) {
    Configuration c;
    c.machine = key.machine;
    c.device = key.device;
    c.precision = key.precision;
    c.batching = key.batching;
    c.max_batch_tokens = key.max_batch_tokens;
    c.max_length = key.max_length;
    c.shape = key.shape;
    c.data_set = key.data_set;
    c.threads = key.threads;
    c.tokenizer_threads = key.tokenizer_threads;
    c.label = key.label;
    c.model = key.model;
    c.synthetic = key.synthetic;
    c.usd_per_hour = key.usd_per_hour;
    const record::Record& first = usable[by_batch.begin()->second.front()]->record;
    if (first.instance) c.price_list = first.instance->price_list;
    if (Result<DeviceSpec> spec = parse_device(c.device); spec.ok() && spec->gpu()) {
      // cuda:N,M runs on the GPUs it names; cuda and cuda:all on every GPU of the machine.
      if (!spec->all) {
        c.gpus = int(spec->indices.size());
      } else if (first.instance && first.instance->gpus > 0) {
        c.gpus = first.instance->gpus;
      } else {
        c.gpus = int(first.hardware.gpus.size());
      }
    }
    const bool shape_ambiguous = data_by_shape[key.shape].size() > 1;
    const std::string data_text = (c.shape.empty() ? "?" : c.shape) +
                                  (shape_ambiguous ? fmt::format(" (data set {})", c.data_set) : "");
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
    c.description = describe(c.device, c.precision, c.batching, c.max_batch_tokens, c.max_length, data_text,
                             c.threads, c.tokenizer_threads, c.label);
    const size_t config_index = m.configs.size();
    m.configs.push_back(c);

    for (const auto& [batch, members] : by_batch) {
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
        const std::string file = origin_file(usable[k]->origin);
        if (std::find(p.sources.begin(), p.sources.end(), file) == p.sources.end()) p.sources.push_back(file);
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
      m.points.push_back(p);
    }
  }

  // Names must tell configurations apart even where the fields above do not
  // (e.g. two real models of the same shape): number the repeats.
  std::map<std::string, int> seen;
  for (Configuration& c : m.configs) {
    const int n = ++seen[c.name];
    if (n > 1) c.name += fmt::format(" #{}", n);
  }

  // The corpus every point is projected to.
  m.corpus_rows_given = options.corpus_rows > 0;
  m.corpus_rows = options.corpus_rows;
  if (!m.corpus_rows_given) {
    for (const DataSet& d : m.data_sets) m.corpus_rows = std::max(m.corpus_rows, d.rows);
  }
  for (Point& p : m.points) {
    const Configuration& c = m.configs[p.config];
    // At the median, least and greatest wall time; an unpriced point (price
    // 0) still gets its corpus time.
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

  // Price sources, and which list and date priced which instances.
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

  // The time/cost front among priced points.
  std::vector<size_t> priced;
  std::vector<TimeCost> tc;
  for (size_t i = 0; i < m.points.size(); ++i) {
    if (!m.points[i].priced) continue;
    priced.push_back(i);
    tc.push_back({m.points[i].corpus_seconds.median, m.points[i].corpus_usd.median});
  }
  for (size_t k : pareto_front(tc)) m.pareto.push_back(priced[k]);

  write_answer(m);
  return m;
}

}  // namespace infercost::report
