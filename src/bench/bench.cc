#include "bench/bench.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <random>

#include "backend/backend.h"
#include "bench/child.h"
#include "bench/environment.h"
#include "bench/monitor.h"
#include "bench/nvml.h"
#include "bench/progress.h"
#include "core/device.h"
#include "core/file.h"
#include "core/threads.h"
#include "core/time_text.h"
#include "corpus/tweets.h"
#include "engine/run_cost.h"
#include "engine/run_metrics.h"
#include "engine/settings.h"

namespace infercost::bench {

namespace fs = std::filesystem;

// ---- metrics -> record ----

void fill_measurements(record::Record& r, const std::vector<RunMetrics>& runs,
                       const std::vector<int64_t>& peak_rss_bytes) {
  if (runs.empty()) return;
  const RunMetrics& first = runs.front();
  r.repetitions.clear();
  std::vector<double> wall, rows_ps, tokens_ps;
  std::map<std::string, std::vector<double>> stages;
  r.peak_rss_bytes = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunMetrics& run = runs[i];
    record::Repetition rep;
    rep.wall_seconds = run.wall_seconds;
    rep.rows_per_second = run.rows_per_second();
    rep.tokens_per_second = run.tokens_per_second();
    const int64_t seen = i < peak_rss_bytes.size() ? peak_rss_bytes[i] : 0;
    rep.peak_rss_bytes = std::max(seen, run.peak_rss_bytes);
    rep.stage_seconds = run.stage_seconds;
    r.repetitions.push_back(rep);
    wall.push_back(run.wall_seconds);
    rows_ps.push_back(run.rows_per_second());
    tokens_ps.push_back(run.tokens_per_second());
    for (const auto& [name, seconds] : run.stage_seconds) stages[name].push_back(seconds);
    r.peak_rss_bytes = std::max(r.peak_rss_bytes, rep.peak_rss_bytes);
  }
  r.wall_seconds = record::spread_of(wall);
  r.rows_per_second = record::spread_of(rows_ps);
  r.tokens_per_second = record::spread_of(tokens_ps);
  r.stage_seconds.clear();
  for (auto& [name, values] : stages) r.stage_seconds[name] = record::spread_of(values).median;
  r.rows = first.rows;
  r.tokens = first.tokens;
  r.padded_tokens = first.padded_tokens;
  r.computed_tokens = first.computed_tokens;
  r.padding_efficiency = first.padding_efficiency();
  r.batch_fill = first.batch_fill();
  r.config.device = first.device;
  r.config.precision = first.precision;
  r.config.batching = first.batching;
  r.config.batch_size = first.batch_size;
  r.config.max_batch_tokens = first.max_batch_tokens;
  r.config.threads = first.threads;
  r.config.tokenizer_threads = first.tokenizer_threads;
  r.config.max_length = first.max_length;
  r.data.rows = first.rows;
  r.data.tokens = first.tokens;
  r.data.length_edges = length_histogram_edges();
  r.data.length_counts = bin_lengths(first.length_counts, r.data.length_edges);
}

record::InstanceInfo instance_info(const cost::PricedInstance& priced, const cost::Pricing& pricing) {
  record::InstanceInfo i;
  i.name = priced.instance->name;
  i.price_list = priced.list->name;
  i.price_source = priced.source();
  i.price_date = priced.date();
  i.on_demand_usd_per_hour = priced.instance->usd_per_hour;
  i.spot_discount = pricing.spot_discount;
  i.platform_usd_per_hour = pricing.platform_usd_per_hour;
  i.machines = pricing.machines;
  i.usd_per_hour = cost::hourly_usd(*priced.instance, pricing);
  i.gpus = priced.instance->gpus;
  i.gpu = priced.instance->gpu;
  i.vcpus = priced.instance->vcpus;
  return i;
}

record::CostInfo cost_info(const record::InstanceInfo& instance, double wall_seconds, int64_t rows,
                           int64_t tokens, int64_t corpus_rows) {
  return cost::estimate_cost(instance.usd_per_hour, wall_seconds, rows, tokens, corpus_rows);
}

std::string spread_text(const record::Spread& spread) {
  if (spread.median == 0 || !std::isfinite(spread.median)) return "";
  const double half = (spread.max - spread.min) / 2 / std::fabs(spread.median) * 100;
  return fmt::format("± {:.1f}%", std::fabs(half) < 0.05 ? 0.0 : half);
}

// ---- data and run arguments ----

std::string dataset_path(const SweepSpec& spec, const std::string& shape) {
  const std::string dir = spec.data_dir.empty() ? default_data_dir() : spec.data_dir;
  std::string name =
      fmt::format("{}-{}rows-seed{}-gen{}", shape, spec.rows, spec.data_seed, corpus::kTweetGeneratorVersion);
  if (shape == "jsonl") name += ".jsonl";
  if (shape == "parquet") name += ".parquet";
  return (fs::path(dir) / name).string();
}

namespace {

// A setting the child is given, and whether its flag is written at the
// run's default too (the ones a record's run_command has always named).
struct ChildFlag {
  std::string_view name;
  bool always = true;
};

// The flags of `flags`, in the order given, named and spelled by the
// settings table (engine/settings.h) from `run` ("auto", "512"); a switch
// is its flag alone when on; an empty or zero value is left to the run's
// default unless `always`.
void add_flags(std::vector<std::string>& a, const RunOptions& run, std::initializer_list<ChildFlag> flags) {
  for (const ChildFlag& c : flags) {
    const engine::Setting* s = engine::find_setting(c.name);
    INFERCOST_CHECK(s != nullptr);
    const std::string value = s->get(run);
    const std::string flag = engine::setting_label(*s, engine::Spelling::kFlag);
    if (s->type == engine::SettingType::kSwitch) {
      if (value == "true") a.push_back(flag);
      continue;
    }
    if (!c.always && (value.empty() || value == "0")) continue;
    a.push_back(flag);
    a.push_back(value);
  }
}

// What a record says of the settings its runs were made with: `run` as the
// runs resolve it (the precision of its device, every thread of the machine
// for threads 0); an "auto" token budget is 0 until fill_measurements gives
// the run's own.
record::RunSettings recorded_settings(const RunOptions& run) {
  record::RunSettings s;
  s.task = task_name(run.task);
  s.device = run.device;
  Result<backend::Precision> precision = backend::resolve_precision(run.device, run.precision);
  s.precision = precision.ok() ? backend::precision_name(*precision) : run.precision;
  s.batching = engine::batching_name(run.batching);
  s.max_batch_tokens = run.max_batch_tokens_auto ? 0 : run.max_batch_tokens;
  s.threads = resolve_threads(run.threads);
  s.tokenizer_threads = run.tokenizer_threads;
  s.max_length = run.max_length;
  return s;
}

}  // namespace

std::vector<std::string> run_arguments(const SweepSpec& spec, const Point& point,
                                       const std::vector<std::string>& inputs, int batch_size,
                                       const std::string& output_dir, const std::string& metrics_path) {
  const RunOptions run = point_settings(spec, point, batch_size);
  std::vector<std::string> a = {run.task == Task::kEmbed ? "embed" : "run"};
  a.insert(a.end(), inputs.begin(), inputs.end());
  a.insert(a.end(), {"--model", spec.model});
  add_flags(a, run, {{"pooling", false}});
  a.insert(a.end(), {"--output", output_dir, "--metrics", metrics_path, "--quiet"});
  add_flags(a, run,
            {{"force"},
             {"column"},
             {"device"},
             {"precision"},
             {"batching"},
             {"batch_size", false},
             {"max_batch_tokens", false},
             {"threads"},
             {"tokenizer_threads", false},
             {"max_length"}});
  return a;
}

Result<std::optional<cost::PricedInstance>> find_spec_instance(const SweepSpec& spec,
                                                               std::vector<cost::PriceList>& lists) {
  const RunOptions& run = spec.run;
  if (run.instance.empty()) return std::optional<cost::PricedInstance>();
  Result<std::vector<cost::PriceList>> loaded = cost::price_lists_with(run.price_files);
  if (!loaded.ok()) return loaded.status().with_context("--prices");
  lists = std::move(*loaded);
  Result<cost::PricedInstance> found = cost::find_instance(lists, run.instance, run.price_list);
  if (!found.ok()) return invalid_argument("--instance: " + found.status().message());
  return std::optional<cost::PricedInstance>(*found);
}

namespace {

// GPUs of a device, for a 'gpus' batch-size rule.
Result<int> device_gpus(const DeviceSpec& device, const Nvml* nvml, const std::string& nvml_reason) {
  if (!device.gpu()) return invalid_argument(fmt::format("device '{}' has no GPUs", device.text));
  if (!device.all) return static_cast<int>(device.indices.size());
  if (nvml == nullptr)
    return unsupported(fmt::format("cannot count the GPUs of device '{}': {}", device.text, nvml_reason));
  const int n = static_cast<int>(device_gpu_indices(device, nvml->device_count()).size());
  if (n == 0) return unsupported(fmt::format("device '{}': NVML finds no GPU", device.text));
  return n;
}

// The inputs a point's run reads.
std::vector<std::string> shape_inputs(const SweepSpec& spec, const std::string& shape) {
  if (shape == "files") return spec.inputs;
  return {dataset_path(spec, shape)};
}

}  // namespace

std::string describe_points(const SweepSpec& spec, const std::vector<Point>& points) {
  std::string out = fmt::format(
      "{} point{}, each {} warm-up run{} then at least {} timed repetition{}{} (order: shape, device, "
      "precision, "
      "batching, batch size, threads, max batch tokens):\n",
      points.size(), points.size() == 1 ? "" : "s", spec.warmup, spec.warmup == 1 ? "" : "s",
      spec.repetitions, spec.repetitions == 1 ? "" : "s",
      spec.min_seconds > 0 ? fmt::format(" and {:g} timed seconds", spec.min_seconds) : std::string());
  for (const Point& p : points) {
    fmt::format_to(std::back_inserter(out), "  {:>3}  {}\n", p.index, p.describe());
    std::vector<std::string> args =
        run_arguments(spec, p, shape_inputs(spec, p.shape),
                      p.batch_size.rule == BatchSize::Rule::kVcpus
                          ? resolve_batch_size(p.batch_size, resolve_threads(p.threads), 0)
                          : (p.batch_size.rule == BatchSize::Rule::kNone ? p.batch_size.value : 0),
                      "<tmp>/out/", "<tmp>/metrics.json");
    std::string line = "       infercost";
    for (const std::string& a : args) line += " " + a;
    if (p.batch_size.rule == BatchSize::Rule::kGpus)
      line += fmt::format("   (--batch-size {} x the GPUs)", p.batch_size.value);
    out += line + "\n";
  }
  return out;
}

// ---- the sweep ----

namespace {

// The time now in UTC without separators (20261203T233734Z), a random suffix after it.
std::string new_sweep_id() {
  std::string stamp = utc_now_iso8601();
  std::erase_if(stamp, [](char c) { return c == '-' || c == ':'; });
  std::random_device rd;
  return fmt::format("{}-{:06x}", stamp, rd() & 0xffffff);
}

// The records file, one line per record. With --append each record is
// appended and flushed to disk. Otherwise the file is replaced when the first
// record is written, and again at each later one, atomically (a temporary
// beside it, renamed over it): the previous file stays whole until then, and
// the file never holds part of a record.
class RecordSink {
 public:
  static Result<RecordSink> open(const std::string& path, bool append) {
    RecordSink s;
    s.path_ = path;
    if (!append) {
      // Only a check that the file can be written: the temporary is removed.
      Result<AtomicOutputFile> probe = AtomicOutputFile::create(path);
      if (!probe.ok()) return probe.status().with_context("the records file (--out)");
      return s;
    }
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_APPEND, 0644);
    if (fd < 0)
      return io_error(fmt::format("{}: cannot open for the records: {}", path, std::strerror(errno)));
    s.fd_ = fd;
    return s;
  }
  RecordSink() = default;
  RecordSink(RecordSink&& o) noexcept
      : fd_(o.fd_), path_(std::move(o.path_)), written_(std::move(o.written_)) {
    o.fd_ = -1;
  }
  RecordSink& operator=(RecordSink&&) = delete;
  ~RecordSink() {
    if (fd_ >= 0) ::close(fd_);
  }
  Status write(const record::Record& r) {
    const std::string line = record::to_json_line(r) + "\n";
    if (fd_ < 0) {
      written_ += line;
      INFERCOST_ASSIGN_OR_RETURN(AtomicOutputFile f, AtomicOutputFile::create(path_));
      INFERCOST_RETURN_IF_ERROR(f.write(written_));
      return f.commit();
    }
    size_t done = 0;
    while (done < line.size()) {
      const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return io_error(fmt::format("{}: cannot write a record: {}", path_, std::strerror(errno)));
      done += static_cast<size_t>(n);
    }
    ::fsync(fd_);
    return Status();
  }

 private:
  int fd_ = -1;  // --append only
  std::string path_;
  std::string written_;  // the records of this sweep, when replacing
};

// Makes (or reuses) the generated data of a shape.
Result<std::string> ensure_dataset(const SweepSpec& spec, const std::string& shape, Progress& progress) {
  const std::string path = dataset_path(spec, shape);
  const std::string marker = path + ".complete";
  if (path_exists(marker) && path_exists(path)) {
    progress.message(fmt::format("bench: using the cached {} data {}", shape, path));
    return path;
  }
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec)
    return io_error(fmt::format("{}: cannot create the data folder: {}",
                                fs::path(path).parent_path().string(), ec.message()));
  INFERCOST_ASSIGN_OR_RETURN(corpus::DatasetShape dataset_shape, corpus::dataset_shape_from_name(shape));
  progress.message(fmt::format("bench: writing {} synthetic rows as {} (seed {}) to {}", spec.rows, shape,
                               spec.data_seed, path));
  corpus::DatasetOptions options;
  options.shape = dataset_shape;
  options.rows = spec.rows;
  options.seed = spec.data_seed;
  Result<corpus::DatasetSummary> written = corpus::write_tweets_dataset(path, options, nullptr);
  if (!written.ok()) return written.status().with_context("bench data");
  Result<AtomicOutputFile> f = AtomicOutputFile::create(marker);
  if (!f.ok()) return f.status();
  INFERCOST_RETURN_IF_ERROR(
      f->write(fmt::format("{{\"shape\": \"{}\", \"rows\": {}, \"seed\": {}, \"bytes\": {}}}\n", shape,
                           written->rows, spec.data_seed, written->bytes)));
  INFERCOST_RETURN_IF_ERROR(f->commit());
  return path;
}

struct ShapeData {
  std::vector<std::string> inputs;
  InputFiles files;
};

std::string resolve_executable(const std::string& executable) {
  std::error_code ec;
  fs::path p = fs::read_symlink(executable, ec);
  if (ec) return executable;
  return p.string();
}

class Bench {
 public:
  Bench(const BenchOptions& options, std::vector<Point> points)
      : o_(options),
        spec_(options.spec),
        points_(std::move(points)),
        progress_(options.log, options.terminal, static_cast<int>(points_.size()),
                  options.spec.warmup + options.spec.repetitions) {}

  Result<BenchSummary> run() {
    std::vector<cost::PriceList> lists;
    INFERCOST_ASSIGN_OR_RETURN(std::optional<cost::PricedInstance> priced, find_spec_instance(spec_, lists));
    if (priced) instance_ = instance_info(*priced, engine::pricing_of(spec_.run));
    Result<record::ModelInfo> model = read_model_info(spec_.model);
    if (!model.ok()) return model.status().with_context("--model");
    base_.model = *model;
    if (base_.model.synthetic) {
      progress_.message(
          fmt::format("bench: note: '{}' is a synthetic model (random weights): its speed is real, its "
                      "sentiments are not",
                      base_.model.name));
    }
    Result<std::unique_ptr<Nvml>> nvml = Nvml::load(o_.nvml_library);
    if (nvml.ok()) {
      nvml_ = std::move(*nvml);
    } else {
      nvml_reason_ = nvml.status().message();
      const bool gpu_points =
          std::any_of(points_.begin(), points_.end(), [](const Point& p) { return is_gpu_device(p.device); });
      if (gpu_points)
        progress_.message("bench: " + nvml_reason_ + "; GPU memory and utilization are not sampled");
    }
    base_.hardware = collect_hardware(nvml_.get());
    base_.software = collect_software();
    base_.sweep_id = new_sweep_id();
    base_.points = static_cast<int>(points_.size());
    base_.command = o_.command;
    base_.label = spec_.label;
    base_.warmup = spec_.warmup;
    base_.min_repetitions = spec_.repetitions;
    base_.min_seconds = spec_.min_seconds;
    base_.instance = instance_;
    exe_shown_ = resolve_executable(o_.executable);

    // The records file is opened once the data is ready (and without --append
    // replaced only when the first record is written); its folder is checked
    // now, before data is made.
    const fs::path out_dir = fs::absolute(spec_.out).parent_path();
    if (!fs::is_directory(out_dir)) {
      return invalid_argument(
          fmt::format("--out {}: the folder {} does not exist", spec_.out, out_dir.string()));
    }
    for (const Point& p : points_) {
      if (data_.count(p.shape)) continue;
      ShapeData d;
      if (p.shape == "files") {
        d.inputs = spec_.inputs;
      } else {
        INFERCOST_ASSIGN_OR_RETURN(std::string path, ensure_dataset(spec_, p.shape, progress_));
        d.inputs = {path};
      }
      Result<InputFiles> files = describe_inputs(d.inputs);
      if (!files.ok()) return files.status().with_context(p.shape == "files" ? "inputs" : "bench data");
      d.files = std::move(*files);
      data_[p.shape] = std::move(d);
    }
    INFERCOST_ASSIGN_OR_RETURN(RecordSink sink, RecordSink::open(spec_.out, spec_.append));
    INFERCOST_ASSIGN_OR_RETURN(tmp_, TempDir::create("infercost-bench-"));

    BenchSummary summary;
    summary.points = static_cast<int>(points_.size());
    for (const Point& p : points_) {
      record::Record r = run_point(p);
      if (!r.ok()) ++summary.failed;
      Status written = sink.write(r);
      if (!written.ok()) {
        progress_.finish();
        return written;
      }
    }
    progress_.finish();
    std::fprintf(o_.log, "bench: %d point%s, %d ok, %d failed; records in %s\n", summary.points,
                 summary.points == 1 ? "" : "s", summary.points - summary.failed, summary.failed,
                 spec_.out.c_str());
    return summary;
  }

 private:
  struct RunResult {
    ChildOutcome outcome;
    std::optional<RunMetrics> report;
    std::string error;
  };

  // One run of the point's command in a fresh output folder, removed after.
  RunResult run_once(const std::vector<std::string>& args_template, const std::vector<int>& gpus,
                     MonitorAccumulator* monitor, std::vector<std::string>* argv_used) {
    RunResult result;
    const int n = ++runs_;
    const std::string out_dir = fmt::format("{}/run-{}/", tmp_.path(), n);
    const std::string metrics = fmt::format("{}/run-{}.json", tmp_.path(), n);
    const std::string err = fmt::format("{}/run-{}.stderr", tmp_.path(), n);
    ChildRun run;
    run.executable = o_.executable;
    run.argv = {exe_shown_};
    for (const std::string& a : args_template) {
      if (a == kOutputSlot) {
        run.argv.push_back(out_dir);
      } else if (a == kMetricsSlot) {
        run.argv.push_back(metrics);
      } else {
        run.argv.push_back(a);
      }
    }
    if (argv_used) *argv_used = run.argv;
    run.stderr_path = err;
    run.timeout_seconds = spec_.timeout_seconds;
    run.monitor_interval = spec_.monitor_interval;
    run.monitor = monitor;
    // GPU devices only, and only their own GPUs.
    run.nvml = gpus.empty() ? nullptr : nvml_.get();
    run.gpus = gpus;
    run.tick = [this] { progress_.tick(); };
    Result<ChildOutcome> outcome = run_child(run);
    if (!outcome.ok()) {
      result.error = outcome.status().message();
    } else {
      result.outcome = *outcome;
      if (!outcome->ok()) {
        result.error = outcome->error;
      } else {
        Result<std::string> text = read_file(metrics);
        Result<RunMetrics> report =
            text.ok() ? parse_run_metrics(*text, "the run's metrics") : Result<RunMetrics>(text.status());
        if (report.ok()) {
          result.report = std::move(*report);
        } else {
          result.error = report.status().message();
        }
      }
    }
    std::error_code ec;
    fs::remove_all(out_dir, ec);
    fs::remove(metrics, ec);
    fs::remove(err, ec);
    return result;
  }

  record::Record run_point(const Point& p) {
    record::Record r = base_;
    r.point = p.index;
    r.started_at = utc_now_iso8601();
    const ShapeData& d = data_.at(p.shape);
    r.data.shape = p.shape;
    r.data.inputs = d.inputs;
    r.data.files = static_cast<int64_t>(d.files.files.size());
    r.data.bytes = d.files.bytes;
    r.data.content_sha256 = d.files.content_sha256;
    static_cast<record::RunSettings&>(r.config) = recorded_settings(point_settings(spec_, p, 0));
    r.config.batch_size_rule = p.batch_size.rule_text();
    progress_.start_point(p.index, p.describe());
    auto failed = [&](const std::string& why) {
      r.status = "failed";
      r.error = why;
      progress_.end_point(
          fmt::format("bench: point {}/{} {}: FAILED: {}", p.index, points_.size(), p.describe(), why));
      return r;
    };
    // The point's device (checked when the sweep was read), and the GPUs
    // sampled: the device's own, none for the CPU.
    const DeviceSpec device = parse_device(p.device).value();
    const std::vector<int> gpus =
        nvml_ ? device_gpu_indices(device, nvml_->device_count()) : std::vector<int>{};

    int gpu_count = 0;
    if (p.batch_size.rule == BatchSize::Rule::kGpus) {
      Result<int> n = device_gpus(device, nvml_.get(), nvml_reason_);
      if (!n.ok())
        return failed(fmt::format("--batch-size {}: {}", p.batch_size.text(), n.status().message()));
      gpu_count = *n;
    }
    r.config.batch_size = resolve_batch_size(p.batch_size, r.config.threads, gpu_count);
    const std::vector<std::string> args =
        run_arguments(spec_, p, d.inputs, r.config.batch_size, kOutputSlot, kMetricsSlot);

    for (int w = 1; w <= spec_.warmup; ++w) {
      progress_.start_run(true, w, spec_.warmup);
      RunResult run = run_once(args, gpus, nullptr, &r.run_command);
      if (!run.error.empty()) return failed(fmt::format("warm-up run {}: {}", w, run.error));
      progress_.run_finished(true, run.outcome.seconds, fmt::format("{:.2f} s", run.outcome.seconds));
    }
    MonitorAccumulator monitor(spec_.monitor_interval);
    std::vector<RunMetrics> reports;
    std::vector<int64_t> peaks;
    double timed = 0;
    const int cap = max_repetitions(spec_);
    while (static_cast<int>(reports.size()) < spec_.repetitions ||
           (timed < spec_.min_seconds && static_cast<int>(reports.size()) < cap)) {
      const int k = static_cast<int>(reports.size()) + 1;
      progress_.start_run(false, k, spec_.repetitions);
      RunResult run = run_once(args, gpus, &monitor, &r.run_command);
      if (!run.error.empty()) return failed(fmt::format("repetition {}: {}", k, run.error));
      const RunMetrics& rep = *run.report;
      if (!reports.empty() && (rep.rows != reports.front().rows || rep.tokens != reports.front().tokens)) {
        return failed(
            fmt::format("repetition {} classified {} rows ({} tokens), repetition 1 {} rows ({} tokens)", k,
                        rep.rows, rep.tokens, reports.front().rows, reports.front().tokens));
      }
      timed += rep.wall_seconds;
      progress_.run_finished(
          false, run.outcome.seconds,
          fmt::format("wall {:.3f} s, {:.1f} rows/s", rep.wall_seconds, rep.rows_per_second()));
      reports.push_back(rep);
      peaks.push_back(run.outcome.peak_rss_bytes);
    }
    if (timed < spec_.min_seconds) {
      progress_.message(
          fmt::format("bench: note: point {} stopped at {} repetitions ({:.1f} of --min-seconds {:g})",
                      p.index, cap, timed, spec_.min_seconds));
    }
    fill_measurements(r, reports, peaks);
    r.monitor = monitor.summary();
    if (r.instance)
      r.cost = cost_info(*r.instance, r.wall_seconds.median, r.rows, r.tokens, spec_.run.corpus_rows);
    progress_.end_point(summary_line(p, r));
    return r;
  }

  std::string summary_line(const Point& p, const record::Record& r) const {
    std::string batch =
        r.config.batch_size_rule.empty() ? "" : fmt::format(" (batch {} rows)", r.config.batch_size);
    const std::string spread = spread_text(r.rows_per_second);
    std::string line = fmt::format(
        "bench: point {}/{} {}{}: {:.1f} rows/s median ({:.1f}..{:.1f}, {}, {} repetition{}), "
        "{:.0f} tokens/s, "
        "wall {:.3f} s, peak RSS {:.0f} MiB",
        p.index, points_.size(), p.describe(), batch, r.rows_per_second.median, r.rows_per_second.min,
        r.rows_per_second.max, spread.empty() ? std::string("± n/a") : spread, r.repetitions.size(),
        r.repetitions.size() == 1 ? "" : "s", r.tokens_per_second.median, r.wall_seconds.median,
        static_cast<double>(r.peak_rss_bytes) / (1024.0 * 1024.0));
    if (r.cost) {
      line += fmt::format(", ${:.6f} on {} (${:.4f} per million rows)", r.cost->cost_to_solution_usd,
                          r.instance->name, r.cost->usd_per_million_rows);
    }
    return line;
  }

  static constexpr const char* kOutputSlot = "\x01output";
  static constexpr const char* kMetricsSlot = "\x01metrics";

  const BenchOptions& o_;
  const SweepSpec& spec_;
  std::vector<Point> points_;
  Progress progress_;
  record::Record base_;
  std::optional<record::InstanceInfo> instance_;
  std::unique_ptr<Nvml> nvml_;
  std::string nvml_reason_;
  std::string exe_shown_;
  std::map<std::string, ShapeData> data_;
  TempDir tmp_;
  int runs_ = 0;
};

}  // namespace

Result<BenchSummary> run_bench(const BenchOptions& options) {
  if (options.spec.out.empty())
    return invalid_argument("--out is required (the JSON lines file for the records)");
  std::vector<Point> points = expand_points(options.spec);
  if (points.empty()) return invalid_argument("the sweep has no points");
  Bench bench(options, std::move(points));
  return bench.run();
}

}  // namespace infercost::bench
