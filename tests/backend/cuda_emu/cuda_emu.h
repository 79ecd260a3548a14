// Runs CUDA C++ kernels on the CPU, for tests on machines without a GPU.
//
// transform.py rewrites a .cu file for it (launches and dynamic shared
// memory); the result includes this header and compiles with g++, and
// runtime.cc stands in for the few CUDA runtime calls the tests make (memory
// is host memory, launches run to the end before they return).
//
// Blocks run one after another. The threads of a block are fibers on the
// calling thread, switched at barriers: __syncthreads() waits for every live
// thread of the block, a shuffle or __syncwarp() for every live lane of the
// warp (the kernels shuffle whole warps only). __shared__ variables are
// function statics: one copy, reused by every block, never zeroed (as on a
// GPU, where shared memory starts undefined).
//
// Between two barriers the threads run in one fixed order, so this checks a
// kernel's indexing, reductions, masking and its use of shared memory and
// shuffles, not races within a block, timing, coalescing or bank conflicts;
// the GPU tests (cuda_kernels_tests) run the compiled kernels on a GPU.
#pragma once

#if defined(__CUDACC__)
#error "cuda_emu.h is for host compilers: nvcc compiles the real kernels"
#endif

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <ucontext.h>
#include <vector_types.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

// host_defines.h (through the fp16 headers) defines these as attributes.
#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __shared__
#undef __launch_bounds__
#undef __restrict__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)
#define __restrict__

namespace cuda_emu {

// Fibers switch with swapcontext where nothing faster is known; on x86-64
// (outside AddressSanitizer, which must see every stack switch through the
// functions it intercepts) with cuda_emu_switch below: the same switch
// without saving the signal mask, which costs swapcontext a system call each
// time and made it most of the emulator's time.
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define CUDA_EMU_FAST_SWITCH 1
// Saves the callee-saved registers on the current stack and the stack pointer
// in *save, then resumes the stack `load` (as cuda_emu_switch left it, or as
// reset_fibers made it). Weak: every file that includes this defines it.
extern "C" void cuda_emu_switch(void** save, void* load);
asm(R"(
  .text
  .weak cuda_emu_switch
  .hidden cuda_emu_switch
  .type cuda_emu_switch, @function
cuda_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size cuda_emu_switch, .-cuda_emu_switch
)");
#else
#define CUDA_EMU_FAST_SWITCH 0
#endif

// One CUDA thread: a fiber (ucontext) with its own stack. All threads of a
// block run on the calling OS thread, each until it finishes or waits at a
// barrier; the scheduler resumes the waiting ones once every live thread of
// the block (__syncthreads) or of the warp (shuffles, __syncwarp) has arrived.
struct Fiber {
  ucontext_t context{};   // without CUDA_EMU_FAST_SWITCH
  void* sp = nullptr;     // with it: the stack pointer to resume
  char* stack = nullptr;  // kStackBytes from stack_pool()
  uint3 index{};
  int linear = 0;
  bool done = false;
  int waiting = 0;          // 0: runnable; 1: at the block barrier; 2: at its warp barrier
  uint64_t generation = 0;  // of the barrier it waits at
};

struct Block {
  std::vector<Fiber> fibers;
  ucontext_t scheduler{};
  void* scheduler_sp = nullptr;
  Fiber* current = nullptr;
  uint64_t block_generation = 0;
  std::vector<uint64_t> warp_generation;
  std::vector<uint64_t> exchange;  // one shuffle slot per thread
  std::function<void()> body;
};

constexpr size_t kStackBytes = 256 * 1024;

// Fiber stacks, kept across launches (allocating and clearing them per
// launch costs more than the kernels).
inline std::vector<std::unique_ptr<char[]>>& stack_pool() {
  static std::vector<std::unique_ptr<char[]>> pool;
  return pool;
}

inline Block* block = nullptr;
inline uint3 block_index{};
inline dim3 block_dim{1, 1, 1};
inline dim3 grid_dim{1, 1, 1};
inline std::vector<float4> dynamic_shared_memory;  // float4: 16-byte aligned

inline Fiber& self() {
  return *block->current;
}
inline int lane_id() {
  return self().linear % 32;
}

// Waits (yields to the scheduler) until the barrier of `kind` is released.
inline void wait_at(int kind) {
  Fiber& f = self();
  f.waiting = kind;
  f.generation = kind == 1 ? block->block_generation : block->warp_generation[size_t(f.linear / 32)];
#if CUDA_EMU_FAST_SWITCH
  cuda_emu_switch(&f.sp, block->scheduler_sp);
#else
  swapcontext(&f.context, &block->scheduler);
#endif
}

inline void fiber_entry() {
  block->body();
  self().done = true;
#if CUDA_EMU_FAST_SWITCH
  void* finished = nullptr;  // never resumed
  cuda_emu_switch(&finished, block->scheduler_sp);
  __builtin_unreachable();
#endif
  // Returning ends the fiber: uc_link resumes the scheduler.
}

// Points every fiber at the start of the kernel. Kept out of launch() so no
// variable of its loops lives across getcontext().
[[gnu::noinline]] inline void reset_fibers(Block& b) {
  for (Fiber& f : b.fibers) {
    f.done = false;
    f.waiting = 0;
#if CUDA_EMU_FAST_SWITCH
    // What cuda_emu_switch pops: six registers (zero), then fiber_entry as
    // the return address, at a 16-byte boundary, so that fiber_entry starts
    // with the stack aligned as after a call. It never returns.
    void** top = reinterpret_cast<void**>(f.stack + kStackBytes) - 2;
    top[0] = reinterpret_cast<void*>(&fiber_entry);
    top[1] = nullptr;
    void** sp = top - 6;
    for (int r = 0; r < 6; ++r) sp[r] = nullptr;
    f.sp = sp;
#else
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = f.stack;
    f.context.uc_stack.ss_size = kStackBytes;
    f.context.uc_link = &b.scheduler;
    makecontext(&f.context, fiber_entry, 0);
#endif
  }
}

// Runs every fiber of the block to its end.
inline void run_block() {
  Block& b = *block;
  const int n = int(b.fibers.size());
  for (;;) {
    bool progressed = false, all_done = true;
    for (int i = 0; i < n; ++i) {
      Fiber& f = b.fibers[size_t(i)];
      if (f.done) continue;
      all_done = false;
      if (f.waiting == 1 && f.generation == b.block_generation) continue;
      if (f.waiting == 2 && f.generation == b.warp_generation[size_t(i / 32)]) continue;
      f.waiting = 0;
      b.current = &f;
#if CUDA_EMU_FAST_SWITCH
      cuda_emu_switch(&b.scheduler_sp, f.sp);
#else
      swapcontext(&b.scheduler, &f.context);
#endif
      progressed = true;
    }
    if (all_done) return;
    // Release the barriers every live thread has reached.
    bool released = false;
    int live = 0, at_block = 0;
    for (const Fiber& f : b.fibers) {
      if (f.done) continue;
      ++live;
      at_block += f.waiting == 1 && f.generation == b.block_generation;
    }
    if (live > 0 && at_block == live) {
      ++b.block_generation;
      released = true;
    }
    for (size_t w = 0; w < b.warp_generation.size(); ++w) {
      int warp_live = 0, at_warp = 0;
      for (size_t i = w * 32; i < std::min(b.fibers.size(), (w + 1) * 32); ++i) {
        const Fiber& f = b.fibers[i];
        if (f.done) continue;
        ++warp_live;
        at_warp += f.waiting == 2 && f.generation == b.warp_generation[w];
      }
      if (warp_live > 0 && at_warp == warp_live) {
        ++b.warp_generation[w];
        released = true;
      }
    }
    if (!progressed && !released) {
      throw std::runtime_error("cuda_emu: deadlock: threads wait at barriers that can never be released");
    }
  }
}

template <typename T>
T shuffle_from(T value, int lane) {
  static_assert(sizeof(T) <= sizeof(uint64_t), "shuffle of a value wider than 8 bytes");
  Fiber& f = self();
  const int warp_base = f.linear / 32 * 32;
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  wait_at(2);  // every lane has read the previous shuffle
  block->exchange[size_t(f.linear)] = bits;
  wait_at(2);  // every lane has written
  T out;
  std::memcpy(&out, &block->exchange[size_t(warp_base + (lane & 31))], sizeof(T));
  return out;
}

// `extern __shared__ T name[];` becomes `T* name = dynamic_shared<T>();`.
template <typename T>
T* dynamic_shared() {
  return reinterpret_cast<T*>(dynamic_shared_memory.data());
}

// The launch error the emulated cudaGetLastError() returns (runtime.cc).
void set_launch_error(cudaError_t error);
// Whether the emulated runtime takes a launch on `stream` (it may check that
// the stream belongs to the calling thread's current device); where not, it
// has set the launch error and nothing runs.
bool accepts_launch(cudaStream_t stream);

// Where launches go while a stream capture is recorded (set by an emulated
// runtime that emulates graphs): each valid launch is appended, with its
// arguments, instead of run; replaying the list runs them in order.
inline std::vector<std::function<void()>>* capturing = nullptr;

template <typename Kernel, typename... Args>
void run_launch(Kernel kernel, dim3 grid, dim3 block_size, size_t shared_bytes, Args... args);

// Runs kernel(args...) over grid x block with `shared_bytes` of dynamic
// shared memory, one block after another (or records it, see capturing). A
// configuration a GPU refuses (more than 1024 threads, more than 48 KiB of
// dynamic shared memory without opting in, an empty grid) sets the launch
// error and runs nothing, as a failed launch does.
template <typename Kernel, typename... Args>
void launch(Kernel kernel, dim3 grid, dim3 block_size, size_t shared_bytes, Args... args) {
  const int64_t threads = int64_t(block_size.x) * block_size.y * block_size.z;
  if (threads < 1 || threads > 1024 || grid.x < 1 || grid.y < 1 || grid.z < 1 || grid.y > 65535 ||
      grid.z > 65535 || shared_bytes > 48 * 1024) {
    set_launch_error(cudaErrorInvalidConfiguration);
    return;
  }
  if (capturing != nullptr) {
    capturing->push_back([=] { run_launch(kernel, grid, block_size, shared_bytes, args...); });
    return;
  }
  run_launch(kernel, grid, block_size, shared_bytes, args...);
}

template <typename Kernel, typename... Args>
void run_launch(Kernel kernel, dim3 grid, dim3 block_size, size_t shared_bytes, Args... args) {
  const int64_t threads = int64_t(block_size.x) * block_size.y * block_size.z;
  block_dim = block_size;
  grid_dim = grid;
  dynamic_shared_memory.assign((shared_bytes + sizeof(float4) - 1) / sizeof(float4) + 1, float4{});
  Block b;
  b.fibers.resize(size_t(threads));
  b.warp_generation.assign(size_t((threads + 31) / 32), 0);
  b.exchange.assign(size_t(threads), 0);
  b.body = [&] { kernel(args...); };
  std::vector<std::unique_ptr<char[]>>& stacks = stack_pool();
  while (int64_t(stacks.size()) < threads) stacks.emplace_back(new char[kStackBytes]);
  for (int64_t t = 0; t < threads; ++t) {
    Fiber& f = b.fibers[size_t(t)];
    f.stack = stacks[size_t(t)].get();
    f.linear = int(t);
    f.index = uint3{unsigned(t) % block_size.x, unsigned(t) / block_size.x % block_size.y,
                    unsigned(t) / (block_size.x * block_size.y)};
  }
  Block* outer = block;
  block = &b;
  for (unsigned bz = 0; bz < grid.z; ++bz) {
    for (unsigned by = 0; by < grid.y; ++by) {
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        block_index = uint3{bx, by, bz};
        reset_fibers(b);
        run_block();
      }
    }
  }
  block = outer;
}

// `kernel<<<grid, block, shared, stream>>>(args...)` becomes
// `launch_with(kernel, grid, block, shared, stream)(args...)`.
template <typename Kernel>
auto launch_with(Kernel kernel, dim3 grid, dim3 block_size, size_t shared_bytes = 0,
                 cudaStream_t stream = nullptr) {
  return [=](auto... args) {
    if (accepts_launch(stream)) launch(kernel, grid, block_size, shared_bytes, args...);
  };
}

}  // namespace cuda_emu

#define threadIdx (::cuda_emu::self().index)
#define blockIdx (::cuda_emu::block_index)
#define blockDim (::cuda_emu::block_dim)
#define gridDim (::cuda_emu::grid_dim)
#define warpSize 32

inline void __syncthreads() {
  cuda_emu::wait_at(1);
}
inline void __syncwarp(unsigned = 0xffffffffu) {
  cuda_emu::wait_at(2);
}

template <typename T>
T __shfl_sync(unsigned, T value, int src_lane, int width = 32) {
  const int base = cuda_emu::lane_id() / width * width;
  return cuda_emu::shuffle_from(value, base + src_lane % width);
}
template <typename T>
T __shfl_xor_sync(unsigned, T value, int lane_mask, int width = 32) {
  const int lane = cuda_emu::lane_id();
  const int base = lane / width * width;
  int src = lane ^ lane_mask;
  if (src >= base + width) src = lane;
  return cuda_emu::shuffle_from(value, src);
}
template <typename T>
T __shfl_down_sync(unsigned, T value, unsigned delta, int width = 32) {
  const int lane = cuda_emu::lane_id();
  const int base = lane / width * width;
  const int src = lane - base + int(delta) < width ? lane + int(delta) : lane;
  return cuda_emu::shuffle_from(value, src);
}
template <typename T>
T __shfl_up_sync(unsigned, T value, unsigned delta, int width = 32) {
  const int lane = cuda_emu::lane_id();
  const int base = lane / width * width;
  const int src = lane - base >= int(delta) ? lane - int(delta) : lane;
  return cuda_emu::shuffle_from(value, src);
}

// CUDA's device min/max overloads.
inline int min(int a, int b) {
  return a < b ? a : b;
}
inline int max(int a, int b) {
  return a > b ? a : b;
}
inline unsigned min(unsigned a, unsigned b) {
  return a < b ? a : b;
}
inline unsigned max(unsigned a, unsigned b) {
  return a > b ? a : b;
}
inline long long min(long long a, long long b) {
  return a < b ? a : b;
}
inline long long max(long long a, long long b) {
  return a > b ? a : b;
}
inline long min(long a, long b) {
  return a < b ? a : b;
}
inline long max(long a, long b) {
  return a > b ? a : b;
}
inline float min(float a, float b) {
  return std::fmin(a, b);
}
inline float max(float a, float b) {
  return std::fmax(a, b);
}

// Device math the host lacks, with the same meaning (full precision here).
inline float rsqrtf(float x) {
  return 1.0f / std::sqrt(x);
}
inline float __expf(float x) {
  return std::exp(x);
}
inline float __logf(float x) {
  return std::log(x);
}
inline float __fdividef(float a, float b) {
  return a / b;
}
inline float __frcp_rn(float x) {
  return 1.0f / x;
}
inline float __saturatef(float x) {
  return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x);
}
inline float __fmaf_rn(float a, float b, float c) {
  return std::fma(a, b, c);
}
template <typename T>
inline T __ldg(const T* p) {
  return *p;
}
