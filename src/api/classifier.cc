#include "infercost/classifier.h"

#include <mutex>
#include <utility>

#include "api/spelled.h"
#include "engine/encoder.h"
#include "engine/encoder_metrics.h"
#include "engine/head.h"

namespace infercost {

// What a Classifier and an Embedder hold: the engine's encoder, the options
// each call is measured with (unpriced), and the last call's metrics.
struct LoadedModel::Impl {
  std::unique_ptr<engine::Encoder> encoder;
  RunOptions options;
  std::mutex call_mu;     // one measured call at a time, so that its counters are its own
  mutable std::mutex mu;  // last
  RunMetrics last;

  // The encoder of `model_dir` for `task` (the options checked and resolved
  // once, by Encoder::open), or the reason, spelled as the API spells settings.
  static Result<std::unique_ptr<Impl>> open(const std::string& model_dir, const ModelOptions& model,
                                            Task task) {
    auto impl = std::make_unique<Impl>();
    static_cast<ModelOptions&>(impl->options) = model;
    impl->options.task = task;
    INFERCOST_ASSIGN_OR_RETURN(impl->encoder, api::spelled(engine::Encoder::open(model_dir, impl->options)));
    return impl;
  }

  // Runs `call` on the encoder, measured as a run of its rows.
  template <typename Out, typename Call>
  Result<Out> measured(Call call) {
    std::lock_guard<std::mutex> one_call(call_mu);
    Out out;
    Result<RunMetrics> metrics = engine::measure_call(*encoder, options, RunCost{}, [&]() -> Status {
      Result<Out> done = call(*encoder);
      if (!done.ok()) return done.status();
      out = std::move(*done);
      return Status();
    });
    if (!metrics.ok()) return api::spelled(metrics.status());
    std::lock_guard<std::mutex> lock(mu);
    last = std::move(*metrics);
    return out;
  }
};

LoadedModel::LoadedModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LoadedModel::~LoadedModel() = default;

RunMetrics LoadedModel::last_call_metrics() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->last;
}
std::string LoadedModel::precision() const {
  return impl_->encoder->precision();
}
std::vector<std::string> LoadedModel::devices() const {
  return impl_->encoder->devices();
}
int LoadedModel::max_length() const {
  return impl_->encoder->max_length();
}

Result<std::unique_ptr<Classifier>> Classifier::open(const std::string& model_dir,
                                                     const ModelOptions& options) {
  INFERCOST_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, Impl::open(model_dir, options, Task::kClassify));
  return std::unique_ptr<Classifier>(new Classifier(std::move(impl)));
}

Result<Classification> Classifier::classify(std::span<const std::string_view> texts,
                                            std::span<const uint8_t> is_null, const std::atomic<int>* stop) {
  return impl_->measured<Classification>(
      [&](engine::Encoder& e) { return e.classify(texts, is_null, stop); });
}

const std::vector<std::string>& Classifier::labels() const {
  return impl_->encoder->config().labels;
}
std::string Classifier::head_function() const {
  return engine::head_function_name(impl_->encoder->head_function());
}

Result<std::unique_ptr<Embedder>> Embedder::open(const std::string& model_dir, const ModelOptions& options) {
  INFERCOST_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, Impl::open(model_dir, options, Task::kEmbed));
  return std::unique_ptr<Embedder>(new Embedder(std::move(impl)));
}

Result<Embeddings> Embedder::embed(std::span<const std::string_view> texts, std::span<const uint8_t> is_null,
                                   const std::atomic<int>* stop) {
  return impl_->measured<Embeddings>([&](engine::Encoder& e) { return e.embed(texts, is_null, stop); });
}

int Embedder::dimensions() const {
  return impl_->encoder->outputs();
}
Pooling Embedder::pooling() const {
  return impl_->encoder->embedding()->pooling;
}
bool Embedder::normalized() const {
  return impl_->encoder->embedding()->normalize;
}

}  // namespace infercost
