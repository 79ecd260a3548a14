// A model's weights on one GPU (DeviceWeights), as the CUDA backend's
// steps read them, and their upload.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "backend/cuda/runtime.h"
#include "model/config.h"
#include "model/weights.h"

namespace infercost::backend::cuda {

// ---- Weights -----------------------------------------------------------------

// One linear layer on the device: y = x W^T + b with W [out, in] row-major.
struct DeviceLinear {
  const void* weight = nullptr;
  const void* bias = nullptr;  // [out], in the type of y
  int out = 0, in = 0;
  DType type = DType::kF32;  // of W, x, y and b
};

struct DeviceLayer {
  DeviceLinear qkv, attn_out, ffn_in, ffn_out;
  // attn_gamma null: no norm before attention (a pre-norm encoder's first layer).
  const float *attn_gamma = nullptr, *attn_beta = nullptr, *ffn_gamma = nullptr, *ffn_beta = nullptr;
  const float* rotary =
      nullptr;  // rotary_table() of the layer's theta, [max_positions, head_dim]; null: none
  // DeBERTa: the relative embeddings through this layer's key and query
  // projections ([2 x relative_span(), hidden], in the dtype); null: no such term.
  const void *pos_key = nullptr, *pos_query = nullptr;
};

// The prepared model on one GPU, in one allocation, shared by a backend and
// its forks. Embeddings, encoder linears and DeBERTa's relative tables in
// the precision's dtype (q, k and v fused into one [3h, h] weight and bias);
// LayerNorm parameters, rotary tables and the classifier head in fp32.
struct DeviceWeights {
  int device = 0;
  DType type = DType::kF32;
  void* base = nullptr;
  int64_t bytes = 0;
  const void *word = nullptr, *position = nullptr, *embedding_bias = nullptr;  // position null: none
  const void* token_types = nullptr;  // [type_vocab, hidden]; null: no type table
  const float *emb_gamma = nullptr, *emb_beta = nullptr;
  std::vector<DeviceLayer> layers;
  const float *final_gamma = nullptr, *final_beta = nullptr;  // pre-norm encoders' norm after the layers
  DeviceLinear pre, classifier;
  const float *head_gamma = nullptr, *head_beta = nullptr;  // the head's norm (ModernBERT); null: none
  // DeBERTa: model::relative_position_index of each offset -max_delta ..
  // max_delta (max_positions() - 1); null for other families.
  const int32_t* relative_index = nullptr;
  int max_delta = 0;

  DeviceWeights() = default;
  DeviceWeights(const DeviceWeights&) = delete;
  DeviceWeights& operator=(const DeviceWeights&) = delete;
  ~DeviceWeights() {
    if (base != nullptr) {
      DeviceLockGuard hold(device_lock(device));
      (void)cudaSetDevice(device);
      (void)cudaFree(base);
      (void)cudaGetLastError();
    }
  }
};

// kUnsupported when a weight the encoder keeps in fp16 is beyond fp16's
// largest finite value (65504): it would be infinity on the GPU, and every
// output NaN. (The head is kept in fp32.)
Status check_fp16_range(const model::EncoderWeights& w);

// Converts and uploads the model (validated by validate_gpu_model). Blocks until
// the copy is done.
std::shared_ptr<DeviceWeights> upload_weights(int device, DType type, const model::ModelConfig& config,
                                              const model::EncoderWeights& w, cudaStream_t stream);

}  // namespace infercost::backend::cuda
