#include "backend/validate.h"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <variant>

#include "model/program.h"

namespace infercost::backend {
namespace {

Status check_ln(const model::LayerNormWeights& ln, int hidden, const std::string& name) {
  if (ln.gamma.size() != size_t(hidden) || ln.beta.size() != size_t(hidden)) {
    return invalid_argument(fmt::format("{}: gamma has {} values and beta {}, expected {}", name,
                                        ln.gamma.size(), ln.beta.size(), hidden));
  }
  return Status();
}

Status check_linear(const model::Linear& l, int out, int in, const std::string& name) {
  if (l.out != out || l.in != in) {
    return invalid_argument(fmt::format("{}: shape [{}, {}], expected [{}, {}]", name, l.out, l.in, out, in));
  }
  if (l.weight.size() != size_t(out) * size_t(in) || l.bias.size() != size_t(out)) {
    return invalid_argument(fmt::format("{}: {} weights and {} biases for shape [{}, {}]", name,
                                        l.weight.size(), l.bias.size(), out, in));
  }
  return Status();
}

}  // namespace

Status validate_config(const model::ModelConfig& config) {
  const int hidden = config.hidden_size;
  if (hidden <= 0 || config.num_heads <= 0 || hidden % config.num_heads != 0) {
    return invalid_argument(
        fmt::format("hidden_size {} does not divide into {} heads", hidden, config.num_heads));
  }
  if (config.vocab_size <= 0 || config.max_positions() <= 0 || config.intermediate_size <= 0) {
    return invalid_argument(fmt::format(
        "config has a non-positive vocab_size ({}), usable positions ({}: max_position_embeddings {} from "
        "position {}) or intermediate_size ({})",
        config.vocab_size, config.max_positions(), config.max_position_embeddings, config.position_offset(),
        config.intermediate_size));
  }
  if (config.ffn_activation != model::Activation::kGelu &&
      config.ffn_activation != model::Activation::kRelu) {
    return unsupported(fmt::format("FFN activation '{}' (supported: gelu, relu)",
                                   model::activation_name(config.ffn_activation)));
  }
  return Status();
}

namespace {

// What each step of the program reads from the weights, checked against the
// config's sizes; errors name the tensor as the step uses it.
struct StepWeightCheck {
  const model::ModelConfig& config;
  const model::EncoderWeights& w;

  Status norm(const model::NormRef& n) const {
    return check_ln(model::norm_weights(w, n), config.hidden_size, model::norm_label(n));
  }

  Status operator()(const model::EmbedStep& s) const {
    const size_t hidden = size_t(config.hidden_size);
    if (w.position_embeddings.size() !=
        (s.position_table ? size_t(config.max_position_embeddings) * hidden : 0)) {
      return invalid_argument(fmt::format("position_embeddings has {} values, expected [{}, {}]",
                                          w.position_embeddings.size(), config.max_position_embeddings,
                                          hidden));
    }
    return Status();
  }

  Status operator()(const model::NormStep& s) const { return norm(s.norm); }

  Status operator()(const model::AttentionStep& s) const {
    const int hidden = config.hidden_size;
    const model::EncoderLayerWeights& l = w.layers[size_t(s.layer)];
    const std::string at = fmt::format("layer {}: ", s.layer);
    INFERCOST_RETURN_IF_ERROR(check_linear(l.q, hidden, hidden, at + "q"));
    INFERCOST_RETURN_IF_ERROR(check_linear(l.k, hidden, hidden, at + "k"));
    INFERCOST_RETURN_IF_ERROR(check_linear(l.v, hidden, hidden, at + "v"));
    if (s.rotary_theta > 0 && config.head_dim() % 2 != 0) {
      return invalid_argument(
          fmt::format("rotary positions need an even head size, not {}", config.head_dim()));
    }
    if (s.scores == model::Scores::kDisentangled) {
      const size_t table = size_t(2) * size_t(config.relative_span()) * size_t(hidden);
      if (l.pos_key.size() != (config.c2p ? table : 0) || l.pos_query.size() != (config.p2c ? table : 0)) {
        return invalid_argument(fmt::format(
            "layer {}: relative position tables of {} and {} values, expected {} (c2p) and {} (p2c)", s.layer,
            l.pos_key.size(), l.pos_query.size(), config.c2p ? table : 0, config.p2c ? table : 0));
      }
    }
    return Status();
  }

  Status operator()(const model::FeedForwardStep& s) const {
    const int inter = config.intermediate_size;
    if (s.glu && s.activation != model::Activation::kGelu) {
      return unsupported(fmt::format("a gated feed-forward with activation '{}' (supported: gelu)",
                                     model::activation_name(s.activation)));
    }
    return check_linear(w.layers[size_t(s.layer)].ffn_in, s.glu ? 2 * inter : inter, config.hidden_size,
                        fmt::format("layer {}: ffn in", s.layer));
  }

  Status operator()(const model::ResidualStep& s) const {
    const model::EncoderLayerWeights& l = w.layers[size_t(s.layer)];
    const int hidden = config.hidden_size;
    const std::string at = fmt::format("layer {}: ", s.layer);
    INFERCOST_RETURN_IF_ERROR(
        s.projection == model::ResidualStep::Projection::kAttentionOutput
            ? check_linear(l.attn_out, hidden, hidden, at + "attention output")
            : check_linear(l.ffn_out, hidden, config.intermediate_size, at + "ffn out"));
    return norm(s.norm);
  }

  Status operator()(const model::PoolStep&) const { return Status(); }

  Status operator()(const model::HeadStep& s) const {
    const int hidden = config.hidden_size;
    INFERCOST_RETURN_IF_ERROR(check_linear(w.head.pre, hidden, hidden, "head (pooler or pre_classifier)"));
    INFERCOST_RETURN_IF_ERROR(classifier());
    if (s.norm) return check_ln(w.head.norm, hidden, "head LayerNorm");
    return Status();
  }

  Status operator()(const model::TokenStep& s) const {
    const int hidden = config.hidden_size;
    if (!s.classifier) return Status();
    if (s.pre) INFERCOST_RETURN_IF_ERROR(check_linear(w.head.pre, hidden, hidden, "token head dense"));
    if (s.norm) INFERCOST_RETURN_IF_ERROR(check_ln(w.head.norm, hidden, "token head LayerNorm"));
    return classifier();
  }

  // The classifier: [labels, hidden], as many labels as the config names.
  Status classifier() const {
    const int hidden = config.hidden_size;
    if (w.head.classifier.in != hidden || w.head.classifier.out <= 0) {
      return invalid_argument(fmt::format("classifier: shape [{}, {}], expected [labels, {}]",
                                          w.head.classifier.out, w.head.classifier.in, hidden));
    }
    INFERCOST_RETURN_IF_ERROR(check_linear(w.head.classifier, w.head.classifier.out, hidden, "classifier"));
    if (config.num_labels() != 0 && config.num_labels() != w.head.classifier.out) {
      return invalid_argument(fmt::format("classifier has {} outputs but config.json names {} labels",
                                          w.head.classifier.out, config.num_labels()));
    }
    return Status();
  }
};

}  // namespace

Status validate_weights(const model::ModelConfig& config, const model::EncoderWeights& w,
                        std::optional<Pooling> pooling, std::optional<model::TokenOutput> tokens) {
  const int hidden = config.hidden_size;
  if (w.word_embeddings.size() != size_t(config.vocab_size) * hidden) {
    return invalid_argument(fmt::format("word_embeddings has {} values, expected [{}, {}]",
                                        w.word_embeddings.size(), config.vocab_size, hidden));
  }
  if (w.embedding_bias.size() != size_t(hidden)) {
    return invalid_argument(fmt::format("embedding_bias has {} values, expected [{}] (see embedding_bias_of)",
                                        w.embedding_bias.size(), hidden));
  }
  INFERCOST_RETURN_IF_ERROR(check_ln(w.embeddings_ln, hidden, "embeddings LayerNorm"));
  const size_t layers = size_t(config.num_layers);
  if (w.layers.size() != layers) {
    return invalid_argument(
        fmt::format("{} encoder layers in the weights, config says {}", w.layers.size(), config.num_layers));
  }
  if ((!config.rope_theta.empty() && config.rope_theta.size() != layers) ||
      (!config.attention_window.empty() && config.attention_window.size() != layers)) {
    return invalid_argument(fmt::format("{} rotary bases and {} attention windows for {} layers",
                                        config.rope_theta.size(), config.attention_window.size(), layers));
  }
  // Every step the program runs.
  const model::ForwardProgram program = model::forward_program(config, pooling, tokens);
  for (const model::Step& step : program.steps)
    INFERCOST_RETURN_IF_ERROR(std::visit(StepWeightCheck{config, w}, step));
  return Status();
}

Status validate_model(const model::ModelConfig& config, const model::EncoderWeights& weights,
                      std::optional<Pooling> pooling, std::optional<model::TokenOutput> tokens) {
  INFERCOST_RETURN_IF_ERROR(validate_config(config));
  return validate_weights(config, weights, pooling, tokens);
}

Status validate_batch(const model::ModelConfig& config, const TokenBatch& b) {
  if (b.batch < 0) return invalid_argument(fmt::format("token batch: negative batch size {}", b.batch));
  if (b.batch == 0) return Status();
  if (b.seq_len < 1) {
    return invalid_argument(fmt::format("token batch: seq_len {} must be at least 1", b.seq_len));
  }
  if (b.seq_len > config.max_positions()) {
    return invalid_argument(fmt::format("token batch: seq_len {} exceeds the model's {} positions", b.seq_len,
                                        config.max_positions()));
  }
  if (b.ids.size() != size_t(b.batch) * size_t(b.seq_len)) {
    return invalid_argument(fmt::format("token batch: {} ids for a batch of {} x {} (expected {})",
                                        b.ids.size(), b.batch, b.seq_len, int64_t(b.batch) * b.seq_len));
  }
  if (!b.type_ids.empty() && b.type_ids.size() != b.ids.size()) {
    return invalid_argument(
        fmt::format("token batch: {} token type ids for {} ids", b.type_ids.size(), b.ids.size()));
  }
  if (b.lengths.size() != size_t(b.batch)) {
    return invalid_argument(
        fmt::format("token batch: {} lengths for a batch of {} rows", b.lengths.size(), b.batch));
  }
  for (int r = 0; r < b.batch; ++r) {
    const int32_t len = b.lengths[size_t(r)];
    if (len < 1 || len > b.seq_len) {
      return invalid_argument(
          fmt::format("token batch: row {} has length {}, outside 1..{} (seq_len)", r, len, b.seq_len));
    }
    const int32_t* ids = b.ids.data() + int64_t(r) * b.seq_len;
    const int32_t checked = b.compute_padding ? b.seq_len : len;  // padding ids get computed too
    for (int32_t p = 0; p < checked; ++p) {
      if (ids[p] < 0 || ids[p] >= config.vocab_size) {
        return invalid_argument(
            fmt::format("token batch: row {} position {} has id {}, outside the vocabulary 0..{} of model {}",
                        r, p, ids[p], config.vocab_size - 1, config.name));
      }
    }
    if (b.type_ids.empty() || config.type_vocab_size == 0) continue;  // ignored without a type table
    const int32_t* types = b.type_ids.data() + int64_t(r) * b.seq_len;
    for (int32_t p = 0; p < checked; ++p) {
      if (types[p] < 0 || types[p] >= config.type_vocab_size) {
        return invalid_argument(
            fmt::format("token batch: row {} position {} has token type {}, outside 0..{}", r, p, types[p],
                        config.type_vocab_size - 1));
      }
    }
  }
  return Status();
}

}  // namespace infercost::backend
