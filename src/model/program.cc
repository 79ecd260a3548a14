#include "model/program.h"

#include <cmath>
#include <string>

namespace infercost::model {

namespace {

AttentionStep attention_step(const ModelConfig& c, int layer, Slot in) {
  AttentionStep a;
  a.layer = layer;
  a.in = in;
  a.scores = c.relative_attention ? Scores::kDisentangled : Scores::kDot;
  a.window = c.global_layer(layer) ? 0 : c.attention_window[static_cast<size_t>(layer)];
  a.rotary_theta = c.rope_theta.empty() ? 0.0 : c.rope_theta[static_cast<size_t>(layer)];
  a.position_terms = c.relative_attention ? int(c.c2p) + int(c.p2c) : 0;
  a.scale = 1.0f / std::sqrt(float(c.head_dim()) * float(1 + a.position_terms));
  return a;
}

NormRef norm_of(NormRef::Kind kind, int layer) {
  return NormRef{kind, layer};
}

}  // namespace

ForwardProgram forward_program(const ModelConfig& c, std::optional<Pooling> pooling,
                               std::optional<TokenOutput> tokens) {
  using Kind = NormRef::Kind;
  using Projection = ResidualStep::Projection;
  ForwardProgram p;
  p.steps.push_back(EmbedStep{c.position_table, c.type_vocab_size > 0});
  const bool pre = c.norm_placement == NormPlacement::kPre;
  for (int i = 0; i < c.num_layers; ++i) {
    if (pre) {
      // states += attention(norm(states)); states += mlp(norm(states)); the
      // first layer attends to the embeddings themselves, and each layer's
      // norm is made by the residual before it (the last one's: the final
      // norm, in place).
      const bool last = i + 1 == c.num_layers;
      p.steps.push_back(attention_step(c, i, i == 0 ? Slot::kStates : Slot::kNormed));
      p.steps.push_back(
          ResidualStep{Projection::kAttentionOutput, i, norm_of(Kind::kFeedForward, i), Slot::kNormed, true});
      p.steps.push_back(FeedForwardStep{i, Slot::kNormed, c.ffn_activation, c.glu});
      p.steps.push_back(ResidualStep{Projection::kFeedForwardOutput, i,
                                     last ? norm_of(Kind::kFinal, 0) : norm_of(Kind::kAttention, i + 1),
                                     last ? Slot::kStates : Slot::kNormed, true});
    } else {
      // states = norm(states + attention(states)); states = norm(states + mlp(states)).
      p.steps.push_back(attention_step(c, i, Slot::kStates));
      p.steps.push_back(
          ResidualStep{Projection::kAttentionOutput, i, norm_of(Kind::kAttention, i), Slot::kStates, false});
      p.steps.push_back(FeedForwardStep{i, Slot::kStates, c.ffn_activation, c.glu});
      p.steps.push_back(ResidualStep{Projection::kFeedForwardOutput, i, norm_of(Kind::kFeedForward, i),
                                     Slot::kStates, false});
    }
  }
  if (tokens) {
    const bool classifier = *tokens == TokenOutput::kLogits;
    const bool pre = classifier && c.token_head_pre;
    p.steps.push_back(TokenStep{classifier, pre, c.head_activation(), pre && c.head_norm});
  } else if (pooling) {
    p.steps.push_back(PoolStep{*pooling});
  } else {
    p.steps.push_back(
        HeadStep{c.head_mean_pooling ? Pooling::kMean : Pooling::kCls, c.head_activation(), c.head_norm});
  }
  return p;
}

bool ForwardProgram::reads_head() const {
  if (steps.empty()) return false;
  if (std::holds_alternative<HeadStep>(steps.back())) return true;
  const auto* t = std::get_if<TokenStep>(&steps.back());
  return t != nullptr && t->classifier;
}

std::string norm_label(const NormRef& norm) {
  switch (norm.kind) {
    case NormRef::Kind::kAttention: return "layer " + std::to_string(norm.layer) + ": attention LayerNorm";
    case NormRef::Kind::kFeedForward: return "layer " + std::to_string(norm.layer) + ": output LayerNorm";
    case NormRef::Kind::kFinal: break;
  }
  return "final LayerNorm";
}

}  // namespace infercost::model
