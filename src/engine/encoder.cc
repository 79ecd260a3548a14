#include "engine/encoder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <thread>

#include "core/test_point.h"
#include "core/threads.h"
#include "engine/bad_rows.h"
#include "engine/encoder_workers.h"
#include "engine/settings.h"
#include "io/prediction_writer.h"
#include "model/describe.h"
#include "model/model_dir.h"

namespace infercost {

const char* task_name(Task task) {
  return task == Task::kEmbed ? "embed" : "classify";
}

}  // namespace infercost

namespace infercost::engine {

// One device: a backend per stream, and the out-of-memory limit its streams share.
struct Encoder::Device {
  std::string name;
  std::vector<std::unique_ptr<backend::Backend>> streams;
  // Most computed tokens per batch known to fit; lowered by each
  // out-of-memory error, never raised.
  std::atomic<int64_t> limit{std::numeric_limits<int64_t>::max()};
  std::atomic<int64_t> oom_retries{0};

  void lower_limit(int64_t tokens) {
    int64_t now = limit.load();
    while (tokens < now && !limit.compare_exchange_weak(now, tokens)) {
    }
  }
};

// One inference worker (a stream of a device) and its counters, which only
// the thread running it touches.
struct Encoder::Worker {
  Device* device = nullptr;
  size_t device_index = 0;
  backend::Backend* engine = nullptr;
  EncoderStats given;                     // the batches infer_batch was given: rows, tokens, lengths, batches
  int64_t rows_run = 0, batches_run = 0;  // backend calls that succeeded (split halves apiece)
  double infer_s = 0;
};

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int clamp_to_int(int64_t value) {
  return static_cast<int>(std::clamp<int64_t>(value, 1, std::numeric_limits<int>::max()));
}

int resolved_tokenizer_threads(const ModelOptions& options, int threads) {
  if (options.tokenizer_threads > 0) return options.tokenizer_threads;
  return is_cpu_device(options.device) ? 1 : threads;
}

// Adds `batch`'s rows and tokens to `s`.
void count_batch(EncoderStats& s, const backend::TokenBatch& batch, int max_length, bool skips_padding) {
  s.rows += batch.batch;
  s.tokens += batch.real_tokens();
  s.padded_tokens += batch.padded_tokens();
  s.computed_tokens += computed_tokens(batch, skips_padding);
  for (int32_t len : batch.lengths) {
    if (len >= max_length) ++s.rows_at_max_length;
    const size_t at = static_cast<size_t>(std::max(len, 0));
    if (at >= s.length_counts.size()) s.length_counts.resize(at + 1, 0);
    ++s.length_counts[at];
  }
  ++s.batches;
}

void add_counts(EncoderStats& to, const EncoderStats& from) {
  to.rows += from.rows;
  to.rows_null += from.rows_null;
  to.rows_skipped += from.rows_skipped;
  to.tokens += from.tokens;
  to.padded_tokens += from.padded_tokens;
  to.computed_tokens += from.computed_tokens;
  to.rows_at_max_length += from.rows_at_max_length;
  to.batches += from.batches;
  if (to.length_counts.size() < from.length_counts.size())
    to.length_counts.resize(from.length_counts.size(), 0);
  for (size_t i = 0; i < from.length_counts.size(); ++i) to.length_counts[i] += from.length_counts[i];
  to.tokenize_seconds += from.tokenize_seconds;
  to.batch_seconds += from.batch_seconds;
  to.infer_seconds += from.infer_seconds;
}

// A device's error named after the device, once: the CPU is not named, and
// an error its backend already names it in (the CUDA backend's "cuda:0:
// classify: ...") is not named again.
Status name_device_error(const Status& error, const std::string& device) {
  if (device == "cpu") return error;
  const std::string& message = error.message();
  if (message.size() > device.size() && message.compare(0, device.size(), device) == 0 &&
      message[device.size()] == ':') {
    return error;
  }
  return error.with_context(device);
}

using BackendPtr = std::unique_ptr<backend::Backend>;

// Creates and prepares the backend of one device (its first stream).
Result<BackendPtr> open_backend(const BackendFactory& factory, const std::string& name,
                                const backend::BackendOptions& backend_options,
                                const model::LoadedModel& model) {
  Result<BackendPtr> created = factory.create_backend ? factory.create_backend(name, backend_options)
                                                      : backend::create_backend(name, backend_options);
  if (!created.ok()) return created.status();
  INFERCOST_RETURN_IF_ERROR((*created)->prepare(model.config, model.weights));
  return created;
}

// Opens every device's first backend, in parallel when there are several
// (weights upload to each GPU at once). The first error in device order wins.
Result<std::vector<BackendPtr>> open_backends(const BackendFactory& factory,
                                              const std::vector<std::string>& names,
                                              const backend::BackendOptions& backend_options,
                                              const model::LoadedModel& model) {
  std::vector<std::optional<Result<BackendPtr>>> opened(names.size());
  if (names.size() == 1) {
    opened[0].emplace(open_backend(factory, names[0], backend_options, model));
  } else {
    std::vector<std::thread> threads;
    for (size_t i = 0; i < names.size(); ++i) {
      threads.emplace_back(
          [&, i] { opened[i].emplace(open_backend(factory, names[i], backend_options, model)); });
    }
    for (std::thread& t : threads) t.join();
  }
  std::vector<BackendPtr> out;
  for (size_t i = 0; i < names.size(); ++i) {
    Result<BackendPtr>& r = *opened[i];
    if (!r.ok()) return name_device_error(r.status(), names[i]);
    out.push_back(std::move(*r));
  }
  return out;
}

// The capacity of a device (its first stream) for the auto sizes. Under
// kTokens with --batch-size auto the token budget (rows x longest row) bounds
// a batch, so its rows need only fit in memory beside the tokens: the
// capacity for rows of the shortest length, whose rows and tokens fit
// together (Backend::capacity), as long as one row of max_length still fits
// the budget. Otherwise, and under kSeed, the capacity for rows of max_length.
// `shortest_row`: the tokens of an empty text (the tokenizer's special tokens).
Result<backend::BatchCapacity> device_capacity(backend::Backend& engine, const ModelOptions& options,
                                               int shortest_row) {
  if (options.batching == Batching::kTokens && options.batch_size_auto) {
    Result<backend::BatchCapacity> shortest = engine.capacity(shortest_row);
    if (shortest.ok() && shortest->max_tokens >= options.max_length) {
      shortest->basis += fmt::format(
          "; rows counted at {} tokens, the shortest row, since the token budget bounds a batch first",
          shortest_row);
      return shortest;
    }
  }
  return engine.capacity(options.max_length);
}

}  // namespace

Result<ResolvedSettings> resolve_settings(const ModelOptions& options, const BackendFactory& factory) {
  ResolvedSettings r;
  INFERCOST_ASSIGN_OR_RETURN(r.device, parse_device(options.device));
  INFERCOST_ASSIGN_OR_RETURN(r.devices, factory.resolve_devices ? factory.resolve_devices(r.device)
                                                                : backend::resolve_devices(r.device));
  if (r.devices.empty()) return unavailable("device '" + options.device + "': no device to run on");
  INFERCOST_ASSIGN_OR_RETURN(r.precision, backend::resolve_precision(r.device, options.precision));
  if (options.function != "default") {
    INFERCOST_ASSIGN_OR_RETURN(HeadFunction f, parse_head_function(options.function));
    r.function = f;
  }
  return r;
}

Task default_task(const std::string& model_dir) {
  Result<model::ModelDescription> d = model::describe_model_dir(model_dir);
  return d.ok() && !d->classification_head && d->embedding ? Task::kEmbed : Task::kClassify;
}

int resolve_tokenizer_threads(const ModelOptions& options) {
  return resolved_tokenizer_threads(options, resolve_threads(options.threads));
}

namespace {

// The batch policy of `options` on devices whose least capacity per stream is
// `capacity` (what "auto" sizes take).
BatchPolicy resolve_batch_policy(const ModelOptions& options, const backend::BatchCapacity& capacity,
                                 int threads, int pad_id) {
  const bool seed = options.batching == Batching::kSeed;
  BatchPolicy policy;
  policy.batching = options.batching;
  if (options.batch_size_auto) {
    // kSeed pads every row of a batch to at most max_length.
    policy.batch_size =
        seed ? std::min(capacity.max_rows, clamp_to_int(capacity.max_tokens / options.max_length))
             : capacity.max_rows;
  } else {
    policy.batch_size = options.batch_size > 0
                            ? options.batch_size
                            : (seed ? kSeedRowsPerThread * threads : kDefaultTokensBatchSize);
  }
  policy.max_batch_tokens = options.max_batch_tokens_auto  ? clamp_to_int(capacity.max_tokens)
                            : options.max_batch_tokens > 0 ? options.max_batch_tokens
                                                           : kDefaultMaxBatchTokens;
  policy.pad_id = pad_id;
  return policy;
}

// kInvalidArgument for a --threshold where the output has no 'labels' column.
Status check_threshold_applies(const ModelOptions& options, HeadFunction function, bool label_set,
                               const model::ModelConfig& config) {
  if (!options.threshold || label_set) return Status();
  return invalid_argument(fmt::format(
      "{} {}: only multi-label outputs ({} over more than one label) have a 'labels' column for it to "
      "decide; this run's function is {} over {} label{}",
      setting_ref("threshold"), *options.threshold, setting_ref("function", "sigmoid"),
      head_function_name(function), config.num_labels(), config.num_labels() == 1 ? "" : "s"));
}

}  // namespace

Result<EmbeddingSettings> resolve_embedding(const std::string& dir, const ModelOptions& options,
                                            int& max_length) {
  INFERCOST_ASSIGN_OR_RETURN(model::ModelConfig config, model::load_config(dir + "/config.json"));
  INFERCOST_ASSIGN_OR_RETURN(std::optional<model::EmbeddingConfig> st,
                             model::read_sentence_transformers(dir, config.hidden_size));
  EmbeddingSettings e;
  e.dimensions = config.hidden_size;
  const std::string pooling_label = setting_ref("pooling");
  if (options.pooling) {
    e.pooling = *options.pooling;
    e.source = pooling_label;
  } else if (st) {
    e.pooling = st->pooling;
    e.source = "sentence-transformers modules.json";
  } else {
    return invalid_argument(fmt::format(
        "{}: no modules.json, so not a sentence-transformers directory, and no {} given: say how the token "
        "vectors become one vector per text ({})",
        dir, pooling_label, setting_ref("pooling", "mean")));
  }
  e.normalize = options.normalize.value_or(st && st->normalize);
  if (options.prefix) {
    e.prefix = *options.prefix;
  } else if (st && !st->default_prompt_name.empty()) {
    e.prefix = st->prompts.at(st->default_prompt_name);
  }
  if (st && !st->include_prompt && !e.prefix.empty() &&
      (e.pooling == Pooling::kMean || e.pooling == Pooling::kMax)) {
    return unsupported(fmt::format(
        "{}: 1_Pooling/config.json's include_prompt is false (the prompt's tokens are left out of the "
        "pooling), which infercost does not do; embed without a prefix ({})",
        dir, setting_ref("prefix", "")));
  }
  if (max_length == 0 && st)
    max_length = model::sentence_transformers_max_length(*st, config.max_positions());
  return e;
}

Encoder::Encoder() = default;
Encoder::~Encoder() = default;

namespace {

// Up to `want` streams on a device from its first (a backend that cannot
// fork runs one).
Status fork_streams(std::vector<BackendPtr>& streams, int want, const std::string& device) {
  while (static_cast<int>(streams.size()) < want) {
    Result<BackendPtr> forked = streams[0]->fork();
    if (!forked.ok()) {
      if (forked.status().code() == StatusCode::kUnsupported) return Status();
      return forked.status().with_context(device + ": another stream");
    }
    streams.push_back(std::move(*forked));
  }
  return Status();
}

// The batch capacity per stream, the smallest over the devices: each
// device's capacity (`capacities[i]`, measured before the forks) shared by its
// streams (`devices[i]`: its name and stream count).
Result<backend::BatchCapacity> least_capacity_per_stream(
    const std::vector<backend::BatchCapacity>& capacities,
    const std::vector<std::pair<std::string, int>>& devices) {
  backend::BatchCapacity least;
  for (size_t i = 0; i < capacities.size(); ++i) {
    const backend::BatchCapacity& cap = capacities[i];
    const auto& [name, n] = devices[i];
    if (cap.max_tokens < 1 || cap.max_rows < 1) {
      return resource_exhausted(
          fmt::format("{}: no batch fits in the memory left after loading the model ({}; {} tokens, {} rows)",
                      name, cap.basis, cap.max_tokens, cap.max_rows));
    }
    const int64_t tokens = std::max<int64_t>(1, cap.max_tokens / n);
    const int rows = std::max(1, cap.max_rows / n);
    if (i == 0 || tokens < least.max_tokens) {
      least.basis = n > 1 ? fmt::format("{} (shared by {} streams): {}", name, n, cap.basis)
                          : fmt::format("{}: {}", name, cap.basis);
      least.max_tokens = tokens;
      least.free_bytes = cap.free_bytes;
      least.total_bytes = cap.total_bytes;
    }
    least.max_rows = i == 0 ? rows : std::min(least.max_rows, rows);
  }
  return least;
}

// A prefix that fills max_length alone leaves no room for any text: every
// row would get its vector.
Status check_prefix_leaves_room(const text::Tokenizer& tokenizer, const std::string& prefix, int max_length,
                                const ModelOptions& options) {
  std::vector<int32_t> ids;
  if (!tokenizer.encode_append(prefix, ids).ok() || static_cast<int>(ids.size()) < max_length)
    return Status();
  const std::string max_length_label = setting_ref("max_length");
  return invalid_argument(fmt::format(
      "{}{}: the prefix alone takes {} tokens with the special ones, all {} of {}: every text would be cut "
      "off and every row get the prefix's vector; shorten the prefix or raise {}",
      setting_ref("prefix"), options.prefix ? "" : " (the model's default prompt)", ids.size(), max_length,
      max_length_label, max_length_label));
}

}  // namespace

Result<std::unique_ptr<Encoder>> Encoder::open(const std::string& model_dir, const ModelOptions& options,
                                               BackendFactory factory) {
  INFERCOST_RETURN_IF_ERROR(check_settings(options));
  INFERCOST_ASSIGN_OR_RETURN(ResolvedSettings settings, resolve_settings(options, factory));
  return open(model_dir, options, settings, std::move(factory));
}

Result<std::unique_ptr<Encoder>> Encoder::open(const std::string& model_dir, const ModelOptions& options,
                                               const ResolvedSettings& settings, BackendFactory factory) {
  const std::vector<std::string>& names = settings.devices;
  const std::optional<HeadFunction>& asked = settings.function;
  const backend::Precision precision = settings.precision;
  std::unique_ptr<Encoder> c(new Encoder());
  c->threads_ = resolve_threads(options.threads);
  c->tokenizer_threads_ = resolved_tokenizer_threads(options, c->threads_);
  c->on_bad_row_ = options.on_bad_row;
  c->device_spec_ = settings.device;

  c->task_ = options.task;
  model::LoadOptions load;
  load.max_length = options.max_length;  // 0: the model's limit
  if (options.task == Task::kEmbed) {
    load.classification_head = false;  // the encoder's token vectors are what is pooled
    INFERCOST_ASSIGN_OR_RETURN(c->embedding_, resolve_embedding(model_dir, options, load.max_length));
  }
  INFERCOST_ASSIGN_OR_RETURN(model::LoadedModel model, model::load_model_dir(model_dir, load));
  // The head's function: the one asked for, else the model's; none for embeddings.
  const HeadFunction function = options.task != Task::kClassify ? HeadFunction::kNone
                                : asked                         ? *asked
                                        : default_head_function(model.config).function;
  if (options.task == Task::kClassify) {  // every door writes the same columns: none may share a name
    INFERCOST_RETURN_IF_ERROR(
        io::check_label_columns(model.config.labels, writes_label_set(function, model.config.num_labels())));
  }
  if (options.max_length > model.config.max_positions()) {
    return invalid_argument(fmt::format("{} {} exceeds the model's {} positions", setting_ref("max_length"),
                                        options.max_length, model.config.max_positions()));
  }
  c->max_length_ = model.tokenizer->max_length();
  ModelOptions resolved = options;  // max_length as the model resolved it
  resolved.max_length = c->max_length_;
  backend::BackendOptions backend_options;
  backend_options.threads = c->threads_;
  backend_options.precision = precision;
  backend_options.precision_is_default = options.precision == "auto";
  if (c->embedding_) backend_options.pooling = c->embedding_->pooling;
  INFERCOST_ASSIGN_OR_RETURN(std::vector<BackendPtr> backends,
                             open_backends(factory, names, backend_options, model));
  model.weights = model::EncoderWeights();  // every backend keeps its own copy
  for (size_t i = 0; i < names.size(); ++i) {
    auto d = std::make_unique<Device>();
    d->name = names[i];
    d->streams.push_back(std::move(backends[i]));
    c->devices_.push_back(std::move(d));
  }
  // Capacity before the forks: each stream's share of what is free now.
  std::vector<backend::BatchCapacity> capacities;
  if (options.batch_size_auto || options.max_batch_tokens_auto) {
    for (const std::unique_ptr<Device>& d : c->devices_) {
      Result<backend::BatchCapacity> cap =
          device_capacity(*d->streams[0], resolved, std::max(1, model.tokenizer->special_tokens()));
      if (!cap.ok()) return cap.status().with_context(d->name + ": batch capacity");
      capacities.push_back(std::move(*cap));
    }
  }
  const int streams = options.streams_per_device > 0 ? options.streams_per_device : 2;
  std::vector<std::pair<std::string, int>> stream_counts;
  for (const std::unique_ptr<Device>& d : c->devices_) {
    INFERCOST_RETURN_IF_ERROR(fork_streams(d->streams, streams, d->name));
    stream_counts.emplace_back(d->name, static_cast<int>(d->streams.size()));
  }
  if (!capacities.empty()) {
    INFERCOST_ASSIGN_OR_RETURN(c->capacity_, least_capacity_per_stream(capacities, stream_counts));
  }
  c->add_workers();

  c->policy_ = resolve_batch_policy(resolved, c->capacity_, c->threads_, model.tokenizer->pad_id());
  c->precision_ = c->precision_text();
  c->function_ = function;
  if (c->task_ == Task::kClassify) {
    c->label_set_ = writes_label_set(c->function_, model.config.num_labels());
    INFERCOST_RETURN_IF_ERROR(check_threshold_applies(options, c->function_, c->label_set_, model.config));
    if (c->label_set_) c->threshold_ = options.threshold.value_or(kDefaultThreshold);
  }
  c->config_ = std::move(model.config);
  c->tokenizer_ = std::move(model.tokenizer);
  if (c->embedding_ && !c->embedding_->prefix.empty()) {
    INFERCOST_RETURN_IF_ERROR(
        check_prefix_leaves_room(*c->tokenizer_, c->embedding_->prefix, c->max_length_, options));
    INFERCOST_ASSIGN_OR_RETURN(c->tokenizer_, text::with_prefix(c->tokenizer_, c->embedding_->prefix));
  }
  if (options.on_model_loaded) options.on_model_loaded(model::synthetic_model_notice(c->config_));
  return c;
}

void Encoder::add_workers() {
  for (size_t i = 0; i < devices_.size(); ++i) {
    for (const BackendPtr& b : devices_[i]->streams) {
      auto w = std::make_unique<Worker>();
      w->device = devices_[i].get();
      w->device_index = i;
      w->engine = b.get();
      workers_.push_back(std::move(w));
    }
  }
}

// GPUs of different generations may run different precisions: "bf16+fp16".
std::string Encoder::precision_text() const {
  std::vector<std::string> precisions;
  for (const std::unique_ptr<Device>& d : devices_) {
    const std::string p = backend::precision_name(d->streams[0]->precision());
    if (std::find(precisions.begin(), precisions.end(), p) == precisions.end()) precisions.push_back(p);
  }
  return fmt::format("{}", fmt::join(precisions, "+"));
}

std::vector<std::string> Encoder::devices() const {
  std::vector<std::string> out;
  for (const std::unique_ptr<Device>& d : devices_) out.push_back(d->name);
  return out;
}

size_t EncoderWorkers::workers() const {
  return c_->workers_.size();
}

size_t EncoderWorkers::worker_device(size_t worker) const {
  return c_->workers_.at(worker)->device_index;
}

Status EncoderWorkers::infer_batch(size_t worker, const backend::TokenBatch& batch, std::span<float> out,
                                   std::vector<int32_t>* non_finite) {
  return c_->infer_batch(worker, batch, out, non_finite);
}

Status EncoderWorkers::non_finite_error(const std::string& rows, size_t worker, bool advise) const {
  return c_->non_finite_error(rows, worker, advise);
}

EncoderStats Encoder::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  EncoderStats s = call_stats_;
  s.devices.clear();
  for (const std::unique_ptr<Device>& d : devices_) {
    DeviceStats ds;
    ds.name = d->name;
    ds.streams = static_cast<int>(d->streams.size());
    ds.oom_retries = d->oom_retries.load();
    const int64_t limit = d->limit.load();
    ds.max_computed_tokens = limit == std::numeric_limits<int64_t>::max() ? 0 : limit;
    s.devices.push_back(std::move(ds));
  }
  for (const std::unique_ptr<Worker>& w : workers_) {
    add_counts(s, w->given);
    DeviceStats& ds = s.devices[w->device_index];
    ds.rows += w->rows_run;
    ds.batches += w->batches_run;
    ds.infer_seconds += w->infer_s;
    s.infer_seconds += w->infer_s;
  }
  return s;
}

Status Encoder::infer_batch(size_t worker, const backend::TokenBatch& batch, std::span<float> out,
                            std::vector<int32_t>* non_finite) {
  INFERCOST_CHECK(worker < workers_.size());
  const size_t labels = static_cast<size_t>(outputs());
  INFERCOST_CHECK(out.size() == static_cast<size_t>(batch.batch) * labels);
  Worker& w = *workers_[worker];
  count_batch(w.given, batch, max_length_, w.engine->skips_padding());
  INFERCOST_RETURN_IF_ERROR(classify_rows(batch, w, out));
  std::vector<int32_t> bad;
  for (int32_t r = 0; r < batch.batch; ++r) {
    const float* row = out.data() + static_cast<size_t>(r) * labels;
    if (std::any_of(row, row + labels, [](float v) { return std::isnan(v); })) bad.push_back(r);
  }
  test_point("batch-done");
  if (non_finite) {
    *non_finite = std::move(bad);
    return Status();
  }
  if (bad.empty()) return Status();
  return non_finite_error(name_rows("batch row", std::vector<int64_t>(bad.begin(), bad.end())), worker);
}

std::string name_rows(const std::string& unit, const std::vector<int64_t>& numbers) {
  constexpr size_t kNamed = 10;
  const size_t named = std::min(numbers.size(), kNamed);
  std::string text =
      fmt::format("{}{} {}", unit, numbers.size() == 1 ? "" : "s",
                  fmt::join(numbers.begin(), numbers.begin() + static_cast<ptrdiff_t>(named), ", "));
  if (numbers.size() > named) text += fmt::format(" and {} more", numbers.size() - named);
  return text;
}

Status Encoder::non_finite_error(const std::string& rows, size_t worker, bool advise) const {
  const Worker& w = *workers_[worker];
  const backend::Precision p = w.engine->precision();
  const std::string advice =
      p == backend::Precision::kFp16
          ? "fp16's range overflowed: use " + setting_ref("precision", "bf16") + " (fp32's range) or fp32"
      : p == backend::Precision::kFp32
          ? "in fp32 this comes from the model's weights or a kernel: check the weight file (infercost model "
            "info) and compare with " +
                setting_ref("device", "cpu")
          : "use " + setting_ref("precision", "fp32");
  const std::string what =
      fmt::format("{}: the model's outputs are not finite numbers (NaN or infinity) in {} on {}", rows,
                  backend::precision_name(p), w.device->name);
  return non_finite(advise ? what + "; " + advice : what);
}

Status Encoder::classify_rows(const backend::TokenBatch& t, Worker& worker, std::span<float> out) {
  Device& device = *worker.device;
  const int64_t computed = computed_tokens(t, worker.engine->skips_padding());
  if (t.batch > 1 && computed > device.limit.load()) return classify_halves(t, worker, out);
  const auto start = std::chrono::steady_clock::now();
  Result<backend::ForwardOutput> logits = worker.engine->forward(t);
  worker.infer_s += seconds_since(start);
  if (!logits.ok()) {
    const Status& error = logits.status();
    if (error.code() != StatusCode::kResourceExhausted) {
      return name_device_error(error, device.name);
    }
    device.lower_limit(computed - 1);
    if (t.batch == 1) {
      return resource_exhausted(fmt::format(
          "{}: a single row of {} tokens ({} computed) does not fit in the device's memory ({}); lower "
          "{max_length} or use a device with more memory",
          device.name, t.lengths[0], computed, error.message(),
          fmt::arg("max_length", setting_ref("max_length"))));
    }
    device.oom_retries.fetch_add(1);
    return classify_halves(t, worker, out);
  }
  const int labels = outputs();
  if (logits->rows != t.batch || logits->width != labels) {
    return internal_error(fmt::format("{}: backend returned outputs of the wrong shape", device.name));
  }
  // A row with a logit that is not finite is all NaN (infer_batch finds it
  // so): a sigmoid of +inf would pass for a probability.
  for (int r = 0; r < logits->rows; ++r) {
    float* row = logits->values.data() + static_cast<size_t>(r) * static_cast<size_t>(labels);
    if (!std::all_of(row, row + labels, [](float v) { return std::isfinite(v); })) {
      std::fill(row, row + labels, std::numeric_limits<float>::quiet_NaN());
    }
  }
  if (embedding_) {
    if (embedding_->normalize) normalize_rows(logits->values.data(), logits->rows, labels);
  } else {
    apply_head_function(function_, logits->values.data(), logits->rows, labels);
  }
  std::copy(logits->values.begin(), logits->values.end(), out.begin());
  worker.rows_run += t.batch;
  ++worker.batches_run;
  return Status();
}

Status Encoder::classify_halves(const backend::TokenBatch& batch, Worker& worker, std::span<float> out) {
  auto [first, second] = split_token_batch(batch);
  const size_t at = static_cast<size_t>(first.batch) * static_cast<size_t>(outputs());
  INFERCOST_RETURN_IF_ERROR(classify_rows(first, worker, out.first(at)));
  return classify_rows(second, worker, out.subspan(at));
}

namespace {

// The signal number `stop` holds; 0 when unset or not given.
int stop_signal(const std::atomic<int>* stop) {
  return stop != nullptr ? stop->load() : 0;
}

// What classify() or embed() (`task`) returns once `stop` is set.
Status stopped(Task task, int signal, size_t rows) {
  return Status(StatusCode::kCancelled, fmt::format("{} stopped by signal {} before its {} rows were done",
                                                    task_name(task), signal, rows));
}

// A call of `call`'s task on an encoder opened for `opened`: kInvalidArgument
// saying so ("classify(): this model was opened to embed ...").
Status check_task(Task opened, Task call) {
  if (opened == call) return Status();
  return invalid_argument(fmt::format("{}(): this model was opened to {} (task {}); open it again to {}",
                                      task_name(call), task_name(opened), task_name(opened),
                                      task_name(call)));
}

}  // namespace

Result<Classification> Encoder::classify(std::span<const std::string_view> texts,
                                         std::span<const uint8_t> is_null, const std::atomic<int>* stop) {
  INFERCOST_RETURN_IF_ERROR(check_task(task_, Task::kClassify));
  Classification result;
  result.labels = outputs();
  INFERCOST_RETURN_IF_ERROR(run_rows(texts, is_null, stop, {result.scores, result.is_null, result.skipped}));
  const size_t labels = static_cast<size_t>(result.labels);
  result.label.assign(result.is_null.size(), -1);
  for (size_t i = 0; i < result.label.size(); ++i) {
    if (result.is_null[i]) continue;
    result.label[i] = static_cast<int32_t>(io::winning_label(result.scores.data() + i * labels, labels));
  }
  return result;
}

Result<Embeddings> Encoder::embed(std::span<const std::string_view> texts, std::span<const uint8_t> is_null,
                                  const std::atomic<int>* stop) {
  INFERCOST_RETURN_IF_ERROR(check_task(task_, Task::kEmbed));
  Embeddings result;
  result.dimensions = outputs();
  INFERCOST_RETURN_IF_ERROR(run_rows(texts, is_null, stop, {result.vectors, result.is_null, result.skipped}));
  return result;
}

Status Encoder::run_rows(std::span<const std::string_view> texts, std::span<const uint8_t> is_null,
                         const std::atomic<int>* stop, CallRows out) {
  if (!is_null.empty() && is_null.size() != texts.size()) {
    return invalid_argument(
        fmt::format("{} null flags for {} texts: give one per text, or none", is_null.size(), texts.size()));
  }
  std::lock_guard<std::mutex> lock(mu_);
  const size_t n = texts.size();
  out.values.assign(n * static_cast<size_t>(outputs()), 0.0f);
  out.is_null.assign(n, 0);
  out.skipped.assign(n, 0);
  for (size_t begin = 0; begin < n; begin += kClassifyChunkRows) {
    const size_t end = std::min(n, begin + kClassifyChunkRows);
    if (const int signal = stop_signal(stop); signal != 0) return stopped(task_, signal, n);
    INFERCOST_RETURN_IF_ERROR(run_chunk(texts.subspan(begin, end - begin),
                                        is_null.empty() ? is_null : is_null.subspan(begin, end - begin),
                                        begin, stop, out));
  }
  return Status();
}

Status Encoder::run_chunk(std::span<const std::string_view> texts, std::span<const uint8_t> is_null,
                          size_t first_row, const std::atomic<int>* stop, CallRows result) {
  auto start = std::chrono::steady_clock::now();
  TokenizedRows tokenized;
  tokenize_rows(*tokenizer_, texts, is_null, tokenizer_threads_, tokenized);
  call_stats_.tokenize_seconds += seconds_since(start);

  start = std::chrono::steady_clock::now();
  SortedRows sorted;
  Status bad_row = sort_rows(
      is_null, tokenized.errors, on_bad_row_,
      [first_row](size_t i, const Status& error) {
        return invalid_argument(fmt::format("row {}: {}", first_row + i, error.message()));
      },
      sorted);
  call_stats_.rows_null += sorted.rows_null;
  call_stats_.rows_skipped += sorted.rows_skipped;
  INFERCOST_RETURN_IF_ERROR(bad_row);
  for (size_t i = 0; i < texts.size(); ++i) {
    result.skipped[first_row + i] = sorted.skipped[i];
    result.is_null[first_row + i] = sorted.skipped[i] || (!is_null.empty() && is_null[i]) ? 1 : 0;
  }
  const std::vector<int32_t>& rows = sorted.classify;
  int longest = 0;
  for (int32_t r : rows)
    longest = std::max(longest, static_cast<int>(tokenized.ids[static_cast<size_t>(r)].size()));
  std::vector<std::vector<int32_t>> batches;
  if (policy_.batching == Batching::kSeed) {
    for (std::span<const int32_t> batch : batches_in_order<int32_t>(policy_, rows)) {
      batches.emplace_back(batch.begin(), batch.end());
    }
  } else {
    batches = pack_by_tokens(policy_, tokenized.ids, rows);
  }
  call_stats_.batch_seconds += seconds_since(start);

  // Every worker pulls the next batch; the first error in batch order wins.
  const bool seed = policy_.batching == Batching::kSeed;
  const size_t labels = static_cast<size_t>(outputs());
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::atomic<bool> cancelled{false};
  std::atomic<int64_t> skipped_non_finite{0};
  std::vector<Status> errors(batches.size());
  auto work = [&](size_t w) {
    std::vector<std::span<const int32_t>> ids;
    std::vector<float> out;
    std::vector<int32_t> bad;
    for (size_t b = next.fetch_add(1); b < batches.size() && !failed.load(); b = next.fetch_add(1)) {
      if (stop_signal(stop) != 0) {
        cancelled.store(true);
        failed.store(true);
        return;
      }
      ids.clear();
      for (int32_t r : batches[b]) ids.emplace_back(tokenized.ids[static_cast<size_t>(r)]);
      const backend::TokenBatch batch = make_token_batch(ids, seed ? longest : 0, seed, policy_.pad_id);
      out.resize(batches[b].size() * labels);
      Status s = infer_batch(w, batch, out, &bad);
      if (s.ok() && !bad.empty()) {
        if (on_bad_row_ == OnBadRow::kFail) {
          std::vector<int64_t> named;
          for (int32_t k : bad) {
            named.push_back(static_cast<int64_t>(first_row) + batches[b][static_cast<size_t>(k)]);
          }
          std::sort(named.begin(), named.end());
          s = non_finite_error(name_rows("row", named), w);
        } else {
          for (int32_t k : bad) {
            const size_t row = first_row + static_cast<size_t>(batches[b][static_cast<size_t>(k)]);
            result.is_null[row] = 1;
            result.skipped[row] = 1;
          }
          skipped_non_finite.fetch_add(static_cast<int64_t>(bad.size()));
        }
      }
      if (!s.ok()) {
        errors[b] = std::move(s);
        failed.store(true);
        return;
      }
      for (size_t k = 0; k < batches[b].size(); ++k) {
        std::copy_n(out.begin() + static_cast<ptrdiff_t>(k * labels), labels,
                    result.values.begin() +
                        static_cast<ptrdiff_t>((first_row + static_cast<size_t>(batches[b][k])) * labels));
      }
    }
  };
  const size_t threads = std::min(workers_.size(), batches.size());
  std::vector<std::thread> pool;
  for (size_t w = 1; w < threads; ++w) pool.emplace_back(work, w);
  if (threads > 0) work(0);
  for (std::thread& t : pool) t.join();
  call_stats_.rows_skipped += skipped_non_finite.load();
  for (Status& s : errors) {
    if (!s.ok()) return s;
  }
  if (cancelled.load()) return stopped(task_, stop_signal(stop), result.is_null.size());
  return Status();
}

}  // namespace infercost::engine
