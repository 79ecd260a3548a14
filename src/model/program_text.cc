#include <fmt/format.h>

#include "model/program.h"

namespace infercost::model {

namespace {

const char* slot_name(Slot slot) {
  switch (slot) {
    case Slot::kStates: return "states";
    case Slot::kNormed: return "normed states";
    case Slot::kContext: return "context";
    case Slot::kInner: return "inner";
  }
  return "?";
}

std::string norm_name(const NormRef& n) {
  switch (n.kind) {
    case NormRef::Kind::kAttention: return "attention norm";
    case NormRef::Kind::kFeedForward: return "feed-forward norm";
    case NormRef::Kind::kFinal: return "final norm";
  }
  return "?";
}

struct Describer {
  const ModelConfig& c;
  std::string operator()(const EmbedStep& s) const {
    return fmt::format("embeddings: words{}{}, LayerNorm", s.position_table ? " + positions (table)" : "",
                       s.token_types ? " + token types" : "");
  }
  std::string operator()(const NormStep& s) const {
    return fmt::format("{} -> {}", norm_name(s.norm), slot_name(s.out));
  }
  std::string operator()(const AttentionStep& s) const {
    std::string what = s.scores == Scores::kDisentangled ? "disentangled attention" : "attention";
    if (s.scores == Scores::kDisentangled)
      what += fmt::format(" ({} position term{}, {} relative positions)", s.position_terms,
                          s.position_terms == 1 ? "" : "s", 2 * c.relative_span());
    if (s.rotary_theta > 0) what += fmt::format(", rotary (theta {:g})", s.rotary_theta);
    what += s.window > 0 ? fmt::format(", window {} each side", s.window) : std::string(", global");
    return fmt::format("{} heads x {}: {} of {}", c.num_heads, c.head_dim(), what, slot_name(s.in));
  }
  std::string operator()(const FeedForwardStep& s) const {
    return fmt::format("feed-forward {} -> {}{} -> {} of {}", c.hidden_size, c.intermediate_size,
                       s.glu ? " x 2 (gated)" : "", activation_name(s.activation), slot_name(s.in));
  }
  std::string operator()(const ResidualStep& s) const {
    const char* what = s.projection == ResidualStep::Projection::kAttentionOutput ? "attention output"
                                                                                  : "feed-forward output";
    return fmt::format("states += {}; {} -> {}", what, norm_name(s.norm), slot_name(s.out));
  }
  std::string operator()(const PoolStep& s) const {
    return fmt::format("output: {} pooling", pooling_name(s.pooling));
  }
  std::string operator()(const HeadStep& s) const {
    return fmt::format("output: head on the {}: dense, {}{}, classifier to {} labels",
                       s.pooling == Pooling::kMean ? "mean of the tokens" : "first token",
                       activation_name(s.activation), s.norm ? ", LayerNorm" : "", c.num_labels());
  }
  std::string operator()(const TokenStep& s) const {
    if (!s.classifier) return "output: every token's states";
    return fmt::format(
        "output: on every token: {}classifier to {} labels",
        s.pre ? fmt::format("dense, {}{}, ", activation_name(s.activation), s.norm ? ", LayerNorm" : "")
              : std::string(),
        c.num_labels());
  }
};

int step_layer(const Step& step) {
  return std::visit(
      [](const auto& s) -> int {
        if constexpr (requires { s.layer; }) {
          return s.layer;
        } else {
          return -1;
        }
      },
      step);
}

// What layers 1.. do differently from layer 0 (their windows and rotary
// bases, the pre-norm encoder's final norm), for the line that stands for them.
std::string later_layers(const ForwardProgram& program, const ModelConfig& config, size_t steps) {
  bool own_attention = false, final_norm = false;
  const AttentionStep* first = nullptr;
  for (size_t i = 0; i < program.steps.size() && i < steps; ++i) {
    if (const auto* a = std::get_if<AttentionStep>(&program.steps[i])) {
      if (first == nullptr) first = a;
      own_attention = own_attention || a->window != first->window || a->rotary_theta != first->rotary_theta;
    } else if (const auto* r = std::get_if<ResidualStep>(&program.steps[i])) {
      final_norm = final_norm || r->norm.kind == NormRef::Kind::kFinal;
    }
  }
  std::string out = fmt::format("  layers 1..{}: the same steps", config.num_layers - 1);
  if (own_attention) out += ", each with its own window and rotary base (above)";
  if (final_norm) out += "; the last layer's last norm is the final norm, in place";
  return out + "\n";
}

}  // namespace

std::string describe(const ForwardProgram& program, const ModelConfig& config, size_t steps) {
  std::string out;
  bool repeated = false;
  for (size_t i = 0; i < program.steps.size() && i < steps; ++i) {
    const Step& step = program.steps[i];
    const int layer = step_layer(step);
    if (layer > 0) {
      repeated = true;
      continue;
    }
    if (repeated && layer < 0) {
      out += later_layers(program, config, steps);
      repeated = false;
    }
    out += fmt::format("  {}{}\n", layer == 0 ? "layer 0: " : "", std::visit(Describer{config}, step));
  }
  if (repeated) out += later_layers(program, config, steps);
  return out;
}

}  // namespace infercost::model
