// DeBERTa's tables derived from the checkpoint once (families/deberta.cc reads them
// and makes them for its preset): the relative embeddings normed as
// norm_rel_ebd says, and a layer's position key or query table, the
// relative embeddings through a projection with its bias. Private to
// src/model.
#pragma once

#include <vector>

#include "model/config.h"
#include "model/weights.h"

namespace infercost::model {

// `rel` [rows, hidden] normed in place by `ln` (LayerNorm, eps from the config), in double.
void normalize_relative_embeddings(const ModelConfig& c, const LayerNormWeights& ln, std::vector<float>& rel);

// y = x W^T + b for x [rows, in] and `weight` [out, in] (bias optional), in fp32 partial sums.
std::vector<float> project_rows(const std::vector<float>& x, int rows, int in,
                                const std::vector<float>& weight, int out,
                                const std::vector<float>* bias = nullptr);

}  // namespace infercost::model
