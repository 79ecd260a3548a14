#include "engine/flops.h"

#include <fmt/format.h>

#include <algorithm>
#include <variant>

#include "model/program.h"

namespace infercost::engine {

EncoderShape encoder_shape(const model::ModelConfig& c) {
  EncoderShape s{c.num_layers, c.hidden_size, c.intermediate_size};
  for (const model::Step& step : model::forward_program(c).steps) {
    if (const auto* f = std::get_if<model::FeedForwardStep>(&step)) s.glu = s.glu || f->glu;
    const auto* a = std::get_if<model::AttentionStep>(&step);
    if (a == nullptr) continue;
    s.relative_terms = std::max(s.relative_terms, a->position_terms);
    if (a->window > 0) {
      s.windows.resize(static_cast<size_t>(c.num_layers), 0);
      s.windows[static_cast<size_t>(a->layer)] = a->window;
    }
  }
  return s;
}

std::string EncoderShape::describe() const {
  std::string out = fmt::format("{} layers, hidden {}, FFN {}", layers, hidden, intermediate);
  if (glu) out += ", GLU";
  int local = 0, window = 0;
  for (int w : windows) {
    if (w > 0) {
      ++local;
      window = std::max(window, w);
    }
  }
  if (local > 0) out += fmt::format(", {} of {} layers local (window {})", local, layers, window);
  if (relative_terms > 0)
    out += fmt::format(", disentangled attention ({} relative term{})", relative_terms,
                       relative_terms > 1 ? "s" : "");
  return out;
}

double encoder_linear_flops_per_token(const EncoderShape& s) {
  const double h = s.hidden, f = s.intermediate;
  return s.layers * 2.0 * (4.0 * h * h + (s.glu ? 3.0 : 2.0) * h * f);
}

double encoder_attention_flops(const EncoderShape& s, double L) {
  double pairs = 0;
  for (int layer = 0; layer < s.layers; ++layer) {
    // Query-key pairs within the window: L^2 for a global layer, else
    // L (2w + 1) - w (w + 1) where the window is shorter than the row.
    const double w =
        static_cast<size_t>(layer) < s.windows.size() ? s.windows[static_cast<size_t>(layer)] : 0;
    pairs += w <= 0 || w >= L - 1 ? L * L : L * (2 * w + 1) - w * (w + 1);
  }
  return (4.0 + 2.0 * s.relative_terms) * s.hidden * pairs;
}

double encoder_row_flops(const EncoderShape& s, double length) {
  return encoder_linear_flops_per_token(s) * length + encoder_attention_flops(s, length);
}

double encoder_flops_of_lengths(const EncoderShape& s, const std::vector<int64_t>& rows_at_length) {
  double total = 0;
  for (size_t length = 0; length < rows_at_length.size(); ++length) {
    if (rows_at_length[length] == 0) continue;
    total += static_cast<double>(rows_at_length[length]) * encoder_row_flops(s, static_cast<double>(length));
  }
  return total;
}

double encoder_flops_of_lengths(const model::ModelConfig& c, const std::vector<int64_t>& rows_at_length) {
  return encoder_flops_of_lengths(encoder_shape(c), rows_at_length);
}

}  // namespace infercost::engine
