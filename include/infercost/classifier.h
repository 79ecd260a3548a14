// The engine's C++ API: a model loaded once on its devices, classifying or
// embedding texts in memory, with the metrics of each call. (The file run,
// reader -> model -> writer, is runner.h; `infercost run` and `infercost
// embed` are that run.)
//
//   infercost::ModelOptions options;  // CPU, all cores, fp32 unless the CPU has bf16
//   auto classifier = infercost::Classifier::open("models/sst2", options);
//   std::vector<std::string_view> texts = {"good", "bad"};
//   infercost::Result<infercost::Classification> out = (*classifier)->classify(texts);
//   // out->scores: [2, labels]; out->label: the top label of each row
//
//   auto embedder = infercost::Embedder::open("models/all-MiniLM-L6-v2", options);
//   infercost::Result<infercost::Embeddings> vectors = (*embedder)->embed(texts);  // [2, 384]
//
// Thread safety: calls on one Classifier or Embedder may come from any
// thread; they run one at a time, each spreading its batches over every
// device and stream the options asked for.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "infercost/metrics.h"
#include "infercost/options.h"
#include "infercost/status.h"

namespace infercost {

// What classify() returns: one entry per input row, in input order.
struct Classification {
  int labels = 0;  // values per row (the model's labels)
  // [rows, labels], row-major: the head function's outputs, the scores:
  // probabilities under softmax and sigmoid, the logits under none; zeros
  // where is_null.
  std::vector<float> scores;
  // The index of each row's largest value (what the CLI's `label` column
  // names); -1 where is_null.
  std::vector<int32_t> label;
  // 1 where the row has null outputs: its text was null, or it was skipped.
  std::vector<uint8_t> is_null;
  // 1 where the tokenizer refused the row under OnBadRow::kSkip (is_null is
  // then 1 too).
  std::vector<uint8_t> skipped;

  size_t rows() const { return label.size(); }
};

// What embed() returns: one vector per input row, in input order.
struct Embeddings {
  int dimensions = 0;
  // [rows, dimensions], row-major: each row's pooled (and, where asked,
  // normalized) vector; zeros where is_null.
  std::vector<float> vectors;
  std::vector<uint8_t> is_null;  // as Classification::is_null
  std::vector<uint8_t> skipped;  // as Classification::skipped

  size_t rows() const { return is_null.size(); }
};

// What a Classifier and an Embedder share: a model loaded on its devices,
// and the metrics of its last call.
class LoadedModel {
 public:
  virtual ~LoadedModel();
  LoadedModel(const LoadedModel&) = delete;
  LoadedModel& operator=(const LoadedModel&) = delete;

  // The metrics of the last call that succeeded (rows, tokens, seconds per
  // stage, devices, FLOPs), as a run's; all zero before the first.
  RunMetrics last_call_metrics() const;
  std::string precision() const;             // what the devices compute in ("fp32", "bf16", ...)
  std::vector<std::string> devices() const;  // "cpu", "cuda:0", ...
  int max_length() const;                    // tokens per row, special tokens included

 protected:
  struct Impl;
  explicit LoadedModel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class Classifier : public LoadedModel {
 public:
  // Loads the classifier of `model_dir` (a Hugging Face *ForSequenceClassification
  // directory: config.json, model.safetensors, its tokenizer) on the options'
  // devices; options.task is ignored (kClassify), and the embedding options
  // must be unset. Errors: kInvalidArgument for a bad option (naming it as
  // ModelOptions does), kNotFound / kCorruption / kUnsupported for the
  // directory, kUnavailable when a device cannot run, kResourceExhausted when
  // no batch fits.
  static Result<std::unique_ptr<Classifier>> open(const std::string& model_dir,
                                                  const ModelOptions& options = {});

  // Classifies texts[i] for every row; is_null (empty, or one flag per text)
  // marks rows that get null outputs. Rows longer than max_length() are
  // truncated. `stop`, when given and once non-zero, ends the call at its
  // next batch (kCancelled). Errors: kInvalidArgument naming the row the
  // tokenizer refuses (unless options.on_bad_row is kSkip), the devices'
  // errors, kNonFinite naming rows whose outputs are not finite.
  Result<Classification> classify(std::span<const std::string_view> texts,
                                  std::span<const uint8_t> is_null = {},
                                  const std::atomic<int>* stop = nullptr);

  const std::vector<std::string>& labels() const;  // by id: the columns of Classification::scores
  std::string head_function() const;               // "softmax", "sigmoid" or "none"

 private:
  using LoadedModel::LoadedModel;
};

class Embedder : public LoadedModel {
 public:
  // Loads the encoder of `model_dir` to embed: a sentence-transformers
  // directory (its pooling, normalization, prompt and max_seq_length), or a
  // plain Hugging Face encoder with options.pooling set; options.task is
  // ignored (kEmbed), the classification options must be unset. Errors as
  // Classifier::open, and kUnsupported for a sentence-transformers module
  // the engine does not run (naming it).
  static Result<std::unique_ptr<Embedder>> open(const std::string& model_dir,
                                                const ModelOptions& options = {});

  // One vector per text, as Classifier::classify() classifies them.
  Result<Embeddings> embed(std::span<const std::string_view> texts, std::span<const uint8_t> is_null = {},
                           const std::atomic<int>* stop = nullptr);

  int dimensions() const;
  Pooling pooling() const;
  bool normalized() const;  // unit-length vectors

 private:
  using LoadedModel::LoadedModel;
};

}  // namespace infercost
