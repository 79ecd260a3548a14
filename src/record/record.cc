#include "record/record.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <tuple>

#include "core/json_text.h"

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
  return std::tie(s.machine, s.task, s.device, s.precision, s.batching, s.max_batch_tokens, s.max_length,
                  s.shape, s.data_set, s.threads, s.tokenizer_threads, s.label, s.model, s.synthetic,
                  s.usd_per_hour);
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
  static_cast<RunSettings&>(s) = r.config;
  // Seed batching fills batches by rows only: its max_batch_tokens binds nothing.
  if (s.batching == "seed") s.max_batch_tokens = 0;
  s.machine = r.machine();
  s.shape = r.data.shape;
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

// The fields of a record, each section once, in the order written (the
// schema's, docs/bench-records.md). to_json_line() visits a const record with
// a RecordWriter, parse_record() a fresh one with a Fields reader. `v` offers
//   field(key, member)               a value, a list of values, or stages (name -> seconds);
//   field_if(written, key, member)   written only when `written`, read when present;
//   object(key, fn)                  a nested object, fn(sub) lists its fields;
//   optional(key, member, fn)        a std::optional section, null when empty: fn(value, sub);
//   list(key, items, fn)             an array of objects, fn(item, sub) lists an item's;
//   check(ok, path, expected)        what a reader refuses (FieldError) where !ok.

template <typename V>
void spread_fields(auto& s, V& o) {
  o.field("median", s.median);
  o.field("min", s.min);
  o.field("max", s.max);
}

template <typename V>
void config_fields(auto& c, V& o) {
  o.field_if(c.task != "classify", "task", c.task);
  o.check(c.task == "classify" || c.task == "embed", "config.task", "\"classify\" or \"embed\"");
  o.field("device", c.device);
  o.field("precision", c.precision);
  o.field("batching", c.batching);
  o.field("batch_size", c.batch_size);
  o.field("batch_size_rule", c.batch_size_rule);
  o.field("max_batch_tokens", c.max_batch_tokens);
  o.field("threads", c.threads);
  o.field("tokenizer_threads", c.tokenizer_threads);
  o.field("max_length", c.max_length);
}

template <typename V>
void instance_fields(auto& i, V& o) {
  o.field("name", i.name);
  o.field("price_list", i.price_list);
  o.field("price_source", i.price_source);
  o.field("price_date", i.price_date);
  o.field("on_demand_usd_per_hour", i.on_demand_usd_per_hour);
  o.field("spot_discount", i.spot_discount);
  o.field("platform_usd_per_hour", i.platform_usd_per_hour);
  o.field("machines", i.machines);
  o.field("usd_per_hour", i.usd_per_hour);
  o.field("gpus", i.gpus);
  o.field("gpu", i.gpu);
  o.field("vcpus", i.vcpus);
  o.check(!i.name.empty(), "instance.name", "a non-empty string");
}

template <typename V>
void hardware_fields(auto& h, V& o) {
  o.field("hostname", h.hostname);
  o.field("cpu_model", h.cpu_model);
  o.field("logical_cpus", h.logical_cpus);
  o.field("isa", h.isa);
  o.field("memory_bytes", h.memory_bytes);
  o.list("gpus", h.gpus, [](auto& g, auto& go) {
    go.field("index", g.index);
    go.field("name", g.name);
    go.field("memory_bytes", g.memory_bytes);
    go.field("compute_capability", g.compute_capability);
    go.field("driver", g.driver);
  });
}

template <typename V>
void software_fields(auto& s, V& o) {
  o.field("infercost", s.infercost);
  o.field("git", s.git);
  o.field("compiler", s.compiler);
  o.field("onednn", s.onednn);
  o.field("os", s.os);
  o.field("kernel", s.kernel);
}

template <typename V>
void model_fields(auto& m, V& o) {
  o.field("name", m.name);
  o.field("architecture", m.architecture);
  o.field("synthetic", m.synthetic);
  o.field("parameters", m.parameters);
  o.field("layers", m.layers);
  o.field("hidden", m.hidden);
  o.field("heads", m.heads);
  o.field("intermediate", m.intermediate);
  o.field("vocab", m.vocab);
  o.field_if(m.glu, "glu", m.glu);
  o.field_if(!m.attention_windows.empty(), "attention_windows", m.attention_windows);
  o.field_if(m.relative_terms > 0, "relative_terms", m.relative_terms);
}

template <typename V>
void data_fields(auto& d, V& o) {
  o.field("shape", d.shape);
  o.field("inputs", d.inputs);
  o.field("files", d.files);
  o.field("bytes", d.bytes);
  o.field("rows", d.rows);
  o.field("tokens", d.tokens);
  o.field("length_edges", d.length_edges);
  o.field("length_counts", d.length_counts);
  o.field("content_sha256", d.content_sha256);
  o.check(d.length_edges.size() == d.length_counts.size(), "data.length_counts",
          "as many counts as data.length_edges");
}

template <typename V>
void repetition_fields(auto& rep, V& o) {
  o.field("wall_seconds", rep.wall_seconds);
  o.field("rows_per_second", rep.rows_per_second);
  o.field("tokens_per_second", rep.tokens_per_second);
  o.field("peak_rss_bytes", rep.peak_rss_bytes);
  o.field("stages", rep.stage_seconds);
}

template <typename V>
void monitor_fields(auto& m, V& o) {
  o.field("interval_seconds", m.interval_seconds);
  o.field("samples", m.samples);
  o.field("cpu_busy_mean", m.cpu_busy_mean);
  o.field("cpu_busy_peak", m.cpu_busy_peak);
  o.field("rss_mean_bytes", m.rss_mean_bytes);
  o.field("rss_peak_bytes", m.rss_peak_bytes);
  o.list("gpus", m.gpus, [](auto& g, auto& go) {
    for_each_gpu_usage_field(g, [&](const char* key, auto& value) { go.field(key, value); });
  });
}

template <typename V>
void cost_fields(auto& c, V& o) {
  cost::for_each_cost_estimate_field(c, [&](const char* key, auto& value) { o.field(key, value); });
}

template <typename V>
void for_each_record_field(auto& r, V& v) {
  v.field("schema", r.schema);
  v.field("sweep_id", r.sweep_id);
  v.field("point", r.point);
  v.field("points", r.points);
  v.field("started_at", r.started_at);
  v.field("label", r.label);
  v.field("command", r.command);
  v.field("run_command", r.run_command);
  v.field("status", r.status);
  v.field_if(!r.ok(), "error", r.error);
  v.check(r.status == "ok" || r.status == "failed", "status", "\"ok\" or \"failed\"");
  v.object("config", [&](auto& o) { config_fields(r.config, o); });
  v.optional("instance", r.instance, [](auto& i, auto& o) { instance_fields(i, o); });
  v.object("hardware", [&](auto& o) { hardware_fields(r.hardware, o); });
  v.object("software", [&](auto& o) { software_fields(r.software, o); });
  v.object("model", [&](auto& o) { model_fields(r.model, o); });
  v.object("data", [&](auto& o) { data_fields(r.data, o); });
  v.field("warmup", r.warmup);
  v.field("min_repetitions", r.min_repetitions);
  v.field("min_seconds", r.min_seconds);
  v.list("repetitions", r.repetitions, [](auto& rep, auto& o) { repetition_fields(rep, o); });
  v.object("wall_seconds", [&](auto& o) { spread_fields(r.wall_seconds, o); });
  v.object("rows_per_second", [&](auto& o) { spread_fields(r.rows_per_second, o); });
  v.object("tokens_per_second", [&](auto& o) { spread_fields(r.tokens_per_second, o); });
  v.field("rows", r.rows);
  v.field("tokens", r.tokens);
  v.field("padded_tokens", r.padded_tokens);
  v.field("computed_tokens", r.computed_tokens);
  v.field("padding_efficiency", r.padding_efficiency);
  v.field("batch_fill", r.batch_fill);
  v.field("stages", r.stage_seconds);
  v.field("peak_rss_bytes", r.peak_rss_bytes);
  v.object("monitor", [&](auto& o) { monitor_fields(r.monitor, o); });
  v.optional("cost", r.cost, [](auto& c, auto& o) { cost_fields(c, o); });
}

// Writes the fields for_each_record_field lists into one JSON object.
class RecordWriter {
 public:
  explicit RecordWriter(Json& j) : j_(j) {}

  template <typename T>
  void field(const char* key, const T& value) {
    if constexpr (std::is_same_v<T, std::map<std::string, double>>) {
      Json stages = Json::object();
      for (const auto& [name, seconds] : value) stages[name] = seconds;
      j_[key] = std::move(stages);
    } else {
      j_[key] = value;
    }
  }
  template <typename T>
  void field_if(bool written, const char* key, const T& value) {
    if (written) field(key, value);
  }
  template <typename F>
  void object(const char* key, F&& fields) {
    j_[key] = object_of(fields);
  }
  template <typename T, typename F>
  void optional(const char* key, const std::optional<T>& value, F&& fields) {
    j_[key] = value ? object_of([&](RecordWriter& w) { fields(*value, w); }) : Json(nullptr);
  }
  template <typename T, typename F>
  void list(const char* key, const std::vector<T>& items, F&& fields) {
    Json out = Json::array();
    for (const T& item : items) out.push_back(object_of([&](RecordWriter& w) { fields(item, w); }));
    j_[key] = std::move(out);
  }
  void check(bool, const char*, const char*) {}

 private:
  template <typename F>
  static Json object_of(F&& fields) {
    Json sub = Json::object();
    RecordWriter w(sub);
    fields(w);
    return sub;
  }

  Json& j_;
};

}  // namespace

std::string to_json_line(const Record& r) {
  Json j;
  RecordWriter writer(j);
  for_each_record_field(r, writer);
  return j.dump();
}

namespace {

template <typename T>
struct IsList : std::false_type {};
template <typename T>
struct IsList<std::vector<T>> : std::true_type {};

// A field of the wrong type; names it by its path ("config.batch_size").
struct FieldError {
  std::string path;
  std::string expected;
};

// Reads fields of one JSON object (the visitor of for_each_record_field). A
// missing field keeps the default; a null one too, except a number, where
// null is how a NaN was written (JSON has no NaN) and reads back as NaN; a
// field of the wrong type throws FieldError.
class Fields {
 public:
  Fields(const Json& j, std::string path) : j_(j), path_(std::move(path)) {}

  template <typename T>
  void field(const char* key, T& out) const {
    if constexpr (std::is_same_v<T, std::map<std::string, double>>) {
      get_stages(key, out);
    } else if constexpr (IsList<T>::value) {
      get_list(key, out);
    } else {
      get(key, out);
    }
  }
  template <typename T>
  void field_if(bool, const char* key, T& out) const {
    field(key, out);  // read whenever present
  }
  template <typename F>
  void object(const char* key, F&& fields) const {
    if (const Json* v = find_as(key, &Json::is_object, "an object")) {
      Fields sub(*v, where(key));
      fields(sub);
    }
  }
  template <typename T, typename F>
  void optional(const char* key, std::optional<T>& out, F&& fields) const {
    if (const Json* v = find_as(key, &Json::is_object, "an object")) {
      T value;
      Fields sub(*v, where(key));
      fields(value, sub);
      out = std::move(value);
    }
  }
  template <typename T, typename F>
  void list(const char* key, std::vector<T>& items, F&& fields) const {
    const Json* v = find_as(key, &Json::is_array, "an array");
    if (v == nullptr) return;
    for (size_t k = 0; k < v->size(); ++k) {
      const std::string path = fmt::format("{}[{}]", where(key), k);
      if (!(*v)[k].is_object()) throw FieldError{path, "an object"};
      T item;
      Fields sub((*v)[k], path);
      fields(item, sub);
      items.push_back(std::move(item));
    }
  }
  void check(bool ok, const char* path, const char* expected) const {
    if (!ok) throw FieldError{path, expected};
  }

 private:
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
    const Json* v = find_as(key, &Json::is_array, "an array");
    if (v == nullptr) return;
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
    const Json* v = find_as(key, &Json::is_object, "an object");
    if (v == nullptr) return;
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

  std::string where(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  bool is_null(const char* key) const {
    auto it = j_.find(key);
    return it != j_.end() && it->is_null();
  }
  const Json* find(const char* key) const {
    auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return nullptr;
    return &*it;
  }
  // The value at `key`, or null when missing or null; throws FieldError
  // naming `kind` when it is not one.
  const Json* find_as(const char* key, bool (Json::*is_kind)() const noexcept, const char* kind) const {
    const Json* v = find(key);
    if (v != nullptr && !(v->*is_kind)()) throw FieldError{where(key), kind};
    return v;
  }
  const Json& j_;
  std::string path_;
};

}  // namespace

Result<Record> parse_record(std::string_view line, const std::string& origin) {
  INFERCOST_RETURN_IF_ERROR(check_json_nesting(line, origin));
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
    Record r;
    Fields top(j, "");
    for_each_record_field(r, top);
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
