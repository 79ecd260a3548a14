#include "backend/cuda/device_weights.h"

#include <map>

#include "backend/rotary.h"

namespace infercost::backend::cuda {
namespace {

// The weights laid out on the host exactly as they will sit on the device.
class WeightImage {
 public:
  explicit WeightImage(DType type) : type_(type) {}

  // Appends the concatenation of `parts` (n values each) in `t`, aligned;
  // returns its byte offset.
  int64_t put(const std::vector<const std::vector<float>*>& parts, DType t) {
    const int64_t at = aligned_end();
    int64_t n = 0;
    for (const auto* p : parts) n += int64_t(p->size());
    bytes_.resize(size_t(at + n * dtype_size(t)));
    uint8_t* dst = bytes_.data() + at;
    for (const auto* p : parts) {
      switch (t) {
        case DType::kF32: std::memcpy(dst, p->data(), p->size() * sizeof(float)); break;
        case DType::kF16:
          convert_to_fp16(p->data(), reinterpret_cast<uint16_t*>(dst), int64_t(p->size()));
          break;
        case DType::kBF16:
          convert_to_bf16(p->data(), reinterpret_cast<uint16_t*>(dst), int64_t(p->size()));
          break;
      }
      dst += p->size() * size_t(dtype_size(t));
    }
    return at;
  }
  int64_t put(const std::vector<float>& v, DType t) { return put({&v}, t); }
  int64_t put(const std::vector<float>& v) { return put({&v}, type_); }
  int64_t put(const std::vector<int32_t>& v) {
    const int64_t at = aligned_end();
    bytes_.resize(size_t(at) + v.size() * sizeof(int32_t));
    if (!v.empty()) std::memcpy(bytes_.data() + at, v.data(), v.size() * sizeof(int32_t));
    return at;
  }

  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  // Where the next part starts: the end, rounded up to kDeviceAlignment.
  int64_t aligned_end() const {
    return (int64_t(bytes_.size()) + kDeviceAlignment - 1) / kDeviceAlignment * kDeviceAlignment;
  }

  DType type_;
  std::vector<uint8_t> bytes_;
};

// Where a linear layer and an encoder layer sit in the image: byte offsets.
struct LinearAt {
  int64_t weight = 0, bias = 0;
  int out = 0, in = 0;
  DType type = DType::kF32;
};
struct LayerAt {
  LinearAt qkv, attn_out, ffn_in, ffn_out;
  int64_t attn_gamma = 0, attn_beta = 0, ffn_gamma = 0, ffn_beta = 0, pos_key = 0, pos_query = 0;
};

// Appends the concatenation of `parts`' weights, then of their biases, in
// `t`: q, k and v become one [3h, h] layer.
LinearAt put_linear(WeightImage& image, const std::vector<const model::Linear*>& parts, DType t) {
  LinearAt at;
  std::vector<const std::vector<float>*> weights, biases;
  for (const model::Linear* p : parts) {
    weights.push_back(&p->weight);
    biases.push_back(&p->bias);
    at.out += p->out;
  }
  at.in = parts.front()->in;
  at.type = t;
  at.weight = image.put(weights, t);
  at.bias = image.put(biases, t);
  return at;
}

// One encoder layer: its linears and DeBERTa's relative tables in `type`,
// its norms in fp32.
LayerAt put_layer(WeightImage& image, const model::EncoderLayerWeights& l, DType type) {
  LayerAt at;
  at.qkv = put_linear(image, {&l.q, &l.k, &l.v}, type);
  at.attn_out = put_linear(image, {&l.attn_out}, type);
  at.ffn_in = put_linear(image, {&l.ffn_in}, type);
  at.ffn_out = put_linear(image, {&l.ffn_out}, type);
  at.attn_gamma = image.put(l.attn_ln.gamma, DType::kF32);
  at.attn_beta = image.put(l.attn_ln.beta, DType::kF32);
  at.ffn_gamma = image.put(l.ffn_ln.gamma, DType::kF32);
  at.ffn_beta = image.put(l.ffn_ln.beta, DType::kF32);
  at.pos_key = image.put(l.pos_key);
  at.pos_query = image.put(l.pos_query);
  return at;
}

DeviceLinear linear_at(uint8_t* base, const LinearAt& at) {
  DeviceLinear l;
  l.weight = base + at.weight;
  l.bias = base + at.bias;
  l.out = at.out;
  l.in = at.in;
  l.type = at.type;
  return l;
}

// The layer at `at` of the image uploaded to `base`; what the host layer
// lacks (an attention norm, a c2p or p2c table) stays null.
DeviceLayer layer_at(uint8_t* base, const LayerAt& at, const model::EncoderLayerWeights& host) {
  const auto f32 = [&](int64_t offset) { return reinterpret_cast<const float*>(base + offset); };
  DeviceLayer l;
  l.qkv = linear_at(base, at.qkv);
  l.attn_out = linear_at(base, at.attn_out);
  l.ffn_in = linear_at(base, at.ffn_in);
  l.ffn_out = linear_at(base, at.ffn_out);
  if (!host.attn_ln.gamma.empty()) {
    l.attn_gamma = f32(at.attn_gamma);
    l.attn_beta = f32(at.attn_beta);
  }
  l.ffn_gamma = f32(at.ffn_gamma);
  l.ffn_beta = f32(at.ffn_beta);
  if (!host.pos_key.empty()) l.pos_key = base + at.pos_key;
  if (!host.pos_query.empty()) l.pos_query = base + at.pos_query;
  return l;
}

}  // namespace

Status check_fp16_range(const model::EncoderWeights& w) {
  constexpr float kFp16Max = 65504.0f;
  const auto beyond = [&](const std::vector<float>& v, const std::string& what) -> Status {
    for (float x : v) {
      if (std::fabs(x) > kFp16Max) {
        return unsupported(fmt::format(
            "precision fp16: a weight of {} is {:g}, beyond fp16's largest finite value (65504): it would be "
            "infinity on the GPU; use --precision bf16 (fp32's range) or fp32",
            what, x));
      }
    }
    return Status();
  };
  INFERCOST_RETURN_IF_ERROR(beyond(w.word_embeddings, "the word embeddings"));
  INFERCOST_RETURN_IF_ERROR(beyond(w.position_embeddings, "the position embeddings"));
  INFERCOST_RETURN_IF_ERROR(beyond(w.embedding_bias, "the token type embeddings"));
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const model::EncoderLayerWeights& l = w.layers[i];
    for (const auto& [linear, name] :
         {std::pair{&l.q, "query"}, std::pair{&l.k, "key"}, std::pair{&l.v, "value"},
          std::pair{&l.attn_out, "attention output"}, std::pair{&l.ffn_in, "FFN input"},
          std::pair{&l.ffn_out, "FFN output"}}) {
      const std::string what = fmt::format("layer {}'s {}", i, name);
      INFERCOST_RETURN_IF_ERROR(beyond(linear->weight, what));
      INFERCOST_RETURN_IF_ERROR(beyond(linear->bias, what + " bias"));
    }
    INFERCOST_RETURN_IF_ERROR(beyond(l.pos_key, fmt::format("layer {}'s relative position keys", i)));
    INFERCOST_RETURN_IF_ERROR(beyond(l.pos_query, fmt::format("layer {}'s relative position queries", i)));
  }
  return Status();
}

std::shared_ptr<DeviceWeights> upload_weights(int device, DType type, const model::ModelConfig& config,
                                              const model::EncoderWeights& w, cudaStream_t stream) {
  WeightImage image(type);
  const int64_t word = image.put(w.word_embeddings);
  const bool has_position = !w.position_embeddings.empty();
  const int64_t position = image.put(w.position_embeddings);
  const int64_t embedding_bias_at = image.put(w.embedding_bias);
  const int64_t token_types_at = image.put(w.token_type_embeddings);
  const int64_t emb_gamma = image.put(w.embeddings_ln.gamma, DType::kF32);
  const int64_t emb_beta = image.put(w.embeddings_ln.beta, DType::kF32);
  // One rotary table per distinct theta, shared by the layers that use it.
  std::map<double, int64_t> rotary;
  for (double theta : config.rope_theta) {
    if (rotary.count(theta)) continue;
    std::vector<float> table;
    rotary_table(theta, config.head_dim(), config.max_positions(), table);
    rotary[theta] = image.put(table, DType::kF32);
  }
  const int64_t relative_index_at = image.put(model::relative_position_table(config));
  std::vector<LayerAt> layers;
  for (const model::EncoderLayerWeights& l : w.layers) layers.push_back(put_layer(image, l, type));
  // A backend that pools the token vectors has no head to upload.
  const bool head = !w.head.classifier.weight.empty();
  const LinearAt pre = head ? put_linear(image, {&w.head.pre}, DType::kF32) : LinearAt{};
  const LinearAt classifier = head ? put_linear(image, {&w.head.classifier}, DType::kF32) : LinearAt{};
  const int64_t final_gamma = image.put(w.final_ln.gamma, DType::kF32);
  const int64_t final_beta = image.put(w.final_ln.beta, DType::kF32);
  const bool head_norm = head && config.head_norm;
  const int64_t head_gamma = image.put(w.head.norm.gamma, DType::kF32);
  const int64_t head_beta = image.put(w.head.norm.beta, DType::kF32);

  auto out = std::make_shared<DeviceWeights>();
  out->device = device;
  out->type = type;
  out->bytes = int64_t(image.bytes().size());
  if (const cudaError_t e = cudaMalloc(&out->base, size_t(out->bytes)); e != cudaSuccess) {
    throw_cuda(e, fmt::format("cudaMalloc of the weights ({})", format_bytes(out->bytes)).c_str());
  }
  INFERCOST_CUDA_CHECK(
      cudaMemcpyAsync(out->base, image.bytes().data(), size_t(out->bytes), cudaMemcpyHostToDevice, stream));
  INFERCOST_CUDA_CHECK(cudaStreamSynchronize(stream));
  uint8_t* base = static_cast<uint8_t*>(out->base);
  const auto f32 = [&](int64_t at) { return reinterpret_cast<const float*>(base + at); };
  out->word = base + word;
  out->position = has_position ? base + position : nullptr;
  out->embedding_bias = base + embedding_bias_at;
  if (!w.token_type_embeddings.empty()) out->token_types = base + token_types_at;
  out->emb_gamma = f32(emb_gamma);
  out->emb_beta = f32(emb_beta);
  for (size_t i = 0; i < layers.size(); ++i) {
    DeviceLayer l = layer_at(base, layers[i], w.layers[i]);
    if (!config.rope_theta.empty()) l.rotary = f32(rotary.at(config.rope_theta[i]));
    out->layers.push_back(l);
  }
  if (!w.final_ln.gamma.empty()) {
    out->final_gamma = f32(final_gamma);
    out->final_beta = f32(final_beta);
  }
  out->pre = linear_at(base, pre);
  out->classifier = linear_at(base, classifier);
  if (head_norm) {
    out->head_gamma = f32(head_gamma);
    out->head_beta = f32(head_beta);
  }
  if (config.relative_attention) {
    out->relative_index = reinterpret_cast<const int32_t*>(base + relative_index_at);
    out->max_delta = config.max_positions() - 1;
  }
  return out;
}

}  // namespace infercost::backend::cuda
