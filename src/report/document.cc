// ReportModel -> Document: the sections, their tables and their charts.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/device.h"
#include "report/format.h"
#include "report/report.h"
#include "report/svg.h"

namespace infercost::report {
namespace {

Block paragraph(std::string text) {
  Block b;
  b.kind = Block::Kind::kParagraph;
  b.text = std::move(text);
  return b;
}

Block list(std::vector<std::string> items) {
  Block b;
  b.kind = Block::Kind::kList;
  b.items = std::move(items);
  return b;
}

Block table(Table t) {
  Block b;
  b.kind = Block::Kind::kTable;
  b.table = std::move(t);
  return b;
}

// Adds a chart to the document and returns the block that shows it.
template <typename ChartT>
Block chart(Document& doc, const std::string& file, const ChartT& c) {
  doc.charts.push_back({file, c.title, svg::render(c, true), svg::render(c, false)});
  Block b;
  b.kind = Block::Kind::kChart;
  b.chart = doc.charts.size() - 1;
  return b;
}

std::string range(const record::Spread& s) {
  return sig(s.min) + "\u2013" + sig(s.max);
}

std::string batch_text(const Point& p) {
  return p.batch_size_rule.empty() ? std::to_string(p.batch_size)
                                   : fmt::format("{} ({})", p.batch_size, p.batch_size_rule);
}

std::string point_label(const ReportModel& m, const Point& p) {
  return fmt::format("{}, batch {}", m.configs[p.config].name, p.batch_size);
}

// A log axis when the values span more than `ratio`.
bool wide(const std::vector<double>& values, double ratio = 20) {
  double lo = 0, hi = 0;
  for (double v : values) {
    if (!(v > 0)) return false;
    lo = lo == 0 ? v : std::min(lo, v);
    hi = std::max(hi, v);
  }
  return lo > 0 && hi / lo > ratio;
}

// A section that opens with the paragraph `intro`.
Section opening(std::string id, std::string heading, std::string intro) {
  Section s{std::move(id), std::move(heading), {}};
  s.blocks.push_back(paragraph(std::move(intro)));
  return s;
}

svg::Axis batch_axis() {
  svg::Axis a;
  a.title = "batch size (rows)";
  a.log = true;
  a.ticks_at_data = true;
  return a;
}

// A chart of `y_title` against the batch size.
svg::XYChart batch_chart(std::string title, std::string y_title) {
  svg::XYChart c;
  c.title = std::move(title);
  c.x = batch_axis();
  c.y.title = std::move(y_title);
  return c;
}

// Points of each configuration, by batch size (they are stored that way).
std::vector<std::vector<size_t>> points_by_config(const ReportModel& m) {
  std::vector<std::vector<size_t>> out(m.configs.size());
  for (size_t i = 0; i < m.points.size(); ++i) out[m.points[i].config].push_back(i);
  return out;
}

// One series per configuration (coloured by its index), one point per batch
// size, each made by `to_xy`.
template <typename ToXy>
void add_series_per_config(svg::XYChart& chart, const ReportModel& m, ToXy to_xy) {
  const auto by_config = points_by_config(m);
  for (size_t k = 0; k < m.configs.size(); ++k) {
    svg::Series series{m.configs[k].name, {}, int(k)};
    for (size_t i : by_config[k]) series.points.push_back(to_xy(m.points[i]));
    chart.series.push_back(series);
  }
}

std::vector<std::string> machines_of(const ReportModel& m) {
  std::set<std::string> s;
  for (const Configuration& c : m.configs) s.insert(c.machine);
  return {s.begin(), s.end()};
}

int machine_color(const std::vector<std::string>& machines, const std::string& machine) {
  return int(std::find(machines.begin(), machines.end(), machine) - machines.begin());
}

std::string dollars_per_hour(const Configuration& c) {
  return c.usd_per_hour > 0 ? trimmed(c.usd_per_hour, 4) : "unpriced";
}

// ---- Sections ----

Section configurations_section(const ReportModel& m) {
  Section s = opening(
      "configurations", "Configurations",
      "A configuration is the machine, device, precision, batching policy and its token budget, maximum "
      "length, data, threads, tokenizer threads, label, model and hourly price of a benchmark point; batch "
      "size varies within it. Charts name configurations by the machine and the fields that differ between "
      "them.");
  Table t{{"Configuration", "Machine", "Device", "Precision", "Batching", "Tokens per batch", "Max length",
           "Data", "Threads", "Tokenizer threads", "Model", "USD/hour", "Price list"},
          {false, false, false, false, false, true, true, false, true, true, false, true, false},
          {}};
  auto or_auto = [](int n) { return n > 0 ? std::to_string(n) : std::string("auto"); };
  for (const Configuration& c : m.configs) {
    t.rows.push_back({c.name, c.machine, c.device, c.precision, c.batching,
                      c.max_batch_tokens > 0 ? count(c.max_batch_tokens) : "-", or_auto(c.max_length),
                      fmt::format("{} (data set {})", c.shape, c.data_set), or_auto(c.threads),
                      or_auto(c.tokenizer_threads), c.model + (c.synthetic ? " (synthetic)" : ""),
                      dollars_per_hour(c), c.price_list.empty() ? "-" : c.price_list});
  }
  s.blocks.push_back(table(std::move(t)));
  Table d{{"Data set", "Shape", "Rows", "Tokens", "Content sha256", "Machines"},
          {true, false, true, true, false, false},
          {}};
  for (const DataSet& ds : m.data_sets) {
    d.rows.push_back({std::to_string(ds.index), ds.shape, count(ds.rows), count(ds.tokens),
                      ds.content_sha256.empty() ? "-" : ds.content_sha256.substr(0, 16), [&] {
                        std::string out;
                        for (const std::string& x : ds.machines) out += (out.empty() ? "" : ", ") + x;
                        return out;
                      }()});
  }
  s.blocks.push_back(table(std::move(d)));
  return s;
}

Section runtime_section(Document& doc, const ReportModel& m) {
  Section s = opening(
      "runtime", "1. Runtime vs batch size",
      "Wall time of each run (median over its timed repetitions; error bars from the fastest to the slowest "
      "repetition) by batch size, one line per configuration. The wall time runs from reading the first row "
      "to writing the last: it leaves out loading the model, which the records hold as stage \"load\". "
      "Runs on different data sets have different row counts: compare them in sections 2 and 6.");
  svg::XYChart c = batch_chart("Runtime vs batch size", "wall time (s)");
  c.y.from_zero = true;
  std::vector<double> ys;
  add_series_per_config(c, m, [&](const Point& p) {
    svg::XYPoint xy;
    xy.x = p.batch_size;
    xy.y = p.wall_seconds.median;
    xy.has_error = true;
    xy.y_low = p.wall_seconds.min;
    xy.y_high = p.wall_seconds.max;
    xy.tooltip =
        fmt::format("{}: {} s ({} s)", point_label(m, p), sig(p.wall_seconds.median), range(p.wall_seconds));
    ys.push_back(p.wall_seconds.median);
    return xy;
  });
  if (wide(ys)) {
    c.y.log = true;
    c.y.from_zero = false;
  }
  s.blocks.push_back(chart(doc, "runtime.svg", c));
  Table t{{"Configuration", "Batch size", "Wall time (s, median)", "Min\u2013max (s)", "Spread", "Rows",
           "Rows/s (median)"},
          {false, true, true, true, true, true, true},
          {}};
  for (const Point& p : m.points) {
    t.rows.push_back({m.configs[p.config].name, batch_text(p), sig(p.wall_seconds.median),
                      range(p.wall_seconds), plus_minus(p.wall_seconds), count(p.rows),
                      sig(p.rows_per_second.median)});
  }
  s.blocks.push_back(table(std::move(t)));
  return s;
}

Section cost_section(Document& doc, const ReportModel& m) {
  Section s =
      opening("cost", "2. Cost to solution",
              fmt::format("Cost to solution = wall time x hourly price of the machine(s). Like the wall "
                          "time, it leaves out loading the model (stage \"load\" in the records), which a "
                          "real job pays for once per machine. Per million rows = 1e6 / (rows/s) x price / "
                          "3600, comparable across data sets. The corpus columns project every point to {} "
                          "rows. Points without an instance price are listed as unpriced.",
                          count(m.corpus_rows)));
  const std::vector<std::string> machines = machines_of(m);
  std::vector<size_t> priced, unpriced;
  for (size_t i = 0; i < m.points.size(); ++i) (m.points[i].priced ? priced : unpriced).push_back(i);
  auto by = [&](auto value) {
    std::vector<size_t> order = priced;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return value(a) < value(b); });
    return order;
  };
  std::vector<std::pair<std::string, int>> legend;
  for (const std::string& machine : machines) {
    bool used = false;
    for (size_t i : priced) used |= m.configs[m.points[i].config].machine == machine;
    if (used) legend.emplace_back(machine, machine_color(machines, machine));
  }
  auto bars = [&](const std::string& title, const std::string& axis, auto spread_of) {
    svg::BarChart c;
    c.title = title;
    c.value_title = axis;
    c.legend = legend;
    c.empty_text = "no priced point";
    for (size_t i : by([&](size_t k) { return spread_of(m.points[k]).median; })) {
      const Point& p = m.points[i];
      const record::Spread v = spread_of(p);
      svg::Bar b;
      b.label = point_label(m, p);
      b.value = v.median;
      b.has_error = true;
      b.low = v.min;
      b.high = v.max;
      b.color = machine_color(machines, m.configs[p.config].machine);
      b.value_text = usd(v.median);
      b.tooltip = fmt::format("{}: {} ({}\u2013{})", b.label, usd(v.median), usd(v.min), usd(v.max));
      c.bars.push_back(b);
    }
    return c;
  };
  s.blocks.push_back(chart(doc, "cost-per-million-rows.svg",
                           bars("Cost per million rows", "USD per million rows",
                                [](const Point& p) { return p.usd_per_million_rows; })));
  s.blocks.push_back(chart(doc, "cost-run.svg",
                           bars("Cost to solution of each run (its own data)", "USD for the run's rows",
                                [](const Point& p) { return p.run_usd; })));
  Table t{
      {"Configuration", "Batch size", "USD/hour", "Run cost (USD)", "Spread", "Rows", "USD per million rows",
       "USD per million tokens", fmt::format("Corpus cost (USD, {} rows)", count(m.corpus_rows))},
      {false, true, true, true, true, true, true, true, true},
      {}};
  for (size_t i : by([&](size_t k) { return m.points[k].usd_per_million_rows.median; })) {
    const Point& p = m.points[i];
    t.rows.push_back(
        {m.configs[p.config].name, batch_text(p), dollars_per_hour(m.configs[p.config]),
         sig(p.run_usd.median), plus_minus(p.run_usd), count(p.rows), sig(p.usd_per_million_rows.median),
         p.usd_per_million_tokens > 0 ? sig(p.usd_per_million_tokens) : "-", sig(p.corpus_usd.median)});
  }
  for (size_t i : unpriced) {
    const Point& p = m.points[i];
    t.rows.push_back({m.configs[p.config].name, batch_text(p), "unpriced", "unpriced", "", count(p.rows),
                      "unpriced", "unpriced", "unpriced"});
  }
  s.blocks.push_back(table(std::move(t)));
  return s;
}

// The throughput section's bars: a group per machine, device and model (and
// data set where there are several), a key per precision and batching.
struct ThroughputGroup {
  std::string machine, device, model;
  bool synthetic;
  int data_set;
  bool operator<(const ThroughputGroup& o) const {
    return std::tie(machine, device, model, synthetic, data_set) <
           std::tie(o.machine, o.device, o.model, o.synthetic, o.data_set);
  }
};
struct ThroughputKey {
  int rank;
  std::string precision, batching;
  bool operator<(const ThroughputKey& o) const {
    return std::tie(rank, precision, batching) < std::tie(o.rank, o.precision, o.batching);
  }
};

// The throughput table: the fastest point of each group and key, and its configuration.
Table throughput_table(const ReportModel& m,
                       const std::map<ThroughputGroup, std::map<ThroughputKey, size_t>>& best) {
  Table t{{"Machine", "Device", "Model", "Data", "Precision", "Batching", "Fastest configuration",
           "Batch size", "Rows/s (median)", "Spread", "Tokens/s (median)", "Spread"},
          {false, false, false, false, false, false, false, true, true, true, true, true},
          {}};
  for (const auto& [g, by_key] : best) {
    for (const auto& [k, i] : by_key) {
      const Point& p = m.points[i];
      const Configuration& c = m.configs[p.config];
      t.rows.push_back({c.machine, c.device, c.model + (c.synthetic ? " (synthetic)" : ""),
                        fmt::format("{} (data set {})", c.shape, c.data_set), c.precision, c.batching, c.name,
                        batch_text(p), sig(p.rows_per_second.median), plus_minus(p.rows_per_second),
                        sig(p.tokens_per_second.median), plus_minus(p.tokens_per_second)});
    }
  }
  return t;
}

Section throughput_section(Document& doc, const ReportModel& m) {
  Section s = opening(
      "throughput", "3. Throughput by precision and batching policy",
      "Rows and real (unpadded) tokens classified per second, for each machine, device and model, at the "
      "fastest of its configurations (threads, label, token budget) and batch sizes for each precision and "
      "batching policy (median; error bars min to max). The table names the configuration and batch size "
      "each bar comes from.");
  // Group: machine, device, model (and data set when there are several);
  // key: precision and batching.
  const bool several_data = m.data_sets.size() > 1;
  using Group = ThroughputGroup;
  using Key = ThroughputKey;
  // A data set by its shape, and its number where a shape has several.
  auto data_name = [&](int index) {
    const DataSet& d = m.data_sets.at(size_t(index - 1));
    int same_shape = 0;
    for (const DataSet& other : m.data_sets) same_shape += other.shape == d.shape;
    return same_shape > 1 ? fmt::format("{} (data set {})", d.shape, d.index) : d.shape;
  };
  std::map<Group, std::map<Key, size_t>> best;
  // A model in a chart label: "synthetic" marks a synthetic model (as in the
  // configuration names); a model is named only where another model of the
  // same kind ran on the same machine, device and data.
  auto model_tag = [&](const Group& g) {
    bool named = false;
    for (const auto& [other, _] : best) {
      named |= other.machine == g.machine && other.device == g.device && other.data_set == g.data_set &&
               other.synthetic == g.synthetic && other.model != g.model;
    }
    return std::string(g.synthetic ? " synthetic" : "") + (named ? " " + g.model : "");
  };
  std::set<Key> keys;
  for (size_t i = 0; i < m.points.size(); ++i) {
    const Point& p = m.points[i];
    const Configuration& c = m.configs[p.config];
    const Group g{c.machine, c.device, c.model, c.synthetic, several_data ? c.data_set : 0};
    const Key k{precision_rank(c.precision), c.precision, c.batching};
    keys.insert(k);
    auto [it, inserted] = best[g].emplace(k, i);
    if (!inserted && p.rows_per_second.median > m.points[it->second].rows_per_second.median) it->second = i;
  }
  const std::vector<Key> key_list(keys.begin(), keys.end());
  auto grouped = [&](const std::string& title, const std::string& axis, bool tokens) {
    svg::GroupedBarChart c;
    c.title = title;
    c.value_title = axis;
    for (const Key& k : key_list) c.keys.push_back(k.precision + " " + k.batching);
    for (const auto& [g, by_key] : best) {
      c.groups.push_back(g.machine + " " + g.device + (several_data ? " " + data_name(g.data_set) : "") +
                         model_tag(g));
      std::vector<std::optional<svg::Bar>> row(key_list.size());
      for (size_t k = 0; k < key_list.size(); ++k) {
        auto it = by_key.find(key_list[k]);
        if (it == by_key.end()) continue;
        const Point& p = m.points[it->second];
        const record::Spread& v = tokens ? p.tokens_per_second : p.rows_per_second;
        if (!(v.median > 0)) continue;
        svg::Bar b;
        b.value = v.median;
        b.has_error = true;
        b.low = v.min;
        b.high = v.max;
        b.tooltip = fmt::format("{}: {} {}/s", point_label(m, p), sig(v.median), tokens ? "tokens" : "rows");
        row[k] = b;
      }
      c.values.push_back(row);
    }
    return c;
  };
  s.blocks.push_back(
      chart(doc, "throughput-rows.svg", grouped("Throughput: rows per second", "rows/s", false)));
  s.blocks.push_back(
      chart(doc, "throughput-tokens.svg", grouped("Throughput: real tokens per second", "tokens/s", true)));
  s.blocks.push_back(table(throughput_table(m, best)));
  return s;
}

Section padding_section(Document& doc, const ReportModel& m) {
  Section s = opening(
      "padding", "4. Padding efficiency and batch fill",
      "Padding efficiency = real tokens / tokens computed: the share of the model's work spent on text "
      "rather "
      "than padding. Batch fill = real tokens / (rows x padded length) of the batches. The study padded "
      "every "
      "row to the longest row of the file; length-bucketed batches (batching \"tokens\") avoid most of it.");
  svg::XYChart c = batch_chart("Padding efficiency vs batch size", "padding efficiency (%)");
  c.y.min = 0;
  c.y.max = 100;
  add_series_per_config(c, m, [&](const Point& p) {
    svg::XYPoint xy;
    xy.x = p.batch_size;
    xy.y = p.padding_efficiency * 100;
    xy.tooltip = fmt::format("{}: {}", point_label(m, p), percent(p.padding_efficiency));
    return xy;
  });
  s.blocks.push_back(chart(doc, "padding.svg", c));
  Table t{{"Configuration", "Batch size", "Padding efficiency", "Batch fill", "Real tokens",
           "Computed tokens", "Padded tokens"},
          {false, true, true, true, true, true, true},
          {}};
  for (const Point& p : m.points) {
    t.rows.push_back({m.configs[p.config].name, batch_text(p), percent(p.padding_efficiency),
                      percent(p.batch_fill), count(p.tokens), count(p.computed_tokens),
                      count(p.padded_tokens)});
  }
  s.blocks.push_back(table(std::move(t)));
  return s;
}

// The memory section's GPU chart and table: memory used as a share of each
// GPU's, by rows per GPU.
void gpu_memory_blocks(Document& doc, const ReportModel& m, const std::vector<std::vector<size_t>>& by_config,
                       Section& s) {
  auto rows_per_gpu = [](const Point& p) {
    return p.gpus > 0 ? sig(double(p.batch_size) / p.gpus) : std::string("-");
  };
  s.blocks.push_back(paragraph(
      "The study explained why p3.8xlarge (4 V100) beat p3dn.24xlarge (8 V100) at 40 rows per GPU with GPU "
      "memory: 33% vs 17% of each GPU's memory was in use, so the 8 GPUs were starved; at 70 rows per GPU "
      "the 8-GPU machine won. The same measure for these records: memory used as a share of each GPU's "
      "memory (peak and mean while the timed repetitions ran, averaged over the GPUs the point ran on), by "
      "rows per GPU (batch size / the point's GPUs), the study's axis. Only GPU points (device cuda, "
      "cuda:N or cuda:all) count; CPU points are in the host memory chart below."));
  svg::XYChart c = batch_chart("GPU memory used / total vs batch size per GPU (solid: peak, dashed: mean)",
                               "GPU memory used / total (%)");
  c.x.title = "batch size per GPU (rows)";
  c.y.min = 0;
  c.y.max = 100;
  for (size_t k = 0; k < m.configs.size(); ++k) {
    svg::Series peak{m.configs[k].name, {}, int(k)};
    svg::Series mean{m.configs[k].name + " (mean)", {}, int(k)};
    mean.dashed = true;
    mean.in_legend = false;
    for (size_t i : by_config[k]) {
      const Point& p = m.points[i];
      if (p.gpus_monitored == 0 || p.gpus == 0) continue;
      svg::XYPoint xy;
      xy.x = double(p.batch_size) / p.gpus;
      xy.y = p.gpu_memory_peak * 100;
      xy.tooltip = fmt::format("{}: peak {} of {} per GPU", point_label(m, p), percent(p.gpu_memory_peak),
                               gib(double(p.gpu_memory_total_bytes)));
      peak.points.push_back(xy);
      xy.y = p.gpu_memory_mean * 100;
      xy.tooltip = fmt::format("{}: mean {}", point_label(m, p), percent(p.gpu_memory_mean));
      mean.points.push_back(xy);
    }
    if (peak.points.empty()) continue;
    c.series.push_back(peak);
    c.series.push_back(mean);
  }
  s.blocks.push_back(chart(doc, "gpu-memory.svg", c));
  Table t{{"Configuration", "Batch size", "Rows per GPU", "GPUs", "Memory per GPU",
           "Peak used/total (mean of GPUs)", "Peak used/total (busiest GPU)", "Mean used/total",
           "GPU utilization (mean)"},
          {false, true, true, true, true, true, true, true, true},
          {}};
  for (const Point& p : m.points) {
    if (!is_gpu_device(m.configs[p.config].device)) continue;
    if (p.gpus_monitored == 0) {
      t.rows.push_back({m.configs[p.config].name, batch_text(p), rows_per_gpu(p),
                        p.gpus > 0 ? std::to_string(p.gpus) : "-", "not monitored", "-", "-", "-", "-"});
      continue;
    }
    t.rows.push_back({m.configs[p.config].name, batch_text(p), rows_per_gpu(p), std::to_string(p.gpus),
                      gib(double(p.gpu_memory_total_bytes)), percent(p.gpu_memory_peak),
                      percent(p.gpu_memory_peak_max), percent(p.gpu_memory_mean),
                      percent(p.gpu_utilization_mean)});
  }
  s.blocks.push_back(table(std::move(t)));
}

// The memory section's host chart: the peak RSS of the points without GPU
// memory figures, by batch size, and why they are shown.
void host_memory_blocks(Document& doc, const ReportModel& m,
                        const std::vector<std::vector<size_t>>& by_config, bool any_gpu_point, Section& s) {
  if (!any_gpu_point) {
    s.blocks.push_back(paragraph(
        "No point ran on a GPU (no config.device is cuda), so there is no GPU memory to show. Shown "
        "instead: the host's peak resident memory (RSS) of the run vs batch size."));
  } else if (!m.any_gpu_monitor) {
    s.blocks.push_back(paragraph(
        "No GPU point has GPU monitoring (monitor.gpus is empty in the records of every cuda point), so "
        "GPU memory utilization cannot be shown. Shown instead: the host's peak resident memory (RSS) of "
        "the run vs batch size."));
  } else {
    s.blocks.push_back(paragraph(
        "Points without GPU memory figures (CPU points, and GPU points their records did not monitor): "
        "the host's peak resident memory (RSS) of the run vs batch size."));
  }
  svg::XYChart c =
      batch_chart(m.any_gpu_monitor ? "Host peak RSS vs batch size (points without GPU monitoring)"
                                    : "Host peak RSS vs batch size (no GPU monitoring)",
                  "host peak RSS (GiB)");
  c.y.from_zero = true;
  for (size_t k = 0; k < m.configs.size(); ++k) {
    svg::Series series{m.configs[k].name, {}, int(k)};
    for (size_t i : by_config[k]) {
      const Point& p = m.points[i];
      if (p.gpus_monitored > 0 || p.peak_rss_bytes <= 0) continue;
      svg::XYPoint xy;
      xy.x = p.batch_size;
      xy.y = double(p.peak_rss_bytes) / (1024.0 * 1024.0 * 1024.0);
      xy.tooltip = fmt::format("{}: {}", point_label(m, p), gib(double(p.peak_rss_bytes)));
      series.points.push_back(xy);
    }
    if (!series.points.empty()) c.series.push_back(series);
  }
  s.blocks.push_back(chart(doc, "host-memory.svg", c));
}

Section memory_section(Document& doc, const ReportModel& m) {
  Section s{"memory", "5. Memory: GPU memory utilization vs batch size", {}};
  const auto by_config = points_by_config(m);
  // GPU points (config.device cuda...) count for GPU memory; every other
  // point, and a GPU point its records did not monitor, for host memory.
  bool any_gpu_point = false, any_host_point = false;
  for (const Point& p : m.points) {
    any_gpu_point |= is_gpu_device(m.configs[p.config].device);
    any_host_point |= p.gpus_monitored == 0;
  }
  if (m.any_gpu_monitor) gpu_memory_blocks(doc, m, by_config, s);
  if (any_host_point) host_memory_blocks(doc, m, by_config, any_gpu_point, s);
  s.blocks.push_back(paragraph("Host memory of every run (peak and mean resident set size of the process):"));
  Table t{{"Configuration", "Batch size", "Host peak RSS", "Host mean RSS"}, {false, true, true, true}, {}};
  for (const Point& p : m.points) {
    t.rows.push_back({m.configs[p.config].name, batch_text(p),
                      p.peak_rss_bytes > 0 ? gib(double(p.peak_rss_bytes)) : "-",
                      p.rss_mean_bytes > 0 ? gib(p.rss_mean_bytes) : "-"});
  }
  s.blocks.push_back(table(std::move(t)));
  return s;
}

// The runtime vs cost chart of the priced points (`number`: each one's row in
// the section's table), its time unit chosen from the longest.
svg::XYChart pareto_chart(const ReportModel& m, const std::vector<size_t>& priced,
                          std::map<size_t, int>& number, const std::set<size_t>& front, double max_seconds) {
  // The time unit of the chart.
  double unit = 1;
  std::string unit_name = "s";
  if (max_seconds >= 2 * 3600) {
    unit = 3600;
    unit_name = "h";
  } else if (max_seconds >= 120) {
    unit = 60;
    unit_name = "min";
  }
  const std::vector<std::string> machines = machines_of(m);
  svg::XYChart c;
  c.title =
      fmt::format("Runtime vs cost for {} rows (numbers: Pareto front, see the table)", count(m.corpus_rows));
  c.x.title = fmt::format("corpus time ({})", unit_name);
  c.y.title = "corpus cost (USD)";
  c.x.from_zero = true;
  c.y.from_zero = true;
  c.empty_text = "no priced point";
  std::vector<double> xs, ys;
  for (size_t i : priced) {
    xs.push_back(m.points[i].corpus_seconds.median);
    ys.push_back(m.points[i].corpus_usd.median);
  }
  if (wide(xs)) {
    c.x.log = true;
    c.x.from_zero = false;
  }
  if (wide(ys)) {
    c.y.log = true;
    c.y.from_zero = false;
  }
  for (const std::string& machine : machines) {
    svg::Series series{machine, {}, machine_color(machines, machine)};
    series.line = false;
    for (size_t i : priced) {
      const Point& p = m.points[i];
      if (m.configs[p.config].machine != machine) continue;
      svg::XYPoint xy;
      xy.x = p.corpus_seconds.median / unit;
      xy.y = p.corpus_usd.median;
      xy.emphasis = front.count(i) > 0;
      if (xy.emphasis) xy.mark = std::to_string(number[i]);
      xy.tooltip = fmt::format("{}. {}: {}, {}", number[i], point_label(m, p),
                               duration(p.corpus_seconds.median), usd(p.corpus_usd.median));
      series.points.push_back(xy);
    }
    if (!series.points.empty()) c.series.push_back(series);
  }
  for (size_t i : m.pareto)
    c.overlay.emplace_back(m.points[i].corpus_seconds.median / unit, m.points[i].corpus_usd.median);
  c.overlay_name = "Pareto front";
  return c;
}

Section pareto_section(Document& doc, const ReportModel& m) {
  Section s = opening(
      "pareto", fmt::format("6. Runtime vs cost for {} rows", count(m.corpus_rows)),
      fmt::format(
          "Every priced point projected to a corpus of {} rows ({}): time at its measured rows/s, cost at "
          "its "
          "hourly price. The Pareto front holds the points that no other point beats on both time and cost; "
          "every "
          "other point is slower and costlier than one of them.",
          count(m.corpus_rows),
          m.corpus_rows_given ? "--corpus-rows" : "the largest data.rows among the records"));
  std::vector<size_t> priced;
  double max_seconds = 0;
  for (size_t i = 0; i < m.points.size(); ++i) {
    if (!m.points[i].priced) continue;
    priced.push_back(i);
    max_seconds = std::max(max_seconds, m.points[i].corpus_seconds.median);
  }
  std::stable_sort(priced.begin(), priced.end(), [&](size_t a, size_t b) {
    return std::tie(m.points[a].corpus_seconds.median, m.points[a].corpus_usd.median) <
           std::tie(m.points[b].corpus_seconds.median, m.points[b].corpus_usd.median);
  });
  std::map<size_t, int> number;  // point -> its number in the table
  for (size_t k = 0; k < priced.size(); ++k) number[priced[k]] = int(k) + 1;
  const std::set<size_t> front(m.pareto.begin(), m.pareto.end());

  s.blocks.push_back(chart(doc, "runtime-vs-cost.svg", pareto_chart(m, priced, number, front, max_seconds)));

  Table t{{"#", "Configuration", "Batch size", fmt::format("Corpus time ({} rows)", count(m.corpus_rows)),
           "Min\u2013max", "Corpus cost (USD)", "Min\u2013max (USD)", "Pareto front"},
          {true, false, true, true, true, true, true, false},
          {}};
  for (size_t i : priced) {
    const Point& p = m.points[i];
    t.rows.push_back({std::to_string(number[i]), m.configs[p.config].name, batch_text(p),
                      duration(p.corpus_seconds.median),
                      duration(p.corpus_seconds.min) + " \u2013 " + duration(p.corpus_seconds.max),
                      sig(p.corpus_usd.median), range(p.corpus_usd), front.count(i) ? "yes" : ""});
  }
  if (!t.rows.empty()) s.blocks.push_back(table(std::move(t)));
  if (!m.pareto.empty()) {
    std::vector<std::string> items;
    for (size_t i : m.pareto) {
      const Point& p = m.points[i];
      items.push_back(fmt::format("point {}: {}: {}, {}", number[i], point_label(m, p),
                                  duration(p.corpus_seconds.median), usd(p.corpus_usd.median)));
    }
    s.blocks.push_back(paragraph("The Pareto front, fastest first:"));
    s.blocks.push_back(list(items));
  }
  std::vector<std::string> unpriced;
  for (const Configuration& cfg : m.configs) {
    if (cfg.usd_per_hour <= 0) unpriced.push_back(cfg.name);
  }
  if (!unpriced.empty()) {
    std::string names;
    for (const std::string& n : unpriced) names += (names.empty() ? "" : ", ") + n;
    s.blocks.push_back(paragraph("Not shown (unpriced): " + names + "."));
  }
  return s;
}

Section failed_section(const ReportModel& m) {
  Section s{"failed", "Failed points", {}};
  if (m.failed.empty()) {
    s.blocks.push_back(paragraph("None: every record succeeded."));
    return s;
  }
  s.blocks.push_back(paragraph("These records are left out of the charts and tables above."));
  Table t{{"Machine", "Configuration", "Batch size", "Reason", "File and line"},
          {false, false, true, false, false},
          {}};
  for (const FailedPoint& f : m.failed) {
    t.rows.push_back({f.machine, f.description, std::to_string(f.batch_size), f.reason, f.source});
  }
  s.blocks.push_back(table(std::move(t)));
  return s;
}

}  // namespace

Document build_document(const ReportModel& m) {
  Document doc;
  doc.title = m.title;
  std::string sources;
  for (const std::string& src : m.sources) sources += (sources.empty() ? "" : ", ") + src;
  doc.intro.push_back(fmt::format("{} benchmark {} from {}: {} {} charted, {} failed.", m.records,
                                  m.records == 1 ? "record" : "records", sources, m.points.size(),
                                  m.points.size() == 1 ? "point" : "points", m.failed.size()));
  if (!m.first_started_at.empty()) {
    doc.intro.push_back(
        m.first_started_at == m.last_started_at
            ? fmt::format("The benchmarks started at {} (from the records).", m.first_started_at)
            : fmt::format("The benchmarks started between {} and {} (from the records).", m.first_started_at,
                          m.last_started_at));
  }
  if (!m.price_sources.empty()) {
    std::string lists;
    for (const std::string& p : m.price_sources) lists += (lists.empty() ? "" : "; ") + p;
    doc.intro.push_back("Prices: " + lists + "." + (m.pricing_note.empty() ? "" : " " + m.pricing_note));
  } else if (!m.pricing_note.empty()) {
    doc.intro.push_back(m.pricing_note);
  }
  doc.intro.push_back(
      "Every figure is the median over a point's timed repetitions; \"spread\" (\u00b1) is half the "
      "min\u2013max "
      "range as a percentage of the median, and error bars run from min to max.");

  Section answer{"answer", "Answer", {}};
  for (const std::string& a : answer_paragraphs(m)) answer.blocks.push_back(paragraph(a));
  doc.sections.push_back(answer);
  doc.sections.push_back(configurations_section(m));
  doc.sections.push_back(runtime_section(doc, m));
  doc.sections.push_back(cost_section(doc, m));
  doc.sections.push_back(throughput_section(doc, m));
  doc.sections.push_back(padding_section(doc, m));
  doc.sections.push_back(memory_section(doc, m));
  doc.sections.push_back(pareto_section(doc, m));
  doc.sections.push_back(failed_section(m));
  return doc;
}

}  // namespace infercost::report
