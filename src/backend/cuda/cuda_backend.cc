// The CUDA backend (libinfercost_cuda.so): the model's forward program
// (model/program.h: every family's steps) on one GPU, each step by cuBLASLt
// GEMMs and the kernels of kernels.h (a residual add fused with the norm
// after it), over packed variable-length batches, captured as CUDA graphs.
// docs/cuda.md describes the design; runtime.h holds the failures, lock and
// buffers, device_weights.h the uploaded model, gemm.h the cuBLASLt layers,
// host.h the parts CI tests without a GPU.
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "backend/cuda/device_weights.h"
#include "backend/cuda/gemm.h"
#include "backend/cuda/host.h"
#include "backend/cuda/kernels.h"
#include "backend/cuda/runtime.h"
#include "backend/cuda_module_api.h"
#include "backend/rotary.h"
#include "backend/token_outputs.h"
#include "backend/validate.h"
#include "infercost/version.h"
#include "model/program.h"

namespace infercost::backend::cuda {
namespace {

// ---- The backend -----------------------------------------------------------------

struct DeviceFacts {
  int index = 0;
  std::string name;
  int major = 0, minor = 0;
  int64_t memory_total_bytes = 0;
};

class CudaBackend final : public Backend, private model::StepExecutor {
 public:
  // Throws CudaFailure when the stream, the cuBLASLt handle or its workspace
  // cannot be made.
  CudaBackend(const DeviceFacts& facts, Precision precision, bool graphs, std::optional<Pooling> pooling,
              std::optional<model::TokenOutput> tokens)
      : facts_(facts),
        precision_(precision),
        type_(dtype_of(precision)),
        graphs_enabled_(graphs),
        pooling_(pooling),
        tokens_(tokens),
        lock_(device_lock(facts.index)) {
    DeviceLockGuard hold(lock_);
    INFERCOST_CUDA_CHECK(cudaSetDevice(facts_.index));
    // Non-blocking: no implicit ordering with the legacy default stream,
    // which a graph capture on this stream would not tolerate.
    INFERCOST_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    try {
      gemm_ = std::make_unique<Gemm>();
    } catch (...) {
      (void)cudaStreamDestroy(stream_);
      throw;
    }
  }

  ~CudaBackend() override {
    DeviceLockGuard hold(lock_);
    (void)cudaSetDevice(facts_.index);
    if (stream_ != nullptr) (void)cudaStreamSynchronize(stream_);
    drop_graphs();
    ops_.clear();
    gemm_.reset();
    activations_.reset();
    staging_.reset();
    weights_.reset();
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
    (void)cudaGetLastError();
  }

  std::string name() const override { return fmt::format("cuda:{}", facts_.index); }
  Precision precision() const override { return precision_; }
  bool skips_padding() const override { return true; }

  Status prepare(const model::ModelConfig& config, const model::EncoderWeights& weights) override {
    prepared_ = false;
    const std::string context = fmt::format("{}: prepare {}", name(), config.name);
    if (broken_) return unusable(context);
    Status st = validate_gpu_model(config, weights, pooling_, tokens_);
    if (st.ok() && type_ == DType::kF16) st = check_fp16_range(weights);
    if (!st.ok()) return st.with_context(context);
    return guarded(context, [&] {
      DeviceLockGuard hold(lock_);
      INFERCOST_CUDA_CHECK(cudaSetDevice(facts_.index));
      drop_graphs();
      activations_.reset();
      ops_.clear();
      weights_.reset();
      auto uploaded = upload_weights(facts_.index, type_, config, weights, stream_);
      adopt(config, std::move(uploaded));
      prepared_ = true;
      return Status();
    });
  }

  Result<ForwardOutput> forward(const TokenBatch& batch) override {
    const std::string context = fmt::format("{}: classify", name());
    if (!prepared_) return invalid_argument(context + ": called before a successful prepare()");
    if (broken_) return unusable(context);
    Status st = validate_batch(config_, batch);
    if (!st.ok()) return st.with_context(context);
    ForwardOutput logits;
    logits.rows = batch.batch;
    logits.tokens = program_.per_token() ? batch.seq_len : 0;
    logits.width = labels_;
    if (batch.batch == 0) return logits;
    int64_t total = 0;
    for (int r = 0; r < batch.batch; ++r)
      total += batch.compute_padding ? batch.seq_len : batch.lengths[size_t(r)];
    if (total > INT32_MAX) {  // the packed offsets are int32
      return resource_exhausted(
          fmt::format("{}: a batch of {} rows computes {} tokens, more than one batch may hold "
                      "on the GPU (2^31 - 1): split it",
                      context, batch.batch, total));
    }
    Status run = guarded(context, [&] {
      run_encoder(batch, logits);
      return Status();
    });
    if (!run.ok()) {
      if (run.code() == StatusCode::kResourceExhausted) {
        return Status(
            run.code(),
            fmt::format("{} (batch of {} rows, {} tokens computed, {} activations)", run.message(),
                        batch.batch, total,
                        format_bytes(activation_reservation(dims_, precision_, total, batch.batch).bytes)));
      }
      return run;
    }
    return logits;
  }

  Result<BatchCapacity> capacity(int max_length) override {
    const std::string context = fmt::format("{}: capacity", name());
    if (!prepared_) return invalid_argument(context + ": called before a successful prepare()");
    if (broken_) return unusable(context);
    size_t free_bytes = 0, total_bytes = 0;
    Status st = guarded(context, [&] {
      DeviceLockGuard hold(lock_);
      INFERCOST_CUDA_CHECK(cudaSetDevice(facts_.index));
      INFERCOST_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
      return Status();
    });
    if (!st.ok()) return st;
    return batch_capacity(dims_, precision_, max_length, int64_t(free_bytes), int64_t(total_bytes),
                          activations_.bytes(), fmt::format("{} ({})", name(), facts_.name));
  }

  Result<std::unique_ptr<Backend>> fork() override {
    const std::string context = fmt::format("{}: fork", name());
    if (!prepared_) return invalid_argument(context + ": called before a successful prepare()");
    if (broken_) return unusable(context);
    std::unique_ptr<CudaBackend> twin;
    Status st = guarded(context, [&] {
      twin = std::make_unique<CudaBackend>(facts_, precision_, graphs_enabled_, pooling_, tokens_);
      twin->adopt(config_, weights_);
      twin->prepared_ = true;
      return Status();
    });
    if (!st.ok()) return st;
    return std::unique_ptr<Backend>(std::move(twin));
  }

 private:
  // Runs `body`, turning what it throws into a Status with `context`.
  template <typename F>
  Status guarded(const std::string& context, F&& body) {
    try {
      return body();
    } catch (const CudaFailure& f) {
      return failed(context, f);
    } catch (const std::bad_alloc&) {
      release_after_failure();
      return resource_exhausted(context + ": out of host memory");
    } catch (const std::exception& e) {
      return internal_error(fmt::format("{}: {}", context, e.what()));
    }
  }

  Status failed(const std::string& context, const CudaFailure& f) {
    CudaFailure::Kind kind = f.kind();
    if (kind == CudaFailure::Kind::kOther && stream_ != nullptr) {
      // An asynchronous failure shows at the next synchronization; if it is
      // sticky the context is gone.
      const cudaError_t probe = cudaStreamSynchronize(stream_);
      if (probe != cudaSuccess && is_sticky(probe)) kind = CudaFailure::Kind::kSticky;
      (void)cudaGetLastError();
    }
    switch (kind) {
      case CudaFailure::Kind::kOutOfMemory:
        release_after_failure();
        return resource_exhausted(fmt::format("{}: out of memory: {}", context, f.message()));
      case CudaFailure::Kind::kSticky:
        broken_ = true;
        broken_reason_ = f.message();
        return unusable(context);
      case CudaFailure::Kind::kOther: break;
    }
    return unavailable(fmt::format("{}: {}", context, f.message()));
  }

  Status unusable(const std::string& context) const {
    return unavailable(fmt::format("{}: the CUDA context on {} is unusable: {}; restart the process", context,
                                   name(), broken_reason_));
  }

  // After an allocation failure: give back the activation memory (the next
  // batch allocates what it needs) and the graphs that used it.
  void release_after_failure() {
    DeviceLockGuard hold(lock_);
    if (stream_ != nullptr) (void)cudaStreamSynchronize(stream_);
    drop_graphs();
    activations_.reset();
    layout_ = ActivationLayout{};
    (void)cudaGetLastError();
  }

  void adopt(const model::ModelConfig& config, std::shared_ptr<DeviceWeights> weights) {
    config_ = config;
    weights_ = std::move(weights);
    program_ = model::forward_program(config, pooling_, tokens_);
    labels_ = program_.reads_head() ? weights_->classifier.out : config.hidden_size;
    const auto& embed = std::get<model::EmbedStep>(program_.steps.front());
    bool glu = false;
    for (const model::Step& step : program_.steps) {
      if (const auto* f = std::get_if<model::FeedForwardStep>(&step)) glu = glu || f->glu;
    }
    dims_ = ModelDims{config.hidden_size,
                      config.intermediate_size,
                      labels_,
                      glu,
                      embed.token_types && weights_->token_types != nullptr,
                      program_.per_token()};
    ops_.clear();
    layer_ops_.assign(weights_->layers.size(), LayerOps{});
    pre_ = classifier_ = nullptr;
    // Each step's linear layers, with the activation the step fuses into them.
    for (const model::Step& step : program_.steps) {
      if (const auto* a = std::get_if<model::AttentionStep>(&step)) {
        layer_ops_[size_t(a->layer)].qkv = add_op(make_linear_op(
            weights_->layers[size_t(a->layer)].qkv, Act::kNone, fmt::format("layer {} qkv", a->layer)));
      } else if (const auto* f = std::get_if<model::FeedForwardStep>(&step)) {
        // A GLU's activation is applied by gelu_glu() after the GEMM.
        const Act act = f->glu ? Act::kNone : activation_as<Act>(f->activation);
        layer_ops_[size_t(f->layer)].ffn_in = add_op(make_linear_op(
            weights_->layers[size_t(f->layer)].ffn_in, act, fmt::format("layer {} ffn in", f->layer)));
      } else if (const auto* r = std::get_if<model::ResidualStep>(&step)) {
        const DeviceLayer& l = weights_->layers[size_t(r->layer)];
        LayerOps& ops = layer_ops_[size_t(r->layer)];
        if (r->projection == model::ResidualStep::Projection::kAttentionOutput) {
          ops.attn_out = add_op(
              make_linear_op(l.attn_out, Act::kNone, fmt::format("layer {} attention output", r->layer)));
        } else {
          ops.ffn_out =
              add_op(make_linear_op(l.ffn_out, Act::kNone, fmt::format("layer {} ffn out", r->layer)));
        }
      } else if (std::holds_alternative<model::HeadStep>(step)) {
        pre_ = add_op(make_head_op(weights_->pre, "head"));
        classifier_ = add_op(make_head_op(weights_->classifier, "classifier"));
      } else if (const auto* t = std::get_if<model::TokenStep>(&step); t != nullptr && t->classifier) {
        if (t->pre) pre_ = add_op(make_head_op(weights_->pre, "token head"));
        classifier_ = add_op(make_head_op(weights_->classifier, "token classifier"));
      }
    }
    layout_ = ActivationLayout{};
    activations_.reset();
  }

  const LinearOp* add_op(std::unique_ptr<LinearOp> op) {
    ops_.push_back(std::move(op));
    return ops_.back().get();
  }

  // Activation memory for at least `tokens` tokens and `sequences`
  // sequences, sized by activation_reservation() as capacity() counts it and
  // never more: another stream on this GPU may have been promised the rest.
  // It keeps the larger of the held and the needed size in each dimension,
  // or, where that does not fit, what this batch needs. Regrowing drops the
  // graphs that point into the old memory.
  void ensure_activations(int64_t tokens, int sequences) {
    if (tokens <= layout_.tokens && sequences <= layout_.sequences) return;
    DeviceLockGuard hold(lock_);
    const ActivationLayout both = activation_reservation(dims_, precision_, std::max(tokens, layout_.tokens),
                                                         std::max<int64_t>(sequences, layout_.sequences));
    const ActivationLayout own = activation_reservation(dims_, precision_, tokens, sequences);
    drop_graphs();
    activations_.reset();
    layout_ = ActivationLayout{};
    if (both.bytes > own.bytes) {
      try {
        activations_.allocate(both.bytes);
        layout_ = both;
        return;
      } catch (const CudaFailure& f) {
        if (f.kind() != CudaFailure::Kind::kOutOfMemory) throw;
      }
    }
    activations_.allocate(own.bytes);
    layout_ = own;
  }

  // Pinned staging for at least `bytes` (allocating pinned memory takes the
  // device lock; reusing it does not).
  void ensure_staging(int64_t bytes) {
    if (bytes <= staging_.bytes()) return;
    DeviceLockGuard hold(lock_);
    staging_.reserve(bytes);
  }

  struct Pointers {
    void *h, *qkv, *ctx, *ffn, *glu;
    int32_t* ints;
    const int32_t *ids, *positions, *seq_start, *key_len, *cls_rows;
    const int32_t* types;  // token type ids; null: the batch has none (or the model no type table)
    float *cls, *pooled, *logits;
  };

  Pointers pointers(int64_t total, int sequences, bool types) const {
    uint8_t* base = activations_.get();
    Pointers p{};
    p.h = base + layout_.h;
    p.qkv = base + layout_.qkv;
    p.ctx = base + layout_.ctx;
    p.ffn = base + layout_.ffn;
    p.glu = base + layout_.glu;
    p.ints = reinterpret_cast<int32_t*>(base + layout_.ints);
    const PackedOffsets o = packed_offsets(total, sequences, types);
    p.ids = p.ints + o.ids;
    p.types = types ? p.ints + o.types : nullptr;
    p.positions = p.ints + o.positions;
    p.seq_start = p.ints + o.seq_start;
    p.key_len = p.ints + o.key_len;
    p.cls_rows = p.ints + o.cls_rows;
    p.cls = reinterpret_cast<float*>(base + layout_.cls);
    p.pooled = reinterpret_cast<float*>(base + layout_.pooled);
    p.logits = reinterpret_cast<float*>(base + layout_.logits);
    return p;
  }

  void run_encoder(const TokenBatch& batch, ForwardOutput& logits) {
    INFERCOST_CUDA_CHECK(cudaSetDevice(facts_.index));
    pack_batch(batch, config_.position_scheme(), packed_, dims_.token_types);
    const int64_t total = packed_.total;
    const int sequences = packed_.sequences();
    const bool types = !packed_.types.empty();
    const PackedOffsets offsets = packed_offsets(total, sequences, types);
    ensure_activations(total, sequences);
    // The output: a row per sequence, or per computed token.
    const int64_t outputs = program_.per_token() ? total : sequences;
    ensure_staging(std::max<int64_t>(offsets.count * 4, outputs * labels_ * 4));
    const Pointers p = pointers(total, sequences, types);

    write_packed(packed_, staging_.as<int32_t>());
    // Any capture happens first, on an idle stream; the graph then runs
    // after the copy like the eager kernels would.
    const GraphKey key{sequences, total, packed_.max_rows, batch.compute_padding, types};
    const cudaGraphExec_t graph = graph_for(key, p);
    INFERCOST_CUDA_CHECK(cudaMemcpyAsync(p.ints, staging_.as<int32_t>(), size_t(offsets.count) * 4,
                                         cudaMemcpyHostToDevice, stream_));
    if (graph != nullptr) {
      INFERCOST_CUDA_CHECK(cudaGraphLaunch(graph, stream_));
    } else {
      enqueue_forward(key, p);
    }
    // The staging buffer is free again once the copy above has run, which
    // the stream orders before this one.
    INFERCOST_CUDA_CHECK(cudaMemcpyAsync(staging_.as<float>(), p.logits, size_t(outputs) * labels_ * 4,
                                         cudaMemcpyDeviceToHost, stream_));
    INFERCOST_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (program_.per_token()) {
      unpack_token_outputs(batch, staging_.as<float>(), labels_, logits);
    } else {
      logits.values.assign(staging_.as<float>(), staging_.as<float>() + size_t(outputs) * labels_);
    }
  }

  struct GraphKey {
    int sequences;
    int64_t total;
    int max_rows;
    bool padded;
    bool types;  // the batch brings token type ids
    bool operator<(const GraphKey& o) const {
      return std::tie(sequences, total, max_rows, padded, types) <
             std::tie(o.sequences, o.total, o.max_rows, o.padded, o.types);
    }
  };

  // The forward pass from the packed ints on the device to the logits on the
  // device: the program's steps; only enqueues (it is what a graph captures).
  void enqueue_forward(const GraphKey& k, const Pointers& p) {
    pass_ = Pass{&k, &p, p.ffn};
    model::run_program(program_, *this);
  }

  // ---- model::StepExecutor: the program's steps, enqueued on stream_ ----
  // Slots: states in h; the normed states and attention's context share ctx
  // (a norm is read by the QKV GEMM before attention writes ctx, and by the
  // FFN's first GEMM after the attention output has been added); the
  // feed-forward's activations in ffn (glu: in glu).

  void run(const model::EmbedStep& step) override {
    const DeviceWeights& w = *weights_;
    const Pointers& p = *pass_.p;
    // The batch's token types pick rows of the type table; without them
    // every token adds type 0's row (the embedding bias).
    const bool types = step.token_types && p.types != nullptr;
    INFERCOST_CUDA_CHECK(embed_layer_norm(type_, p.ids, p.positions, pass_.k->total, config_.hidden_size,
                                          w.word, step.position_table ? w.position : nullptr,
                                          types ? w.token_types : w.embedding_bias, w.emb_gamma, w.emb_beta,
                                          config_.layer_norm_eps, p.h, stream_, types ? p.types : nullptr));
  }

  void run(const model::NormStep& step) override {
    const NormAt n = norm_at(step.norm);
    INFERCOST_CUDA_CHECK(residual_layer_norm(type_, pass_.p->h, nullptr, slot(step.out), pass_.k->total,
                                             config_.hidden_size, n.gamma, n.beta, config_.layer_norm_eps,
                                             stream_));
  }

  void run(const model::AttentionStep& step) override {
    const DeviceLayer& l = weights_->layers[size_t(step.layer)];
    const Pointers& p = *pass_.p;
    const GraphKey& k = *pass_.k;
    const int heads = config_.num_heads, head_dim = config_.head_dim();
    gemm_->run(*layer_ops_[size_t(step.layer)].qkv, slot(step.in), k.total, p.qkv, stream_);
    if (step.rotary_theta > 0) {
      INFERCOST_CUDA_CHECK(rotary(type_, p.qkv, p.positions, k.total, heads, head_dim, l.rotary, stream_));
    }
    if (step.scores == model::Scores::kDisentangled) {
      RelativeTables rel;
      rel.pos_key = l.pos_key;
      rel.pos_query = l.pos_query;
      rel.index = weights_->relative_index;
      rel.max_delta = weights_->max_delta;
      INFERCOST_CUDA_CHECK(disentangled_attention(type_, p.qkv, p.ctx, p.seq_start, p.key_len, k.sequences,
                                                  k.max_rows, heads, head_dim, step.scale, rel, stream_));
    } else {
      INFERCOST_CUDA_CHECK(attention(type_, p.qkv, p.ctx, p.seq_start, p.key_len, k.sequences, k.max_rows,
                                     heads, head_dim, step.scale, stream_, step.window));
    }
  }

  void run(const model::FeedForwardStep& step) override {
    const Pointers& p = *pass_.p;
    const int64_t t = pass_.k->total;
    gemm_->run(*layer_ops_[size_t(step.layer)].ffn_in, slot(step.in), t, p.ffn, stream_);
    pass_.inner = p.ffn;
    if (step.glu) {
      INFERCOST_CUDA_CHECK(gelu_glu(type_, p.ffn, p.glu, t, config_.intermediate_size, stream_));
      pass_.inner = p.glu;
    }
  }

  // The projection's output goes to a buffer its input no longer needs: Q|K|V
  // after attention, ctx after the feed-forward. Then the residual add, fused
  // with the norm after it.
  void run(const model::ResidualStep& step) override {
    const Pointers& p = *pass_.p;
    const int64_t t = pass_.k->total;
    const LayerOps& ops = layer_ops_[size_t(step.layer)];
    void* delta = p.qkv;
    if (step.projection == model::ResidualStep::Projection::kAttentionOutput) {
      gemm_->run(*ops.attn_out, p.ctx, t, p.qkv, stream_);
    } else {
      gemm_->run(*ops.ffn_out, pass_.inner, t, p.ctx, stream_);
      delta = p.ctx;
    }
    const NormAt n = norm_at(step.norm);
    const int hidden = config_.hidden_size;
    const float eps = config_.layer_norm_eps;
    if (!step.keep_sum && step.out == model::Slot::kStates) {
      INFERCOST_CUDA_CHECK(add_layer_norm(type_, p.h, delta, t, hidden, n.gamma, n.beta, eps, stream_));
    } else {
      INFERCOST_CUDA_CHECK(
          residual_layer_norm(type_, p.h, delta, slot(step.out), t, hidden, n.gamma, n.beta, eps, stream_));
    }
  }

  // Each sequence's real tokens pooled into [sequences, hidden].
  void run(const model::PoolStep& step) override {
    const Pointers& p = *pass_.p;
    INFERCOST_CUDA_CHECK(pool_rows_f32(type_, p.h, p.seq_start, p.key_len, pass_.k->sequences,
                                       config_.hidden_size, pool_of(step.pooling), p.logits, stream_));
  }

  void run(const model::HeadStep& step) override {
    const Pointers& p = *pass_.p;
    const int sequences = pass_.k->sequences, hidden = config_.hidden_size;
    if (step.pooling == Pooling::kCls) {
      INFERCOST_CUDA_CHECK(gather_rows_f32(type_, p.h, p.cls_rows, sequences, hidden, p.cls, stream_));
    } else {
      INFERCOST_CUDA_CHECK(pool_rows_f32(type_, p.h, p.seq_start, p.key_len, sequences, hidden,
                                         pool_of(step.pooling), p.cls, stream_));
    }
    head_layers(sequences, true, step.activation, step.norm);
  }

  // Every computed token's state in fp32, or the token classifier's logits
  // on it, into logits ([total, labels_]; the host spreads them per row).
  void run(const model::TokenStep& step) override {
    const Pointers& p = *pass_.p;
    const int64_t total = pass_.k->total;
    INFERCOST_CUDA_CHECK(
        convert_to_f32(type_, p.h, step.classifier ? p.cls : p.logits, total * config_.hidden_size, stream_));
    if (step.classifier) head_layers(total, step.pre, step.activation, step.norm);
  }

  // The head's layers on `rows` fp32 rows of cls: with `pre`, its dense
  // layer, `activation` and (with `norm`) its norm into pooled; then the
  // classifier (of pooled, or of cls without `pre`) into logits.
  void head_layers(int64_t rows, bool pre, model::Activation activation, bool norm) {
    const Pointers& p = *pass_.p;
    const int hidden = config_.hidden_size;
    if (pre) {
      gemm_->run(*pre_, p.cls, rows, p.pooled, stream_);
      INFERCOST_CUDA_CHECK(bias_act_f32(p.pooled, static_cast<const float*>(pre_->w.bias), rows, hidden,
                                        activation_as<Act>(activation), stream_));
    }
    if (norm) {
      INFERCOST_CUDA_CHECK(residual_layer_norm(DType::kF32, p.pooled, nullptr, p.pooled, rows, hidden,
                                               weights_->head_gamma, weights_->head_beta,
                                               config_.layer_norm_eps, stream_));
    }
    gemm_->run(*classifier_, pre ? p.pooled : p.cls, rows, p.logits, stream_);
    INFERCOST_CUDA_CHECK(bias_act_f32(p.logits, static_cast<const float*>(classifier_->w.bias), rows, labels_,
                                      Act::kNone, stream_));
  }

  void* slot(model::Slot s) const {
    switch (s) {
      case model::Slot::kStates: return pass_.p->h;
      case model::Slot::kNormed:
      case model::Slot::kContext: return pass_.p->ctx;
      case model::Slot::kInner: return pass_.inner;
    }
    return pass_.p->h;
  }

  struct NormAt {
    const float *gamma, *beta;
  };
  NormAt norm_at(const model::NormRef& norm) const {
    const DeviceWeights& w = *weights_;
    switch (norm.kind) {
      case model::NormRef::Kind::kAttention:
        return {w.layers[size_t(norm.layer)].attn_gamma, w.layers[size_t(norm.layer)].attn_beta};
      case model::NormRef::Kind::kFeedForward:
        return {w.layers[size_t(norm.layer)].ffn_gamma, w.layers[size_t(norm.layer)].ffn_beta};
      case model::NormRef::Kind::kFinal: break;
    }
    return {w.final_gamma, w.final_beta};
  }

  static Pool pool_of(Pooling pooling) {
    switch (pooling) {
      case Pooling::kCls: return Pool::kCls;
      case Pooling::kMean: return Pool::kMean;
      case Pooling::kMax: return Pool::kMax;
      case Pooling::kLastToken: return Pool::kLastToken;
    }
    return Pool::kMean;
  }

  // The forward pass for this shape as a CUDA graph, captured on the
  // shape's second sighting (the first, eager, run chose the GEMM
  // algorithms). Null when the caller should run it eagerly: graphs off, a
  // shape seen for the first time, or a capture that failed (graphs are then
  // off for this backend; graph_failures_ counts it).
  cudaGraphExec_t graph_for(const GraphKey& key, const Pointers& p) {
    if (!graphs_enabled_) return nullptr;
    if (auto it = graphs_.find(key); it != graphs_.end()) {
      it->second.last_used = ++graph_clock_;
      return it->second.exec;
    }
    if (seen_.insert(key).second) {
      if (seen_.size() > 4096) seen_.clear();
      return nullptr;
    }
    cudaGraphExec_t exec = capture(key, p);
    if (exec == nullptr) return nullptr;
    if (graphs_.size() >= kMaxGraphs) {
      auto oldest = std::min_element(graphs_.begin(), graphs_.end(), [](const auto& a, const auto& b) {
        return a.second.last_used < b.second.last_used;
      });
      DeviceLockGuard hold(lock_);
      (void)cudaGraphExecDestroy(oldest->second.exec);
      graphs_.erase(oldest);
    }
    graphs_[key] = GraphEntry{exec, ++graph_clock_};
    return exec;
  }

  cudaGraphExec_t capture(const GraphKey& key, const Pointers& p) {
    const auto give_up = [&] {
      graphs_enabled_ = false;
      ++graph_failures_;
      drop_graphs();
      (void)cudaGetLastError();
      return nullptr;
    };
    try {
      warm_plans(key);  // the heuristic's calls stay outside the capture
    } catch (const CudaFailure&) {
      return give_up();
    }
    // Thread-local mode: only this thread's calls are checked against the
    // capture; the device lock keeps the other backends on this GPU from
    // allocating or freeing (device-wide synchronizations) meanwhile.
    DeviceLockGuard hold(lock_);
    if (cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return give_up();
    bool enqueued = true;
    try {
      enqueue_forward(key, p);
    } catch (const CudaFailure&) {
      enqueued = false;
    } catch (...) {
      // Anything else (no host memory) still ends the capture, or the stream
      // would stay in capture mode and fail every later batch.
      cudaGraph_t partial = nullptr;
      (void)cudaStreamEndCapture(stream_, &partial);
      if (partial != nullptr) (void)cudaGraphDestroy(partial);
      (void)give_up();
      throw;
    }
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream_, &graph);
    cudaGraphExec_t exec = nullptr;
    const bool ok = enqueued && ended == cudaSuccess && graph != nullptr &&
                    cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    if (!ok) {
      if (exec != nullptr) (void)cudaGraphExecDestroy(exec);
      return give_up();
    }
    return exec;
  }

  void warm_plans(const GraphKey& k) {
    gemm_->make_room(6);
    if (!layer_ops_.empty()) {
      const LayerOps& ops = layer_ops_.front();  // every layer has these shapes
      for (const LinearOp* op : {ops.qkv, ops.attn_out, ops.ffn_in, ops.ffn_out}) gemm_->warm(*op, k.total);
    }
    if (!program_.reads_head()) return;
    // The head runs on a row per sequence, or per token.
    const int64_t rows = program_.per_token() ? k.total : k.sequences;
    if (pre_ != nullptr) gemm_->warm(*pre_, rows);
    gemm_->warm(*classifier_, rows);
  }

  // Destroying a graph executable frees its device memory: under the lock too.
  void drop_graphs() {
    if (graphs_.empty()) return;
    DeviceLockGuard hold(lock_);
    for (auto& [key, g] : graphs_) (void)cudaGraphExecDestroy(g.exec);
    graphs_.clear();
  }

  struct LayerOps {
    const LinearOp *qkv = nullptr, *attn_out = nullptr, *ffn_in = nullptr, *ffn_out = nullptr;
  };
  struct GraphEntry {
    cudaGraphExec_t exec = nullptr;
    uint64_t last_used = 0;
  };
  static constexpr size_t kMaxGraphs = 16;

  DeviceFacts facts_;
  Precision precision_;
  DType type_;
  bool graphs_enabled_;
  std::optional<Pooling> pooling_;            // set: forward() pools instead of running the head
  std::optional<model::TokenOutput> tokens_;  // set: forward() gives outputs per token
  std::recursive_mutex& lock_;                // device_lock() of this GPU
  int graph_failures_ = 0;
  bool prepared_ = false;
  bool broken_ = false;
  std::string broken_reason_;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<Gemm> gemm_;
  model::ModelConfig config_;
  ModelDims dims_;
  int labels_ = 0;  // values per row (or token) of forward(): the labels, or hidden_size
  std::shared_ptr<DeviceWeights> weights_;
  std::vector<std::unique_ptr<LinearOp>> ops_;
  std::vector<LayerOps> layer_ops_;
  const LinearOp *pre_ = nullptr, *classifier_ = nullptr;
  model::ForwardProgram program_;
  // The call enqueue_forward() is making: its shape, its buffers, and where
  // the feed-forward's activations are (ffn, or glu after a GLU).
  struct Pass {
    const GraphKey* k = nullptr;
    const Pointers* p = nullptr;
    void* inner = nullptr;
  };
  Pass pass_;
  PackedBatch packed_;
  ActivationLayout layout_;
  DeviceBuffer activations_;
  PinnedBuffer staging_;
  std::map<GraphKey, GraphEntry> graphs_;
  std::set<GraphKey> seen_;
  uint64_t graph_clock_ = 0;
};

// ---- Module entry points -------------------------------------------------------

Result<DeviceFacts> device_facts(int index) {
  INFERCOST_ASSIGN_OR_RETURN(const int count, count_devices());
  if (index < 0 || index >= count) {
    return invalid_argument(
        fmt::format("there is no GPU cuda:{}: CUDA sees {} GPU{}", index, count, count == 1 ? "" : "s"));
  }
  cudaDeviceProp props{};
  const cudaError_t e = cudaGetDeviceProperties(&props, index);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return unavailable(fmt::format("cuda:{}: cudaGetDeviceProperties: {}", index, cuda_error_text(e)));
  }
  DeviceFacts f;
  f.index = index;
  f.name = props.name;
  f.major = props.major;
  f.minor = props.minor;
  f.memory_total_bytes = int64_t(props.totalGlobalMem);
  return f;
}

bool graphs_from_env() {
  const char* env = std::getenv("INFERCOST_CUDA_GRAPHS");
  return env == nullptr || std::string(env) != "0";
}

Result<std::unique_ptr<Backend>> create_backend_impl(const BackendOptions& options) {
  INFERCOST_RETURN_IF_ERROR(check_output_options(options).with_context("cuda backend"));
  if (options.precision == Precision::kInt8) {
    return unsupported("cuda backend: precision int8 runs on the CPU backend only; on GPUs use bf16 or fp16");
  }
  INFERCOST_ASSIGN_OR_RETURN(const DeviceFacts facts, device_facts(options.device_index));
  const std::string gpu = fmt::format("cuda:{} ({}, compute capability {}.{})", facts.index, facts.name,
                                      facts.major, facts.minor);
  if (facts.major * 10 + facts.minor < 75) {
    return unsupported(
        fmt::format("{} is too old: this build runs on compute capability 7.5 (T4) and newer; CUDA 13 "
                    "dropped Maxwell, Pascal and Volta (V100) GPUs",
                    gpu));
  }
  Precision precision = options.precision;
  if (precision == Precision::kBf16 && facts.major < 8) {
    if (!options.precision_is_default) {
      return unsupported(
          fmt::format("{} has no bf16 arithmetic (it needs compute capability 8.0 or newer): use "
                      "--precision fp16 or fp32",
                      gpu));
    }
    precision = Precision::kFp16;
  }
  try {
    return std::unique_ptr<Backend>(new CudaBackend(
        facts, precision, options.cuda_graphs && graphs_from_env(), options.pooling, options.tokens));
  } catch (const CudaFailure& f) {
    if (f.kind() == CudaFailure::Kind::kOutOfMemory) {
      return resource_exhausted(
          fmt::format("{}: out of GPU memory for the stream and cuBLASLt workspace: {}", gpu, f.message()));
    }
    return unavailable(fmt::format("{}: {}", gpu, f.message()));
  } catch (const std::bad_alloc&) {
    return resource_exhausted(gpu + ": out of host memory");
  }
}

int module_device_count(char* err, size_t err_size) {
  try {
    Result<int> count = count_devices();
    if (!count.ok()) {
      copy_message(count.status().message(), err, err_size);
      return -1;
    }
    return *count;
  } catch (const std::exception& e) {
    copy_message(e.what(), err, err_size);
    return -1;
  }
}

int module_device_info(int index, char* name, size_t name_size, int64_t* memory_total_bytes,
                       int* compute_major, int* compute_minor, char* err, size_t err_size) {
  try {
    Result<DeviceFacts> facts = device_facts(index);
    if (!facts.ok()) {
      copy_message(facts.status().message(), err, err_size);
      return -1;
    }
    copy_message(facts->name, name, name_size);
    if (memory_total_bytes) *memory_total_bytes = facts->memory_total_bytes;
    if (compute_major) *compute_major = facts->major;
    if (compute_minor) *compute_minor = facts->minor;
    return 0;
  } catch (const std::exception& e) {
    copy_message(e.what(), err, err_size);
    return -1;
  }
}

Backend* module_create(const BackendOptions* options, int* status_code, char* err, size_t err_size) {
  try {
    Result<std::unique_ptr<Backend>> made = create_backend_impl(options ? *options : BackendOptions{});
    if (!made.ok()) {
      if (status_code) *status_code = int(made.status().code());
      copy_message(made.status().message(), err, err_size);
      return nullptr;
    }
    if (status_code) *status_code = int(StatusCode::kOk);
    return std::move(made).value().release();
  } catch (const std::exception& e) {
    if (status_code) *status_code = int(StatusCode::kInternal);
    copy_message(fmt::format("cuda backend: {}", e.what()), err, err_size);
    return nullptr;
  }
}

}  // namespace
}  // namespace infercost::backend::cuda

extern "C" __attribute__((visibility("default"))) const InfercostCudaModule* infercost_cuda_module_v1() {
  static const InfercostCudaModule module = {
      INFERCOST_CUDA_MODULE_ABI,
      infercost::kVersion,
      &infercost::backend::cuda::module_device_count,
      &infercost::backend::cuda::module_device_info,
      &infercost::backend::cuda::module_create,
  };
  return &module;
}
