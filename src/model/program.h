// The encoder's forward pass, written once, as data: the steps a model runs
// from token ids to its output, in order. A family is described by its
// config (ModelConfig's fields); forward_program() turns that into steps, and
// every executor (the CPU backend, the CUDA backend, the double-checked
// reference encoder) implements each kind of step with its own kernels and
// fusions. Nothing else of the pass is written anywhere: an executor never
// asks which family it runs, only what the step says.
//
// A step reads and writes named slots of activations (Slot); an executor
// maps them onto its memory and may share memory between slots that are
// never live together (the CUDA backend keeps kNormed and kContext in one
// buffer: a normed input is consumed by the QKV projection before attention
// writes its context).
//
// forward_program() is in program.cc, linked into the CUDA module too
// (infercost_model_relative); describe() in program_text.cc.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "model/config.h"
#include "model/embedding.h"
#include "model/token_output.h"
#include "model/weights.h"

namespace infercost::model {

// Activations, each [tokens, hidden] but kInner ([tokens, intermediate]).
// kStates: the residual stream; kNormed: a norm of it that a step reads;
// kContext: attention's output before its projection; kInner: the
// feed-forward's activated first layer.
enum class Slot { kStates, kNormed, kContext, kInner };

// Which LayerNorm's weights a step applies: a layer's attention norm
// (post-norm: after attention's residual; pre-norm: before attention), its
// feed-forward norm (after / before the feed-forward), or the final norm of a
// pre-norm encoder.
struct NormRef {
  enum class Kind { kAttention, kFeedForward, kFinal };
  Kind kind = Kind::kAttention;
  int layer = 0;  // unused for kFinal
};

// states = LayerNorm(word[id] + position[position id] (where the model has
// a position table) + type[type id] (where the model has a token type table
// and the batch gives type ids, as for text pairs; otherwise the embedding
// bias: type 0's row, or zeros)). Position ids as config.position_scheme()
// numbers them.
struct EmbedStep {
  bool position_table = true;
  bool token_types = false;
};

// out = LayerNorm(states), with `norm`'s weights.
struct NormStep {
  NormRef norm;
  Slot out = Slot::kNormed;
};

// How attention scores a query against a key. kDot: q.k / sqrt(head_dim),
// within `window` tokens on each side (0: all). kDisentangled (DeBERTa):
// q.k plus the layer's content-to-position and position-to-content terms,
// over sqrt(head_dim x the number of terms).
enum class Scores { kDot, kDisentangled };

// context = softmax(scores(rotate(q), rotate(k))) v, with q|k|v the layer's
// projections of `in`; rotary positions where rotary_theta > 0.
struct AttentionStep {
  int layer = 0;
  Slot in = Slot::kStates;
  Scores scores = Scores::kDot;
  int window = 0;
  double rotary_theta = 0;
  // kDisentangled: the relative-position terms each score adds (c2p, p2c).
  int position_terms = 0;
  float scale = 1.0f;  // what the summed score terms are multiplied by
};

// inner = act(in W1 + b1); glu: W1 gives [a | gate], inner = act(a) * gate.
struct FeedForwardStep {
  int layer = 0;
  Slot in = Slot::kNormed;
  Activation activation = Activation::kGelu;
  bool glu = false;
};

// states += in W + b, with the layer's attention output projection (from
// kContext) or its feed-forward output layer (from kInner); then out =
// LayerNorm(states) with `norm`'s weights. keep_sum: the sum stays the
// residual stream and the norm is a separate input (pre-norm: an executor
// storing the stream in a reduced precision rounds the sum first); false:
// the norm replaces the stream (post-norm, out is kStates).
struct ResidualStep {
  enum class Projection { kAttentionOutput, kFeedForwardOutput };
  Projection projection = Projection::kAttentionOutput;
  int layer = 0;
  NormRef norm;
  Slot out = Slot::kStates;
  bool keep_sum = false;
};

// The output: each row's real tokens' states pooled into one vector
// (embeddings), hidden_size values per row.
struct PoolStep {
  Pooling pooling = Pooling::kMean;
};

// The output: the classifier head's logits, num_labels values per row:
// classifier(norm(act(pre(pool(states))))), the norm where `norm` is set.
struct HeadStep {
  Pooling pooling = Pooling::kCls;  // kCls (the first token) or kMean
  Activation activation = Activation::kTanh;
  bool norm = false;
};

// The output, per token (token classification): every computed token's
// last state, hidden_size values per token, or, with `classifier`, the
// classifier's logits on each one: classifier(state), or with `pre`
// classifier(norm(act(pre(state)))), the head's dense layer, activation and
// (where `norm` is set) LayerNorm first.
struct TokenStep {
  bool classifier = false;
  bool pre = false;
  Activation activation = Activation::kGelu;
  bool norm = false;
};

using Step = std::variant<EmbedStep, NormStep, AttentionStep, FeedForwardStep, ResidualStep, PoolStep,
                          HeadStep, TokenStep>;

struct ForwardProgram {
  std::vector<Step> steps;
  bool pooled() const { return !steps.empty() && std::holds_alternative<PoolStep>(steps.back()); }
  bool per_token() const { return !steps.empty() && std::holds_alternative<TokenStep>(steps.back()); }
  // Whether the output step reads the head's weights (the classifier head, a
  // token classifier): a program without needs no head in the weights.
  bool reads_head() const;
};

// The weights of the LayerNorm `norm` names, and how errors name it.
inline const LayerNormWeights& norm_weights(const EncoderWeights& w, const NormRef& norm) {
  switch (norm.kind) {
    case NormRef::Kind::kAttention: return w.layers[static_cast<size_t>(norm.layer)].attn_ln;
    case NormRef::Kind::kFeedForward: return w.layers[static_cast<size_t>(norm.layer)].ffn_ln;
    case NormRef::Kind::kFinal: break;
  }
  return w.final_ln;
}
std::string norm_label(const NormRef& norm);  // "layer 3: attention LayerNorm", "final LayerNorm"

// The program of `config`'s encoder ending in its classifier head, or, where
// `tokens` is set, in those outputs of every token (a TokenStep), or, where
// `pooling` is set, in that pooling of the last states (an embedder).
// Preconditions: a config parse_config() accepted; pooling and tokens not
// both set (tokens wins).
ForwardProgram forward_program(const ModelConfig& config, std::optional<Pooling> pooling = std::nullopt,
                               std::optional<TokenOutput> tokens = std::nullopt);

// One line per step of the first layer (the others repeat it, with their
// own windows and rotary bases) and of the output, each indented two spaces,
// for `model info`; the first `steps` steps only where given (the encoder's:
// encoder_steps()).
std::string describe(const ForwardProgram& program, const ModelConfig& config, size_t steps = SIZE_MAX);

// What an executor implements: one function per kind of step. run_program()
// calls them in the program's order.
class StepExecutor {
 public:
  virtual ~StepExecutor() = default;
  virtual void run(const EmbedStep& step) = 0;
  virtual void run(const NormStep& step) = 0;
  virtual void run(const AttentionStep& step) = 0;
  virtual void run(const FeedForwardStep& step) = 0;
  virtual void run(const ResidualStep& step) = 0;
  virtual void run(const PoolStep& step) = 0;
  virtual void run(const HeadStep& step) = 0;
  virtual void run(const TokenStep& step) = 0;
};

// Runs `program`'s steps on `executor`, in order; `steps` of them (all by
// default), so that the reference encoder can stop at the last states.
inline void run_program(const ForwardProgram& program, StepExecutor& executor, size_t steps = SIZE_MAX) {
  for (size_t i = 0; i < program.steps.size() && i < steps; ++i)
    std::visit([&](const auto& step) { executor.run(step); }, program.steps[i]);
}

// The number of steps before the output (pool, head or tokens): the encoder's.
inline size_t encoder_steps(const ForwardProgram& program) {
  return program.steps.empty() ? 0 : program.steps.size() - 1;
}

}  // namespace infercost::model
