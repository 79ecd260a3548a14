// The emulated CUDA runtime and cuBLASLt of cuda_backend_emu.h.
#include "cuda_backend_emu.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "backend/cuda/host.h"
#include "cuda_emu.h"

// The runtime's opaque graph types, defined here: a graph is the work a
// capture recorded, in order.
struct CUgraph_st {
  std::vector<std::function<void()>> work;
};
struct CUgraphExec_st {
  std::vector<std::function<void()>> work;
};

namespace infercost::backend::cuda_backend_emu {
namespace {

struct Capture {
  cudaStream_t stream = nullptr;
  std::vector<std::function<void()>> work;
  bool invalidated = false;
};

// A stream belongs to the device current when it was made.
struct Stream {
  int device = 0;
};

// The calling thread's current device (cudaSetDevice); 0 on a new thread, as
// in CUDA.
thread_local int current_device = 0;

struct State {
  Device device;
  std::map<void*, int64_t> allocations;
  int64_t allocated = 0;
  int matmuls = 0, fused_matmuls = 0, captures = 0, launches = 0, unsafe = 0, heuristics_in_capture = 0;
  cudaError_t last_error = cudaSuccess;
  std::unique_ptr<Capture> capture;  // the capture in progress, if any
  Live live;
};

State& state() {
  static State s;
  return s;
}

}  // namespace

Device& device() {
  return state().device;
}
void reset() {
  State& s = state();
  s.device = Device{};
  s.matmuls = s.fused_matmuls = s.captures = s.launches = s.unsafe = s.heuristics_in_capture = 0;
  s.last_error = cudaSuccess;
  s.capture.reset();
  cuda_emu::capturing = nullptr;
  current_device = 0;
}
int64_t allocated_bytes() {
  return state().allocated;
}
int matmuls() {
  return state().matmuls;
}
int fused_matmuls() {
  return state().fused_matmuls;
}
int graph_captures_tried() {
  return state().captures;
}
int graph_launches() {
  return state().launches;
}
int unsafe_calls_during_capture() {
  return state().unsafe;
}
int heuristics_during_capture() {
  return state().heuristics_in_capture;
}
Live live() {
  return state().live;
}

}  // namespace infercost::backend::cuda_backend_emu

namespace cuda_emu {
// Declared by cuda_emu.h: the emulated kernels report launch errors here. A
// failed launch also invalidates a capture in progress.
void set_launch_error(cudaError_t error) {
  auto& s = infercost::backend::cuda_backend_emu::state();
  s.last_error = error;
  if (s.capture) s.capture->invalidated = true;
}

// Work goes on a stream only while the stream's device is current.
bool accepts_launch(cudaStream_t stream) {
  using infercost::backend::cuda_backend_emu::current_device;
  using infercost::backend::cuda_backend_emu::Stream;
  if (stream == nullptr || reinterpret_cast<Stream*>(stream)->device == current_device) return true;
  set_launch_error(cudaErrorInvalidResourceHandle);
  return false;
}
}  // namespace cuda_emu

namespace {

using infercost::backend::cuda_backend_emu::Capture;
using infercost::backend::cuda_backend_emu::State;
using infercost::backend::cuda_backend_emu::state;
using infercost::backend::cuda_backend_emu::Stream;
namespace host = infercost::backend::cuda;

// A call CUDA forbids while this thread captures: it invalidates the capture
// and fails; counted. cudaSuccess when no capture is in progress.
cudaError_t unsafe_during_capture() {
  State& s = state();
  if (!s.capture) return cudaSuccess;
  ++s.unsafe;
  s.capture->invalidated = true;
  return cudaErrorStreamCaptureUnsupported;
}

// Runs `work` now, or records it when `stream` is being captured.
void enqueue(cudaStream_t stream, std::function<void()> work) {
  State& s = state();
  if (s.capture && s.capture->stream == stream) {
    s.capture->work.push_back(std::move(work));
  } else {
    work();
  }
}

// ---- cuBLASLt's objects -------------------------------------------------------

struct Desc {
  cublasComputeType_t compute;
  cudaDataType_t scale;
  int32_t trans_a = CUBLAS_OP_N, trans_b = CUBLAS_OP_N;
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void* bias = nullptr;
  int32_t bias_type = -1;
};

struct Layout {
  cudaDataType_t type;
  uint64_t rows, cols;
  int64_t ld;
};

constexpr uint64_t kAlgoMagic = 0x1c0575a1u;
// The workspace every emulated algorithm asks for.
constexpr uint64_t kAlgoWorkspaceBytes = uint64_t(1) << 20;

template <typename Opaque, typename T>
T* unwrap(Opaque* o) {
  return o == nullptr ? nullptr : reinterpret_cast<T*>(o->data[0]);
}

float load(cudaDataType_t t, const void* p, int64_t i) {
  switch (t) {
    case CUDA_R_32F: return static_cast<const float*>(p)[i];
    case CUDA_R_16F: return host::fp16_to_fp32(static_cast<const uint16_t*>(p)[i]);
    case CUDA_R_16BF: return host::bf16_to_fp32(static_cast<const uint16_t*>(p)[i]);
    default: std::abort();
  }
}

void store(cudaDataType_t t, void* p, int64_t i, float v) {
  switch (t) {
    case CUDA_R_32F: static_cast<float*>(p)[i] = v; return;
    case CUDA_R_16F: static_cast<uint16_t*>(p)[i] = host::fp32_to_fp16(v); return;
    case CUDA_R_16BF: static_cast<uint16_t*>(p)[i] = host::fp32_to_bf16(v); return;
    default: std::abort();
  }
}

bool supported_type(cudaDataType_t t) {
  return t == CUDA_R_32F || t == CUDA_R_16F || t == CUDA_R_16BF;
}

bool has_bias(uint32_t e) {
  return e == CUBLASLT_EPILOGUE_BIAS || e == CUBLASLT_EPILOGUE_RELU_BIAS || e == CUBLASLT_EPILOGUE_GELU_BIAS;
}

bool aligned256(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 256 == 0;
}

// What cublasLtMatmul and the heuristic both check: the shapes agree, the
// types are a supported combination, a bias epilogue has its pointer, and
// that pointer is as aligned as the heuristic's default preference assumes.
cublasStatus_t check(const Desc* d, const Layout* a, const Layout* b, const Layout* c, const Layout* dd) {
  if (!d || !a || !b || !c || !dd) return CUBLAS_STATUS_INVALID_VALUE;
  if (d->compute != CUBLAS_COMPUTE_32F || d->scale != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (a->type != b->type || c->type != dd->type || a->type != dd->type || !supported_type(a->type)) {
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  const uint64_t m = dd->rows, n = dd->cols;
  const uint64_t a_m = d->trans_a == CUBLAS_OP_N ? a->rows : a->cols;
  const uint64_t k = d->trans_a == CUBLAS_OP_N ? a->cols : a->rows;
  const uint64_t b_k = d->trans_b == CUBLAS_OP_N ? b->rows : b->cols;
  const uint64_t b_n = d->trans_b == CUBLAS_OP_N ? b->cols : b->rows;
  if (a_m != m || b_k != k || b_n != n || c->rows != m || c->cols != n) return CUBLAS_STATUS_INVALID_VALUE;
  for (const Layout* l : {a, b, c, dd}) {
    if (l->ld < int64_t(l->rows)) return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (has_bias(d->epilogue) && d->bias == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  if (has_bias(d->epilogue) && !aligned256(d->bias)) return CUBLAS_STATUS_INVALID_VALUE;
  if (d->epilogue != CUBLASLT_EPILOGUE_DEFAULT && !has_bias(d->epilogue)) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (d->bias_type != -1 && d->bias_type != dd->type) return CUBLAS_STATUS_NOT_SUPPORTED;
  return CUBLAS_STATUS_SUCCESS;
}

// cuBLASLt's GELU epilogue: the tanh approximation.
float gelu_tanh(float x) {
  const double v = x;
  return float(0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))));
}

// D = alpha op(A) op(B) + beta C, then the epilogue, each product summed in
// double in order of k. op(A) and op(B) are first packed in panels of kTile
// rows (columns), k-major and zero-padded, so that one pass over k computes a
// kTile x kTile block of D in registers (the emulator's time is mostly here).
constexpr int64_t kTile = 4;
void matmul(const Desc& op, float al, const void* a_ptr, const Layout& a, const void* b_ptr, const Layout& b,
            float be, const void* c_ptr, const Layout& c, void* d_ptr, const Layout& d) {
  const int64_t m = int64_t(d.rows), n = int64_t(d.cols);
  const int64_t k = int64_t(op.trans_a == CUBLAS_OP_N ? a.cols : a.rows);
  // Column-major: element (i, j) of a layout is at i + j * ld.
  const auto a_at = [&](int64_t i, int64_t p) {
    return op.trans_a == CUBLAS_OP_N ? i + p * a.ld : p + i * a.ld;
  };
  const auto b_at = [&](int64_t p, int64_t j) {
    return op.trans_b == CUBLAS_OP_N ? p + j * b.ld : j + p * b.ld;
  };
  const int64_t m_panels = (m + kTile - 1) / kTile, n_panels = (n + kTile - 1) / kTile;
  // Panel t of A: [p][r] = op(A)(t * kTile + r, p); of B: [p][r] = op(B)(p, t * kTile + r).
  std::vector<double> a_pack(size_t(m_panels * k * kTile), 0.0), b_pack(size_t(n_panels * k * kTile), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      a_pack[size_t(((i / kTile) * k + p) * kTile + i % kTile)] = load(a.type, a_ptr, a_at(i, p));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t p = 0; p < k; ++p)
      b_pack[size_t(((j / kTile) * k + p) * kTile + j % kTile)] = load(b.type, b_ptr, b_at(p, j));
  const cudaDataType_t bias_type = op.bias_type == -1 ? d.type : cudaDataType_t(op.bias_type);
  for (int64_t jt = 0; jt < n_panels; ++jt) {
    const double* bp = &b_pack[size_t(jt * k * kTile)];
    for (int64_t it = 0; it < m_panels; ++it) {
      const double* ap = &a_pack[size_t(it * k * kTile)];
      double sums[kTile][kTile] = {};
      for (int64_t p = 0; p < k; ++p)
        for (int64_t r = 0; r < kTile; ++r)
          for (int64_t s = 0; s < kTile; ++s) sums[r][s] += ap[p * kTile + r] * bp[p * kTile + s];
      for (int64_t s = 0; s < kTile && jt * kTile + s < n; ++s) {
        const int64_t j = jt * kTile + s;
        for (int64_t r = 0; r < kTile && it * kTile + r < m; ++r) {
          const int64_t i = it * kTile + r;
          float v = al * float(sums[r][s]);
          if (be != 0.0f) v += be * load(c.type, c_ptr, i + j * c.ld);
          if (has_bias(op.epilogue)) v += load(bias_type, op.bias, i);  // bias[i]: one per row of D
          if (op.epilogue == CUBLASLT_EPILOGUE_RELU_BIAS) v = v > 0.0f ? v : 0.0f;
          if (op.epilogue == CUBLASLT_EPILOGUE_GELU_BIAS) v = gelu_tanh(v);
          store(d.type, d_ptr, i + j * d.ld, v);
        }
      }
    }
  }
  ++state().matmuls;
  if (op.epilogue == CUBLASLT_EPILOGUE_RELU_BIAS || op.epilogue == CUBLASLT_EPILOGUE_GELU_BIAS) {
    ++state().fused_matmuls;
  }
}

}  // namespace

struct cublasLtContext {
  uint64_t magic = kAlgoMagic;
};

extern "C" {

// ---- CUDA runtime ---------------------------------------------------------------

cudaError_t cudaGetDeviceCount(int* count) {
  const auto& d = state().device;
  if (d.count_error != cudaSuccess) return d.count_error;
  *count = d.device_count;
  return d.device_count == 0 ? cudaErrorNoDevice : cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* version) {
  *version =
      state().device.count_error == cudaErrorInsufficientDriver ? state().device.driver_version : 13000;
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* version) {
  *version = 13000;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int index) {
  const auto& d = state().device;
  if (index < 0 || index >= d.device_count) return cudaErrorInvalidDevice;
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof prop->name, "%s", d.name.c_str());
  prop->major = d.major;
  prop->minor = d.minor;
  prop->totalGlobalMem = size_t(d.memory_total_bytes);
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int index) {
  if (index < 0 || index >= state().device.device_count) return cudaErrorInvalidDevice;
  infercost::backend::cuda_backend_emu::current_device = index;
  return cudaSuccess;
}

cudaError_t cudaGetLastError() {
  const cudaError_t e = state().last_error;
  state().last_error = cudaSuccess;
  return e;
}

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorInsufficientDriver: return "cudaErrorInsufficientDriver";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorNotSupported: return "cudaErrorNotSupported";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorStreamCaptureUnsupported: return "cudaErrorStreamCaptureUnsupported";
    case cudaErrorStreamCaptureInvalidated: return "cudaErrorStreamCaptureInvalidated";
    default: return "cudaErrorUnknown";
  }
}

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    default: return "emulated CUDA error";
  }
}

cudaError_t cudaMalloc(void** ptr, size_t size) {
  *ptr = nullptr;
  if (const cudaError_t e = unsafe_during_capture(); e != cudaSuccess) return e;
  State& s = state();
  if (int64_t(size) > s.device.memory_total_bytes - s.allocated) {
    s.last_error = cudaErrorMemoryAllocation;
    return cudaErrorMemoryAllocation;
  }
  // 256-byte aligned, as cudaMalloc's allocations are.
  *ptr = std::aligned_alloc(256, (size + 255) / 256 * 256 + 256);
  if (*ptr == nullptr) std::abort();
  s.allocations[*ptr] = int64_t(size);
  s.allocated += int64_t(size);
  return cudaSuccess;
}

cudaError_t cudaFree(void* ptr) {
  if (const cudaError_t e = unsafe_during_capture(); e != cudaSuccess) return e;
  if (ptr == nullptr) return cudaSuccess;
  State& s = state();
  auto it = s.allocations.find(ptr);
  if (it == s.allocations.end()) return cudaErrorInvalidValue;
  s.allocated -= it->second;
  s.allocations.erase(it);
  std::free(ptr);
  return cudaSuccess;
}

cudaError_t cudaMallocHost(void** ptr, size_t size) {
  *ptr = nullptr;
  if (const cudaError_t e = unsafe_during_capture(); e != cudaSuccess) return e;
  *ptr = std::aligned_alloc(256, (size + 255) / 256 * 256 + 256);
  if (*ptr == nullptr) return cudaErrorMemoryAllocation;
  ++state().live.pinned;
  return cudaSuccess;
}

cudaError_t cudaFreeHost(void* ptr) {
  if (const cudaError_t e = unsafe_during_capture(); e != cudaSuccess) return e;
  if (ptr == nullptr) return cudaSuccess;
  std::free(ptr);
  --state().live.pinned;
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  if (const cudaError_t e = unsafe_during_capture(); e != cudaSuccess) return e;
  *total_bytes = size_t(state().device.memory_total_bytes);
  *free_bytes = size_t(state().device.memory_total_bytes - state().allocated);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind, cudaStream_t stream) {
  if (count) enqueue(stream, [=] { std::memcpy(dst, src, count); });
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int) {
  *stream = reinterpret_cast<cudaStream_t>(new Stream{infercost::backend::cuda_backend_emu::current_device});
  ++state().live.streams;
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  delete reinterpret_cast<Stream*>(stream);
  --state().live.streams;
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t) {
  if (const cudaError_t e = unsafe_during_capture(); e != cudaSuccess) return e;
  infercost::backend::cuda_backend_emu::Device& d = state().device;
  if (d.sticky_after_syncs == 0) d.sticky_error = cudaErrorIllegalAddress;
  if (d.sticky_after_syncs > 0) --d.sticky_after_syncs;
  return d.sticky_error;
}

// ---- Graphs ---------------------------------------------------------------------

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode) {
  State& s = state();
  ++s.captures;
  if (s.device.graph_capture_fails) return cudaErrorNotSupported;
  if (s.capture) return unsafe_during_capture();  // one capture at a time here
  s.capture = std::make_unique<Capture>();
  s.capture->stream = stream;
  cuda_emu::capturing = &s.capture->work;
  return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  State& s = state();
  *graph = nullptr;
  if (!s.capture || s.capture->stream != stream) return cudaErrorIllegalState;
  std::unique_ptr<Capture> done = std::move(s.capture);
  cuda_emu::capturing = nullptr;
  if (done->invalidated) return cudaErrorStreamCaptureInvalidated;
  *graph = new CUgraph_st{std::move(done->work)};
  ++s.live.graphs;
  return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long) {
  *exec = nullptr;
  if (graph == nullptr) return cudaErrorInvalidValue;
  if (const cudaError_t e = unsafe_during_capture(); e != cudaSuccess) return e;
  *exec = new CUgraphExec_st{graph->work};
  ++state().live.graph_execs;
  return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  if (exec == nullptr) return cudaErrorInvalidValue;
  if (const cudaError_t e = unsafe_during_capture(); e != cudaSuccess) return e;
  if (!cuda_emu::accepts_launch(stream)) return cudaGetLastError();
  ++state().launches;
  for (const auto& work : exec->work) work();
  return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  if (graph == nullptr) return cudaErrorInvalidValue;
  delete graph;
  --state().live.graphs;
  return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  if (exec == nullptr) return cudaErrorInvalidValue;
  delete exec;
  --state().live.graph_execs;
  return cudaSuccess;
}

// ---- cuBLASLt --------------------------------------------------------------------

const char* cublasLtGetStatusName(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    default: return "CUBLAS_STATUS_OTHER";
  }
}
const char* cublasLtGetStatusString(cublasStatus_t s) {
  return cublasLtGetStatusName(s);
}

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  *handle = new cublasLtContext;
  ++state().live.handles;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  delete handle;
  --state().live.handles;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute,
                                        cudaDataType_t scale) {
  *desc = new cublasLtMatmulDescOpaque_t{};
  (*desc)->data[0] = reinterpret_cast<uint64_t>(new Desc{compute, scale});
  ++state().live.descs;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  delete unwrap<cublasLtMatmulDescOpaque_t, Desc>(desc);
  delete desc;
  --state().live.descs;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                              const void* buf, size_t size) {
  Desc* d = unwrap<cublasLtMatmulDescOpaque_t, Desc>(desc);
  if (d == nullptr || buf == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  const auto take = [&](auto& field) {
    if (size != sizeof field) return CUBLAS_STATUS_INVALID_VALUE;
    std::memcpy(&field, buf, size);
    return CUBLAS_STATUS_SUCCESS;
  };
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_TRANSA: return take(d->trans_a);
    case CUBLASLT_MATMUL_DESC_TRANSB: return take(d->trans_b);
    case CUBLASLT_MATMUL_DESC_EPILOGUE: return take(d->epilogue);
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER: return take(d->bias);
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: return take(d->bias_type);
    default: return CUBLAS_STATUS_NOT_SUPPORTED;  // not used by the backend: flag it
  }
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
  *layout = new cublasLtMatrixLayoutOpaque_t{};
  (*layout)->data[0] = reinterpret_cast<uint64_t>(new Layout{type, rows, cols, ld});
  ++state().live.layouts;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  delete unwrap<cublasLtMatrixLayoutOpaque_t, Layout>(layout);
  delete layout;
  --state().live.layouts;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  *pref = new cublasLtMatmulPreferenceOpaque_t{};
  ++state().live.preferences;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  delete pref;
  --state().live.preferences;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void* buf, size_t size) {
  if (pref == nullptr || buf == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  if (attr != CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES || size != sizeof(uint64_t)) {
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  std::memcpy(&pref->data[0], buf, size);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                              cublasLtMatmulPreference_t pref, int requested,
                                              cublasLtMatmulHeuristicResult_t results[], int* returned) {
  if (handle == nullptr || pref == nullptr || requested < 1 || returned == nullptr) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (state().capture) ++state().heuristics_in_capture;
  const Desc* op = unwrap<cublasLtMatmulDescOpaque_t, Desc>(desc);
  const cublasStatus_t s = check(
      op, unwrap<cublasLtMatrixLayoutOpaque_t, Layout>(a), unwrap<cublasLtMatrixLayoutOpaque_t, Layout>(b),
      unwrap<cublasLtMatrixLayoutOpaque_t, Layout>(c), unwrap<cublasLtMatrixLayoutOpaque_t, Layout>(d));
  *returned = 0;
  if (s != CUBLAS_STATUS_SUCCESS) return s;
  uint64_t max_workspace = 0;
  std::memcpy(&max_workspace, &pref->data[0], sizeof max_workspace);
  if (max_workspace < kAlgoWorkspaceBytes) return CUBLAS_STATUS_SUCCESS;  // none within the workspace
  const bool fused =
      op->epilogue == CUBLASLT_EPILOGUE_RELU_BIAS || op->epilogue == CUBLASLT_EPILOGUE_GELU_BIAS;
  if (fused && !state().device.fused_epilogues) return CUBLAS_STATUS_NOT_SUPPORTED;
  results[0] = cublasLtMatmulHeuristicResult_t{};
  results[0].state = fused ? state().device.fused_result_state : CUBLAS_STATUS_SUCCESS;
  // An algorithm whose state is not success does not run.
  results[0].algo.data[0] = results[0].state == CUBLAS_STATUS_SUCCESS ? kAlgoMagic : 0;
  results[0].algo.data[1] = kAlgoWorkspaceBytes;
  results[0].workspaceSize = kAlgoWorkspaceBytes;
  results[0].wavesCount = 1.0f;
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
                              const void* a_ptr, cublasLtMatrixLayout_t a_desc, const void* b_ptr,
                              cublasLtMatrixLayout_t b_desc, const void* beta, const void* c_ptr,
                              cublasLtMatrixLayout_t c_desc, void* d_ptr, cublasLtMatrixLayout_t d_desc,
                              const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspace_bytes,
                              cudaStream_t stream) {
  if (handle == nullptr || algo == nullptr || algo->data[0] != kAlgoMagic) return CUBLAS_STATUS_INVALID_VALUE;
  if (workspace_bytes < algo->data[1] || (algo->data[1] > 0 && !aligned256(workspace))) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  const Desc* op = unwrap<cublasLtMatmulDescOpaque_t, Desc>(desc);
  const Layout* a = unwrap<cublasLtMatrixLayoutOpaque_t, Layout>(a_desc);
  const Layout* b = unwrap<cublasLtMatrixLayoutOpaque_t, Layout>(b_desc);
  const Layout* c = unwrap<cublasLtMatrixLayoutOpaque_t, Layout>(c_desc);
  const Layout* d = unwrap<cublasLtMatrixLayoutOpaque_t, Layout>(d_desc);
  if (const cublasStatus_t s = check(op, a, b, c, d); s != CUBLAS_STATUS_SUCCESS) return s;
  if (!a_ptr || !b_ptr || !d_ptr || !alpha || !beta) return CUBLAS_STATUS_INVALID_VALUE;
  const float al = *static_cast<const float*>(alpha), be = *static_cast<const float*>(beta);
  if (be != 0.0f && c_ptr == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  // The heuristic assumed 256-byte aligned operands (its default preference).
  for (const void* p : {a_ptr, b_ptr, static_cast<const void*>(d_ptr)}) {
    if (!aligned256(p)) return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (be != 0.0f && !aligned256(c_ptr)) return CUBLAS_STATUS_INVALID_VALUE;
  if (!cuda_emu::accepts_launch(stream)) {
    (void)cudaGetLastError();
    return CUBLAS_STATUS_EXECUTION_FAILED;
  }
  // Everything by value: a graph keeps the call, not the descriptors.
  enqueue(stream, [op = *op, al, a_ptr, a = *a, b_ptr, b = *b, be, c_ptr, c = *c, d_ptr, d = *d] {
    matmul(op, al, a_ptr, a, b_ptr, b, be, c_ptr, c, d_ptr, d);
  });
  return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
