// The CUDA backend's kernels (src/backend/cuda/kernels.h) against plain host
// references, for fp32, fp16 and bf16 storage. Built twice: cuda_kernels_tests
// runs the nvcc-compiled kernels and skips every test where no CUDA device is
// visible (CI has none; scripts/gpu-check.sh runs them on a GPU);
// cuda_kernels_emu_tests (INFERCOST_CUDA_EMULATED) runs the same kernel source
// on the CPU through tests/backend/cuda_emu, in CI.
//
// Inputs are rounded to the storage type on the host and the references
// compute in double from those rounded values (forming the sums the kernels
// form in fp32 in fp32 too), so what remains is the kernels' fp32 arithmetic
// plus one rounding of each output. Tolerances (|got - ref| <= atol + rtol *
// |ref|):
//   fp32: atol = rtol = 1e-5: fp32 sums in another order and erff, tanhf,
//         exp2f within a few ulp, against double.
//   fp16: atol 1e-4, rtol 2e-3: rounding an output costs up to 2^-11 (4.9e-4)
//         relative; 4x that.
//   bf16: atol 1e-4, rtol 1e-2: rounding costs up to 2^-9 (2.0e-3); 5x that.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "backend/cpu/kernels.h"
#include "backend/cuda/kernels.h"
#include "backend/rotary.h"
#include "model/config.h"

namespace infercost::backend::cuda {
namespace {

// ---- Device presence and errors ---------------------------------------------------------------------------

// Empty when a device is usable, else why not (cached: the answer cannot change).
const std::string& cuda_unavailable_reason() {
  static const std::string reason = [] {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
      cudaGetLastError();  // clear it for later calls
      return std::string(cudaGetErrorString(err));
    }
    return count == 0 ? std::string("cudaGetDeviceCount reports 0 devices") : std::string();
  }();
  return reason;
}

#define INFERCOST_SKIP_WITHOUT_CUDA()                              \
  do {                                                             \
    const std::string& why_ = cuda_unavailable_reason();           \
    if (!why_.empty()) GTEST_SKIP() << "no CUDA device: " << why_; \
  } while (0)

#define INFERCOST_ASSERT_CUDA(expr)                                            \
  do {                                                                         \
    const cudaError_t err_ = (expr);                                           \
    ASSERT_EQ(err_, cudaSuccess) << #expr << ": " << cudaGetErrorString(err_); \
  } while (0)

void throw_if(cudaError_t err, const std::string& what) {
  if (err != cudaSuccess) throw std::runtime_error(what + ": " + cudaGetErrorString(err));
}

// ---- Host-side dtype conversions (round to nearest even)
// ---------------------------------------------------

const char* dtype_label(DType t) {
  return t == DType::kF32 ? "fp32" : t == DType::kF16 ? "fp16" : "bf16";
}

std::vector<uint8_t> encode(DType t, const std::vector<float>& x) {
  std::vector<uint8_t> out(x.size() * size_t(dtype_size(t)));
  if (t == DType::kF32) {
    if (!x.empty()) std::memcpy(out.data(), x.data(), out.size());
  } else if (t == DType::kF16) {
    for (size_t i = 0; i < x.size(); ++i) {
      const _Float16 h = static_cast<_Float16>(x[i]);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  } else {
    std::vector<uint16_t> bits(x.size());
    cpu::convert_to_bf16(x.data(), bits.data(), int64_t(x.size()));
    if (!x.empty()) std::memcpy(out.data(), bits.data(), out.size());
  }
  return out;
}

std::vector<float> decode(DType t, const uint8_t* raw, size_t n) {
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) {
    if (t == DType::kF32) {
      std::memcpy(&out[i], raw + 4 * i, 4);
    } else if (t == DType::kF16) {
      _Float16 h;
      std::memcpy(&h, raw + 2 * i, 2);
      out[i] = static_cast<float>(h);
    } else {
      uint16_t b;
      std::memcpy(&b, raw + 2 * i, 2);
      const uint32_t u = uint32_t(b) << 16;
      std::memcpy(&out[i], &u, 4);
    }
  }
  return out;
}

std::vector<float> round_to(DType t, const std::vector<float>& x) {
  return decode(t, encode(t, x).data(), x.size());
}

// ---- Device memory
// ------------------------------------------------------------------------------------------

class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    throw_if(cudaMalloc(&ptr_, std::max<size_t>(bytes, 1)),
             "cudaMalloc of " + std::to_string(bytes) + " bytes");
  }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  uint8_t* bytes_ptr() const { return static_cast<uint8_t*>(ptr_); }
  size_t bytes() const { return bytes_; }

  void write(size_t offset, const void* src, size_t n) {
    throw_if(cudaMemcpy(bytes_ptr() + offset, src, n, cudaMemcpyHostToDevice), "cudaMemcpy to the device");
  }
  std::vector<uint8_t> read(size_t offset, size_t n) const {
    std::vector<uint8_t> out(n);
    throw_if(cudaMemcpy(out.data(), bytes_ptr() + offset, n, cudaMemcpyDeviceToHost),
             "cudaMemcpy to the host");
    return out;
  }
  void fill(uint8_t byte) { throw_if(cudaMemset(ptr_, byte, bytes_), "cudaMemset"); }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// n values of dtype t that start `offset` elements into their allocation (an
// offset of 1 defeats the kernels' 16-byte vector paths).
class DeviceArray {
 public:
  DeviceArray(DType t, size_t n, size_t offset = 0)
      : t_(t),
        n_(n),
        offset_bytes_(offset * size_t(dtype_size(t))),
        buf_(offset_bytes_ + n * size_t(dtype_size(t))) {}
  // Uploads `values`, rounded to the dtype (round_to gives what is stored).
  DeviceArray(DType t, const std::vector<float>& values, size_t offset = 0)
      : DeviceArray(t, values.size(), offset) {
    upload(values);
  }

  void* data() const { return buf_.bytes_ptr() + offset_bytes_; }
  size_t size() const { return n_; }
  void upload(const std::vector<float>& values) {
    const std::vector<uint8_t> raw = encode(t_, values);
    buf_.write(offset_bytes_, raw.data(), raw.size());
  }
  std::vector<float> download() const { return decode(t_, buf_.read(offset_bytes_, bytes()).data(), n_); }
  std::vector<uint8_t> download_raw() const { return buf_.read(offset_bytes_, bytes()); }
  // The whole allocation, offset included.
  std::vector<uint8_t> download_all_raw() const { return buf_.read(0, buf_.bytes()); }
  void fill(uint8_t byte) { buf_.fill(byte); }

 private:
  size_t bytes() const { return n_ * size_t(dtype_size(t_)); }
  DType t_;
  size_t n_;
  size_t offset_bytes_;
  DeviceBuffer buf_;
};

class DeviceInts {
 public:
  explicit DeviceInts(const std::vector<int32_t>& v) : buf_(v.size() * 4) {
    if (!v.empty()) buf_.write(0, v.data(), v.size() * 4);
  }
  const int32_t* data() const { return reinterpret_cast<const int32_t*>(buf_.bytes_ptr()); }

 private:
  DeviceBuffer buf_;
};

// ---- Random data and comparison
// -----------------------------------------------------------------------------

std::vector<float> randn(size_t n, uint32_t seed, float stddev = 1.0f, float mean = 0.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(mean, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

struct Tolerance {
  double atol = 0.0;
  double rtol = 0.0;
};

// got and ref agree elementwise within tol (a NaN never does). On failure the
// message gives the count of bad values, the worst one relative to its bound
// (where(i) says what it is) and the largest absolute error.
::testing::AssertionResult all_close(const std::vector<float>& got, const std::vector<double>& ref,
                                     Tolerance tol, const std::function<std::string(size_t)>& where) {
  if (got.size() != ref.size()) {
    return ::testing::AssertionFailure() << "size " << got.size() << " != reference size " << ref.size();
  }
  size_t bad = 0, worst = 0;
  double worst_ratio = -1.0, max_abs = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(double(got[i]) - ref[i]);
    const double ratio = std::isnan(err) ? std::numeric_limits<double>::infinity()
                                         : err / (tol.atol + tol.rtol * std::fabs(ref[i]));
    if (!(ratio <= 1.0)) ++bad;
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      worst = i;
    }
    if (!std::isnan(err)) max_abs = std::max(max_abs, err);
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  std::ostringstream os;
  os.precision(9);
  os << bad << " of " << got.size() << " values out of tolerance (atol " << tol.atol << ", rtol " << tol.rtol
     << "); worst at " << where(worst) << ": got " << got[worst] << ", expected " << ref[worst] << " (error "
     << std::fabs(double(got[worst]) - ref[worst]) << ", " << worst_ratio << "x its bound); max abs error "
     << max_abs;
  return ::testing::AssertionFailure() << os.str();
}

std::function<std::string(size_t)> row_col(int cols) {
  return [cols](size_t i) {
    return "row " + std::to_string(i / size_t(cols)) + ", column " + std::to_string(i % size_t(cols));
  };
}

double act_ref(Act act, double x) {
  switch (act) {
    case Act::kGelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Act::kRelu: return x > 0.0 ? x : 0.0;
    case Act::kTanh: return std::tanh(x);
    case Act::kNone: break;
  }
  return x;
}

const char* act_label(Act act) {
  switch (act) {
    case Act::kGelu: return "gelu";
    case Act::kRelu: return "relu";
    case Act::kTanh: return "tanh";
    case Act::kNone: break;
  }
  return "none";
}

// LayerNorm of one row in double, biased variance (torch.nn.LayerNorm).
void layer_norm_ref(const std::vector<float>& row, const std::vector<float>& gamma,
                    const std::vector<float>& beta, float eps, double* out) {
  const size_t n = row.size();
  double mean = 0.0;
  for (float v : row) mean += v;
  mean /= double(n);
  double var = 0.0;
  for (float v : row) var += (v - mean) * (v - mean);
  var /= double(n);
  const double inv = 1.0 / std::sqrt(var + double(eps));
  for (size_t i = 0; i < n; ++i) out[i] = (row[i] - mean) * inv * gamma[i] + beta[i];
}

// ---- Fixtures
// -------------------------------------------------------------------------------------------------

class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    INFERCOST_SKIP_WITHOUT_CUDA();
    INFERCOST_ASSERT_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  void TearDown() override {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  // Waits for the stream and checks that nothing failed asynchronously.
  ::testing::AssertionResult sync() {
    const cudaError_t err = cudaStreamSynchronize(stream_);
    if (err != cudaSuccess)
      return ::testing::AssertionFailure() << "kernel failed: " << cudaGetErrorString(err);
    return ::testing::AssertionSuccess();
  }
  cudaStream_t stream_ = nullptr;
};

struct DTypeCase {
  DType dtype;
  Tolerance tol;
};

// Names the parameter in test listings (ctest shows it).
void PrintTo(const DTypeCase& c, std::ostream* os) {
  *os << dtype_label(c.dtype);
}

class CudaKernelTest : public CudaTest, public ::testing::WithParamInterface<DTypeCase> {
 protected:
  DType dtype() const { return GetParam().dtype; }
  Tolerance tol() const { return GetParam().tol; }
};

// ---- Conversions
// ---------------------------------------------------------------------------------------------

TEST_P(CudaKernelTest, ConvertsLikeHostRoundToNearestEven) {
  std::vector<float> x = {0.0f, -0.0f, 1.0f / 3.0f, -2.0f / 3.0f, 65504.0f, 65519.0f, 65520.0f, -1e5f,
                          5.96e-8f, 2.98e-8f, 3e-8f, 1e-10f, 1e30f, -1e30f, 3.3895e38f, FLT_MAX,
                          std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                          // ties for fp16 (1 + 2^-11, 1 + 3 * 2^-11) and bf16 (1 + 2^-8, 1 + 3 * 2^-8)
                          1.00048828125f, 1.00146484375f, 1.00390625f, 1.01171875f};
  uint32_t seed = 1;
  for (float scale : {1e-6f, 1e-3f, 1.0f, 1e3f, 6e4f}) {
    const std::vector<float> r = randn(20011, seed++, scale);
    x.insert(x.end(), r.begin(), r.end());
  }
  const DeviceArray src(DType::kF32, x);
  DeviceArray dst(dtype(), x.size());
  INFERCOST_ASSERT_CUDA(convert_from_f32(dtype(), static_cast<const float*>(src.data()), dst.data(),
                                         int64_t(x.size()), stream_));
  ASSERT_TRUE(sync());
  const std::vector<uint8_t> got = dst.download_raw(), want = encode(dtype(), x);
  const size_t es = size_t(dtype_size(dtype()));
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(std::memcmp(got.data() + i * es, want.data() + i * es, es), 0)
        << "convert_from_f32 of " << x[i] << " (value " << i << ") to " << dtype_label(dtype()) << ": got "
        << decode(dtype(), got.data() + i * es, 1)[0] << ", expected "
        << decode(dtype(), want.data() + i * es, 1)[0];
  }

  // And back: every stored value converts to fp32 exactly.
  DeviceArray back(DType::kF32, x.size());
  INFERCOST_ASSERT_CUDA(
      convert_to_f32(dtype(), dst.data(), static_cast<float*>(back.data()), int64_t(x.size()), stream_));
  ASSERT_TRUE(sync());
  const std::vector<float> widened = back.download(), exact = decode(dtype(), want.data(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(std::memcmp(&widened[i], &exact[i], 4), 0)
        << "convert_to_f32 of value " << i << ": got " << widened[i] << ", expected " << exact[i];
  }
}

// ---- LayerNorm
// ---------------------------------------------------------------------------------------------------

TEST_P(CudaKernelTest, EmbedLayerNormMatchesReference) {
  const DType t = dtype();
  const int vocab = 50, max_pos = 40;
  const int64_t tokens = 37;  // not a multiple of the 4 rows of a block
  std::mt19937 rng(7);
  std::vector<int32_t> ids(tokens), positions(tokens);
  for (auto& id : ids) id = int32_t(rng() % vocab);
  for (auto& p : positions) p = int32_t(rng() % max_pos);
  const DeviceInts d_ids(ids), d_positions(positions);
  for (int hidden : {1, 8, 33, 64, 768, 1024}) {
    for (int variant : {0, 1, 2}) {  // 0: word + position, 1: + token type, 2: word only (ModernBERT)
      const bool with_type = variant == 1, with_position = variant != 2;
      for (size_t offset : {0, 1}) {  // 1: unaligned rows take the scalar path
        SCOPED_TRACE("hidden " + std::to_string(hidden) + (with_type ? ", with" : ", without") +
                     " token type" + (with_position ? "" : ", no position table") + ", element offset " +
                     std::to_string(offset));
        const std::vector<float> word = round_to(t, randn(size_t(vocab) * hidden, 11 + hidden));
        const std::vector<float> pos = round_to(t, randn(size_t(max_pos) * hidden, 12 + hidden, 0.5f));
        const std::vector<float> type0 = round_to(t, randn(size_t(hidden), 13 + hidden, 0.3f));
        const std::vector<float> gamma = randn(size_t(hidden), 14 + hidden, 0.5f, 1.0f);
        const std::vector<float> beta = randn(size_t(hidden), 15 + hidden, 0.5f);
        const float eps = with_type ? 1e-12f : 0.1f;  // a large eps must show in the result
        const DeviceArray d_word(t, word, offset), d_pos(t, pos, offset), d_type(t, type0, offset);
        const DeviceArray d_gamma(DType::kF32, gamma, offset), d_beta(DType::kF32, beta, offset);
        DeviceArray d_out(t, size_t(tokens) * hidden, offset);
        INFERCOST_ASSERT_CUDA(
            embed_layer_norm(t, d_ids.data(), d_positions.data(), tokens, hidden, d_word.data(),
                             with_position ? d_pos.data() : nullptr, with_type ? d_type.data() : nullptr,
                             static_cast<const float*>(d_gamma.data()),
                             static_cast<const float*>(d_beta.data()), eps, d_out.data(), stream_));
        ASSERT_TRUE(sync());

        std::vector<double> ref(size_t(tokens) * hidden);
        std::vector<float> row(static_cast<size_t>(hidden));
        for (int64_t r = 0; r < tokens; ++r) {
          for (int c = 0; c < hidden; ++c) {
            // The kernel forms (word + position) + type0 in fp32.
            float v = word[size_t(ids[r]) * hidden + c] +
                      (with_position ? pos[size_t(positions[r]) * hidden + c] : 0.0f);
            if (with_type) v += type0[size_t(c)];
            row[size_t(c)] = v;
          }
          layer_norm_ref(row, gamma, beta, eps, ref.data() + r * hidden);
        }
        EXPECT_TRUE(all_close(d_out.download(), ref, tol(), row_col(hidden)));
      }
    }
  }
}

TEST_P(CudaKernelTest, AddLayerNormMatchesReferenceInPlace) {
  const DType t = dtype();
  for (int hidden : {1, 32, 33, 100, 768, 1024}) {
    for (int64_t rows : {1, 37}) {
      for (size_t offset : {0, 1}) {
        SCOPED_TRACE("hidden " + std::to_string(hidden) + ", rows " + std::to_string(rows) +
                     ", element offset " + std::to_string(offset));
        std::vector<float> x = randn(size_t(rows) * hidden, 21 + hidden, 2.0f);
        std::vector<float> res = randn(size_t(rows) * hidden, 22 + hidden);
        if (rows > 2) {
          // A large mean against the spread, and a constant row (variance 0: beta).
          for (int c = 0; c < hidden; ++c) x[size_t(hidden) + c] += 100.0f;
          for (int c = 0; c < hidden; ++c) {
            x[2 * size_t(hidden) + c] = 2.5f;
            res[2 * size_t(hidden) + c] = 0.5f;
          }
        }
        x = round_to(t, x);
        res = round_to(t, res);
        const std::vector<float> gamma = randn(size_t(hidden), 23 + hidden, 0.5f, 1.0f);
        const std::vector<float> beta = randn(size_t(hidden), 24 + hidden, 0.5f);
        const float eps = 1e-5f;
        DeviceArray d_x(t, x, offset);
        const DeviceArray d_res(t, res, offset);
        const DeviceArray d_gamma(DType::kF32, gamma, offset), d_beta(DType::kF32, beta, offset);
        INFERCOST_ASSERT_CUDA(add_layer_norm(t, d_x.data(), d_res.data(), rows, hidden,
                                             static_cast<const float*>(d_gamma.data()),
                                             static_cast<const float*>(d_beta.data()), eps, stream_));
        ASSERT_TRUE(sync());

        std::vector<double> ref(x.size());
        std::vector<float> row(static_cast<size_t>(hidden));
        for (int64_t r = 0; r < rows; ++r) {
          for (int c = 0; c < hidden; ++c)
            row[size_t(c)] = x[r * hidden + c] + res[r * hidden + c];  // fp32 sum
          layer_norm_ref(row, gamma, beta, eps, ref.data() + r * hidden);
        }
        EXPECT_TRUE(all_close(d_x.download(), ref, tol(), row_col(hidden)));
        EXPECT_TRUE(d_res.download_raw() == encode(t, res)) << "the residual was modified";
      }
    }
  }
}

// The pre-norm step: x keeps x + residual (rounded once), y gets its norm;
// y may be x (only the norm kept) or the residual, and the residual may be
// absent (a plain norm, the head's in fp32).
TEST_P(CudaKernelTest, ResidualLayerNormKeepsTheSumAndWritesItsNorm) {
  const DType t = dtype();
  enum Out { kSeparate, kIntoX, kIntoResidual, kNoResidual };
  for (int hidden : {1, 33, 768, 1024}) {
    for (Out out : {kSeparate, kIntoX, kIntoResidual, kNoResidual}) {
      for (size_t offset : {0, 1}) {
        SCOPED_TRACE("hidden " + std::to_string(hidden) + ", output " + std::to_string(int(out)) +
                     ", element offset " + std::to_string(offset));
        const int64_t rows = 37;
        const std::vector<float> x = round_to(t, randn(size_t(rows) * hidden, 31 + hidden, 2.0f));
        const std::vector<float> res = round_to(t, randn(size_t(rows) * hidden, 32 + hidden));
        const std::vector<float> gamma = randn(size_t(hidden), 33 + hidden, 0.5f, 1.0f);
        const std::vector<float> beta = randn(size_t(hidden), 34 + hidden, 0.5f);
        const float eps = 1e-5f;
        DeviceArray d_x(t, x, offset), d_res(t, res, offset), d_y(t, x.size(), offset);
        const DeviceArray d_gamma(DType::kF32, gamma, offset), d_beta(DType::kF32, beta, offset);
        void* y = out == kIntoX ? d_x.data() : out == kIntoResidual ? d_res.data() : d_y.data();
        INFERCOST_ASSERT_CUDA(residual_layer_norm(t, d_x.data(), out == kNoResidual ? nullptr : d_res.data(),
                                                  y, rows, hidden, static_cast<const float*>(d_gamma.data()),
                                                  static_cast<const float*>(d_beta.data()), eps, stream_));
        ASSERT_TRUE(sync());
        std::vector<float> sum(x.size());
        for (size_t i = 0; i < x.size(); ++i) sum[i] = out == kNoResidual ? x[i] : x[i] + res[i];
        sum = round_to(t, sum);  // the stream is stored in t and normalized as stored
        std::vector<double> ref(x.size());
        for (int64_t r = 0; r < rows; ++r) {
          const std::vector<float> row(sum.begin() + r * hidden, sum.begin() + (r + 1) * hidden);
          layer_norm_ref(row, gamma, beta, eps, ref.data() + r * hidden);
        }
        const DeviceArray& got_y = out == kIntoX ? d_x : out == kIntoResidual ? d_res : d_y;
        EXPECT_TRUE(all_close(got_y.download(), ref, tol(), row_col(hidden)));
        if (out == kSeparate || out == kIntoResidual) {
          EXPECT_TRUE(d_x.download_raw() == encode(t, sum)) << "x does not hold x + residual";
        }
        if (out == kSeparate) {
          EXPECT_TRUE(d_res.download_raw() == encode(t, res)) << "the residual was modified";
        }
        if (out == kNoResidual) {
          EXPECT_TRUE(d_x.download_raw() == encode(t, x)) << "x was modified";
        }
      }
    }
  }
}

TEST_P(CudaKernelTest, LayerNormsRejectBadShapes) {
  const DType t = dtype();
  DeviceArray buf(t, 2048);
  const DeviceArray params(DType::kF32, std::vector<float>(2048, 1.0f));
  const auto* p = static_cast<const float*>(params.data());
  const DeviceInts ids(std::vector<int32_t>(2, 0));
  for (int hidden : {0, -1, 1025}) {
    EXPECT_EQ(add_layer_norm(t, buf.data(), buf.data(), 1, hidden, p, p, 1e-5f, stream_),
              cudaErrorInvalidValue)
        << "hidden " << hidden;
    EXPECT_EQ(embed_layer_norm(t, ids.data(), ids.data(), 1, hidden, buf.data(), buf.data(), nullptr, p, p,
                               1e-5f, buf.data(), stream_),
              cudaErrorInvalidValue)
        << "hidden " << hidden;
  }
  for (int hidden : {0, -1, 1025}) {
    EXPECT_EQ(residual_layer_norm(t, buf.data(), nullptr, buf.data(), 1, hidden, p, p, 1e-5f, stream_),
              cudaErrorInvalidValue)
        << "hidden " << hidden;
  }
  EXPECT_EQ(add_layer_norm(t, buf.data(), buf.data(), -1, 768, p, p, 1e-5f, stream_), cudaErrorInvalidValue);
  EXPECT_EQ(add_layer_norm(t, nullptr, nullptr, 0, 768, nullptr, nullptr, 1e-5f, stream_), cudaSuccess);
  EXPECT_EQ(embed_layer_norm(t, nullptr, nullptr, 0, 768, nullptr, nullptr, nullptr, nullptr, nullptr, 1e-5f,
                             nullptr, stream_),
            cudaSuccess);
  EXPECT_TRUE(sync());
}

// ---- Elementwise
// -------------------------------------------------------------------------------------------------

TEST_P(CudaKernelTest, ActivationInPlaceMatchesReferenceAndStaysInBounds) {
  const DType t = dtype();
  constexpr size_t kGuard = 16;  // elements each side; 16 keeps offset 0 16-byte aligned
  for (Act act : {Act::kGelu, Act::kRelu, Act::kTanh, Act::kNone}) {
    for (int64_t n : {1, 7, 8, 9, 1000, 100003}) {
      for (size_t offset : {0, 1}) {
        SCOPED_TRACE(std::string(act_label(act)) + ", n " + std::to_string(n) + ", element offset " +
                     std::to_string(offset));
        std::vector<float> all = randn(size_t(n) + 2 * kGuard + 1, uint32_t(n) + 31, 3.0f);
        for (size_t i = 0; i < all.size(); i += 97) all[i] = 0.0f;
        all = round_to(t, all);
        DeviceArray d(t, all);
        auto* x = static_cast<uint8_t*>(d.data()) + (kGuard + offset) * size_t(dtype_size(t));
        INFERCOST_ASSERT_CUDA(activation_inplace(t, x, n, act, stream_));
        ASSERT_TRUE(sync());
        const std::vector<float> got_all = d.download();
        const std::vector<float> got(got_all.begin() + long(kGuard + offset),
                                     got_all.begin() + long(kGuard + offset) + n);
        std::vector<double> ref(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) ref[size_t(i)] = act_ref(act, all[kGuard + offset + size_t(i)]);
        EXPECT_TRUE(all_close(got, ref, tol(), [](size_t i) { return "value " + std::to_string(i); }));
        for (size_t i = 0; i < all.size(); ++i) {
          if (i >= kGuard + offset && i < kGuard + offset + size_t(n)) continue;
          ASSERT_EQ(std::memcmp(&got_all[i], &all[i], 4), 0)
              << "element " << i << " outside [" << kGuard + offset << ", " << kGuard + offset + n
              << ") was written";
        }
      }
    }
  }
}

// Rotary embeddings against the CPU backend's apply_rotary on the same
// rounded values and the same table; V is untouched.
TEST_P(CudaKernelTest, RotaryTurnsQueriesAndKeysAsTheCpuDoes) {
  const DType t = dtype();
  for (int head_dim : {2, 32, 64, 128}) {
    SCOPED_TRACE("head_dim " + std::to_string(head_dim));
    const int heads = 3, hidden = heads * head_dim, max_pos = 300;
    std::vector<float> table;
    rotary_table(160000.0, head_dim, max_pos, table);
    const std::vector<int32_t> positions = {0, 1, 2, 299, 128, 7, 0, 64, 255};
    const int64_t tokens = int64_t(positions.size());
    const std::vector<float> qkv = round_to(t, randn(size_t(tokens) * 3 * hidden, 41 + head_dim, 1.5f));
    DeviceArray d_qkv(t, qkv);
    const DeviceArray d_table(DType::kF32, table);
    const DeviceInts d_positions(positions);
    INFERCOST_ASSERT_CUDA(rotary(t, d_qkv.data(), d_positions.data(), tokens, heads, head_dim,
                                 static_cast<const float*>(d_table.data()), stream_));
    ASSERT_TRUE(sync());
    std::vector<float> want = qkv;
    cpu::apply_rotary(want.data(), tokens, positions.data(), heads, head_dim, table.data());
    const std::vector<double> ref(want.begin(), want.end());
    EXPECT_TRUE(all_close(d_qkv.download(), ref, tol(), row_col(3 * hidden)));
  }
  EXPECT_EQ(rotary(t, nullptr, nullptr, 1, 1, 3, nullptr, stream_), cudaErrorInvalidValue) << "odd head_dim";
  EXPECT_EQ(rotary(t, nullptr, nullptr, 0, 1, 64, nullptr, stream_), cudaSuccess) << "no tokens";
}

TEST_P(CudaKernelTest, GeluGluMultipliesTheInputsGeluByTheGate) {
  const DType t = dtype();
  for (int cols : {1, 7, 1152}) {
    SCOPED_TRACE("cols " + std::to_string(cols));
    const int64_t rows = 13;
    const std::vector<float> x = round_to(t, randn(size_t(rows) * 2 * cols, 51 + cols, 2.0f));
    const DeviceArray d_x(t, x);
    DeviceArray d_y(t, size_t(rows) * cols);
    INFERCOST_ASSERT_CUDA(gelu_glu(t, d_x.data(), d_y.data(), rows, cols, stream_));
    ASSERT_TRUE(sync());
    std::vector<double> ref(size_t(rows) * cols);
    for (int64_t r = 0; r < rows; ++r) {
      for (int c = 0; c < cols; ++c) {
        const float* xr = &x[size_t(r) * 2 * cols];
        ref[size_t(r) * cols + c] = act_ref(Act::kGelu, xr[c]) * xr[cols + c];
      }
    }
    EXPECT_TRUE(all_close(d_y.download(), ref, tol(), row_col(cols)));
  }
  EXPECT_EQ(gelu_glu(t, nullptr, nullptr, -1, 4, stream_), cudaErrorInvalidValue);
}

TEST_P(CudaKernelTest, GatherRowsWidensToFp32) {
  const DType t = dtype();
  for (int hidden : {33, 768}) {
    SCOPED_TRACE("hidden " + std::to_string(hidden));
    const int total = 10;
    const std::vector<float> x = round_to(t, randn(size_t(total) * hidden, 41 + hidden));
    const std::vector<int32_t> rows = {3, 0, 9, 3, 5};
    const DeviceArray d_x(t, x);
    const DeviceInts d_rows(rows);
    DeviceArray d_out(DType::kF32, rows.size() * size_t(hidden));
    INFERCOST_ASSERT_CUDA(gather_rows_f32(t, d_x.data(), d_rows.data(), int(rows.size()), hidden,
                                          static_cast<float*>(d_out.data()), stream_));
    ASSERT_TRUE(sync());
    const std::vector<float> got = d_out.download();
    for (size_t i = 0; i < rows.size(); ++i) {
      for (int c = 0; c < hidden; ++c) {
        ASSERT_EQ(got[i * hidden + c], x[size_t(rows[i]) * hidden + c])
            << "output row " << i << ", column " << c;
      }
    }
  }
}

// Each sequence's real rows (key_len of them from seq_start; its padding rows
// after them never count) pooled to fp32, against the same pooling in double
// over the values as stored.
TEST_P(CudaKernelTest, PoolRowsPoolsTheRealRowsOfEachSequence) {
  const DType t = dtype();
  const int hidden = 300;  // more columns than a block's threads
  // Three sequences of 4 computed rows (the last padded: 2 real), then 1 and 5.
  const std::vector<int32_t> seq_start = {0, 4, 8, 9, 14};
  const std::vector<int32_t> key_len = {4, 2, 1, 5};
  const int sequences = int(key_len.size());
  const std::vector<float> x = round_to(t, randn(size_t(seq_start.back()) * hidden, 57));
  const DeviceArray d_x(t, x);
  const DeviceInts d_start(seq_start), d_len(key_len);
  for (Pool pool : {Pool::kCls, Pool::kMean, Pool::kMax, Pool::kLastToken}) {
    SCOPED_TRACE("pool " + std::to_string(int(pool)));
    DeviceArray d_out(DType::kF32, size_t(sequences) * hidden);
    INFERCOST_ASSERT_CUDA(pool_rows_f32(t, d_x.data(), d_start.data(), d_len.data(), sequences, hidden, pool,
                                        static_cast<float*>(d_out.data()), stream_));
    ASSERT_TRUE(sync());
    const std::vector<float> got = d_out.download();
    for (int s = 0; s < sequences; ++s) {
      for (int c = 0; c < hidden; ++c) {
        const auto at = [&](int r) {
          return double(x[size_t(seq_start[size_t(s)] + r) * hidden + size_t(c)]);
        };
        const int n = key_len[size_t(s)];
        double want = at(0);
        if (pool == Pool::kLastToken) want = at(n - 1);
        for (int r = 1; r < n; ++r) {
          if (pool == Pool::kMean) want += at(r);
          if (pool == Pool::kMax) want = std::max(want, at(r));
        }
        if (pool == Pool::kMean) want /= n;
        ASSERT_NEAR(got[size_t(s) * hidden + size_t(c)], want, 1e-5) << "sequence " << s << ", column " << c;
      }
    }
  }
}

// ---- Attention
// -------------------------------------------------------------------------------------------------

// ctx [total, hidden] out of d_ctx, which holds it between one guard row
// before and one after (all bytes 0xFF); empty, with a failure naming the
// first byte, where a guard was written.
std::vector<float> ctx_within_guards(DType t, const DeviceArray& d_ctx, int total, int hidden) {
  const std::vector<uint8_t> raw = d_ctx.download_all_raw();
  const size_t row_bytes = size_t(hidden) * size_t(dtype_size(t));
  for (size_t b = 0; b < row_bytes; ++b) {
    const char* which = raw[b] != 0xFF                            ? "before"
                        : raw[raw.size() - row_bytes + b] != 0xFF ? "after"
                                                                  : nullptr;
    if (which != nullptr) {
      ADD_FAILURE() << "the row " << which << " ctx was written (byte " << b << ")";
      return {};
    }
  }
  return decode(t, raw.data() + row_bytes, size_t(total) * hidden);
}

// Names value i of a packed [total, heads * head_dim] output: its sequence,
// row, head and dimension.
std::function<std::string(size_t)> packed_place(const std::vector<int32_t>& seq_start,
                                                const std::vector<int32_t>& key_len, int hidden,
                                                int head_dim) {
  return [=](size_t i) {
    const int row = int(i / size_t(hidden)), col = int(i % size_t(hidden));
    const size_t s =
        size_t(std::upper_bound(seq_start.begin(), seq_start.end(), row) - seq_start.begin()) - 1;
    std::ostringstream os;
    os << "sequence " << s << " (" << seq_start[s + 1] - seq_start[s] << " rows, key_len " << key_len[s]
       << "), row " << row - seq_start[s] << ", head " << col / head_dim << ", dim " << col % head_dim;
    return os.str();
  };
}

double dot_double(const float* a, const float* b, int n) {
  double sum = 0.0;
  for (int d = 0; d < n; ++d) sum += double(a[d]) * b[d];
  return sum;
}

// softmax(score) V in double for every query row of a packed qkv [total,
// 3 * heads * head_dim] (sequence s: rows seq_start[s].., keys its first
// key_len[s]), score(head, i, j, q_i, k_j) the scaled score of query i and
// key j, -inf for a key it does not see; a row that sees none gives zeros.
std::vector<double> attention_reference(
    const std::vector<float>& qkv, const std::vector<int32_t>& seq_start, const std::vector<int32_t>& key_len,
    int heads, int head_dim, const std::function<double(int, int, int, const float*, const float*)>& score) {
  const size_t hidden = size_t(heads) * head_dim, ld = 3 * hidden;
  const double none = -std::numeric_limits<double>::infinity();
  std::vector<double> ref(size_t(seq_start.back()) * hidden, 0.0), p;
  for (size_t s = 0; s + 1 < seq_start.size(); ++s) {
    const int start = seq_start[s], rows = seq_start[s + 1] - start, kl = key_len[s];
    p.assign(size_t(kl), 0.0);
    for (int h = 0; h < heads; ++h) {
      for (int i = 0; i < rows; ++i) {
        const float* q = &qkv[size_t(start + i) * ld + size_t(h) * head_dim];
        double mx = none;
        for (int j = 0; j < kl; ++j) {
          p[size_t(j)] = score(h, i, j, q, &qkv[size_t(start + j) * ld + hidden + size_t(h) * head_dim]);
          mx = std::max(mx, p[size_t(j)]);
        }
        if (mx == none) continue;  // no key seen: zeros
        double sum = 0.0;
        for (double& v : p) sum += (v = std::exp(v - mx));
        double* out = &ref[size_t(start + i) * hidden + size_t(h) * head_dim];
        for (int j = 0; j < kl; ++j) {
          const float* v = &qkv[size_t(start + j) * ld + 2 * hidden + size_t(h) * head_dim];
          for (int d = 0; d < head_dim; ++d) out[d] += p[size_t(j)] / sum * v[d];
        }
      }
    }
  }
  return ref;
}

struct AttentionCase {
  std::vector<int> rows;  // query rows of each sequence
  std::vector<int> keys;  // key_len of each (empty: = rows)
  int heads = 1;
  int head_dim = 64;
  float scale = 0.125f;
  float stddev = 1.5f;  // of the random Q, K and V
  int extra_max_rows = 0;
  int window = 0;  // local attention: keys within this many positions of the query; 0: all
};

// Runs one case and compares every output value (and the guard rows around
// ctx, which must stay untouched) with softmax(Q K^T * scale) V in double.
void check_attention(DType t, const AttentionCase& c, Tolerance tol, cudaStream_t stream) {
  const int sequences = int(c.rows.size());
  const std::vector<int> keys = c.keys.empty() ? c.rows : c.keys;
  std::vector<int32_t> seq_start(size_t(sequences) + 1, 0), key_len(keys.begin(), keys.end());
  for (int s = 0; s < sequences; ++s) seq_start[size_t(s) + 1] = seq_start[size_t(s)] + c.rows[size_t(s)];
  const int total = seq_start.back();
  const int max_rows = *std::max_element(c.rows.begin(), c.rows.end()) + c.extra_max_rows;
  const int D = c.head_dim;
  const int hidden = c.heads * D;
  const size_t ld = 3 * size_t(hidden);
  const std::vector<float> qkv = round_to(t, randn(size_t(total) * ld, uint32_t(total * 7 + D), c.stddev));

  const DeviceArray d_qkv(t, qkv);
  // ctx with one guard row before and after, all bytes 0xFF (NaN in every dtype).
  DeviceArray d_ctx(t, size_t(total + 2) * hidden);
  d_ctx.fill(0xFF);
  void* ctx = static_cast<uint8_t*>(d_ctx.data()) + size_t(hidden) * size_t(dtype_size(t));
  const DeviceInts d_start(seq_start), d_keys(key_len);
  INFERCOST_ASSERT_CUDA(attention(t, d_qkv.data(), ctx, d_start.data(), d_keys.data(), sequences, max_rows,
                                  c.heads, D, c.scale, stream, c.window));
  INFERCOST_ASSERT_CUDA(cudaStreamSynchronize(stream));

  const std::vector<float> got = ctx_within_guards(t, d_ctx, total, hidden);
  ASSERT_EQ(got.size(), size_t(total) * hidden);

  // Scores of the window's keys, -inf outside it.
  const std::vector<double> ref = attention_reference(qkv, seq_start, key_len, c.heads, D,
                                                      [&](int, int i, int j, const float* q, const float* k) {
                                                        if (c.window != 0 && std::abs(i - j) > c.window)
                                                          return -std::numeric_limits<double>::infinity();
                                                        return dot_double(q, k, D) * c.scale;
                                                      });
  const auto where = packed_place(seq_start, key_len, hidden, D);
  EXPECT_TRUE(all_close(got, ref, tol, where)) << "head_dim " << D << ", heads " << c.heads << ", "
                                               << sequences << " sequences, max_rows " << max_rows;
}

TEST_P(CudaKernelTest, AttentionPackedLengths) {
  AttentionCase c;
  c.rows = {1, 2, 31, 32, 33, 64, 100, 512};
  c.heads = 2;
  check_attention(dtype(), c, tol(), stream_);
}

TEST_P(CudaKernelTest, AttentionComputedPaddingMasksKeysButComputesEveryRow) {
  AttentionCase c;
  c.rows = {40, 40, 40, 40, 40, 100, 512, 2};
  c.keys = {1, 7, 32, 33, 40, 65, 129, 1};
  c.heads = 3;
  c.head_dim = 32;
  c.scale = 1.0f / std::sqrt(32.0f);
  check_attention(dtype(), c, tol(), stream_);
}

TEST_P(CudaKernelTest, AttentionHeadDims) {
  for (int d : {2, 6, 8, 16, 32, 62, 64, 66, 96, 128}) {
    SCOPED_TRACE("head_dim " + std::to_string(d));
    AttentionCase c;
    c.rows = {1, 33, 70};
    c.keys = {1, 33, 50};
    c.heads = 2;
    c.head_dim = d;
    c.scale = 1.0f / std::sqrt(float(d));
    check_attention(dtype(), c, tol(), stream_);
  }
}

TEST_P(CudaKernelTest, AttentionLargeScoresUseTheRunningMaximum) {
  // Scores of +-150 overflow exp without the maximum subtracted. In fp32 such
  // a score carries ~1e-5 absolute rounding, which moves the probabilities by
  // as much relatively: the fp32 tolerance is 50x wider here.
  AttentionCase c;
  c.rows = {77, 300};
  c.keys = {77, 250};
  c.scale = 1.0f;
  c.stddev = 2.5f;
  Tolerance t = tol();
  if (dtype() == DType::kF32) t = {5e-4, 5e-4};
  check_attention(dtype(), c, t, stream_);
}

// Local attention (ModernBERT: a window of 64 on each side): rows shorter
// and longer than the window, windows that start and end inside a key tile,
// and padded queries (keys 5 of 200) too far from every real key: zeros.
TEST_P(CudaKernelTest, AttentionLocalWindowSeesOnlyNearbyKeys) {
  for (int window : {1, 5, 64}) {
    SCOPED_TRACE("window " + std::to_string(window));
    AttentionCase c;
    c.rows = {1, 3, 40, 129, 300, 200};
    c.keys = {1, 3, 40, 129, 300, 5};
    c.heads = 2;
    c.window = window;
    check_attention(dtype(), c, tol(), stream_);
  }
}

TEST_P(CudaKernelTest, AttentionManySequencesBertShape) {
  std::mt19937 rng(99);
  AttentionCase c;
#ifdef INFERCOST_CUDA_EMULATED
  const int sequences = 24;  // the CPU emulator runs one thread at a time
#else
  const int sequences = 200;
#endif
  for (int s = 0; s < sequences; ++s) {
    const int rows = 1 + int(rng() % 48);
    c.rows.push_back(rows);
    c.keys.push_back(s % 2 == 0 ? rows : 1 + int(rng() % uint32_t(rows)));
  }
  c.heads = 12;
  c.extra_max_rows = 7;  // a grid larger than needed: the extra blocks exit
  check_attention(dtype(), c, tol(), stream_);
}

TEST_P(CudaKernelTest, AttentionRejectsBadArguments) {
  const DType t = dtype();
  DeviceArray qkv(t, 3 * 256 + 1), ctx(t, 256 + 1);
  const DeviceInts start(std::vector<int32_t>{0, 1}), keys(std::vector<int32_t>{1});
  for (int d : {0, -2, 7, 129, 130}) {
    EXPECT_EQ(attention(t, qkv.data(), ctx.data(), start.data(), keys.data(), 1, 1, 1, d, 1.0f, stream_),
              cudaErrorInvalidValue)
        << "head_dim " << d;
  }
  EXPECT_EQ(attention(t, qkv.data(), ctx.data(), start.data(), keys.data(), 1, 1, 0, 64, 1.0f, stream_),
            cudaErrorInvalidValue)
      << "0 heads";
  // Pairs of elements are accessed as one: an odd element offset is refused.
  auto* odd_qkv = static_cast<uint8_t*>(qkv.data()) + dtype_size(t);
  EXPECT_EQ(attention(t, odd_qkv, ctx.data(), start.data(), keys.data(), 1, 1, 1, 64, 1.0f, stream_),
            cudaErrorInvalidValue)
      << "misaligned qkv";
  EXPECT_EQ(attention(t, nullptr, nullptr, nullptr, nullptr, 0, 0, 1, 64, 1.0f, stream_), cudaSuccess)
      << "an empty batch";
  EXPECT_EQ(attention(t, qkv.data(), ctx.data(), start.data(), keys.data(), 1, 1, 1, 64, 1.0f, stream_, -1),
            cudaErrorInvalidValue)
      << "a negative window";
  EXPECT_TRUE(sync());
}

// ---- Disentangled attention (DeBERTa) ------------------------------------------------------------------

struct RelativeCase {
  std::vector<int> rows, keys;  // as AttentionCase
  int heads = 2;
  int head_dim = 64;
  bool c2p = true, p2c = true;
  int buckets = 16;         // log buckets (DeBERTa-v3: 256); -1: none
  int max_relative = 64;    // DeBERTa-v3: 512
  int max_positions = 600;  // max_delta = max_positions - 1
};

// The kernel against ((q.k + q.pk[r] + k.pq[r]) * scale) softmax, V in
// double, r from the model's own relative_position_index.
void check_disentangled(DType t, const RelativeCase& c, Tolerance tol, cudaStream_t stream) {
  model::ModelConfig config;
  config.relative_attention = true;
  config.position_buckets = c.buckets;
  config.max_relative_positions = c.max_relative;
  config.max_position_embeddings = c.max_positions;
  const int max_delta = c.max_positions - 1;
  const std::vector<int32_t> index = model::relative_position_table(config);
  const int table_rows = 2 * config.relative_span();

  const int sequences = int(c.rows.size());
  const std::vector<int> keys = c.keys.empty() ? c.rows : c.keys;
  std::vector<int32_t> seq_start(size_t(sequences) + 1, 0), key_len(keys.begin(), keys.end());
  for (int s = 0; s < sequences; ++s) seq_start[size_t(s) + 1] = seq_start[size_t(s)] + c.rows[size_t(s)];
  const int total = seq_start.back();
  const int max_rows = *std::max_element(c.rows.begin(), c.rows.end());
  const int D = c.head_dim, hidden = c.heads * D;
  const size_t ld = 3 * size_t(hidden);
  const float scale = 1.0f / std::sqrt(float(D) * float(1 + int(c.c2p) + int(c.p2c)));
  const std::vector<float> qkv = round_to(t, randn(size_t(total) * ld, uint32_t(total * 5 + D), 1.5f));
  const std::vector<float> pk = round_to(t, randn(size_t(table_rows) * hidden, uint32_t(D + 3), 1.5f));
  const std::vector<float> pq = round_to(t, randn(size_t(table_rows) * hidden, uint32_t(D + 4), 1.5f));

  const DeviceArray d_qkv(t, qkv), d_pk(t, pk), d_pq(t, pq);
  DeviceArray d_ctx(t, size_t(total + 2) * hidden);
  d_ctx.fill(0xFF);
  void* ctx = static_cast<uint8_t*>(d_ctx.data()) + size_t(hidden) * size_t(dtype_size(t));
  const DeviceInts d_start(seq_start), d_keys(key_len), d_index(index);
  RelativeTables rel;
  rel.pos_key = c.c2p ? d_pk.data() : nullptr;
  rel.pos_query = c.p2c ? d_pq.data() : nullptr;
  rel.index = d_index.data();
  rel.max_delta = max_delta;
  INFERCOST_ASSERT_CUDA(disentangled_attention(t, d_qkv.data(), ctx, d_start.data(), d_keys.data(), sequences,
                                               max_rows, c.heads, D, scale, rel, stream));
  INFERCOST_ASSERT_CUDA(cudaStreamSynchronize(stream));

  const std::vector<float> got = ctx_within_guards(t, d_ctx, total, hidden);
  ASSERT_EQ(got.size(), size_t(total) * hidden);

  const std::vector<double> ref = attention_reference(
      qkv, seq_start, key_len, c.heads, D, [&](int h, int i, int j, const float* q, const float* k) {
        const size_t r = size_t(index[size_t(i - j + max_delta)]);
        double score = dot_double(q, k, D);
        if (c.c2p) score += dot_double(q, &pk[r * hidden + size_t(h) * D], D);
        if (c.p2c) score += dot_double(k, &pq[r * hidden + size_t(h) * D], D);
        return score * scale;
      });
  const auto where = packed_place(seq_start, key_len, hidden, D);
  EXPECT_TRUE(all_close(got, ref, tol, where))
      << "head_dim " << D << ", c2p " << c.c2p << ", p2c " << c.p2c << ", buckets " << c.buckets;
}

// Rows shorter and longer than a query tile (16) and a key tile (32), past
// the log buckets (16 here), with the padding computed (keys < rows).
TEST_P(CudaKernelTest, DisentangledAttentionAddsBothRelativeTerms) {
  RelativeCase c;
  c.rows = {1, 2, 15, 16, 17, 33, 70, 200, 40};
  c.keys = {1, 2, 15, 16, 17, 33, 70, 200, 9};
  check_disentangled(dtype(), c, tol(), stream_);
}

TEST_P(CudaKernelTest, DisentangledAttentionWithOneTermOrNoBuckets) {
  for (const auto& [c2p, p2c, buckets] :
       {std::tuple{true, false, -1}, std::tuple{false, true, 16}, std::tuple{false, false, 16}}) {
    RelativeCase c;
    c.rows = {5, 48, 90};
    c.c2p = c2p;
    c.p2c = p2c;
    c.buckets = buckets;
    c.max_relative = 24;
    check_disentangled(dtype(), c, tol(), stream_);
  }
}

TEST_P(CudaKernelTest, DisentangledAttentionHeadDims) {
  for (int d : {2, 6, 16, 32, 62, 64}) {
    SCOPED_TRACE("head_dim " + std::to_string(d));
    RelativeCase c;
    c.rows = {1, 40};
    c.keys = {1, 33};
    c.head_dim = d;
    check_disentangled(dtype(), c, tol(), stream_);
  }
}

TEST_P(CudaKernelTest, DisentangledAttentionRejectsBadArguments) {
  const DType t = dtype();
  DeviceArray qkv(t, 3 * 128 + 1), ctx(t, 128 + 1);
  const DeviceInts start(std::vector<int32_t>{0, 1}), keys(std::vector<int32_t>{1}),
      index(std::vector<int32_t>{0});
  RelativeTables rel;
  rel.index = index.data();
  for (int d : {0, 7, 66, 128}) {
    EXPECT_EQ(disentangled_attention(t, qkv.data(), ctx.data(), start.data(), keys.data(), 1, 1, 1, d, 1.0f,
                                     rel, stream_),
              cudaErrorInvalidValue)
        << "head_dim " << d;
  }
  RelativeTables no_index;
  EXPECT_EQ(disentangled_attention(t, qkv.data(), ctx.data(), start.data(), keys.data(), 1, 1, 1, 64, 1.0f,
                                   no_index, stream_),
            cudaErrorInvalidValue)
      << "no index";
  RelativeTables odd = rel;
  odd.pos_key = static_cast<uint8_t*>(qkv.data()) + dtype_size(t);
  EXPECT_EQ(disentangled_attention(t, qkv.data(), ctx.data(), start.data(), keys.data(), 1, 1, 1, 64, 1.0f,
                                   odd, stream_),
            cudaErrorInvalidValue)
      << "misaligned pos_key";
  EXPECT_TRUE(sync());
}

INSTANTIATE_TEST_SUITE_P(DTypes, CudaKernelTest,
                         ::testing::Values(DTypeCase{DType::kF32, {1e-5, 1e-5}},
                                           DTypeCase{DType::kF16, {1e-4, 2e-3}},
                                           DTypeCase{DType::kBF16, {1e-4, 1e-2}}),
                         [](const ::testing::TestParamInfo<DTypeCase>& info) {
                           return std::string(dtype_label(info.param.dtype));
                         });

// ---- fp32 only
// -------------------------------------------------------------------------------------------------

TEST_F(CudaTest, BiasActAddsTheBiasPerColumn) {
  const Tolerance tol{1e-5, 1e-5};
  for (Act act : {Act::kNone, Act::kGelu, Act::kRelu, Act::kTanh}) {
    for (int cols : {1, 5, 768}) {
      SCOPED_TRACE(std::string(act_label(act)) + ", cols " + std::to_string(cols));
      const int64_t rows = 3;
      const std::vector<float> y = randn(size_t(rows) * cols, 51 + cols, 2.0f);
      const std::vector<float> bias = randn(size_t(cols), 52 + cols);
      DeviceArray d_y(DType::kF32, y);
      const DeviceArray d_bias(DType::kF32, bias);
      INFERCOST_ASSERT_CUDA(bias_act_f32(static_cast<float*>(d_y.data()),
                                         static_cast<const float*>(d_bias.data()), rows, cols, act, stream_));
      ASSERT_TRUE(sync());
      std::vector<double> ref(y.size());
      for (size_t i = 0; i < y.size(); ++i) ref[i] = act_ref(act, y[i] + bias[i % size_t(cols)]);  // fp32 sum
      EXPECT_TRUE(all_close(d_y.download(), ref, tol, row_col(cols)));
    }
  }
}

TEST_F(CudaTest, EmptyCallsLaunchNothing) {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
    EXPECT_EQ(activation_inplace(t, nullptr, 0, Act::kGelu, stream_), cudaSuccess);
    EXPECT_EQ(gather_rows_f32(t, nullptr, nullptr, 0, 768, nullptr, stream_), cudaSuccess);
    EXPECT_EQ(pool_rows_f32(t, nullptr, nullptr, nullptr, 0, 768, Pool::kMean, nullptr, stream_),
              cudaSuccess);
    EXPECT_EQ(convert_from_f32(t, nullptr, nullptr, 0, stream_), cudaSuccess);
    EXPECT_EQ(convert_to_f32(t, nullptr, nullptr, 0, stream_), cudaSuccess);
    EXPECT_EQ(activation_inplace(t, nullptr, -1, Act::kGelu, stream_), cudaErrorInvalidValue);
  }
  EXPECT_EQ(bias_act_f32(nullptr, nullptr, 0, 5, Act::kTanh, stream_), cudaSuccess);
  EXPECT_TRUE(sync());
}

}  // namespace
}  // namespace infercost::backend::cuda
