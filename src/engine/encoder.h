// The engine below the CLI: a model loaded once on its devices, classifying
// (or embedding) texts in memory. `infercost run` and `infercost embed`
// (runner.h) are reader -> Encoder -> writer; a language binding calls
// classify() or embed() directly.
//
//   auto classifier = Encoder::open("models/sst2", options);
//   std::vector<std::string_view> texts = {"good", "bad"};
//   Result<Classification> out = (*classifier)->classify(texts);
//   // out->scores: [2, labels]; out->label: the top label of each row
//
//   options.task = Task::kEmbed;  // a sentence-transformers directory
//   auto encoder = Encoder::open("models/all-MiniLM-L6-v2", options);
//   Result<Embeddings> vectors = (*encoder)->embed(texts);  // [2, 384]
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.h"
#include "engine/batching.h"
#include "engine/head.h"
#include "infercost/classifier.h"  // Classification, Embeddings
#include "infercost/metrics.h"
#include "infercost/options.h"
#include "infercost/status.h"
#include "io/rows.h"
#include "model/config.h"
#include "model/embedding.h"
#include "text/tokenizer.h"

namespace infercost::engine {

// How a classifier finds its devices and makes its backends. Unset members
// are the real ones (backend::resolve_devices, backend::create_backend);
// tests put fake backends here. create_backend is called with a resolved
// device name ("cpu", "cuda:1"), once per device: further streams come from
// Backend::fork().
struct BackendFactory {
  std::function<Result<std::vector<std::string>>(const backend::DeviceSpec&)> resolve_devices;
  std::function<Result<std::unique_ptr<backend::Backend>>(const std::string&, const backend::BackendOptions&)>
      create_backend;
};

// A classifier's settings turned once into what the engine uses: the device
// setting as parsed (parse_device), the devices it names
// (factory.resolve_devices), the precision they compute in, and the head
// function asked for (nullopt: the model's).
struct ResolvedSettings {
  DeviceSpec device;
  std::vector<std::string> devices;
  backend::Precision precision = backend::Precision::kFp32;
  std::optional<HeadFunction> function;
};

// The ResolvedSettings of `options`, which check_settings (settings.h) has
// passed: kUnsupported / kUnavailable when CUDA cannot run here, or when no
// device is left. Encoder::open(model_dir, options) checks and resolves
// them; the file runner does both before it opens any file, so a GPU run that
// cannot start says why at once, then opens the classifier with what it
// resolved.
Result<ResolvedSettings> resolve_settings(const ModelOptions& options, const BackendFactory& factory = {});

// The task a model directory is for when none is asked: kEmbed for one
// without a classification head that sentence-transformers describes (its
// modules.json), else kClassify (a directory that cannot be read too: opening
// it says why).
Task default_task(const std::string& model_dir);

// The tokenizer threads `options` ask for: tokenizer_threads, else 1 on the
// CPU and the resolved threads elsewhere (ModelOptions::tokenizer_threads).
int resolve_tokenizer_threads(const ModelOptions& options);

// How a Task::kEmbed classifier makes its vectors: ModelOptions'
// embedding members, each unset one taken from the model.
struct EmbeddingSettings {
  Pooling pooling = Pooling::kMean;
  bool normalize = false;
  std::string prefix;  // put before every row's text
  int dimensions = 0;
  // Where the pooling came from: "sentence-transformers modules.json" or the
  // setting ("--pooling" / "pooling").
  std::string source;
};

// How a Task::kEmbed classifier of `model_dir` makes its vectors: the
// options' embedding settings, each unset one from the directory's
// sentence-transformers files (model::read_sentence_transformers);
// `dimensions` the encoder's hidden size. Sets `max_length` (0: the model's
// limit) to sentence-transformers' max_seq_length where it is 0 and the
// model has one, within the model's own limit. Errors: kInvalidArgument for
// a bad pooling or none for a directory sentence-transformers does not
// describe; kUnsupported for what the engine does not do (naming it); the
// directory's files' errors. Encoder::open and `infercost plan --embed`
// call it.
Result<EmbeddingSettings> resolve_embedding(const std::string& model_dir, const ModelOptions& options,
                                            int& max_length);

// What one device did, cumulative over the classifier's life: the run
// metrics' own per-device record (metrics.h: name, streams, batches, rows,
// infer_seconds, oom_retries, max_computed_tokens).
using DeviceStats = DeviceRunMetrics;

// Counters the run metrics are made from, cumulative over every classify()
// call and every batch the file runner classified on the workers. Rows and
// tokens count the batches as packed (before any out-of-memory split); the
// seconds are busy time.
struct EncoderStats {
  int64_t rows = 0;             // rows classified
  int64_t rows_null = 0;        // classify(): null rows
  int64_t rows_skipped = 0;     // classify(): rows the tokenizer refused, skipped (OnBadRow::kSkip)
  int64_t tokens = 0;           // real tokens, special tokens included, after truncation
  int64_t padded_tokens = 0;    // rows x batch length
  int64_t computed_tokens = 0;  // what the backends computed (computed_tokens())
  int64_t rows_at_max_length = 0;
  int64_t batches = 0;                 // batches as packed (a split batch counts once)
  std::vector<int64_t> length_counts;  // rows per exact token length
  double tokenize_seconds = 0;         // classify(): wall seconds tokenizing (tokenizer_threads() at once)
  double batch_seconds = 0;            // classify(): packing
  double infer_seconds = 0;            // summed over the workers
  std::vector<DeviceStats> devices;    // in device order
};

// A model loaded once on its devices: a backend per stream of each device
// (the workers), the batch policy resolved, the head function chosen.
//
// Thread safety: classify() and stats() may be called from any thread;
// calls on one Encoder are serialised by an internal mutex (one runs at a
// time, spreading its batches over every worker).
class Encoder {
 public:
  // Loads the model from `model_dir` (model::load_model_dir; for
  // Task::kEmbed without a classification head, its pooling, normalization,
  // prefix and default max_length resolved from the options and the
  // directory's sentence-transformers files), resolves the devices, opens
  // and prepares a backend on each (in parallel when several), forks its
  // streams, and resolves the batch policy (auto sizes from the devices'
  // capacity), the head function and threshold. Errors: kInvalidArgument
  // for a bad option (naming the setting, setting_ref), a max_length over the model's
  // positions, or (kEmbed) no pooling for a directory sentence-transformers
  // does not describe; kUnsupported for a sentence-transformers directory
  // asking for what the engine does not do; the model directory's errors
  // (kNotFound, ...);
  // the device errors of resolve_settings and of the backends,
  // prefixed with the device's name (kResourceExhausted when no batch fits).
  static Result<std::unique_ptr<Encoder>> open(const std::string& model_dir, const ModelOptions& options,
                                               BackendFactory factory = {});
  // The same with `options` checked and resolved already (resolve_settings).
  static Result<std::unique_ptr<Encoder>> open(const std::string& model_dir, const ModelOptions& options,
                                               const ResolvedSettings& settings, BackendFactory factory = {});
  ~Encoder();
  Encoder(const Encoder&) = delete;
  Encoder& operator=(const Encoder&) = delete;

  // Classifies texts[i] for every row (is_null empty: no row is null;
  // otherwise one flag per text, a null row gets null outputs). The views
  // are read during the call only; nothing of them is copied but the token
  // ids. The rows are tokenized (tokenizer_threads()), packed by the policy
  // over chunks of up to kClassifyChunkRows rows (kTokens: sorted by length
  // across the chunk; kSeed: batch_size rows in input order padded to the
  // chunk's longest row), and the batches spread over every worker. Out of
  // memory: a batch is split in two halves and each retried, and the device
  // keeps the smaller limit from then on. Errors:
  // kInvalidArgument naming the row's index for a row the tokenizer refuses
  // (unless on_bad_row is kSkip), is_null of the wrong size; the backends'
  // errors, prefixed once with the device's name (not "cpu";
  // kResourceExhausted for a single row that does not fit);
  // kNonFinite naming the rows whose outputs are not finite numbers (unless
  // on_bad_row is kSkip: then they are skipped as bad rows are).
  // `stop`, when given, is read while the call runs: once it is non-zero (a
  // signal number, as RunOptions::stop) no further batch is started and the
  // call returns kCancelled when the batches under way have ended.
  // kInvalidArgument on a classifier opened for Task::kEmbed.
  Result<Classification> classify(std::span<const std::string_view> texts,
                                  std::span<const uint8_t> is_null = {},
                                  const std::atomic<int>* stop = nullptr);
  // As classify(), for a classifier opened for Task::kEmbed: each row's
  // vector (kInvalidArgument on one opened for Task::kClassify).
  Result<Embeddings> embed(std::span<const std::string_view> texts, std::span<const uint8_t> is_null = {},
                           const std::atomic<int>* stop = nullptr);
  static constexpr size_t kClassifyChunkRows = size_t{1} << 16;

  // A snapshot of the cumulative counters. Waits for a classify() under way.
  EncoderStats stats() const;

  const model::ModelConfig& config() const { return config_; }
  const text::Tokenizer& tokenizer() const { return *tokenizer_; }
  const BatchPolicy& policy() const { return policy_; }
  // The capacity the auto sizes came from (per stream, the smallest over the
  // devices); max_tokens 0 when no size was auto.
  const backend::BatchCapacity& capacity() const { return capacity_; }
  // The devices' precisions, "+"-joined where they differ ("bf16+fp16").
  const std::string& precision() const { return precision_; }
  Task task() const { return task_; }
  // Values per row: the labels (kClassify) or the vector's dimensions (kEmbed).
  int outputs() const { return task_ == Task::kEmbed ? config_.hidden_size : config_.num_labels(); }
  // kEmbed: how the vectors are made; unset under kClassify.
  const std::optional<EmbeddingSettings>& embedding() const { return embedding_; }
  HeadFunction head_function() const { return function_; }
  // Whether outputs get a label set (writes_label_set), and its threshold (0 if not).
  bool label_set() const { return label_set_; }
  double threshold() const { return threshold_; }
  int labels() const { return config_.num_labels(); }
  int threads() const { return threads_; }
  int tokenizer_threads() const { return tokenizer_threads_; }
  int max_length() const { return max_length_; }
  std::vector<std::string> devices() const;
  // The device setting as parsed (ResolvedSettings::device).
  const DeviceSpec& device_spec() const { return device_spec_; }
  // Inference workers: one per stream of each device.
  int workers() const { return static_cast<int>(workers_.size()); }

 private:
  // The file runner's seam (src/engine/encoder_workers.h): the workers
  // and the batch-infer function, which classify() runs too.
  friend class EncoderWorkers;
  struct Device;
  struct Worker;
  Encoder();
  // open()'s last steps: a worker per stream of every device, and the
  // precision each device runs ("bf16+fp16" where GPUs differ).
  void add_workers();
  std::string precision_text() const;
  Status infer_batch(size_t worker, const backend::TokenBatch& batch, std::span<float> out,
                     std::vector<int32_t>* non_finite);
  Status non_finite_error(const std::string& rows, size_t worker, bool advise = true) const;
  Status classify_rows(const backend::TokenBatch& batch, Worker& worker, std::span<float> out);
  Status classify_halves(const backend::TokenBatch& batch, Worker& worker, std::span<float> out);
  // The rows of one classify() or embed() call: each row's outputs() values
  // into `values`, and its flags.
  struct CallRows {
    std::vector<float>& values;
    std::vector<uint8_t>& is_null;
    std::vector<uint8_t>& skipped;
  };
  Status run_rows(std::span<const std::string_view> texts, std::span<const uint8_t> is_null,
                  const std::atomic<int>* stop, CallRows out);
  Status run_chunk(std::span<const std::string_view> texts, std::span<const uint8_t> is_null,
                   size_t first_row, const std::atomic<int>* stop, CallRows out);

  model::ModelConfig config_;
  std::shared_ptr<const text::Tokenizer> tokenizer_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::vector<std::unique_ptr<Worker>> workers_;
  BatchPolicy policy_;
  backend::BatchCapacity capacity_;
  std::string precision_;
  DeviceSpec device_spec_;
  HeadFunction function_ = HeadFunction::kSoftmax;
  Task task_ = Task::kClassify;
  std::optional<EmbeddingSettings> embedding_;
  bool label_set_ = false;
  double threshold_ = 0;
  int threads_ = 0, tokenizer_threads_ = 1, max_length_ = 0;
  OnBadRow on_bad_row_ = OnBadRow::kFail;
  mutable std::mutex mu_;    // serialises classify() and stats()
  EncoderStats call_stats_;  // mu_: classify()'s own counters (nulls, skips, tokenize, batch)
};

}  // namespace infercost::engine
