#include "record/record.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <tuple>

namespace infercost::record {

using Json = nlohmann::ordered_json;

Spread spread_of(std::vector<double> values) {
  Spread s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  s.min = values.front();
  s.max = values.back();
  s.median = n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
  return s;
}

std::string Record::machine() const {
  if (instance && !instance->name.empty()) return instance->name;
  if (!label.empty()) return label;
  return hardware.hostname;
}

namespace {

auto tied(const Setup& s) {
  return std::tie(s.machine, s.device, s.precision, s.batching, s.max_batch_tokens, s.max_length, s.shape,
                  s.data_set, s.threads, s.tokenizer_threads, s.label, s.model, s.synthetic, s.usd_per_hour);
}

}  // namespace

bool Setup::operator<(const Setup& o) const {
  if (machine != o.machine) return machine < o.machine;
  if (device != o.device) return device < o.device;
  const int pa = precision_rank(precision), pb = precision_rank(o.precision);
  if (pa != pb) return pa < pb;
  return tied(*this) < tied(o);
}

bool Setup::operator==(const Setup& o) const {
  return tied(*this) == tied(o);
}

Setup setup_of(const Record& r, double usd_per_hour) {
  Setup s;
  s.machine = r.machine();
  s.device = r.config.device;
  s.precision = r.config.precision;
  s.batching = r.config.batching;
  // Seed batching fills batches by rows only: its max_batch_tokens binds nothing.
  s.max_batch_tokens = r.config.batching == "seed" ? 0 : r.config.max_batch_tokens;
  s.max_length = r.config.max_length;
  s.shape = r.data.shape;
  s.threads = r.config.threads;
  s.tokenizer_threads = r.config.tokenizer_threads;
  s.label = r.label == s.machine ? "" : r.label;
  s.model = r.model.name;
  s.synthetic = r.model.synthetic;
  s.usd_per_hour = usd_per_hour;
  return s;
}

int precision_rank(const std::string& precision) {
  static const char* kOrder[] = {"fp32", "bf16", "fp16", "int8"};
  for (int i = 0; i < 4; ++i) {
    if (precision == kOrder[i]) return i;
  }
  return 4;
}

namespace {

Json spread_json(const Spread& s) {
  return Json{{"median", s.median}, {"min", s.min}, {"max", s.max}};
}

Json stages_json(const std::map<std::string, double>& stages) {
  Json j = Json::object();
  for (const auto& [name, seconds] : stages) j[name] = seconds;
  return j;
}

}  // namespace

std::string to_json_line(const Record& r) {
  Json j;
  j["schema"] = r.schema;
  j["sweep_id"] = r.sweep_id;
  j["point"] = r.point;
  j["points"] = r.points;
  j["started_at"] = r.started_at;
  j["label"] = r.label;
  j["command"] = r.command;
  j["run_command"] = r.run_command;
  j["status"] = r.status;
  if (!r.ok()) j["error"] = r.error;
  j["config"] = {{"device", r.config.device},
                 {"precision", r.config.precision},
                 {"batching", r.config.batching},
                 {"batch_size", r.config.batch_size},
                 {"batch_size_rule", r.config.batch_size_rule},
                 {"max_batch_tokens", r.config.max_batch_tokens},
                 {"threads", r.config.threads},
                 {"tokenizer_threads", r.config.tokenizer_threads},
                 {"max_length", r.config.max_length}};
  if (r.instance) {
    const InstanceInfo& i = *r.instance;
    j["instance"] = {{"name", i.name},
                     {"price_list", i.price_list},
                     {"price_source", i.price_source},
                     {"price_date", i.price_date},
                     {"on_demand_usd_per_hour", i.on_demand_usd_per_hour},
                     {"spot_discount", i.spot_discount},
                     {"platform_usd_per_hour", i.platform_usd_per_hour},
                     {"machines", i.machines},
                     {"usd_per_hour", i.usd_per_hour},
                     {"gpus", i.gpus},
                     {"gpu", i.gpu},
                     {"vcpus", i.vcpus}};
  } else {
    j["instance"] = nullptr;
  }
  Json gpus = Json::array();
  for (const GpuInfo& g : r.hardware.gpus) {
    gpus.push_back({{"index", g.index},
                    {"name", g.name},
                    {"memory_bytes", g.memory_bytes},
                    {"compute_capability", g.compute_capability},
                    {"driver", g.driver}});
  }
  j["hardware"] = {{"hostname", r.hardware.hostname},         {"cpu_model", r.hardware.cpu_model},
                   {"logical_cpus", r.hardware.logical_cpus}, {"isa", r.hardware.isa},
                   {"memory_bytes", r.hardware.memory_bytes}, {"gpus", gpus}};
  j["software"] = {
      {"infercost", r.software.infercost}, {"git", r.software.git}, {"compiler", r.software.compiler},
      {"onednn", r.software.onednn},       {"os", r.software.os},   {"kernel", r.software.kernel}};
  j["model"] = {{"name", r.model.name},           {"architecture", r.model.architecture},
                {"synthetic", r.model.synthetic}, {"parameters", r.model.parameters},
                {"layers", r.model.layers},       {"hidden", r.model.hidden},
                {"heads", r.model.heads},         {"intermediate", r.model.intermediate},
                {"vocab", r.model.vocab}};
  j["data"] = {{"shape", r.data.shape},
               {"inputs", r.data.inputs},
               {"files", r.data.files},
               {"bytes", r.data.bytes},
               {"rows", r.data.rows},
               {"tokens", r.data.tokens},
               {"length_edges", r.data.length_edges},
               {"length_counts", r.data.length_counts},
               {"content_sha256", r.data.content_sha256}};
  j["warmup"] = r.warmup;
  j["min_repetitions"] = r.min_repetitions;
  j["min_seconds"] = r.min_seconds;
  Json reps = Json::array();
  for (const Repetition& rep : r.repetitions) {
    reps.push_back({{"wall_seconds", rep.wall_seconds},
                    {"rows_per_second", rep.rows_per_second},
                    {"tokens_per_second", rep.tokens_per_second},
                    {"peak_rss_bytes", rep.peak_rss_bytes},
                    {"stages", stages_json(rep.stage_seconds)}});
  }
  j["repetitions"] = reps;
  j["wall_seconds"] = spread_json(r.wall_seconds);
  j["rows_per_second"] = spread_json(r.rows_per_second);
  j["tokens_per_second"] = spread_json(r.tokens_per_second);
  j["rows"] = r.rows;
  j["tokens"] = r.tokens;
  j["padded_tokens"] = r.padded_tokens;
  j["computed_tokens"] = r.computed_tokens;
  j["padding_efficiency"] = r.padding_efficiency;
  j["batch_fill"] = r.batch_fill;
  j["stages"] = stages_json(r.stage_seconds);
  j["peak_rss_bytes"] = r.peak_rss_bytes;
  Json gpu_usage = Json::array();
  for (const GpuUsage& g : r.monitor.gpus) {
    Json usage;
    for_each_gpu_usage_field(g, [&](const char* key, const auto& value) { usage[key] = value; });
    gpu_usage.push_back(std::move(usage));
  }
  j["monitor"] = {{"interval_seconds", r.monitor.interval_seconds},
                  {"samples", r.monitor.samples},
                  {"cpu_busy_mean", r.monitor.cpu_busy_mean},
                  {"cpu_busy_peak", r.monitor.cpu_busy_peak},
                  {"rss_mean_bytes", r.monitor.rss_mean_bytes},
                  {"rss_peak_bytes", r.monitor.rss_peak_bytes},
                  {"gpus", gpu_usage}};
  if (r.cost) {
    const CostInfo& c = *r.cost;
    j["cost"] = {{"usd_per_hour", c.usd_per_hour},
                 {"cost_to_solution_usd", c.cost_to_solution_usd},
                 {"usd_per_million_rows", c.usd_per_million_rows},
                 {"usd_per_million_tokens", c.usd_per_million_tokens},
                 {"corpus_rows", c.corpus_rows},
                 {"corpus_seconds", c.corpus_seconds},
                 {"corpus_usd", c.corpus_usd}};
  } else {
    j["cost"] = nullptr;
  }
  return j.dump();
}

namespace {

// A field of the wrong type; names it by its path ("config.batch_size").
struct FieldError {
  std::string path;
  std::string expected;
};

// Reads fields of one JSON object. A missing field keeps the default; a
// null one too, except a number, where null is how a NaN was written (JSON
// has no NaN) and reads back as NaN; a field of the wrong type throws
// FieldError.
class Fields {
 public:
  Fields(const Json& j, std::string path) : j_(j), path_(std::move(path)) {}

  template <typename T>
  void get(const char* key, T& out) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (is_null(key)) {
        out = std::numeric_limits<T>::quiet_NaN();
        return;
      }
    }
    const Json* v = find(key);
    if (v == nullptr) return;
    if constexpr (std::is_same_v<T, bool>) {
      if (!v->is_boolean()) throw FieldError{where(key), "a boolean"};
    } else if constexpr (std::is_integral_v<T>) {
      if (!v->is_number_integer()) throw FieldError{where(key), "an integer"};
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!v->is_number()) throw FieldError{where(key), "a number"};
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!v->is_string()) throw FieldError{where(key), "a string"};
    }
    out = v->get<T>();
  }

  template <typename T>
  void get_list(const char* key, std::vector<T>& out) const {
    const Json* v = find(key);
    if (v == nullptr) return;
    if (!v->is_array()) throw FieldError{where(key), "an array"};
    out.clear();
    for (size_t i = 0; i < v->size(); ++i) {
      const Json& e = (*v)[i];
      bool good = false;
      if constexpr (std::is_same_v<T, std::string>) {
        good = e.is_string();
      } else if constexpr (std::is_integral_v<T>) {
        good = e.is_number_integer();
      } else {
        if (e.is_null()) {  // a NaN, written as null
          out.push_back(std::numeric_limits<T>::quiet_NaN());
          continue;
        }
        good = e.is_number();
      }
      if (!good) throw FieldError{fmt::format("{}[{}]", where(key), i), "a value of the list's type"};
      out.push_back(e.get<T>());
    }
  }

  void get_stages(const char* key, std::map<std::string, double>& out) const {
    const Json* v = find(key);
    if (v == nullptr) return;
    if (!v->is_object()) throw FieldError{where(key), "an object"};
    out.clear();
    for (auto it = v->begin(); it != v->end(); ++it) {
      if (it->is_null()) {  // a NaN, written as null
        out[it.key()] = std::numeric_limits<double>::quiet_NaN();
        continue;
      }
      if (!it->is_number()) throw FieldError{where(key) + "." + it.key(), "a number"};
      out[it.key()] = it->get<double>();
    }
  }

  void get_spread(const char* key, Spread& out) const {
    if (const Json* v = object(key)) {
      Fields f(*v, where(key));
      f.get("median", out.median);
      f.get("min", out.min);
      f.get("max", out.max);
    }
  }

  // The object at `key`, or null when missing or null; throws if not an object.
  const Json* object(const char* key) const {
    const Json* v = find(key);
    if (v != nullptr && !v->is_object()) throw FieldError{where(key), "an object"};
    return v;
  }
  // The array at `key`, or null when missing or null; throws if not an array.
  const Json* array(const char* key) const {
    const Json* v = find(key);
    if (v != nullptr && !v->is_array()) throw FieldError{where(key), "an array"};
    return v;
  }
  std::string where(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

 private:
  bool is_null(const char* key) const {
    auto it = j_.find(key);
    return it != j_.end() && it->is_null();
  }
  const Json* find(const char* key) const {
    auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return nullptr;
    return &*it;
  }
  const Json& j_;
  std::string path_;
};

void check_object(const Json& j, const std::string& path) {
  if (!j.is_object()) throw FieldError{path, "an object"};
}

Record parse_fields(const Json& j) {
  Record r;
  Fields top(j, "");
  top.get("sweep_id", r.sweep_id);
  top.get("point", r.point);
  top.get("points", r.points);
  top.get("started_at", r.started_at);
  top.get("label", r.label);
  top.get_list("command", r.command);
  top.get_list("run_command", r.run_command);
  top.get("status", r.status);
  top.get("error", r.error);
  if (r.status != "ok" && r.status != "failed") throw FieldError{"status", "\"ok\" or \"failed\""};
  if (const Json* c = top.object("config")) {
    Fields f(*c, "config");
    f.get("device", r.config.device);
    f.get("precision", r.config.precision);
    f.get("batching", r.config.batching);
    f.get("batch_size", r.config.batch_size);
    f.get("batch_size_rule", r.config.batch_size_rule);
    f.get("max_batch_tokens", r.config.max_batch_tokens);
    f.get("threads", r.config.threads);
    f.get("tokenizer_threads", r.config.tokenizer_threads);
    f.get("max_length", r.config.max_length);
  }
  if (const Json* i = top.object("instance")) {
    Fields f(*i, "instance");
    InstanceInfo info;
    f.get("name", info.name);
    f.get("price_list", info.price_list);
    f.get("price_source", info.price_source);
    f.get("price_date", info.price_date);
    f.get("on_demand_usd_per_hour", info.on_demand_usd_per_hour);
    f.get("spot_discount", info.spot_discount);
    f.get("platform_usd_per_hour", info.platform_usd_per_hour);
    f.get("machines", info.machines);
    f.get("usd_per_hour", info.usd_per_hour);
    f.get("gpus", info.gpus);
    f.get("gpu", info.gpu);
    f.get("vcpus", info.vcpus);
    if (info.name.empty()) throw FieldError{"instance.name", "a non-empty string"};
    r.instance = info;
  }
  if (const Json* h = top.object("hardware")) {
    Fields f(*h, "hardware");
    f.get("hostname", r.hardware.hostname);
    f.get("cpu_model", r.hardware.cpu_model);
    f.get("logical_cpus", r.hardware.logical_cpus);
    f.get("isa", r.hardware.isa);
    f.get("memory_bytes", r.hardware.memory_bytes);
    if (const Json* gpus = f.array("gpus")) {
      for (size_t k = 0; k < gpus->size(); ++k) {
        const std::string path = fmt::format("hardware.gpus[{}]", k);
        check_object((*gpus)[k], path);
        Fields g((*gpus)[k], path);
        GpuInfo info;
        g.get("index", info.index);
        g.get("name", info.name);
        g.get("memory_bytes", info.memory_bytes);
        g.get("compute_capability", info.compute_capability);
        g.get("driver", info.driver);
        r.hardware.gpus.push_back(info);
      }
    }
  }
  if (const Json* s = top.object("software")) {
    Fields f(*s, "software");
    f.get("infercost", r.software.infercost);
    f.get("git", r.software.git);
    f.get("compiler", r.software.compiler);
    f.get("onednn", r.software.onednn);
    f.get("os", r.software.os);
    f.get("kernel", r.software.kernel);
  }
  if (const Json* m = top.object("model")) {
    Fields f(*m, "model");
    f.get("name", r.model.name);
    f.get("architecture", r.model.architecture);
    f.get("synthetic", r.model.synthetic);
    f.get("parameters", r.model.parameters);
    f.get("layers", r.model.layers);
    f.get("hidden", r.model.hidden);
    f.get("heads", r.model.heads);
    f.get("intermediate", r.model.intermediate);
    f.get("vocab", r.model.vocab);
  }
  if (const Json* d = top.object("data")) {
    Fields f(*d, "data");
    f.get("shape", r.data.shape);
    f.get_list("inputs", r.data.inputs);
    f.get("files", r.data.files);
    f.get("bytes", r.data.bytes);
    f.get("rows", r.data.rows);
    f.get("tokens", r.data.tokens);
    f.get_list("length_edges", r.data.length_edges);
    f.get_list("length_counts", r.data.length_counts);
    f.get("content_sha256", r.data.content_sha256);
    if (r.data.length_edges.size() != r.data.length_counts.size()) {
      throw FieldError{"data.length_counts", "as many counts as data.length_edges"};
    }
  }
  top.get("warmup", r.warmup);
  top.get("min_repetitions", r.min_repetitions);
  top.get("min_seconds", r.min_seconds);
  if (const Json* reps = top.array("repetitions")) {
    for (size_t k = 0; k < reps->size(); ++k) {
      const std::string path = fmt::format("repetitions[{}]", k);
      check_object((*reps)[k], path);
      Fields f((*reps)[k], path);
      Repetition rep;
      f.get("wall_seconds", rep.wall_seconds);
      f.get("rows_per_second", rep.rows_per_second);
      f.get("tokens_per_second", rep.tokens_per_second);
      f.get("peak_rss_bytes", rep.peak_rss_bytes);
      f.get_stages("stages", rep.stage_seconds);
      r.repetitions.push_back(rep);
    }
  }
  top.get_spread("wall_seconds", r.wall_seconds);
  top.get_spread("rows_per_second", r.rows_per_second);
  top.get_spread("tokens_per_second", r.tokens_per_second);
  top.get("rows", r.rows);
  top.get("tokens", r.tokens);
  top.get("padded_tokens", r.padded_tokens);
  top.get("computed_tokens", r.computed_tokens);
  top.get("padding_efficiency", r.padding_efficiency);
  top.get("batch_fill", r.batch_fill);
  top.get_stages("stages", r.stage_seconds);
  top.get("peak_rss_bytes", r.peak_rss_bytes);
  if (const Json* m = top.object("monitor")) {
    Fields f(*m, "monitor");
    f.get("interval_seconds", r.monitor.interval_seconds);
    f.get("samples", r.monitor.samples);
    f.get("cpu_busy_mean", r.monitor.cpu_busy_mean);
    f.get("cpu_busy_peak", r.monitor.cpu_busy_peak);
    f.get("rss_mean_bytes", r.monitor.rss_mean_bytes);
    f.get("rss_peak_bytes", r.monitor.rss_peak_bytes);
    if (const Json* gpus = f.array("gpus")) {
      for (size_t k = 0; k < gpus->size(); ++k) {
        const std::string path = fmt::format("monitor.gpus[{}]", k);
        check_object((*gpus)[k], path);
        Fields g((*gpus)[k], path);
        GpuUsage u;
        for_each_gpu_usage_field(u, [&](const char* key, auto& value) { g.get(key, value); });
        r.monitor.gpus.push_back(u);
      }
    }
  }
  if (const Json* c = top.object("cost")) {
    Fields f(*c, "cost");
    CostInfo info;
    f.get("usd_per_hour", info.usd_per_hour);
    f.get("cost_to_solution_usd", info.cost_to_solution_usd);
    f.get("usd_per_million_rows", info.usd_per_million_rows);
    f.get("usd_per_million_tokens", info.usd_per_million_tokens);
    f.get("corpus_rows", info.corpus_rows);
    f.get("corpus_seconds", info.corpus_seconds);
    f.get("corpus_usd", info.corpus_usd);
    r.cost = info;
  }
  return r;
}

}  // namespace

Result<Record> parse_record(std::string_view line, const std::string& origin) {
  Json j = Json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return corruption(fmt::format("{}: not valid JSON", origin));
  if (!j.is_object()) return corruption(fmt::format("{}: a record must be a JSON object", origin));
  auto schema = j.find("schema");
  if (schema == j.end() || !schema->is_string()) {
    return corruption(fmt::format("{}: no \"schema\" string; not an infercost benchmark record", origin));
  }
  const std::string name = schema->get<std::string>();
  const std::string prefix = "infercost.bench/";
  if (name.rfind(prefix, 0) != 0) {
    return corruption(fmt::format("{}: schema \"{}\" is not an infercost benchmark record", origin, name));
  }
  const std::string version = name.substr(prefix.size());
  const std::string major = version.substr(0, version.find('.'));
  if (major != "1") {
    return unsupported(
        fmt::format("{}: schema \"{}\": this infercost reads major version 1 ({})", origin, name, kSchema));
  }
  try {
    Record r = parse_fields(j);
    r.schema = name;
    return r;
  } catch (const FieldError& e) {
    return corruption(fmt::format("{}: \"{}\" must be {}", origin, e.path, e.expected));
  }
}

Result<std::vector<SourcedRecord>> load_sourced_records(const std::vector<std::string>& paths) {
  std::vector<SourcedRecord> records;
  for (const std::string& path : paths) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return not_found(fmt::format("{}: cannot open benchmark records", path));
    std::string line;
    int64_t number = 0;
    while (std::getline(in, line)) {
      ++number;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      std::string origin = fmt::format("{}: line {}", path, number);
      INFERCOST_ASSIGN_OR_RETURN(Record r, parse_record(line, origin));
      records.push_back({std::move(r), std::move(origin)});
    }
    if (in.bad()) return io_error(fmt::format("{}: read error", path));
  }
  return records;
}

Result<std::vector<Record>> load_records(const std::vector<std::string>& paths) {
  INFERCOST_ASSIGN_OR_RETURN(std::vector<SourcedRecord> sourced, load_sourced_records(paths));
  std::vector<Record> records;
  records.reserve(sourced.size());
  for (SourcedRecord& s : sourced) records.push_back(std::move(s.record));
  return records;
}

}  // namespace infercost::record
