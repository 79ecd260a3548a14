// The model of an encoder's work in FLOPs that the run metrics
// (RunMetrics::model_flops) and `infercost plan` count with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/config.h"

namespace infercost::engine {

// The model of an encoder's work, in FLOPs (multiply-adds counted as 2):
// one row of L tokens through `layers` layers of hidden size h and
// feed-forward size f costs kEncoderRowFlopsFormula (below): the Q, K, V
// and output projections (4 h^2 per token), the two feed-forward
// matmuls (2 h f per token), and the attention scores and their weighted sum
// (2 L h each per token). Embeddings, LayerNorm, softmax, GELU and the
// classifier head are left out: together they are well under 1% of the
// total at DistilBERT-base sizes. RunMetrics::model_flops and `infercost
// plan` (src/plan/work.h) both count with it. Two kinds of encoder change
// the terms (ModernBERT has both): a GLU's first matmul is 2 f wide (2 L
// (4 h^2 + 3 h f) per layer), and a local layer's queries see only the keys
// within their window: 4 h x the query-key pairs seen, L (2w + 1) - w (w + 1)
// where the window w is shorter than the row, instead of L^2.
inline constexpr const char* kEncoderRowFlopsFormula = "layers x (2 L (4 h^2 + 2 h f) + 4 L^2 h)";

// What the FLOP model needs of an encoder.
struct EncoderShape {
  EncoderShape() = default;
  EncoderShape(int layers_, int hidden_, int intermediate_, bool glu_ = false, std::vector<int> windows_ = {},
               int relative_terms_ = 0)
      : layers(layers_),
        hidden(hidden_),
        intermediate(intermediate_),
        glu(glu_),
        windows(std::move(windows_)),
        relative_terms(relative_terms_) {}
  int layers = 0, hidden = 0, intermediate = 0;
  bool glu = false;  // the FFN's first matmul makes [input | gate], 2 f wide
  std::vector<int>
      windows;  // per layer, keys seen on each side of a query (0: all); empty: every layer global
  // DeBERTa's disentangled attention: the relative-position terms (c2p, p2c)
  // each query-key score adds, a head_dim-long product each; 0: none.
  int relative_terms = 0;
  bool known() const { return layers > 0 && hidden > 0 && intermediate > 0; }
  bool operator==(const EncoderShape& o) const = default;
  // "6 layers, hidden 768, FFN 3072" (", GLU", ", 14 of 22 layers local (window 64)",
  // ", disentangled attention (2 relative terms)")
  std::string describe() const;
};
EncoderShape encoder_shape(const model::ModelConfig& config);

// The linear part per token: layers x 2 (4 h^2 + 2 h f), 3 h f with a GLU.
double encoder_linear_flops_per_token(const EncoderShape& shape);
// The attention of one row of `length` tokens: (4 + 2 relative_terms) h x the
// pairs each layer sees (length^2 on a global layer): the scores and the
// weighted sum, plus DeBERTa's c2p / p2c products of each pair.
double encoder_attention_flops(const EncoderShape& shape, double length);
// One row of `length` tokens: linear x length + its attention.
double encoder_row_flops(const EncoderShape& shape, double length);
// Sum over L of rows_at_length[L] x encoder_row_flops(L).
double encoder_flops_of_lengths(const EncoderShape& shape, const std::vector<int64_t>& rows_at_length);
// The same for the encoder `config` describes (encoder_shape(config)).
double encoder_flops_of_lengths(const model::ModelConfig& config, const std::vector<int64_t>& rows_at_length);

}  // namespace infercost::engine
