#include "infercost/metrics.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <utility>
#include <variant>

#include "core/file.h"
#include "core/json_text.h"
#include "engine/run_metrics.h"

namespace infercost {

int64_t peak_rss_bytes() {
  // VmHWM: the peak of this program's own memory. getrusage's ru_maxrss also
  // keeps the peak of the parent's forked copy that ran before the exec (a
  // large parent, e.g. `infercost bench` or a notebook, would inflate it).
  if (Result<std::string> status = read_file("/proc/self/status"); status.ok()) {
    const size_t at = status->find("\nVmHWM:");
    if (at != std::string::npos) {
      const long long kib = std::strtoll(status->c_str() + at + 7, nullptr, 10);
      if (kib > 0) return static_cast<int64_t>(kib) * 1024;
    }
  }
  struct rusage usage {};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

const std::vector<int>& length_histogram_edges() {
  static const std::vector<int> edges = {1, 9, 17, 33, 65, 129, 257, 513};
  return edges;
}

std::vector<int64_t> bin_lengths(const std::vector<int64_t>& counts_by_length,
                                 const std::vector<int>& edges) {
  std::vector<int64_t> bins(edges.size(), 0);
  for (size_t length = 0; length < counts_by_length.size(); ++length) {
    if (counts_by_length[length] == 0) continue;
    // The last edge <= length.
    size_t bucket = edges.size();
    for (size_t i = edges.size(); i-- > 0;) {
      if (static_cast<int64_t>(length) >= edges[i]) {
        bucket = i;
        break;
      }
    }
    if (bucket < edges.size()) bins[bucket] += counts_by_length[length];
  }
  return bins;
}

double RunMetrics::infer_share() const {
  auto it = stage_seconds.find("infer");
  if (it == stage_seconds.end() || wall_seconds <= 0) return 0;
  return it->second / (wall_seconds * std::max(workers, 1));
}

namespace {

// How a reader takes a field of the metrics JSON: required (the writer
// always writes it), read when present (written only sometimes, or added
// later: the default stays when missing), or not read at all.
enum class MetricsRead { kNeed, kGet, kSkip };

// When a field is written and how it is read back.
struct Presence {
  bool written = true;
  MetricsRead read = MetricsRead::kNeed;
};
constexpr Presence kAlways{};
// Written when `written`; a reader keeps the default where it is missing.
constexpr Presence written_if(bool written) {
  return {written, MetricsRead::kGet};
}

// The one list of the metrics JSON's fields, in the order they are written:
// to_json() visits a const `m` with a MetricsWriter, parse_run_metrics() a
// fresh one with a MetricsFields (so a condition on a field read earlier
// sees it read). `v` offers
//   field(key, member[, presence])  a value, or a list of strings or integers;
//   derived(key, value)             a figure the methods compute: written, never read;
//   object(key, presence, fn)       a nested object, fn(sub) lists its fields;
//   list(key, presence, items, fn)  an array of objects, fn(item, sub) lists an item's;
//   histogram(key, length_counts), stages(key, stage_seconds): the two that
//   are not stored as they are written.
template <typename Metrics, typename Visitor>
void for_each_run_metrics_field(Metrics& m, Visitor& v) {
  v.field("rows", m.rows);
  v.field("rows_null", m.rows_null);
  v.field("rows_skipped", m.rows_skipped);
  v.field("input_files", m.input_files);
  v.field("output_files", m.output_files);
  v.field("first_skip_reason", m.first_skip_reason, written_if(m.rows_skipped > 0));
  v.field("tokens", m.tokens);
  v.field("padded_tokens", m.padded_tokens);
  v.field("computed_tokens", m.computed_tokens);
  v.derived("padding_efficiency", m.padding_efficiency());
  v.derived("batch_fill", m.batch_fill());
  v.field("rows_at_max_length", m.rows_at_max_length);
  v.field("batches", m.batches);
  v.histogram("length_histogram", m.length_counts);
  v.field("wall_seconds", m.wall_seconds);
  v.derived("rows_per_second", m.rows_per_second());
  v.derived("tokens_per_second", m.tokens_per_second());
  v.derived("infer_share", m.infer_share());
  v.field("peak_rss_bytes", m.peak_rss_bytes);
  v.stages("stages", m.stage_seconds);
  v.object("model", kAlways, [&](auto& o) {
    o.field("name", m.model_name);
    o.field("synthetic", m.model_synthetic);
  });
  v.field("task", m.task, Presence{true, MetricsRead::kGet});
  const bool embeds = m.task == "embed";
  v.object("embedding", written_if(embeds), [&](auto& o) {
    o.field("dimensions", m.embedding_dimensions);
    o.field("pooling", m.embedding_pooling);
    o.field("normalized", m.embedding_normalized);
    o.field("prefix", m.embedding_prefix);
  });
  // Metrics from before the head was recorded have none: softmax, all runs did then.
  v.object("head", Presence{true, MetricsRead::kGet}, [&](auto& o) {
    o.field("function", m.head_function);
    o.field("labels_column", m.labels_column);
    o.field("threshold", m.threshold,
            {m.labels_column, m.labels_column ? MetricsRead::kNeed : MetricsRead::kSkip});
  });
  v.field("device", m.device);
  v.field("threads", m.threads);
  v.field("batching", m.batching);
  v.field("precision", m.precision);
  v.field("batch_size", m.batch_size);
  v.field("max_batch_tokens", m.max_batch_tokens);
  v.field("window_rows", m.window_rows);
  v.field("tokenizer_threads", m.tokenizer_threads);
  v.field("max_length", m.max_length);
  v.field("devices", m.devices);
  v.field("workers", m.workers);
  v.list("per_device", kAlways, m.per_device, [](auto& d, auto& o) {
    for_each_device_metrics_field(d, [&](const char* key, auto& value) { o.field(key, value); });
  });
  v.field("oom_retries", m.oom_retries);
  v.field("batch_size_auto", m.batch_size_auto);
  v.field("max_batch_tokens_auto", m.max_batch_tokens_auto);
  v.object("capacity", written_if(m.batch_size_auto || m.max_batch_tokens_auto), [&](auto& o) {
    o.field("max_tokens", m.capacity_max_tokens);
    o.field("max_rows", m.capacity_max_rows);
    o.field("basis", m.capacity_basis);
  });
  v.field("model_flops", m.model_flops);
  v.derived("model_flops_per_second", m.model_flops_per_second());
  const Presence sampled = written_if(!m.gpus.empty() || m.gpu_samples > 0);
  v.field("gpu_sample_interval_seconds", m.gpu_sample_interval_seconds, sampled);
  v.field("gpu_samples", m.gpu_samples, sampled);
  v.list("gpus", sampled, m.gpus, [](auto& g, auto& o) {
    for_each_gpu_usage_field(g, [&](const char* key, auto& value) { o.field(key, value); });
  });
  v.field("gpu_monitor", m.gpu_monitor, written_if(!m.gpu_monitor.empty()));
  v.field("output_stream", m.output_stream, written_if(!m.output_stream.empty()));
  v.object("resume", written_if(!m.checkpoint.empty()), [&](auto& o) {
    o.field("checkpoint", m.checkpoint);
    o.field("resumed", m.resumed);
    o.field("resumed_rows", m.resumed_rows);
    o.field("already_complete", m.already_complete);
    o.field("checkpoints", m.checkpoints);
    o.field("checkpoint_seconds", m.checkpoint_seconds);
  });
  v.object("cost", written_if(!m.cost.instance.empty()), [&](auto& o) {
    auto& c = m.cost;
    o.field("instance", c.instance);
    o.field("price_list", c.price_list);
    o.field("price_source", c.price_source);
    o.field("price_date", c.price_date);
    o.field("instance_usd_per_hour", c.instance_usd_per_hour);
    o.field("spot_discount", c.spot_discount);
    o.field("platform_usd_per_hour", c.platform_usd_per_hour);
    o.field("machines", c.machines);
    cost::for_each_cost_estimate_field(c.estimate,
                                       [&](const char* key, auto& value) { o.field(key, value); });
  });
}

using WrittenJson = nlohmann::ordered_json;

// Writes the fields for_each_run_metrics_field lists into one JSON object.
class MetricsWriter {
 public:
  explicit MetricsWriter(WrittenJson& j) : j_(j) {}

  template <typename T>
  void field(const char* key, const T& value, Presence p = kAlways) {
    if (p.written) j_[key] = value;
  }
  void derived(const char* key, double value) { j_[key] = value; }
  template <typename F>
  void object(const char* key, Presence p, F&& fields) {
    if (!p.written) return;
    WrittenJson sub = WrittenJson::object();
    MetricsWriter w(sub);
    fields(w);
    j_[key] = std::move(sub);
  }
  template <typename T, typename F>
  void list(const char* key, Presence p, const std::vector<T>& items, F&& fields) {
    if (!p.written) return;
    WrittenJson out = WrittenJson::array();
    for (const T& item : items) {
      WrittenJson sub = WrittenJson::object();
      MetricsWriter w(sub);
      fields(item, w);
      out.push_back(std::move(sub));
    }
    j_[key] = std::move(out);
  }
  void histogram(const char* key, const std::vector<int64_t>& length_counts) {
    j_[key] = {{"edges", length_histogram_edges()},
               {"counts", bin_lengths(length_counts, length_histogram_edges())}};
  }
  void stages(const char* key, const std::map<std::string, double>& stage_seconds) {
    WrittenJson sub = WrittenJson::object();
    for (const auto& [name, seconds] : stage_seconds) sub[name] = seconds;
    j_[key] = std::move(sub);
  }

 private:
  WrittenJson& j_;
};

}  // namespace

std::string RunMetrics::to_json() const {
  WrittenJson j;
  MetricsWriter writer(j);
  for_each_run_metrics_field(*this, writer);
  return j.dump(2) + "\n";
}

namespace {

using MetricsJson = nlohmann::json;

// A field of the wrong type, or missing where the writer always writes it.
struct MetricsFieldError {
  std::string message;
};

// Reads the fields of one object of the metrics JSON (the visitor of
// for_each_run_metrics_field); `path` names it in errors ("per_device[0]").
// A field it needs throws MetricsFieldError when missing, one it gets keeps
// the default; both throw when it has the wrong type.
class MetricsFields {
 public:
  MetricsFields(const MetricsJson& j, std::string path, const std::string& origin)
      : j_(j), path_(std::move(path)), origin_(origin) {}

  template <typename T>
  void field(const char* key, T& out, Presence p = kAlways) const {
    if (p.read == MetricsRead::kSkip) return;
    const MetricsJson* v = find(key);
    if (v == nullptr && p.read == MetricsRead::kNeed) fail(fmt::format("no \"{}\"", where(key)));
    if (v != nullptr) read(*v, where(key), out);
  }
  void derived(const char*, double) const {}  // computed again by the methods
  template <typename F>
  void object(const char* key, Presence p, F&& fields) const {
    if (p.read == MetricsRead::kSkip) return;
    const MetricsJson* v = find(key);
    if (v == nullptr && p.read == MetricsRead::kNeed) fail(fmt::format("no \"{}\"", where(key)));
    if (v == nullptr) return;
    MetricsFields sub = at(*v, where(key));
    fields(sub);
  }
  template <typename T, typename F>
  void list(const char* key, Presence p, std::vector<T>& items, F&& fields) const {
    if (p.read == MetricsRead::kSkip) return;
    const MetricsJson* v = find(key);
    if (v == nullptr && p.read == MetricsRead::kNeed) fail(fmt::format("no \"{}\"", where(key)));
    if (v == nullptr) return;
    if (!v->is_array()) fail(fmt::format("\"{}\" must be an array", where(key)));
    items.clear();
    for (size_t i = 0; i < v->size(); ++i) {
      MetricsFields sub = at((*v)[i], fmt::format("{}[{}]", where(key), i));
      T item{};
      fields(item, sub);
      items.push_back(std::move(item));
    }
  }
  // The file has the histogram, not the exact lengths: each bucket's rows
  // come back at its lower edge, so binning them again gives its counts.
  void histogram(const char* key, std::vector<int64_t>& length_counts) const {
    std::vector<int> edges;
    std::vector<int64_t> counts;
    object(key, kAlways, [&](const MetricsFields& h) {
      h.field("edges", edges);
      h.field("counts", counts);
    });
    if (edges != length_histogram_edges() || counts.size() != edges.size()) {
      fail(fmt::format("\"{}\" must hold \"edges\" [{}] and as many \"counts\"", where(key),
                       fmt::join(length_histogram_edges(), ", ")));
    }
    length_counts.clear();
    for (size_t i = 0; i < edges.size(); ++i) {
      if (counts[i] == 0) continue;
      length_counts.resize(static_cast<size_t>(edges[i]) + 1, 0);
      length_counts[static_cast<size_t>(edges[i])] = counts[i];
    }
  }
  void stages(const char* key, std::map<std::string, double>& stage_seconds) const {
    object(key, kAlways, [&](const MetricsFields& s) {
      for (auto it = s.j_.begin(); it != s.j_.end(); ++it) {
        if (!it->is_number()) fail(fmt::format("\"{}\" must be a number", s.where(it.key())));
        stage_seconds[it.key()] = it->get<double>();
      }
    });
  }

 private:
  MetricsFields at(const MetricsJson& j, const std::string& path) const {
    if (!j.is_object()) fail(fmt::format("\"{}\" must be an object", path));
    return MetricsFields(j, path, origin_);
  }
  std::string where(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  [[noreturn]] void fail(const std::string& what) const { throw MetricsFieldError{origin_ + ": " + what}; }
  const MetricsJson* find(const char* key) const {
    auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }
  template <typename T>
  void read(const MetricsJson& v, const std::string& path, T& out) const {
    if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) fail(fmt::format("\"{}\" must be a boolean", path));
    } else if constexpr (std::is_integral_v<T>) {
      if (!v.is_number_integer()) fail(fmt::format("\"{}\" must be an integer", path));
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!v.is_number()) fail(fmt::format("\"{}\" must be a number", path));
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!v.is_string()) fail(fmt::format("\"{}\" must be a string", path));
    } else {  // a list of strings or integers
      if (!v.is_array()) fail(fmt::format("\"{}\" must be an array", path));
      out.clear();
      for (size_t i = 0; i < v.size(); ++i) {
        typename T::value_type e{};
        read(v[i], fmt::format("{}[{}]", path, i), e);
        out.push_back(std::move(e));
      }
      return;
    }
    out = v.get<T>();
  }

  const MetricsJson& j_;
  std::string path_;
  const std::string& origin_;
};

}  // namespace

Result<RunMetrics> parse_run_metrics(std::string_view json, const std::string& origin) {
  INFERCOST_RETURN_IF_ERROR(check_json_nesting(json, origin));
  MetricsJson j = MetricsJson::parse(json.begin(), json.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return corruption(fmt::format("{}: not a JSON object", origin));
  try {
    RunMetrics m;
    MetricsFields top(j, "", origin);
    for_each_run_metrics_field(m, top);
    return m;
  } catch (const MetricsFieldError& e) {
    return corruption(e.message);
  }
}

std::string RunMetrics::to_summary() const {
  std::string out;
  auto line = std::back_inserter(out);
  if (already_complete) {
    return fmt::format(
        "complete        nothing to do: --resume found the job finished, every output in place and as it "
        "left them\n");
  }
  if (resumed) {
    fmt::format_to(line,
                   "resumed         after {} rows an earlier run did (checkpoint {}); the figures below are "
                   "this run's\n",
                   resumed_rows, checkpoint);
  }
  summarize_work(out);
  summarize_devices(out);
  summarize_setup(out);
  return out;
}

void RunMetrics::summarize_work(std::string& out) const {
  auto line = std::back_inserter(out);
  fmt::format_to(line, "rows            {} from {} file{}", rows, input_files, input_files == 1 ? "" : "s");
  if (rows_null > 0) fmt::format_to(line, " (+{} null texts, written with null outputs)", rows_null);
  if (rows_skipped > 0) {
    fmt::format_to(line, " ({} bad rows skipped; first: {})", rows_skipped, first_skip_reason);
  }
  fmt::format_to(line,
                 "\ntokens          {} real, {} in padded batches ({:.1f}% batch fill), {} computed "
                 "({:.1f}% padding efficiency), {} rows at max length\n",
                 tokens, padded_tokens, 100.0 * batch_fill(), computed_tokens, 100.0 * padding_efficiency(),
                 rows_at_max_length);
  fmt::format_to(line, "busy (s)       ");
  static constexpr const char* kOrder[] = {"load", "read", "tokenize", "batch", "infer", "write"};
  for (const char* stage : kOrder) {
    auto it = stage_seconds.find(stage);
    if (it != stage_seconds.end()) fmt::format_to(line, " {} {:.3f}", stage, it->second);
  }
  fmt::format_to(
      line, " (stages overlap)\nwall            {:.3f} s (model load excluded), inference busy {:.1f}%\n",
      wall_seconds, 100.0 * infer_share());
  fmt::format_to(line, "throughput      {:.1f} rows/s, {:.0f} tokens/s\n", rows_per_second(),
                 tokens_per_second());
  fmt::format_to(line, "model FLOPs     {:.4g} at real lengths, {:.4g} FLOP/s\n", model_flops,
                 model_flops_per_second());
  fmt::format_to(line, "peak RSS        {:.1f} MiB\n", peak_rss_bytes / (1024.0 * 1024.0));
}

void RunMetrics::summarize_devices(std::string& out) const {
  auto line = std::back_inserter(out);
  if (workers > 1 || per_device.size() > 1) {
    fmt::format_to(line, "workers         {} over {} device{}:", workers, per_device.size(),
                   per_device.size() == 1 ? "" : "s");
    for (const DeviceRunMetrics& d : per_device) {
      fmt::format_to(line, " {} ({} stream{}, {} batches, {} rows, busy {:.3f} s)", d.name, d.streams,
                     d.streams == 1 ? "" : "s", d.batches, d.rows, d.infer_seconds);
    }
    out += "\n";
  }
  if (oom_retries > 0) {
    fmt::format_to(line, "out of memory   {} batch{} split and retried;", oom_retries,
                   oom_retries == 1 ? "" : "es");
    for (const DeviceRunMetrics& d : per_device) {
      if (d.max_computed_tokens > 0)
        fmt::format_to(line, " {} kept batches to {} computed tokens", d.name, d.max_computed_tokens);
    }
    out += "\n";
  }
  if (batch_size_auto || max_batch_tokens_auto) {
    fmt::format_to(line, "auto sizes      {}{}{} (capacity per stream: {} tokens, {} rows; {})\n",
                   batch_size_auto ? fmt::format("batch {} rows", batch_size) : std::string(),
                   batch_size_auto && max_batch_tokens_auto ? ", " : "",
                   max_batch_tokens_auto ? fmt::format("{} tokens", max_batch_tokens) : std::string(),
                   capacity_max_tokens, capacity_max_rows, capacity_basis);
  }
  for (const GpuUsage& g : gpus) {
    constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
    fmt::format_to(line,
                   "gpu {:<11} memory used {:.2f} GiB peak, {:.2f} GiB mean of {:.2f} GiB; utilization "
                   "{:.0f}% mean, {:.0f}% peak\n",
                   g.index, g.memory_used_peak_bytes / kGiB, g.memory_used_mean_bytes / kGiB,
                   g.memory_total_bytes / kGiB, 100.0 * g.utilization_mean, 100.0 * g.utilization_peak);
  }
  if (!gpu_monitor.empty()) fmt::format_to(line, "gpus            not monitored: {}\n", gpu_monitor);
}

void RunMetrics::summarize_setup(std::string& out) const {
  auto line = std::back_inserter(out);
  if (!output_stream.empty()) {
    fmt::format_to(line, "output          streamed to {}: no checkpoint, so a rerun starts over\n",
                   output_stream);
  }
  if (checkpoints > 0) {
    fmt::format_to(line, "checkpoints     {} saved in {:.3f} s ({:.2f}% of the wall time)\n", checkpoints,
                   checkpoint_seconds, wall_seconds > 0 ? 100.0 * checkpoint_seconds / wall_seconds : 0.0);
  }
  fmt::format_to(
      line,
      "config          device {}, precision {}, {} threads (+{} tokenizing), batching {} (batch {} "
      "rows, {} tokens, window {}), max length {}, model {}{}, {}\n",
      device, precision, threads, tokenizer_threads, batching, batch_size, max_batch_tokens, window_rows,
      max_length, model_name, model_synthetic ? " (synthetic)" : "",
      task == "embed"
          ? fmt::format("embedding {} pooling{}, {} dimensions{}", embedding_pooling,
                        embedding_normalized ? ", normalized" : "", embedding_dimensions,
                        embedding_prefix.empty() ? "" : fmt::format(", prefix '{}'", embedding_prefix))
          : fmt::format("head {}{}", head_function,
                        labels_column ? fmt::format(" (labels at >= {})", threshold) : std::string()));
  if (!cost.instance.empty()) {
    const cost::CostEstimate& e = cost.estimate;
    fmt::format_to(
        line,
        "cost            {} ({} prices, {}): ${:.4f}/h -> ${:.6f} for this run, ${:.4f} per million "
        "{}, ${:.5f} per million tokens; {} rows would take {:.2f} h and cost ${:.2f}\n",
        cost.instance, cost.price_list, cost.price_date, e.usd_per_hour, e.cost_to_solution_usd,
        e.usd_per_million_rows, task == "embed" ? "vectors" : "rows", e.usd_per_million_tokens, e.corpus_rows,
        e.corpus_seconds / 3600.0, e.corpus_usd);
  }
}

}  // namespace infercost
