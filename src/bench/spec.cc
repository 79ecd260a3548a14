#include "bench/spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "backend/backend.h"
#include "core/device.h"
#include "core/file.h"
#include "core/json_text.h"
#include "corpus/tweets.h"
#include "engine/run_cost.h"
#include "engine/settings.h"
#include "model/embedding.h"
#include "run/runner.h"
#include "text/tokenizer.h"

namespace infercost::bench {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A whole number in [0, INT_MAX]; nullopt otherwise.
std::optional<int> parse_count(std::string_view s) {
  int value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || value < 0) return std::nullopt;
  return value;
}

// The flag that sets an axis, for messages.
std::string flag_of(std::string_view key) {
  std::string flag = "--" + std::string(key);
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

// Splits every value on commas; empty pieces are an error.
Result<std::vector<std::string>> split_values(std::string_view key, const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const std::string& value : values) {
    size_t start = 0;
    while (true) {
      const size_t comma = value.find(',', start);
      std::string_view piece = trim(std::string_view(value).substr(
          start, comma == std::string::npos ? std::string::npos : comma - start));
      if (piece.empty()) {
        return invalid_argument(fmt::format("{}: empty value in '{}'", flag_of(key), value));
      }
      out.emplace_back(piece);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}

// cuda:N or cuda:N,M: a device that names its GPUs one by one.
bool names_gpus(const std::string& device) {
  Result<DeviceSpec> spec = parse_device(device);
  return spec.ok() && spec->gpu() && !spec->all;
}

// The device axis: points are separated by ';' or ','; a comma followed by a
// GPU ordinal continues a cuda:N,M list, so "cpu,cuda:0,1;cuda:2" is the
// points cpu, cuda:0,1 and cuda:2.
Result<std::vector<std::string>> split_devices(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const std::string& value : values) {
    size_t start = 0;
    while (true) {
      const size_t semicolon = value.find(';', start);
      const std::string piece =
          value.substr(start, semicolon == std::string::npos ? std::string::npos : semicolon - start);
      if (trim(piece).empty()) return invalid_argument(fmt::format("--device: empty value in '{}'", value));
      INFERCOST_ASSIGN_OR_RETURN(std::vector<std::string> items, split_values("device", {piece}));
      for (size_t i = 0; i < items.size(); ++i) {
        const bool ordinal = items[i].find_first_not_of("0123456789") == std::string::npos;
        if (ordinal && i > 0 && names_gpus(out.back())) {
          (out.back() += ',') += items[i];
        } else {
          out.push_back(items[i]);
        }
      }
      if (semicolon == std::string::npos) break;
      start = semicolon + 1;
    }
  }
  return out;
}

template <typename T>
Status no_duplicates(std::string_view key, const std::vector<T>& values,
                     const std::vector<std::string>& texts) {
  for (size_t i = 0; i < values.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (values[i] == values[j]) {
        return invalid_argument(fmt::format("{} lists '{}' twice", flag_of(key), texts[i]));
      }
    }
  }
  return Status();
}

bool is_known_shape(const std::string& shape) {
  return shape == "files" || corpus::dataset_shape_from_name(shape).ok();
}

}  // namespace

std::string BatchSize::text() const {
  switch (rule) {
    case Rule::kNone: return value == 0 ? "default" : std::to_string(value);
    case Rule::kVcpus: return fmt::format("{}xvcpus", value);
    case Rule::kGpus: return fmt::format("{}xgpus", value);
    case Rule::kAuto: return "auto";
  }
  return "?";
}

std::string max_batch_tokens_text(int max_batch_tokens) {
  if (max_batch_tokens == kAutoMaxBatchTokens) return "auto";
  return max_batch_tokens == 0 ? "default" : std::to_string(max_batch_tokens);
}

Result<BatchSize> parse_batch_size(std::string_view text) {
  const std::string t = lower(trim(text));
  auto bad = [&](std::string_view why) {
    return invalid_argument(fmt::format(
        "--batch-size '{}': {} (accepted: a number of rows, 'default', 'auto', or NxRULE with RULE vcpus or "
        "gpus, e.g. 100xvcpus, 40xgpus)",
        text, why));
  };
  if (t == "default") return BatchSize{};
  if (t == "auto") return BatchSize{BatchSize::Rule::kAuto, 0};
  const size_t x = t.find('x');
  if (x == std::string::npos) {
    std::optional<int> n = parse_count(t);
    if (!n) return bad("not a whole number of rows");
    return BatchSize{BatchSize::Rule::kNone, *n};
  }
  std::optional<int> n = parse_count(trim(std::string_view(t).substr(0, x)));
  if (!n || *n < 1) return bad("the multiplier before 'x' must be a whole number of at least 1");
  const std::string_view rule = trim(std::string_view(t).substr(x + 1));
  if (rule == "vcpus" || rule == "vcpu") return BatchSize{BatchSize::Rule::kVcpus, *n};
  if (rule == "gpus" || rule == "gpu") return BatchSize{BatchSize::Rule::kGpus, *n};
  return bad(fmt::format("unknown rule '{}'", rule));
}

Status set_pooling(SweepSpec& spec, const std::string& pooling) {
  const engine::Setting* s = engine::find_setting("pooling");
  INFERCOST_CHECK(s != nullptr);
  return engine::apply_setting(spec.run, *s, pooling, engine::Spelling::kFlag);
}

int max_repetitions(const SweepSpec& spec) {
  return std::max(spec.repetitions, 100);
}

Status set_axis(Axes& axes, std::string_view key, const std::vector<std::string>& raw) {
  INFERCOST_ASSIGN_OR_RETURN(std::vector<std::string> values,
                             key == "device" ? split_devices(raw) : split_values(key, raw));
  if (values.empty()) return invalid_argument(fmt::format("{}: no value given", flag_of(key)));
  if (key == "batch_size") {
    std::vector<BatchSize> sizes;
    for (const std::string& v : values) {
      INFERCOST_ASSIGN_OR_RETURN(BatchSize size, parse_batch_size(v));
      sizes.push_back(size);
    }
    INFERCOST_RETURN_IF_ERROR(no_duplicates(key, sizes, values));
    axes.batch_sizes = std::move(sizes);
    return Status();
  }
  if (key == "threads" || key == "max_batch_tokens") {
    std::vector<int> numbers;
    const bool tokens = key == "max_batch_tokens";
    for (const std::string& v : values) {
      if (tokens && lower(v) == "auto") {
        numbers.push_back(kAutoMaxBatchTokens);
        continue;
      }
      std::optional<int> n = parse_count(v);
      if (!n) {
        return invalid_argument(fmt::format("{}: '{}' is not a whole number >= 0{}", flag_of(key), v,
                                            tokens ? " or 'auto'" : ""));
      }
      numbers.push_back(*n);
    }
    INFERCOST_RETURN_IF_ERROR(no_duplicates(key, numbers, values));
    (key == "threads" ? axes.threads : axes.max_batch_tokens) = std::move(numbers);
    return Status();
  }
  std::vector<std::string>* target = nullptr;
  if (key == "shape") {
    target = &axes.shapes;
    for (const std::string& v : values) {
      if (!is_known_shape(v)) {
        return invalid_argument(fmt::format(
            "--shape: unknown shape '{}' (accepted: json-3, parquet, parquet-10, jsonl, files)", v));
      }
    }
  } else if (key == "device") {
    target = &axes.devices;
    for (const std::string& v : values) {
      if (!parse_device(v).ok()) {
        return invalid_argument(fmt::format(
            "--device: unknown device '{}' (accepted: cpu, cuda, cuda:all, cuda:N, cuda:N,M,...)", v));
      }
    }
  } else if (key == "precision") {
    target = &axes.precisions;
    for (const std::string& v : values) {
      if (v == "auto") continue;
      Result<backend::Precision> p = backend::parse_precision(v);
      if (!p.ok()) return invalid_argument("--precision: " + p.status().message() + " or auto");
    }
  } else if (key == "batching") {
    target = &axes.batchings;
    for (const std::string& v : values) {
      Result<Batching> b = engine::parse_batching(v);
      if (!b.ok()) return invalid_argument("--batching: " + b.status().message());
    }
  } else {
    return invalid_argument(fmt::format("'{}' is not a sweep axis", key));
  }
  INFERCOST_RETURN_IF_ERROR(no_duplicates(key, values, values));
  *target = std::move(values);
  return Status();
}

void fill_defaults(SweepSpec& spec) {
  Axes& a = spec.axes;
  if (a.shapes.empty()) a.shapes = {spec.inputs.empty() ? "json-3" : "files"};
  if (a.devices.empty()) a.devices = {"cpu"};
  if (a.precisions.empty()) a.precisions = {"auto"};
  if (a.batchings.empty()) a.batchings = {"tokens"};
  if (a.batch_sizes.empty()) a.batch_sizes = {BatchSize{}};
  if (a.threads.empty()) a.threads = {0};
  if (a.max_batch_tokens.empty()) a.max_batch_tokens = {0};
}

Status validate(const SweepSpec& spec) {
  if (spec.model.empty()) return invalid_argument("--model is required (or \"model\" in the sweep file)");
  const Axes& a = spec.axes;
  const bool files = std::find(a.shapes.begin(), a.shapes.end(), "files") != a.shapes.end();
  if (files && spec.inputs.empty()) {
    return invalid_argument("--shape files measures your INPUT files, but none were given");
  }
  if (!files && !spec.inputs.empty()) {
    return invalid_argument(
        "INPUT files were given but --shape does not list 'files'; add it (e.g. --shape files,json-3) or "
        "drop "
        "the inputs");
  }
  const bool any_cpu = std::any_of(a.devices.begin(), a.devices.end(), is_cpu_device);
  for (const BatchSize& b : a.batch_sizes) {
    if (b.rule == BatchSize::Rule::kGpus && any_cpu) {
      return invalid_argument(fmt::format(
          "--batch-size {}: a 'gpus' rule needs a GPU device, but --device includes cpu (sweep cpu points in "
          "a separate bench, or use a vcpus rule)",
          b.text()));
    }
  }
  if (spec.rows < 1) return invalid_argument(fmt::format("--rows must be at least 1, got {}", spec.rows));
  const RunOptions& run = spec.run;
  if (run.max_length != 0) INFERCOST_RETURN_IF_ERROR(text::check_max_length(run.max_length));
  if (run.tokenizer_threads < 0) return invalid_argument("--tokenizer-threads must be >= 0");
  if (run.column.empty()) return invalid_argument("--column must not be empty");
  if (run.pooling && run.task != Task::kEmbed) {
    return invalid_argument("--pooling is for embedding runs: add --embed");
  }
  if (spec.warmup < 0) return invalid_argument(fmt::format("--warmup must be >= 0, got {}", spec.warmup));
  if (spec.repetitions < 1) {
    return invalid_argument(fmt::format("--repetitions must be at least 1, got {}", spec.repetitions));
  }
  if (!(spec.min_seconds >= 0) || !std::isfinite(spec.min_seconds)) {
    return invalid_argument("--min-seconds must be a number >= 0");
  }
  if (!(spec.timeout_seconds >= 0) || !std::isfinite(spec.timeout_seconds)) {
    return invalid_argument("--timeout-seconds must be a number >= 0 (0: no timeout)");
  }
  if (!(spec.monitor_interval >= 0.01 && spec.monitor_interval <= 60)) {
    return invalid_argument(
        fmt::format("--monitor-interval must be between 0.01 and 60 seconds, got {}", spec.monitor_interval));
  }
  if (run.corpus_rows < 0) return invalid_argument("--corpus-rows must be >= 0");
  if (run.instance.empty()) {
    if (!run.price_list.empty() || !run.price_files.empty() || run.corpus_rows > 0) {
      return invalid_argument(
          "--price-list, --prices and --corpus-rows price the points: give --instance NAME too");
    }
  } else {
    Status s = cost::validate(engine::pricing_of(run));
    if (!s.ok())
      return invalid_argument("--spot-discount/--platform-usd-per-hour/--machines: " + s.message());
  }
  return Status();
}

std::string Point::describe() const {
  std::string out =
      fmt::format("batch {} {} {} {} {}", batch_size.text(), precision, batching, shape, device);
  out += threads == 0 ? " all threads" : fmt::format(" {} thread{}", threads, threads == 1 ? "" : "s");
  if (max_batch_tokens > 0 || max_batch_tokens == kAutoMaxBatchTokens)
    out += fmt::format(" max {} tokens", max_batch_tokens_text(max_batch_tokens));
  return out;
}

std::vector<Point> expand_points(const SweepSpec& spec) {
  const Axes& a = spec.axes;
  std::vector<Point> points;
  for (const std::string& shape : a.shapes) {
    for (const std::string& device : a.devices) {
      for (const std::string& precision : a.precisions) {
        for (const std::string& batching : a.batchings) {
          for (const BatchSize& batch_size : a.batch_sizes) {
            for (int threads : a.threads) {
              const bool seed = batching == "seed";
              const std::vector<int> tokens = seed ? std::vector<int>{0} : a.max_batch_tokens;
              for (int max_batch_tokens : tokens) {
                Point p;
                p.index = static_cast<int>(points.size()) + 1;
                p.shape = shape;
                p.device = device;
                p.precision = precision;
                p.batching = batching;
                p.batch_size = batch_size;
                p.threads = threads;
                p.max_batch_tokens = max_batch_tokens;
                points.push_back(std::move(p));
              }
            }
          }
        }
      }
    }
  }
  return points;
}

namespace {

// Stores `value` into `run` as the setting's flag would (checked when the
// sweep was read: set_axis, validate).
void store(RunOptions& run, std::string_view name, const engine::SettingValue& value) {
  const engine::Setting* s = engine::find_setting(name);
  INFERCOST_CHECK(s != nullptr);
  const Status stored = engine::apply_setting(run, *s, value, engine::Spelling::kFlag);
  INFERCOST_CHECK(stored.ok());
}

engine::SettingValue whole_or_auto(bool is_auto, int64_t value) {
  return is_auto ? engine::SettingValue(std::string("auto")) : engine::SettingValue(value);
}

}  // namespace

RunOptions point_settings(const SweepSpec& spec, const Point& point, int batch_size) {
  RunOptions run = spec.run;
  run.force = true;
  store(run, "device", point.device);
  store(run, "precision", point.precision);
  store(run, "batching", point.batching);
  store(run, "batch_size", whole_or_auto(point.batch_size.is_auto(), std::max(batch_size, 0)));
  store(run, "max_batch_tokens",
        whole_or_auto(point.max_batch_tokens == kAutoMaxBatchTokens, std::max(point.max_batch_tokens, 0)));
  store(run, "threads", int64_t{point.threads});
  return run;
}

int resolve_batch_size(const BatchSize& batch_size, int threads, int gpus) {
  switch (batch_size.rule) {
    case BatchSize::Rule::kNone: return batch_size.value;
    case BatchSize::Rule::kVcpus: return batch_size.value * threads;
    case BatchSize::Rule::kGpus: return batch_size.value * gpus;
    case BatchSize::Rule::kAuto: return 0;
  }
  return 0;
}

// ---- sweep files ----

namespace {

using Json = nlohmann::json;

struct FileError {
  std::string message;
};

class SweepFileReader {
 public:
  SweepFileReader(std::string origin, std::string base_dir)
      : origin_(std::move(origin)), base_dir_(std::move(base_dir)) {}

  [[noreturn]] void wrong_type(const std::string& key, std::string_view expected) const {
    throw FileError{fmt::format("{}: key \"{}\" must be {}", origin_, key, expected)};
  }

  std::string string(const std::string& key, const Json& v) const {
    if (!v.is_string()) wrong_type(key, "a string");
    return v.get<std::string>();
  }
  std::string path(const std::string& key, const Json& v) const { return resolve(string(key, v)); }
  std::vector<std::string> paths(const std::string& key, const Json& v) const {
    std::vector<std::string> out;
    if (v.is_string()) {
      out.push_back(resolve(v.get<std::string>()));
      return out;
    }
    if (!v.is_array()) wrong_type(key, "a string or an array of strings");
    for (const Json& e : v) {
      if (!e.is_string()) wrong_type(key, "a string or an array of strings");
      out.push_back(resolve(e.get<std::string>()));
    }
    return out;
  }
  int64_t integer(const std::string& key, const Json& v) const {
    if (!v.is_number_integer()) wrong_type(key, "a whole number");
    return v.get<int64_t>();
  }
  int small_integer(const std::string& key, const Json& v) const {
    const int64_t n = integer(key, v);
    if (n < INT32_MIN || n > INT32_MAX) wrong_type(key, "a whole number of reasonable size");
    return static_cast<int>(n);
  }
  double number(const std::string& key, const Json& v) const {
    if (!v.is_number()) wrong_type(key, "a number");
    return v.get<double>();
  }
  bool boolean(const std::string& key, const Json& v) const {
    if (!v.is_boolean()) wrong_type(key, "true or false");
    return v.get<bool>();
  }
  // An axis: a value or an array of values; numbers allowed where `numeric`.
  std::vector<std::string> axis(const std::string& key, const Json& v, bool numeric) const {
    const char* expected =
        numeric ? "a string, a whole number, or an array of them" : "a string or an array of strings";
    auto one = [&](const Json& e) -> std::string {
      if (e.is_string()) return e.get<std::string>();
      if (numeric && e.is_number_integer()) return std::to_string(e.get<int64_t>());
      wrong_type(key, expected);
    };
    std::vector<std::string> out;
    if (v.is_array()) {
      if (v.empty()) wrong_type(key, std::string(expected) + " (not an empty array)");
      for (const Json& e : v) out.push_back(one(e));
    } else {
      out.push_back(one(v));
    }
    return out;
  }
  const std::string& origin() const { return origin_; }

 private:
  std::string resolve(const std::string& p) const {
    if (p.empty() || base_dir_.empty() || std::filesystem::path(p).is_absolute()) return p;
    return (std::filesystem::path(base_dir_) / p).lexically_normal().string();
  }
  std::string origin_;
  std::string base_dir_;
};

constexpr const char* kKeys[] = {"comment",
                                 "inputs",
                                 "model",
                                 "out",
                                 "append",
                                 "shape",
                                 "rows",
                                 "data_seed",
                                 "data_dir",
                                 "device",
                                 "precision",
                                 "batching",
                                 "batch_size",
                                 "threads",
                                 "max_batch_tokens",
                                 "embed",
                                 "pooling",
                                 "column",
                                 "max_length",
                                 "tokenizer_threads",
                                 "instance",
                                 "price_list",
                                 "prices",
                                 "spot_discount",
                                 "platform_usd_per_hour",
                                 "machines",
                                 "corpus_rows",
                                 "label",
                                 "warmup",
                                 "repetitions",
                                 "min_seconds",
                                 "timeout_seconds",
                                 "monitor_interval"};

}  // namespace

Result<SweepSpec> parse_sweep_file(std::string_view json, const std::string& origin,
                                   const std::string& base_dir) {
  if (Status deep = check_json_nesting(json, origin); !deep.ok()) return invalid_argument(deep.message());
  Json j = Json::parse(json.begin(), json.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return invalid_argument(fmt::format("{}: not valid JSON", origin));
  if (!j.is_object()) return invalid_argument(fmt::format("{}: a sweep file must be a JSON object", origin));
  SweepSpec spec;
  SweepFileReader r(origin, base_dir);
  try {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& key = it.key();
      const Json& v = it.value();
      if (std::find_if(std::begin(kKeys), std::end(kKeys), [&](const char* k) { return key == k; }) ==
          std::end(kKeys)) {
        std::string known;
        for (const char* k : kKeys) known += (known.empty() ? "" : ", ") + std::string(k);
        return invalid_argument(fmt::format("{}: unknown key \"{}\" (known keys: {})", origin, key, known));
      }
      if (key == "comment") {
        (void)r.string(key, v);
      } else if (key == "inputs") {
        spec.inputs = r.paths(key, v);
      } else if (key == "model") {
        spec.model = r.path(key, v);
      } else if (key == "out") {
        spec.out = r.path(key, v);
      } else if (key == "append") {
        spec.append = r.boolean(key, v);
      } else if (key == "shape" || key == "device" || key == "precision" || key == "batching" ||
                 key == "batch_size" || key == "threads" || key == "max_batch_tokens") {
        const bool numeric = key == "batch_size" || key == "threads" || key == "max_batch_tokens";
        Status s = set_axis(spec.axes, key, r.axis(key, v, numeric));
        if (!s.ok()) return s.with_context(fmt::format("{}: key \"{}\"", origin, key));
      } else if (key == "rows") {
        spec.rows = r.integer(key, v);
      } else if (key == "data_seed") {
        const int64_t seed = r.integer(key, v);
        if (seed < 0) r.wrong_type(key, "a whole number >= 0");
        spec.data_seed = static_cast<uint64_t>(seed);
      } else if (key == "data_dir") {
        spec.data_dir = r.path(key, v);
      } else if (key == "embed") {
        spec.run.task = r.boolean(key, v) ? Task::kEmbed : Task::kClassify;
      } else if (key == "pooling") {
        Status s = set_pooling(spec, r.string(key, v));
        if (!s.ok()) return s.with_context(fmt::format("{}: key \"{}\"", origin, key));
      } else if (key == "column") {
        spec.run.column = r.string(key, v);
      } else if (key == "max_length") {
        spec.run.max_length = r.small_integer(key, v);
      } else if (key == "tokenizer_threads") {
        spec.run.tokenizer_threads = r.small_integer(key, v);
      } else if (key == "instance") {
        spec.run.instance = r.string(key, v);
      } else if (key == "price_list") {
        spec.run.price_list = r.string(key, v);
      } else if (key == "prices") {
        spec.run.price_files = r.paths(key, v);
      } else if (key == "spot_discount") {
        spec.run.spot_discount = r.number(key, v);
      } else if (key == "platform_usd_per_hour") {
        spec.run.platform_usd_per_hour = r.number(key, v);
      } else if (key == "machines") {
        spec.run.machines = r.small_integer(key, v);
      } else if (key == "corpus_rows") {
        spec.run.corpus_rows = r.integer(key, v);
      } else if (key == "label") {
        spec.label = r.string(key, v);
      } else if (key == "warmup") {
        spec.warmup = r.small_integer(key, v);
      } else if (key == "repetitions") {
        spec.repetitions = r.small_integer(key, v);
      } else if (key == "min_seconds") {
        spec.min_seconds = r.number(key, v);
      } else if (key == "timeout_seconds") {
        spec.timeout_seconds = r.number(key, v);
      } else if (key == "monitor_interval") {
        spec.monitor_interval = r.number(key, v);
      }
    }
  } catch (const FileError& e) {
    return invalid_argument(e.message);
  }
  return spec;
}

Result<SweepSpec> load_sweep_file(const std::string& path) {
  Result<std::string> text = read_file(path);
  if (!text.ok()) return invalid_argument("--sweep: " + text.status().message());
  const std::string base = std::filesystem::path(path).parent_path().string();
  return parse_sweep_file(*text, path, base);
}

}  // namespace infercost::bench
