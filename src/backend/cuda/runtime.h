// The CUDA backend's plumbing: failures as exceptions inside the module
// (CudaFailure, INFERCOST_CUDA_CHECK), the device count, dtypes, one GPU's
// lock, and device or pinned buffers. Only the module's sources include it.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "backend/cuda/host.h"
#include "backend/cuda/kernels.h"
#include "infercost/status.h"

namespace infercost::backend::cuda {

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
inline bool is_sticky(cudaError_t e) {
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

inline std::string cuda_error_text(cudaError_t e) {
  return fmt::format("{}: {}", cudaGetErrorName(e), cudaGetErrorString(e));
}

[[noreturn]] inline void throw_cuda(cudaError_t e, const char* what) {
  // A failed allocation or launch also sets the thread's last error; clear
  // it so the next call does not report it again (sticky errors stay).
  (void)cudaGetLastError();
  const CudaFailure::Kind kind = e == cudaErrorMemoryAllocation ? CudaFailure::Kind::kOutOfMemory
                                 : is_sticky(e)                 ? CudaFailure::Kind::kSticky
                                                                : CudaFailure::Kind::kOther;
  throw CudaFailure(kind, fmt::format("{}: {}", what, cuda_error_text(e)));
}

[[noreturn]] inline void throw_cublas(cublasStatus_t s, const char* what) {
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

inline void copy_message(const std::string& message, char* err, size_t err_size) {
  if (err == nullptr || err_size == 0) return;
  const size_t n = std::min(message.size(), err_size - 1);
  std::memcpy(err, message.data(), n);
  err[n] = '\0';
}

// How many GPUs the runtime sees, or why none can be used here.
inline Result<int> count_devices() {
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

inline cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::kF32: return CUDA_R_32F;
    case DType::kF16: return CUDA_R_16F;
    case DType::kBF16: return CUDA_R_16BF;
  }
  return CUDA_R_32F;
}

inline DType dtype_of(Precision p) {
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
inline std::recursive_mutex& device_lock(int device) {
  static std::mutex* const table_guard = new std::mutex;
  static auto* const table = new std::map<int, std::unique_ptr<std::recursive_mutex>>;
  std::lock_guard<std::mutex> guard(*table_guard);
  std::unique_ptr<std::recursive_mutex>& lock = (*table)[device];
  if (!lock) lock = std::make_unique<std::recursive_mutex>();
  return *lock;
}

using DeviceLockGuard = std::lock_guard<std::recursive_mutex>;

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

}  // namespace infercost::backend::cuda
