#include "infercost/pipeline/metrics.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <utility>

#include "infercost/core/file.h"

namespace infercost::pipeline {

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

double encoder_row_flops(int layers, int hidden, int intermediate, double length) {
  const double h = hidden, f = intermediate;
  return layers * (2.0 * length * (4.0 * h * h + 2.0 * h * f) + 4.0 * length * length * h);
}

double RunMetrics::infer_share() const {
  auto it = stage_seconds.find("infer");
  if (it == stage_seconds.end() || wall_seconds <= 0) return 0;
  return it->second / (wall_seconds * std::max(workers, 1));
}

std::string RunMetrics::to_json() const {
  nlohmann::ordered_json j;
  j["rows"] = rows;
  j["rows_null"] = rows_null;
  j["rows_skipped"] = rows_skipped;
  j["input_files"] = input_files;
  j["output_files"] = output_files;
  if (rows_skipped > 0) j["first_skip_reason"] = first_skip_reason;
  j["tokens"] = tokens;
  j["padded_tokens"] = padded_tokens;
  j["computed_tokens"] = computed_tokens;
  j["padding_efficiency"] = padding_efficiency();
  j["batch_fill"] = batch_fill();
  j["rows_at_max_length"] = rows_at_max_length;
  j["batches"] = batches;
  j["length_histogram"] = {{"edges", length_histogram_edges()},
                           {"counts", bin_lengths(length_counts, length_histogram_edges())}};
  j["wall_seconds"] = wall_seconds;
  j["rows_per_second"] = rows_per_second();
  j["tokens_per_second"] = tokens_per_second();
  j["infer_share"] = infer_share();
  j["peak_rss_bytes"] = peak_rss_bytes;
  j["stages"] = nlohmann::ordered_json::object();
  for (const auto& [name, seconds] : stage_seconds) j["stages"][name] = seconds;
  j["model"] = {{"name", model_name}, {"synthetic", model_synthetic}};
  j["head"] = {{"function", head_function}, {"labels_column", labels_column}};
  if (labels_column) j["head"]["threshold"] = threshold;
  j["device"] = device;
  j["threads"] = threads;
  j["batching"] = batching;
  j["precision"] = precision;
  j["batch_size"] = batch_size;
  j["max_batch_tokens"] = max_batch_tokens;
  j["window_rows"] = window_rows;
  j["tokenizer_threads"] = tokenizer_threads;
  j["max_length"] = max_length;
  j["devices"] = devices;
  j["workers"] = workers;
  j["per_device"] = nlohmann::ordered_json::array();
  for (const DeviceRunMetrics& d : per_device) {
    j["per_device"].push_back({{"device", d.name},
                               {"streams", d.streams},
                               {"batches", d.batches},
                               {"rows", d.rows},
                               {"infer_seconds", d.infer_seconds},
                               {"oom_retries", d.oom_retries},
                               {"max_computed_tokens", d.max_computed_tokens}});
  }
  j["oom_retries"] = oom_retries;
  j["batch_size_auto"] = batch_size_auto;
  j["max_batch_tokens_auto"] = max_batch_tokens_auto;
  if (batch_size_auto || max_batch_tokens_auto) {
    j["capacity"] = {
        {"max_tokens", capacity_max_tokens}, {"max_rows", capacity_max_rows}, {"basis", capacity_basis}};
  }
  j["model_flops"] = model_flops;
  j["model_flops_per_second"] = model_flops_per_second();
  if (!gpus.empty() || gpu_samples > 0) {
    j["gpu_sample_interval_seconds"] = gpu_sample_interval_seconds;
    j["gpu_samples"] = gpu_samples;
    j["gpus"] = nlohmann::ordered_json::array();
    for (const GpuUsage& g : gpus) {
      nlohmann::ordered_json usage;
      for_each_gpu_usage_field(g, [&](const char* key, const auto& value) { usage[key] = value; });
      j["gpus"].push_back(std::move(usage));
    }
  }
  if (!gpu_monitor.empty()) j["gpu_monitor"] = gpu_monitor;
  if (!checkpoint.empty()) {
    j["resume"] = {{"checkpoint", checkpoint},     {"resumed", resumed},
                   {"resumed_rows", resumed_rows}, {"already_complete", already_complete},
                   {"checkpoints", checkpoints},   {"checkpoint_seconds", checkpoint_seconds}};
  }
  return j.dump(2) + "\n";
}

namespace {

using MetricsJson = nlohmann::json;

// A field of the wrong type, or missing where the writer always writes it.
struct MetricsFieldError {
  std::string message;
};

// Reads the fields of one object of the metrics JSON; `path` names it in
// errors ("per_device[0]"). need() throws MetricsFieldError when the field is
// missing, get() keeps the default; both throw when it has the wrong type.
class MetricsFields {
 public:
  MetricsFields(const MetricsJson& j, std::string path, const std::string& origin)
      : j_(j), path_(std::move(path)), origin_(origin) {}

  template <typename T>
  void need(const char* key, T& out) const {
    const MetricsJson* v = find(key);
    if (v == nullptr) fail(fmt::format("no \"{}\"", where(key)));
    read(*v, where(key), out);
  }
  template <typename T>
  void get(const char* key, T& out) const {
    if (const MetricsJson* v = find(key)) read(*v, where(key), out);
  }
  // The object at `key`; null when it is missing and not `required`.
  const MetricsJson* object(const char* key, bool required) const {
    const MetricsJson* v = find(key);
    if (v == nullptr && required) fail(fmt::format("no \"{}\"", where(key)));
    if (v != nullptr && !v->is_object()) fail(fmt::format("\"{}\" must be an object", where(key)));
    return v;
  }
  // The array at `key`, or an empty one when it is missing and not `required`.
  const MetricsJson& array(const char* key, bool required) const {
    static const MetricsJson kEmpty = MetricsJson::array();
    const MetricsJson* v = find(key);
    if (v == nullptr && required) fail(fmt::format("no \"{}\"", where(key)));
    if (v == nullptr) return kEmpty;
    if (!v->is_array()) fail(fmt::format("\"{}\" must be an array", where(key)));
    return *v;
  }
  MetricsFields at(const MetricsJson& j, const std::string& path) const {
    if (!j.is_object()) fail(fmt::format("\"{}\" must be an object", path));
    return MetricsFields(j, path, origin_);
  }
  std::string where(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  [[noreturn]] void fail(const std::string& what) const { throw MetricsFieldError{origin_ + ": " + what}; }

 private:
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

RunMetrics read_metrics_fields(const MetricsJson& j, const std::string& origin) {
  RunMetrics m;
  MetricsFields top(j, "", origin);
  top.need("rows", m.rows);
  top.need("rows_null", m.rows_null);
  top.need("rows_skipped", m.rows_skipped);
  top.need("input_files", m.input_files);
  top.need("output_files", m.output_files);
  top.get("first_skip_reason", m.first_skip_reason);
  top.need("tokens", m.tokens);
  top.need("padded_tokens", m.padded_tokens);
  top.need("computed_tokens", m.computed_tokens);
  top.need("rows_at_max_length", m.rows_at_max_length);
  top.need("batches", m.batches);
  {
    // The file has the histogram, not the exact lengths: each bucket's rows
    // come back at its lower edge, so binning them again gives its counts.
    MetricsFields h = top.at(*top.object("length_histogram", true), "length_histogram");
    std::vector<int> edges;
    std::vector<int64_t> counts;
    h.need("edges", edges);
    h.need("counts", counts);
    if (edges != length_histogram_edges() || counts.size() != edges.size()) {
      top.fail(fmt::format("\"length_histogram\" must hold \"edges\" [{}] and as many \"counts\"",
                           fmt::join(length_histogram_edges(), ", ")));
    }
    m.length_counts.clear();
    for (size_t i = 0; i < edges.size(); ++i) {
      if (counts[i] == 0) continue;
      m.length_counts.resize(static_cast<size_t>(edges[i]) + 1, 0);
      m.length_counts[static_cast<size_t>(edges[i])] = counts[i];
    }
  }
  top.need("wall_seconds", m.wall_seconds);
  top.need("peak_rss_bytes", m.peak_rss_bytes);
  const MetricsJson& stages = *top.object("stages", true);
  for (auto it = stages.begin(); it != stages.end(); ++it) {
    if (!it->is_number()) top.fail(fmt::format("\"stages.{}\" must be a number", it.key()));
    m.stage_seconds[it.key()] = it->get<double>();
  }
  MetricsFields model = top.at(*top.object("model", true), "model");
  model.need("name", m.model_name);
  model.need("synthetic", m.model_synthetic);
  if (const MetricsJson* h = top.object("head", false)) {
    MetricsFields head = top.at(*h, "head");
    head.need("function", m.head_function);
    head.need("labels_column", m.labels_column);
    if (m.labels_column) head.need("threshold", m.threshold);
  }
  top.need("device", m.device);
  top.need("threads", m.threads);
  top.need("batching", m.batching);
  top.need("precision", m.precision);
  top.need("batch_size", m.batch_size);
  top.need("max_batch_tokens", m.max_batch_tokens);
  top.need("window_rows", m.window_rows);
  top.need("tokenizer_threads", m.tokenizer_threads);
  top.need("max_length", m.max_length);
  top.need("devices", m.devices);
  top.need("workers", m.workers);
  const MetricsJson& per_device = top.array("per_device", true);
  for (size_t i = 0; i < per_device.size(); ++i) {
    MetricsFields f = top.at(per_device[i], fmt::format("per_device[{}]", i));
    DeviceRunMetrics d;
    f.need("device", d.name);
    f.need("streams", d.streams);
    f.need("batches", d.batches);
    f.need("rows", d.rows);
    f.need("infer_seconds", d.infer_seconds);
    f.need("oom_retries", d.oom_retries);
    f.need("max_computed_tokens", d.max_computed_tokens);
    m.per_device.push_back(std::move(d));
  }
  top.need("oom_retries", m.oom_retries);
  top.need("batch_size_auto", m.batch_size_auto);
  top.need("max_batch_tokens_auto", m.max_batch_tokens_auto);
  if (const MetricsJson* c = top.object("capacity", false)) {
    MetricsFields f = top.at(*c, "capacity");
    f.need("max_tokens", m.capacity_max_tokens);
    f.need("max_rows", m.capacity_max_rows);
    f.need("basis", m.capacity_basis);
  }
  top.need("model_flops", m.model_flops);
  top.get("gpu_sample_interval_seconds", m.gpu_sample_interval_seconds);
  top.get("gpu_samples", m.gpu_samples);
  const MetricsJson& gpus = top.array("gpus", false);
  for (size_t i = 0; i < gpus.size(); ++i) {
    MetricsFields f = top.at(gpus[i], fmt::format("gpus[{}]", i));
    GpuUsage g;
    for_each_gpu_usage_field(g, [&](const char* key, auto& value) { f.need(key, value); });
    m.gpus.push_back(g);
  }
  top.get("gpu_monitor", m.gpu_monitor);
  if (const MetricsJson* r = top.object("resume", false)) {
    MetricsFields f = top.at(*r, "resume");
    f.need("checkpoint", m.checkpoint);
    f.need("resumed", m.resumed);
    f.need("resumed_rows", m.resumed_rows);
    f.need("already_complete", m.already_complete);
    f.need("checkpoints", m.checkpoints);
    f.need("checkpoint_seconds", m.checkpoint_seconds);
  }
  return m;
}

}  // namespace

Result<RunMetrics> parse_run_metrics(std::string_view json, const std::string& origin) {
  MetricsJson j = MetricsJson::parse(json.begin(), json.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return corruption(fmt::format("{}: not a JSON object", origin));
  try {
    return read_metrics_fields(j, origin);
  } catch (const MetricsFieldError& e) {
    return corruption(e.message);
  }
}

std::string RunMetrics::to_summary() const {
  std::string out;
  auto line = std::back_inserter(out);
  if (already_complete) {
    return fmt::format(
        "complete        nothing to do: --resume found every output in place (no checkpoint left: "
        "the job finished)\n");
  }
  if (resumed) {
    fmt::format_to(line,
                   "resumed         after {} rows an earlier run did (checkpoint {}); the figures below are "
                   "this run's\n",
                   resumed_rows, checkpoint);
  }
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
  if (checkpoints > 0) {
    fmt::format_to(line, "checkpoints     {} saved in {:.3f} s ({:.2f}% of the wall time)\n", checkpoints,
                   checkpoint_seconds, wall_seconds > 0 ? 100.0 * checkpoint_seconds / wall_seconds : 0.0);
  }
  fmt::format_to(
      line,
      "config          device {}, precision {}, {} threads (+{} tokenizing), batching {} (batch {} "
      "rows, {} tokens, window {}), max length {}, model {}{}, head {}{}\n",
      device, precision, threads, tokenizer_threads, batching, batch_size, max_batch_tokens, window_rows,
      max_length, model_name, model_synthetic ? " (synthetic)" : "", head_function,
      labels_column ? fmt::format(" (labels at >= {})", threshold) : std::string());
  return out;
}

}  // namespace infercost::pipeline
