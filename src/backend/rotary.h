// The table of rotary position embeddings (RoPE) both backends rotate
// queries and keys by: computed once on the host, so the CPU and the GPU use
// the same fp32 values. Plain C++ (backend_common, linked into the CUDA module).
#pragma once

#include <vector>

namespace infercost::backend {

// Rotary position embeddings (RoPE, the rotate-half form HF's ModernBERT
// uses): `table` gets, per position p < `positions`, head_dim floats: the
// cosines of p * theta^(-2i/d) for i < d/2, then their sines, computed as HF
// does in fp32.
void rotary_table(double theta, int head_dim, int positions, std::vector<float>& table);

}  // namespace infercost::backend
