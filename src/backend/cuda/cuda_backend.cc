// The CUDA backend (libinfercost_cuda.so): the model's forward program
// (model/program.h: every family's steps) on one GPU, each step by cuBLASLt
// GEMMs and the kernels of kernels.h (a residual add fused with the norm
// after it), over packed variable-length batches, captured as CUDA graphs. docs/cuda.md describes the design;
// host.h holds the parts CI tests without a GPU.
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "backend/cuda/host.h"
#include "backend/cuda/kernels.h"
#include "backend/cuda_module_api.h"
#include "backend/rotary.h"
#include "backend/validate.h"
#include "infercost/core/version.h"
#include "model/program.h"

namespace infercost::backend::cuda {
namespace {

// ---- Errors ----------------------------------------------------------------

// What went wrong inside the backend; each Backend method catches it and
// returns a Status, so nothing crosses the module boundary as an exception.
class CudaFailure : public std::exception {
 public:
  enum class Kind {
    kOutOfMemory,  // cudaErrorMemoryAllocation, CUBLAS_STATUS_ALLOC_FAILED: a smaller batch may fit
    kSticky,       // the context is corrupted (illegal address, ...): nothing on this device works again
    kOther,        // anything else: reported, the backend stays usable
  };
  CudaFailure(Kind kind, std::string message) : kind_(kind), message_(std::move(message)) {}
  Kind kind() const { return kind_; }
  const char* what() const noexcept override { return message_.c_str(); }
  const std::string& message() const { return message_; }

 private:
  Kind kind_;
  std::string message_;
};

// Errors after which the CUDA context is unusable until the process exits.
bool is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorLaunchTimeout:
    case cudaErrorContextIsDestroyed:
    case cudaErrorExternalDevice:
    case cudaErrorTensorMemoryLeak: return true;
    default: return false;
  }
}

std::string cuda_error_text(cudaError_t e) {
  return fmt::format("{}: {}", cudaGetErrorName(e), cudaGetErrorString(e));
}

[[noreturn]] void throw_cuda(cudaError_t e, const char* what) {
  // A failed allocation or launch also sets the thread's last error; clear
  // it so the next call does not report it again (sticky errors stay).
  (void)cudaGetLastError();
  const CudaFailure::Kind kind = e == cudaErrorMemoryAllocation ? CudaFailure::Kind::kOutOfMemory
                                 : is_sticky(e)                 ? CudaFailure::Kind::kSticky
                                                                : CudaFailure::Kind::kOther;
  throw CudaFailure(kind, fmt::format("{}: {}", what, cuda_error_text(e)));
}

[[noreturn]] void throw_cublas(cublasStatus_t s, const char* what) {
  (void)cudaGetLastError();
  const CudaFailure::Kind kind =
      s == CUBLAS_STATUS_ALLOC_FAILED ? CudaFailure::Kind::kOutOfMemory : CudaFailure::Kind::kOther;
  throw CudaFailure(
      kind, fmt::format("{}: cuBLASLt {}: {}", what, cublasLtGetStatusName(s), cublasLtGetStatusString(s)));
}

#define INFERCOST_CUDA_CHECK(expr)                                    \
  do {                                                                \
    const cudaError_t infercost_e_ = (expr);                          \
    if (infercost_e_ != cudaSuccess) throw_cuda(infercost_e_, #expr); \
  } while (0)

#define INFERCOST_CUBLASLT_CHECK(expr)                                            \
  do {                                                                            \
    const cublasStatus_t infercost_s_ = (expr);                                   \
    if (infercost_s_ != CUBLAS_STATUS_SUCCESS) throw_cublas(infercost_s_, #expr); \
  } while (0)

void copy_message(const std::string& message, char* err, size_t err_size) {
  if (err == nullptr || err_size == 0) return;
  const size_t n = std::min(message.size(), err_size - 1);
  std::memcpy(err, message.data(), n);
  err[n] = '\0';
}

// How many GPUs the runtime sees, or why none can be used here.
Result<int> count_devices() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  (void)cudaGetLastError();
  if (e == cudaSuccess) return count;
  int driver = 0;
  (void)cudaDriverGetVersion(&driver);
  int runtime = 0;
  (void)cudaRuntimeGetVersion(&runtime);
  const std::string detail = fmt::format("cudaGetDeviceCount: {}", cuda_error_text(e));
  if (e == cudaErrorInsufficientDriver && driver == 0) {
    return unavailable(fmt::format(
        "no CUDA driver: libcuda.so.1 (the NVIDIA driver) is not installed or not on the library path ({})",
        detail));
  }
  if (e == cudaErrorInsufficientDriver) {
    return unavailable(
        fmt::format("the NVIDIA driver supports CUDA {}.{} but this build needs CUDA {}.{}: update the "
                    "driver ({})",
                    driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10, detail));
  }
  if (e == cudaErrorNoDevice) {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    return unavailable(
        fmt::format("the NVIDIA driver sees no GPU{} ({})",
                    visible != nullptr ? fmt::format(" (CUDA_VISIBLE_DEVICES='{}')", visible) : "", detail));
  }
  return unavailable(fmt::format("CUDA could not be initialized ({})", detail));
}

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::kF32: return CUDA_R_32F;
    case DType::kF16: return CUDA_R_16F;
    case DType::kBF16: return CUDA_R_16BF;
  }
  return CUDA_R_32F;
}

DType dtype_of(Precision p) {
  return p == Precision::kFp16 ? DType::kF16 : p == Precision::kBf16 ? DType::kBF16 : DType::kF32;
}

// ---- One GPU's lock ------------------------------------------------------------

// Allocating or freeing device or pinned memory (and asking for the free
// memory) may synchronize the whole device, and a device-wide
// synchronization from any thread invalidates a graph capture in progress on
// that device (the call itself may then fail with
// cudaErrorStreamCaptureUnsupported). The backends of one GPU (a backend and
// its forks, each on its own worker thread) therefore hold this lock around
// those calls and around a capture. Recursive: a backend holding it may drop
// the last reference to the weights, whose destructor takes it too. Never
// freed: a backend may be destroyed after this module's statics are.
std::recursive_mutex& device_lock(int device) {
  static std::mutex* const table_guard = new std::mutex;
  static auto* const table = new std::map<int, std::unique_ptr<std::recursive_mutex>>;
  std::lock_guard<std::mutex> guard(*table_guard);
  std::unique_ptr<std::recursive_mutex>& lock = (*table)[device];
  if (!lock) lock = std::make_unique<std::recursive_mutex>();
  return *lock;
}

using DeviceLockGuard = std::lock_guard<std::recursive_mutex>;

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

// kUnsupported when a weight the encoder keeps in fp16 is beyond fp16's
// largest finite value (65504): it would be infinity on the GPU, and every
// output NaN. (The head is kept in fp32.)
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

// Converts and uploads the model (validated by validate_gpu_model). Blocks until
// the copy is done.
std::shared_ptr<DeviceWeights> upload_weights(int device, DType type, const model::ModelConfig& config,
                                              const model::EncoderWeights& w, cudaStream_t stream) {
  WeightImage image(type);
  struct LinearAt {
    int64_t weight, bias;
    int out, in;
    DType type;
  };
  const auto put_linear = [&](const std::vector<const model::Linear*>& parts, DType t) {
    LinearAt at{};
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
  };
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
  struct LayerAt {
    LinearAt qkv, attn_out, ffn_in, ffn_out;
    int64_t attn_gamma, attn_beta, ffn_gamma, ffn_beta, pos_key, pos_query;
  };
  std::vector<LayerAt> layers;
  for (const model::EncoderLayerWeights& l : w.layers) {
    LayerAt at{};
    at.qkv = put_linear({&l.q, &l.k, &l.v}, type);
    at.attn_out = put_linear({&l.attn_out}, type);
    at.ffn_in = put_linear({&l.ffn_in}, type);
    at.ffn_out = put_linear({&l.ffn_out}, type);
    at.attn_gamma = image.put(l.attn_ln.gamma, DType::kF32);
    at.attn_beta = image.put(l.attn_ln.beta, DType::kF32);
    at.ffn_gamma = image.put(l.ffn_ln.gamma, DType::kF32);
    at.ffn_beta = image.put(l.ffn_ln.beta, DType::kF32);
    at.pos_key = image.put(l.pos_key);
    at.pos_query = image.put(l.pos_query);
    layers.push_back(at);
  }
  // A backend that pools the token vectors has no head to upload.
  const bool head = !w.head.classifier.weight.empty();
  const LinearAt pre = head ? put_linear({&w.head.pre}, DType::kF32) : LinearAt{};
  const LinearAt classifier = head ? put_linear({&w.head.classifier}, DType::kF32) : LinearAt{};
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
  const auto linear = [&](const LinearAt& at) {
    DeviceLinear l;
    l.weight = base + at.weight;
    l.bias = base + at.bias;
    l.out = at.out;
    l.in = at.in;
    l.type = at.type;
    return l;
  };
  out->word = base + word;
  out->position = has_position ? base + position : nullptr;
  out->embedding_bias = base + embedding_bias_at;
  if (!w.token_type_embeddings.empty()) out->token_types = base + token_types_at;
  out->emb_gamma = f32(emb_gamma);
  out->emb_beta = f32(emb_beta);
  for (size_t i = 0; i < layers.size(); ++i) {
    const LayerAt& at = layers[i];
    DeviceLayer l;
    l.qkv = linear(at.qkv);
    l.attn_out = linear(at.attn_out);
    l.ffn_in = linear(at.ffn_in);
    l.ffn_out = linear(at.ffn_out);
    if (!w.layers[i].attn_ln.gamma.empty()) {
      l.attn_gamma = f32(at.attn_gamma);
      l.attn_beta = f32(at.attn_beta);
    }
    l.ffn_gamma = f32(at.ffn_gamma);
    l.ffn_beta = f32(at.ffn_beta);
    if (!config.rope_theta.empty()) l.rotary = f32(rotary.at(config.rope_theta[i]));
    if (!w.layers[i].pos_key.empty()) l.pos_key = base + at.pos_key;
    if (!w.layers[i].pos_query.empty()) l.pos_query = base + at.pos_query;
    out->layers.push_back(l);
  }
  if (!w.final_ln.gamma.empty()) {
    out->final_gamma = f32(final_gamma);
    out->final_beta = f32(final_beta);
  }
  out->pre = linear(pre);
  out->classifier = linear(classifier);
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

// ---- GEMMs -------------------------------------------------------------------

// One linear layer's cuBLASLt operation on this backend. Row-major
// Y[rows, out] = X[rows, in] W^T + b is, read column-major (a row-major
// [r, c] matrix is a column-major [c, r] one with leading dimension c), the
// column-major product Y^T[out, rows] = W[out, in] X^T[in, rows]. W's
// row-major storage is the column-major [in, out] matrix W^T, so A = that
// storage with TRANSA = T (op(A) = W, m = out, k = in, lda = in); B = X's
// storage, the column-major [in, rows] X^T, with TRANSB = N (n = rows,
// ldb = in); D = Y's storage, column-major [out, rows], ldd = out. The bias
// epilogue adds b[i] to row i of D, i.e. to output feature i of every token.
struct LinearOp {
  DeviceLinear w;
  Act act = Act::kNone;  // after the bias: in the epilogue where fused_act, else activation_inplace
  bool fused_act = false;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;  // of desc
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatmulDesc_t fallback_desc = nullptr;  // bias only, where fused_act (if no fused algorithm)
  std::string name;

  LinearOp() = default;
  LinearOp(const LinearOp&) = delete;
  LinearOp& operator=(const LinearOp&) = delete;
  ~LinearOp() {
    if (desc) cublasLtMatmulDescDestroy(desc);
    if (fallback_desc) cublasLtMatmulDescDestroy(fallback_desc);
  }
};

cublasLtMatmulDesc_t make_desc(const DeviceLinear& w, cublasLtEpilogue_t epilogue) {
  cublasLtMatmulDesc_t desc = nullptr;
  // fp32 accumulation in every precision; for fp32 this is true fp32 (not
  // CUBLAS_COMPUTE_32F_FAST_TF32), the parity target being 1e-3 of the CPU.
  INFERCOST_CUBLASLT_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const auto set = [&](cublasLtMatmulDescAttributes_t attr, const void* value, size_t size) {
    const cublasStatus_t s = cublasLtMatmulDescSetAttribute(desc, attr, value, size);
    if (s != CUBLAS_STATUS_SUCCESS) {
      cublasLtMatmulDescDestroy(desc);
      throw_cublas(s, "cublasLtMatmulDescSetAttribute");
    }
  };
  const cublasOperation_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
  set(CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof trans_a);
  set(CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof trans_b);
  set(CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue);
  if (epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
    // The bias is stored in the output's type, cuBLASLt's default
    // (CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE left unset).
    set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &w.bias, sizeof w.bias);
  }
  return desc;
}

// Encoder linear ops: bias always in the epilogue; GELU fused for fp16/bf16
// only (cuBLASLt's GELU is the tanh approximation, within ~5e-4 of the exact
// erf GELU: below those types' rounding, not below the fp32 parity target),
// ReLU fused in every type.
std::unique_ptr<LinearOp> make_linear_op(const DeviceLinear& w, Act act, std::string name) {
  auto op = std::make_unique<LinearOp>();
  op->w = w;
  op->act = act;
  op->name = std::move(name);
  cublasLtEpilogue_t fused = CUBLASLT_EPILOGUE_BIAS;
  if (act == Act::kRelu) fused = CUBLASLT_EPILOGUE_RELU_BIAS;
  if (act == Act::kGelu && w.type != DType::kF32) fused = CUBLASLT_EPILOGUE_GELU_BIAS;
  op->fused_act = fused != CUBLASLT_EPILOGUE_BIAS;
  op->epilogue = fused;
  op->desc = make_desc(w, fused);
  if (op->fused_act) op->fallback_desc = make_desc(w, CUBLASLT_EPILOGUE_BIAS);
  return op;
}

// The head's ops: a plain product; the caller adds the bias and applies the
// activation with bias_act_f32 (cuBLASLt has no tanh epilogue).
std::unique_ptr<LinearOp> make_head_op(const DeviceLinear& w, std::string name) {
  auto op = std::make_unique<LinearOp>();
  op->w = w;
  op->name = std::move(name);
  op->epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  op->desc = make_desc(w, CUBLASLT_EPILOGUE_DEFAULT);
  return op;
}

// How many (operation shape, rows) algorithms a backend keeps before it
// starts over. A macro so that the emulated tests can make it small.
#ifndef INFERCOST_CUDA_MAX_PLANS
#define INFERCOST_CUDA_MAX_PLANS 1024
#endif

// A cuBLASLt handle, a workspace and the algorithm chosen for each
// (operation shape, rows): packed batches vary their row count, so the
// heuristic runs once per new count and the answer is kept.
class Gemm {
 public:
  static constexpr size_t kWorkspaceBytes = size_t(32) << 20;
  static constexpr size_t kMaxPlans = INFERCOST_CUDA_MAX_PLANS;

  Gemm() {
    try {
      INFERCOST_CUBLASLT_CHECK(cublasLtCreate(&handle_));
      INFERCOST_CUDA_CHECK(cudaMalloc(&workspace_, kWorkspaceBytes));
      INFERCOST_CUBLASLT_CHECK(cublasLtMatmulPreferenceCreate(&preference_));
      const uint64_t ws = kWorkspaceBytes;
      INFERCOST_CUBLASLT_CHECK(cublasLtMatmulPreferenceSetAttribute(
          preference_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    } catch (...) {
      release();  // no destructor runs for a constructor that throws
      throw;
    }
  }
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;
  ~Gemm() { release(); }

  // Makes room for `n` new algorithms without dropping any while a graph is
  // captured: the capture may then only find algorithms, never choose one.
  void make_room(size_t n) {
    if (plans_.size() + n > kMaxPlans) clear_plans();
  }
  // Chooses (or finds) the algorithm for `op` on `rows` rows, host-side only.
  void warm(const LinearOp& op, int64_t rows) { (void)plan(op, rows); }

  // y[rows, out] = act(x[rows, in] W^T + b), all in op.w.type; x and y must
  // not overlap. Enqueues only.
  void run(const LinearOp& op, const void* x, int64_t rows, void* y, cudaStream_t stream) {
    const Plan& p = plan(op, rows);
    const float alpha = 1.0f, beta = 0.0f;
    const cublasLtMatmulDesc_t desc = p.primary ? op.desc : op.fallback_desc;
    INFERCOST_CUBLASLT_CHECK(cublasLtMatmul(handle_, desc, &alpha, op.w.weight, p.a, x, p.b, &beta, y, p.d, y,
                                            p.d, &p.algo, workspace_, kWorkspaceBytes, stream));
    if (op.act != Act::kNone && !(p.primary && op.fused_act)) {
      INFERCOST_CUDA_CHECK(activation_inplace(op.w.type, y, rows * op.w.out, op.act, stream));
    }
  }

 private:
  // Layers of one shape share algorithms: the key names an op by its shape
  // and epilogue, not its weights (every bias is equally aligned).
  struct Key {
    DType type;
    int out, in;
    int epilogue;
    int64_t rows;
    bool operator<(const Key& o) const {
      return std::tie(type, out, in, epilogue, rows) < std::tie(o.type, o.out, o.in, o.epilogue, o.rows);
    }
  };
  struct Plan {
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    cublasLtMatmulAlgo_t algo{};
    bool primary = true;  // false: the op's fallback_desc (no fused activation)
  };

  static void destroy(Plan& p) {
    if (p.a) cublasLtMatrixLayoutDestroy(p.a);
    if (p.b) cublasLtMatrixLayoutDestroy(p.b);
    if (p.d) cublasLtMatrixLayoutDestroy(p.d);
  }

  void clear_plans() {
    for (auto& [key, p] : plans_) destroy(p);
    plans_.clear();
  }

  void release() {
    clear_plans();
    if (preference_) cublasLtMatmulPreferenceDestroy(preference_);
    if (workspace_) (void)cudaFree(workspace_);
    if (handle_) cublasLtDestroy(handle_);
    preference_ = nullptr;
    workspace_ = nullptr;
    handle_ = nullptr;
  }

  // Whether cuBLASLt has an algorithm for `desc` on these layouts. A result
  // is usable only where its own state says so (cuBLASLt's contract).
  bool heuristic(cublasLtMatmulDesc_t desc, Plan& p) {
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t s =
        cublasLtMatmulAlgoGetHeuristic(handle_, desc, p.a, p.b, p.d, p.d, preference_, 1, &result, &found);
    if (s == CUBLAS_STATUS_NOT_SUPPORTED) return false;
    if (s != CUBLAS_STATUS_SUCCESS) throw_cublas(s, "cublasLtMatmulAlgoGetHeuristic");
    if (found < 1 || result.state != CUBLAS_STATUS_SUCCESS || result.workspaceSize > kWorkspaceBytes) {
      return false;
    }
    p.algo = result.algo;
    return true;
  }

  const Plan& plan(const LinearOp& op, int64_t rows) {
    const Key key{op.w.type, op.w.out, op.w.in, int(op.epilogue), rows};
    if (auto it = plans_.find(key); it != plans_.end()) return it->second;
    if (plans_.size() >= kMaxPlans) clear_plans();  // many distinct row counts: start over
    Plan p;
    const cudaDataType_t t = cuda_type(op.w.type);
    try {
      INFERCOST_CUBLASLT_CHECK(
          cublasLtMatrixLayoutCreate(&p.a, t, uint64_t(op.w.in), uint64_t(op.w.out), op.w.in));
      INFERCOST_CUBLASLT_CHECK(
          cublasLtMatrixLayoutCreate(&p.b, t, uint64_t(op.w.in), uint64_t(rows), op.w.in));
      INFERCOST_CUBLASLT_CHECK(
          cublasLtMatrixLayoutCreate(&p.d, t, uint64_t(op.w.out), uint64_t(rows), op.w.out));
      if (!heuristic(op.desc, p)) {
        if (op.fallback_desc == nullptr || !heuristic(op.fallback_desc, p)) {
          throw CudaFailure(
              CudaFailure::Kind::kOther,
              fmt::format("cuBLASLt has no algorithm for {}: [{} x {}] x [{} x {}]^T in {}", op.name, rows,
                          op.w.in, op.w.out, op.w.in, cuda_type_name(op.w.type)));
        }
        p.primary = false;
      }
    } catch (...) {
      destroy(p);
      throw;
    }
    return plans_.emplace(key, p).first->second;
  }

  static const char* cuda_type_name(DType t) {
    return t == DType::kF32 ? "fp32" : t == DType::kF16 ? "fp16" : "bf16";
  }

  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  cublasLtMatmulPreference_t preference_ = nullptr;
  std::map<Key, Plan> plans_;
};

// ---- Device buffers --------------------------------------------------------------

// Memory on the device (cudaMalloc), or page-locked on the host
// (cudaMallocHost) so that the copies are asynchronous and full speed.
enum class CudaMemoryKind { kDevice, kPinnedHost };

template <CudaMemoryKind kKind>
class CudaBuffer {
 public:
  CudaBuffer() = default;
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;
  ~CudaBuffer() { reset(); }
  void reset() {
    if (ptr_ != nullptr) (void)(kKind == CudaMemoryKind::kDevice ? cudaFree(ptr_) : cudaFreeHost(ptr_));
    ptr_ = nullptr;
    bytes_ = 0;
  }
  // Frees what it holds, then allocates `bytes` (throws CudaFailure).
  void allocate(int64_t bytes) {
    reset();
    if constexpr (kKind == CudaMemoryKind::kDevice) {
      INFERCOST_CUDA_CHECK(cudaMalloc(&ptr_, size_t(bytes)));
    } else {
      INFERCOST_CUDA_CHECK(cudaMallocHost(&ptr_, size_t(bytes)));
    }
    bytes_ = bytes;
  }
  // Holds at least `bytes` afterwards (grows by a quarter more to amortise).
  void reserve(int64_t bytes) {
    if (bytes > bytes_) allocate(std::max(bytes, bytes_ + bytes_ / 4));
  }
  uint8_t* get() const { return static_cast<uint8_t*>(ptr_); }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  int64_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  int64_t bytes_ = 0;
};
using DeviceBuffer = CudaBuffer<CudaMemoryKind::kDevice>;
using PinnedBuffer = CudaBuffer<CudaMemoryKind::kPinnedHost>;

// ---- The backend -----------------------------------------------------------------

struct DeviceFacts {
  int index = 0;
  std::string name;
  int major = 0, minor = 0;
  int64_t memory_total_bytes = 0;
};

class CudaBackend final : public Backend, private model::StepExecutor {
 public:
  // Throws CudaFailure when the stream, the cuBLASLt handle or its workspace
  // cannot be made.
  CudaBackend(const DeviceFacts& facts, Precision precision, bool graphs,
              std::optional<model::Pooling> pooling)
      : facts_(facts),
        precision_(precision),
        type_(dtype_of(precision)),
        graphs_enabled_(graphs),
        pooling_(pooling),
        lock_(device_lock(facts.index)) {
    DeviceLockGuard hold(lock_);
    INFERCOST_CUDA_CHECK(cudaSetDevice(facts_.index));
    // Non-blocking: no implicit ordering with the legacy default stream,
    // which a graph capture on this stream would not tolerate.
    INFERCOST_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    try {
      gemm_ = std::make_unique<Gemm>();
    } catch (...) {
      (void)cudaStreamDestroy(stream_);
      throw;
    }
  }

  ~CudaBackend() override {
    DeviceLockGuard hold(lock_);
    (void)cudaSetDevice(facts_.index);
    if (stream_ != nullptr) (void)cudaStreamSynchronize(stream_);
    drop_graphs();
    ops_.clear();
    gemm_.reset();
    activations_.reset();
    staging_.reset();
    weights_.reset();
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
    (void)cudaGetLastError();
  }

  std::string name() const override { return fmt::format("cuda:{}", facts_.index); }
  Precision precision() const override { return precision_; }
  bool skips_padding() const override { return true; }

  Status prepare(const model::ModelConfig& config, const model::EncoderWeights& weights) override {
    prepared_ = false;
    const std::string context = fmt::format("{}: prepare {}", name(), config.name);
    if (broken_) return unusable(context);
    Status st = validate_gpu_model(config, weights, /*head=*/!pooling_);
    if (st.ok() && type_ == DType::kF16) st = check_fp16_range(weights);
    if (!st.ok()) return st.with_context(context);
    return guarded(context, [&] {
      DeviceLockGuard hold(lock_);
      INFERCOST_CUDA_CHECK(cudaSetDevice(facts_.index));
      drop_graphs();
      activations_.reset();
      ops_.clear();
      weights_.reset();
      auto uploaded = upload_weights(facts_.index, type_, config, weights, stream_);
      adopt(config, std::move(uploaded));
      prepared_ = true;
      return Status();
    });
  }

  Result<Logits> forward(const TokenBatch& batch) override {
    const std::string context = fmt::format("{}: classify", name());
    if (!prepared_) return invalid_argument(context + ": called before a successful prepare()");
    if (broken_) return unusable(context);
    Status st = validate_batch(config_, batch);
    if (!st.ok()) return st.with_context(context);
    Logits logits;
    logits.rows = batch.batch;
    logits.labels = labels_;
    if (batch.batch == 0) return logits;
    int64_t total = 0;
    for (int r = 0; r < batch.batch; ++r)
      total += batch.compute_padding ? batch.seq_len : batch.lengths[size_t(r)];
    if (total > INT32_MAX) {  // the packed offsets are int32
      return resource_exhausted(
          fmt::format("{}: a batch of {} rows computes {} tokens, more than one batch may hold "
                      "on the GPU (2^31 - 1): split it",
                      context, batch.batch, total));
    }
    Status run = guarded(context, [&] {
      run_encoder(batch, logits);
      return Status();
    });
    if (!run.ok()) {
      if (run.code() == StatusCode::kResourceExhausted) {
        return Status(
            run.code(),
            fmt::format("{} (batch of {} rows, {} tokens computed, {} activations)", run.message(),
                        batch.batch, total,
                        format_bytes(activation_reservation(dims_, precision_, total, batch.batch).bytes)));
      }
      return run;
    }
    return logits;
  }

  Result<BatchCapacity> capacity(int max_length) override {
    const std::string context = fmt::format("{}: capacity", name());
    if (!prepared_) return invalid_argument(context + ": called before a successful prepare()");
    if (broken_) return unusable(context);
    size_t free_bytes = 0, total_bytes = 0;
    Status st = guarded(context, [&] {
      DeviceLockGuard hold(lock_);
      INFERCOST_CUDA_CHECK(cudaSetDevice(facts_.index));
      INFERCOST_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
      return Status();
    });
    if (!st.ok()) return st;
    return batch_capacity(dims_, precision_, max_length, int64_t(free_bytes), int64_t(total_bytes),
                          activations_.bytes(), fmt::format("{} ({})", name(), facts_.name));
  }

  Result<std::unique_ptr<Backend>> fork() override {
    const std::string context = fmt::format("{}: fork", name());
    if (!prepared_) return invalid_argument(context + ": called before a successful prepare()");
    if (broken_) return unusable(context);
    std::unique_ptr<CudaBackend> twin;
    Status st = guarded(context, [&] {
      twin = std::make_unique<CudaBackend>(facts_, precision_, graphs_enabled_, pooling_);
      twin->adopt(config_, weights_);
      twin->prepared_ = true;
      return Status();
    });
    if (!st.ok()) return st;
    return std::unique_ptr<Backend>(std::move(twin));
  }

 private:
  // Runs `body`, turning what it throws into a Status with `context`.
  template <typename F>
  Status guarded(const std::string& context, F&& body) {
    try {
      return body();
    } catch (const CudaFailure& f) {
      return failed(context, f);
    } catch (const std::bad_alloc&) {
      release_after_failure();
      return resource_exhausted(context + ": out of host memory");
    } catch (const std::exception& e) {
      return internal_error(fmt::format("{}: {}", context, e.what()));
    }
  }

  Status failed(const std::string& context, const CudaFailure& f) {
    CudaFailure::Kind kind = f.kind();
    if (kind == CudaFailure::Kind::kOther && stream_ != nullptr) {
      // An asynchronous failure shows at the next synchronization; if it is
      // sticky the context is gone.
      const cudaError_t probe = cudaStreamSynchronize(stream_);
      if (probe != cudaSuccess && is_sticky(probe)) kind = CudaFailure::Kind::kSticky;
      (void)cudaGetLastError();
    }
    switch (kind) {
      case CudaFailure::Kind::kOutOfMemory:
        release_after_failure();
        return resource_exhausted(fmt::format("{}: out of memory: {}", context, f.message()));
      case CudaFailure::Kind::kSticky:
        broken_ = true;
        broken_reason_ = f.message();
        return unusable(context);
      case CudaFailure::Kind::kOther: break;
    }
    return unavailable(fmt::format("{}: {}", context, f.message()));
  }

  Status unusable(const std::string& context) const {
    return unavailable(fmt::format("{}: the CUDA context on {} is unusable: {}; restart the process", context,
                                   name(), broken_reason_));
  }

  // After an allocation failure: give back the activation memory (the next
  // batch allocates what it needs) and the graphs that used it.
  void release_after_failure() {
    DeviceLockGuard hold(lock_);
    if (stream_ != nullptr) (void)cudaStreamSynchronize(stream_);
    drop_graphs();
    activations_.reset();
    layout_ = ActivationLayout{};
    (void)cudaGetLastError();
  }

  void adopt(const model::ModelConfig& config, std::shared_ptr<DeviceWeights> weights) {
    config_ = config;
    weights_ = std::move(weights);
    labels_ = pooling_ ? config.hidden_size : weights_->classifier.out;
    program_ = model::forward_program(config, pooling_);
    const auto& embed = std::get<model::EmbedStep>(program_.steps.front());
    dims_ = ModelDims{config.hidden_size, config.intermediate_size, labels_, config.glu,
                      embed.token_types && weights_->token_types != nullptr};
    ops_.clear();
    layer_ops_.assign(weights_->layers.size(), LayerOps{});
    pre_ = classifier_ = nullptr;
    // Each step's linear layers, with the activation the step fuses into them.
    for (const model::Step& step : program_.steps) {
      if (const auto* a = std::get_if<model::AttentionStep>(&step)) {
        layer_ops_[size_t(a->layer)].qkv = add_op(make_linear_op(
            weights_->layers[size_t(a->layer)].qkv, Act::kNone, fmt::format("layer {} qkv", a->layer)));
      } else if (const auto* f = std::get_if<model::FeedForwardStep>(&step)) {
        // A GLU's activation is applied by gelu_glu() after the GEMM.
        const Act act = f->glu ? Act::kNone : activation_as<Act>(f->activation);
        layer_ops_[size_t(f->layer)].ffn_in = add_op(make_linear_op(
            weights_->layers[size_t(f->layer)].ffn_in, act, fmt::format("layer {} ffn in", f->layer)));
      } else if (const auto* r = std::get_if<model::ResidualStep>(&step)) {
        const DeviceLayer& l = weights_->layers[size_t(r->layer)];
        LayerOps& ops = layer_ops_[size_t(r->layer)];
        if (r->projection == model::ResidualStep::Projection::kAttentionOutput) {
          ops.attn_out = add_op(
              make_linear_op(l.attn_out, Act::kNone, fmt::format("layer {} attention output", r->layer)));
        } else {
          ops.ffn_out =
              add_op(make_linear_op(l.ffn_out, Act::kNone, fmt::format("layer {} ffn out", r->layer)));
        }
      } else if (std::holds_alternative<model::HeadStep>(step)) {
        pre_ = add_op(make_head_op(weights_->pre, "head"));
        classifier_ = add_op(make_head_op(weights_->classifier, "classifier"));
      }
    }
    layout_ = ActivationLayout{};
    activations_.reset();
  }

  const LinearOp* add_op(std::unique_ptr<LinearOp> op) {
    ops_.push_back(std::move(op));
    return ops_.back().get();
  }

  // Activation memory for at least `tokens` tokens and `sequences`
  // sequences, sized by activation_reservation() as capacity() counts it and
  // never more: another stream on this GPU may have been promised the rest.
  // It keeps the larger of the held and the needed size in each dimension,
  // or, where that does not fit, what this batch needs. Regrowing drops the
  // graphs that point into the old memory.
  void ensure_activations(int64_t tokens, int sequences) {
    if (tokens <= layout_.tokens && sequences <= layout_.sequences) return;
    DeviceLockGuard hold(lock_);
    const ActivationLayout both = activation_reservation(dims_, precision_, std::max(tokens, layout_.tokens),
                                                         std::max<int64_t>(sequences, layout_.sequences));
    const ActivationLayout own = activation_reservation(dims_, precision_, tokens, sequences);
    drop_graphs();
    activations_.reset();
    layout_ = ActivationLayout{};
    if (both.bytes > own.bytes) {
      try {
        activations_.allocate(both.bytes);
        layout_ = both;
        return;
      } catch (const CudaFailure& f) {
        if (f.kind() != CudaFailure::Kind::kOutOfMemory) throw;
      }
    }
    activations_.allocate(own.bytes);
    layout_ = own;
  }

  // Pinned staging for at least `bytes` (allocating pinned memory takes the
  // device lock; reusing it does not).
  void ensure_staging(int64_t bytes) {
    if (bytes <= staging_.bytes()) return;
    DeviceLockGuard hold(lock_);
    staging_.reserve(bytes);
  }

  struct Pointers {
    void *h, *qkv, *ctx, *ffn, *glu;
    int32_t* ints;
    const int32_t *ids, *positions, *seq_start, *key_len, *cls_rows;
    const int32_t* types;  // token type ids; null: the batch has none (or the model no type table)
    float *cls, *pooled, *logits;
  };

  Pointers pointers(int64_t total, int sequences, bool types) const {
    uint8_t* base = activations_.get();
    Pointers p{};
    p.h = base + layout_.h;
    p.qkv = base + layout_.qkv;
    p.ctx = base + layout_.ctx;
    p.ffn = base + layout_.ffn;
    p.glu = base + layout_.glu;
    p.ints = reinterpret_cast<int32_t*>(base + layout_.ints);
    const PackedOffsets o = packed_offsets(total, sequences, types);
    p.ids = p.ints + o.ids;
    p.types = types ? p.ints + o.types : nullptr;
    p.positions = p.ints + o.positions;
    p.seq_start = p.ints + o.seq_start;
    p.key_len = p.ints + o.key_len;
    p.cls_rows = p.ints + o.cls_rows;
    p.cls = reinterpret_cast<float*>(base + layout_.cls);
    p.pooled = reinterpret_cast<float*>(base + layout_.pooled);
    p.logits = reinterpret_cast<float*>(base + layout_.logits);
    return p;
  }

  void run_encoder(const TokenBatch& batch, Logits& logits) {
    INFERCOST_CUDA_CHECK(cudaSetDevice(facts_.index));
    pack_batch(batch, config_.position_scheme(), packed_, dims_.token_types);
    const int64_t total = packed_.total;
    const int sequences = packed_.sequences();
    const bool types = !packed_.types.empty();
    const PackedOffsets offsets = packed_offsets(total, sequences, types);
    ensure_activations(total, sequences);
    ensure_staging(std::max<int64_t>(offsets.count * 4, int64_t(sequences) * labels_ * 4));
    const Pointers p = pointers(total, sequences, types);

    write_packed(packed_, staging_.as<int32_t>());
    // Any capture happens first, on an idle stream; the graph then runs
    // after the copy like the eager kernels would.
    const GraphKey key{sequences, total, packed_.max_rows, batch.compute_padding, types};
    const cudaGraphExec_t graph = graph_for(key, p);
    INFERCOST_CUDA_CHECK(cudaMemcpyAsync(p.ints, staging_.as<int32_t>(), size_t(offsets.count) * 4,
                                         cudaMemcpyHostToDevice, stream_));
    if (graph != nullptr) {
      INFERCOST_CUDA_CHECK(cudaGraphLaunch(graph, stream_));
    } else {
      enqueue_forward(key, p);
    }
    // The staging buffer is free again once the copy above has run, which
    // the stream orders before this one.
    INFERCOST_CUDA_CHECK(cudaMemcpyAsync(staging_.as<float>(), p.logits, size_t(sequences) * labels_ * 4,
                                         cudaMemcpyDeviceToHost, stream_));
    INFERCOST_CUDA_CHECK(cudaStreamSynchronize(stream_));
    logits.values.assign(staging_.as<float>(), staging_.as<float>() + size_t(sequences) * labels_);
  }

  struct GraphKey {
    int sequences;
    int64_t total;
    int max_rows;
    bool padded;
    bool types;  // the batch brings token type ids
    bool operator<(const GraphKey& o) const {
      return std::tie(sequences, total, max_rows, padded, types) <
             std::tie(o.sequences, o.total, o.max_rows, o.padded, o.types);
    }
  };

  // The forward pass from the packed ints on the device to the logits on the
  // device: the program's steps; only enqueues (it is what a graph captures).
  void enqueue_forward(const GraphKey& k, const Pointers& p) {
    pass_ = Pass{&k, &p, p.ffn};
    model::run_program(program_, *this);
  }

  // ---- model::StepExecutor: the program's steps, enqueued on stream_ ----
  // Slots: states in h; the normed states and attention's context share ctx
  // (a norm is read by the QKV GEMM before attention writes ctx, and by the
  // FFN's first GEMM after the attention output has been added); the
  // feed-forward's activations in ffn (glu: in glu).

  void run(const model::EmbedStep& step) override {
    const DeviceWeights& w = *weights_;
    const Pointers& p = *pass_.p;
    // The batch's token types pick rows of the type table; without them
    // every token adds type 0's row (the embedding bias).
    const bool types = step.token_types && p.types != nullptr;
    INFERCOST_CUDA_CHECK(embed_layer_norm(type_, p.ids, p.positions, pass_.k->total, config_.hidden_size,
                                          w.word, step.position_table ? w.position : nullptr,
                                          types ? w.token_types : w.embedding_bias, w.emb_gamma, w.emb_beta,
                                          config_.layer_norm_eps, p.h, stream_, types ? p.types : nullptr));
  }

  void run(const model::NormStep& step) override {
    const NormAt n = norm_at(step.norm);
    INFERCOST_CUDA_CHECK(residual_layer_norm(type_, pass_.p->h, nullptr, slot(step.out), pass_.k->total,
                                             config_.hidden_size, n.gamma, n.beta, config_.layer_norm_eps,
                                             stream_));
  }

  void run(const model::AttentionStep& step) override {
    const DeviceLayer& l = weights_->layers[size_t(step.layer)];
    const Pointers& p = *pass_.p;
    const GraphKey& k = *pass_.k;
    const int heads = config_.num_heads, head_dim = config_.head_dim();
    gemm_->run(*layer_ops_[size_t(step.layer)].qkv, slot(step.in), k.total, p.qkv, stream_);
    if (step.rotary_theta > 0) {
      INFERCOST_CUDA_CHECK(rotary(type_, p.qkv, p.positions, k.total, heads, head_dim, l.rotary, stream_));
    }
    if (step.scores == model::Scores::kDisentangled) {
      RelativeTables rel;
      rel.pos_key = l.pos_key;
      rel.pos_query = l.pos_query;
      rel.index = weights_->relative_index;
      rel.max_delta = weights_->max_delta;
      INFERCOST_CUDA_CHECK(disentangled_attention(type_, p.qkv, p.ctx, p.seq_start, p.key_len, k.sequences,
                                                  k.max_rows, heads, head_dim, step.scale, rel, stream_));
    } else {
      INFERCOST_CUDA_CHECK(attention(type_, p.qkv, p.ctx, p.seq_start, p.key_len, k.sequences, k.max_rows,
                                     heads, head_dim, step.scale, stream_, step.window));
    }
  }

  void run(const model::FeedForwardStep& step) override {
    const Pointers& p = *pass_.p;
    const int64_t t = pass_.k->total;
    gemm_->run(*layer_ops_[size_t(step.layer)].ffn_in, slot(step.in), t, p.ffn, stream_);
    pass_.inner = p.ffn;
    if (step.glu) {
      INFERCOST_CUDA_CHECK(gelu_glu(type_, p.ffn, p.glu, t, config_.intermediate_size, stream_));
      pass_.inner = p.glu;
    }
  }

  // The projection's output goes to a buffer its input no longer needs: Q|K|V
  // after attention, ctx after the feed-forward. Then the residual add, fused
  // with the norm after it.
  void run(const model::ResidualStep& step) override {
    const Pointers& p = *pass_.p;
    const int64_t t = pass_.k->total;
    const LayerOps& ops = layer_ops_[size_t(step.layer)];
    void* delta = p.qkv;
    if (step.projection == model::ResidualStep::Projection::kAttentionOutput) {
      gemm_->run(*ops.attn_out, p.ctx, t, p.qkv, stream_);
    } else {
      gemm_->run(*ops.ffn_out, pass_.inner, t, p.ctx, stream_);
      delta = p.ctx;
    }
    const NormAt n = norm_at(step.norm);
    const int hidden = config_.hidden_size;
    const float eps = config_.layer_norm_eps;
    if (!step.keep_sum && step.out == model::Slot::kStates) {
      INFERCOST_CUDA_CHECK(add_layer_norm(type_, p.h, delta, t, hidden, n.gamma, n.beta, eps, stream_));
    } else {
      INFERCOST_CUDA_CHECK(
          residual_layer_norm(type_, p.h, delta, slot(step.out), t, hidden, n.gamma, n.beta, eps, stream_));
    }
  }

  // Each sequence's real tokens pooled into [sequences, hidden].
  void run(const model::PoolStep& step) override {
    const Pointers& p = *pass_.p;
    INFERCOST_CUDA_CHECK(pool_rows_f32(type_, p.h, p.seq_start, p.key_len, pass_.k->sequences,
                                       config_.hidden_size, pool_of(step.pooling), p.logits, stream_));
  }

  void run(const model::HeadStep& step) override {
    const Pointers& p = *pass_.p;
    const int sequences = pass_.k->sequences, hidden = config_.hidden_size;
    if (step.pooling == model::Pooling::kCls) {
      INFERCOST_CUDA_CHECK(gather_rows_f32(type_, p.h, p.cls_rows, sequences, hidden, p.cls, stream_));
    } else {
      INFERCOST_CUDA_CHECK(pool_rows_f32(type_, p.h, p.seq_start, p.key_len, sequences, hidden,
                                         pool_of(step.pooling), p.cls, stream_));
    }
    gemm_->run(*pre_, p.cls, sequences, p.pooled, stream_);
    INFERCOST_CUDA_CHECK(bias_act_f32(p.pooled, static_cast<const float*>(pre_->w.bias), sequences, hidden,
                                      activation_as<Act>(step.activation), stream_));
    if (step.norm) {
      INFERCOST_CUDA_CHECK(residual_layer_norm(DType::kF32, p.pooled, nullptr, p.pooled, sequences, hidden,
                                               weights_->head_gamma, weights_->head_beta,
                                               config_.layer_norm_eps, stream_));
    }
    gemm_->run(*classifier_, p.pooled, sequences, p.logits, stream_);
    INFERCOST_CUDA_CHECK(bias_act_f32(p.logits, static_cast<const float*>(classifier_->w.bias), sequences,
                                      labels_, Act::kNone, stream_));
  }

  void* slot(model::Slot s) const {
    switch (s) {
      case model::Slot::kStates: return pass_.p->h;
      case model::Slot::kNormed:
      case model::Slot::kContext: return pass_.p->ctx;
      case model::Slot::kInner: return pass_.inner;
    }
    return pass_.p->h;
  }

  struct NormAt {
    const float *gamma, *beta;
  };
  NormAt norm_at(const model::NormRef& norm) const {
    const DeviceWeights& w = *weights_;
    switch (norm.kind) {
      case model::NormRef::Kind::kAttention:
        return {w.layers[size_t(norm.layer)].attn_gamma, w.layers[size_t(norm.layer)].attn_beta};
      case model::NormRef::Kind::kFeedForward:
        return {w.layers[size_t(norm.layer)].ffn_gamma, w.layers[size_t(norm.layer)].ffn_beta};
      case model::NormRef::Kind::kFinal: break;
    }
    return {w.final_gamma, w.final_beta};
  }

  static Pool pool_of(model::Pooling pooling) {
    switch (pooling) {
      case model::Pooling::kCls: return Pool::kCls;
      case model::Pooling::kMean: return Pool::kMean;
      case model::Pooling::kMax: return Pool::kMax;
      case model::Pooling::kLastToken: return Pool::kLastToken;
    }
    return Pool::kMean;
  }

  // The forward pass for this shape as a CUDA graph, captured on the
  // shape's second sighting (the first, eager, run chose the GEMM
  // algorithms). Null when the caller should run it eagerly: graphs off, a
  // shape seen for the first time, or a capture that failed (graphs are then
  // off for this backend; graph_failures_ counts it).
  cudaGraphExec_t graph_for(const GraphKey& key, const Pointers& p) {
    if (!graphs_enabled_) return nullptr;
    if (auto it = graphs_.find(key); it != graphs_.end()) {
      it->second.last_used = ++graph_clock_;
      return it->second.exec;
    }
    if (seen_.insert(key).second) {
      if (seen_.size() > 4096) seen_.clear();
      return nullptr;
    }
    cudaGraphExec_t exec = capture(key, p);
    if (exec == nullptr) return nullptr;
    if (graphs_.size() >= kMaxGraphs) {
      auto oldest = std::min_element(graphs_.begin(), graphs_.end(), [](const auto& a, const auto& b) {
        return a.second.last_used < b.second.last_used;
      });
      DeviceLockGuard hold(lock_);
      (void)cudaGraphExecDestroy(oldest->second.exec);
      graphs_.erase(oldest);
    }
    graphs_[key] = GraphEntry{exec, ++graph_clock_};
    return exec;
  }

  cudaGraphExec_t capture(const GraphKey& key, const Pointers& p) {
    const auto give_up = [&] {
      graphs_enabled_ = false;
      ++graph_failures_;
      drop_graphs();
      (void)cudaGetLastError();
      return nullptr;
    };
    try {
      warm_plans(key);  // the heuristic's calls stay outside the capture
    } catch (const CudaFailure&) {
      return give_up();
    }
    // Thread-local mode: only this thread's calls are checked against the
    // capture; the device lock keeps the other backends on this GPU from
    // allocating or freeing (device-wide synchronizations) meanwhile.
    DeviceLockGuard hold(lock_);
    if (cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return give_up();
    bool enqueued = true;
    try {
      enqueue_forward(key, p);
    } catch (const CudaFailure&) {
      enqueued = false;
    } catch (...) {
      // Anything else (no host memory) still ends the capture, or the stream
      // would stay in capture mode and fail every later batch.
      cudaGraph_t partial = nullptr;
      (void)cudaStreamEndCapture(stream_, &partial);
      if (partial != nullptr) (void)cudaGraphDestroy(partial);
      (void)give_up();
      throw;
    }
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream_, &graph);
    cudaGraphExec_t exec = nullptr;
    const bool ok = enqueued && ended == cudaSuccess && graph != nullptr &&
                    cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    if (!ok) {
      if (exec != nullptr) (void)cudaGraphExecDestroy(exec);
      return give_up();
    }
    return exec;
  }

  void warm_plans(const GraphKey& k) {
    gemm_->make_room(6);
    if (!layer_ops_.empty()) {
      const LayerOps& ops = layer_ops_.front();  // every layer has these shapes
      for (const LinearOp* op : {ops.qkv, ops.attn_out, ops.ffn_in, ops.ffn_out}) gemm_->warm(*op, k.total);
    }
    if (pooling_) return;  // no head
    gemm_->warm(*pre_, k.sequences);
    gemm_->warm(*classifier_, k.sequences);
  }

  // Destroying a graph executable frees its device memory: under the lock too.
  void drop_graphs() {
    if (graphs_.empty()) return;
    DeviceLockGuard hold(lock_);
    for (auto& [key, g] : graphs_) (void)cudaGraphExecDestroy(g.exec);
    graphs_.clear();
  }

  struct LayerOps {
    const LinearOp *qkv = nullptr, *attn_out = nullptr, *ffn_in = nullptr, *ffn_out = nullptr;
  };
  struct GraphEntry {
    cudaGraphExec_t exec = nullptr;
    uint64_t last_used = 0;
  };
  static constexpr size_t kMaxGraphs = 16;

  DeviceFacts facts_;
  Precision precision_;
  DType type_;
  bool graphs_enabled_;
  std::optional<model::Pooling> pooling_;  // set: forward() pools instead of running the head
  std::recursive_mutex& lock_;             // device_lock() of this GPU
  int graph_failures_ = 0;
  bool prepared_ = false;
  bool broken_ = false;
  std::string broken_reason_;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<Gemm> gemm_;
  model::ModelConfig config_;
  ModelDims dims_;
  int labels_ = 0;  // values per row of forward(): the labels, or hidden_size with pooling_
  std::shared_ptr<DeviceWeights> weights_;
  std::vector<std::unique_ptr<LinearOp>> ops_;
  std::vector<LayerOps> layer_ops_;
  const LinearOp *pre_ = nullptr, *classifier_ = nullptr;
  model::ForwardProgram program_;
  // The call enqueue_forward() is making: its shape, its buffers, and where
  // the feed-forward's activations are (ffn, or glu after a GLU).
  struct Pass {
    const GraphKey* k = nullptr;
    const Pointers* p = nullptr;
    void* inner = nullptr;
  };
  Pass pass_;
  PackedBatch packed_;
  ActivationLayout layout_;
  DeviceBuffer activations_;
  PinnedBuffer staging_;
  std::map<GraphKey, GraphEntry> graphs_;
  std::set<GraphKey> seen_;
  uint64_t graph_clock_ = 0;
};

// ---- Module entry points -------------------------------------------------------

Result<DeviceFacts> device_facts(int index) {
  INFERCOST_ASSIGN_OR_RETURN(const int count, count_devices());
  if (index < 0 || index >= count) {
    return invalid_argument(
        fmt::format("there is no GPU cuda:{}: CUDA sees {} GPU{}", index, count, count == 1 ? "" : "s"));
  }
  cudaDeviceProp props{};
  const cudaError_t e = cudaGetDeviceProperties(&props, index);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return unavailable(fmt::format("cuda:{}: cudaGetDeviceProperties: {}", index, cuda_error_text(e)));
  }
  DeviceFacts f;
  f.index = index;
  f.name = props.name;
  f.major = props.major;
  f.minor = props.minor;
  f.memory_total_bytes = int64_t(props.totalGlobalMem);
  return f;
}

bool graphs_from_env() {
  const char* env = std::getenv("INFERCOST_CUDA_GRAPHS");
  return env == nullptr || std::string(env) != "0";
}

Result<std::unique_ptr<Backend>> create_backend_impl(const BackendOptions& options) {
  if (options.precision == Precision::kInt8) {
    return unsupported("cuda backend: precision int8 runs on the CPU backend only; on GPUs use bf16 or fp16");
  }
  INFERCOST_ASSIGN_OR_RETURN(const DeviceFacts facts, device_facts(options.device_index));
  const std::string gpu = fmt::format("cuda:{} ({}, compute capability {}.{})", facts.index, facts.name,
                                      facts.major, facts.minor);
  if (facts.major * 10 + facts.minor < 75) {
    return unsupported(
        fmt::format("{} is too old: this build runs on compute capability 7.5 (T4) and newer; CUDA 13 "
                    "dropped Maxwell, Pascal and Volta (V100) GPUs",
                    gpu));
  }
  Precision precision = options.precision;
  if (precision == Precision::kBf16 && facts.major < 8) {
    if (!options.precision_is_default) {
      return unsupported(
          fmt::format("{} has no bf16 arithmetic (it needs compute capability 8.0 or newer): use "
                      "--precision fp16 or fp32",
                      gpu));
    }
    precision = Precision::kFp16;
  }
  try {
    return std::unique_ptr<Backend>(
        new CudaBackend(facts, precision, options.cuda_graphs && graphs_from_env(), options.pooling));
  } catch (const CudaFailure& f) {
    if (f.kind() == CudaFailure::Kind::kOutOfMemory) {
      return resource_exhausted(
          fmt::format("{}: out of GPU memory for the stream and cuBLASLt workspace: {}", gpu, f.message()));
    }
    return unavailable(fmt::format("{}: {}", gpu, f.message()));
  } catch (const std::bad_alloc&) {
    return resource_exhausted(gpu + ": out of host memory");
  }
}

int module_device_count(char* err, size_t err_size) {
  try {
    Result<int> count = count_devices();
    if (!count.ok()) {
      copy_message(count.status().message(), err, err_size);
      return -1;
    }
    return *count;
  } catch (const std::exception& e) {
    copy_message(e.what(), err, err_size);
    return -1;
  }
}

int module_device_info(int index, char* name, size_t name_size, int64_t* memory_total_bytes,
                       int* compute_major, int* compute_minor, char* err, size_t err_size) {
  try {
    Result<DeviceFacts> facts = device_facts(index);
    if (!facts.ok()) {
      copy_message(facts.status().message(), err, err_size);
      return -1;
    }
    copy_message(facts->name, name, name_size);
    if (memory_total_bytes) *memory_total_bytes = facts->memory_total_bytes;
    if (compute_major) *compute_major = facts->major;
    if (compute_minor) *compute_minor = facts->minor;
    return 0;
  } catch (const std::exception& e) {
    copy_message(e.what(), err, err_size);
    return -1;
  }
}

Backend* module_create(const BackendOptions* options, int* status_code, char* err, size_t err_size) {
  try {
    Result<std::unique_ptr<Backend>> made = create_backend_impl(options ? *options : BackendOptions{});
    if (!made.ok()) {
      if (status_code) *status_code = int(made.status().code());
      copy_message(made.status().message(), err, err_size);
      return nullptr;
    }
    if (status_code) *status_code = int(StatusCode::kOk);
    return std::move(made).value().release();
  } catch (const std::exception& e) {
    if (status_code) *status_code = int(StatusCode::kInternal);
    copy_message(fmt::format("cuda backend: {}", e.what()), err, err_size);
    return nullptr;
  }
}

}  // namespace
}  // namespace infercost::backend::cuda

extern "C" __attribute__((visibility("default"))) const InfercostCudaModule* infercost_cuda_module_v1() {
  static const InfercostCudaModule module = {
      INFERCOST_CUDA_MODULE_ABI,
      infercost::kVersion,
      &infercost::backend::cuda::module_device_count,
      &infercost::backend::cuda::module_device_info,
      &infercost::backend::cuda::module_create,
  };
  return &module;
}
