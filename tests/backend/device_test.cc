// --device values, precisions, and the CPU backend's answers to GPU-only requests.
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "backend/backend.h"

namespace infercost::backend {
namespace {

// parse_device is the one reader of a device's spelling: each accepted
// spelling, with what the rest of the engine reads from it.
TEST(ParseDevice, EachSpellingTyped) {
  struct Case {
    const char* text;
    bool cpu;
    bool all;
    std::vector<int> indices;
  };
  for (const Case& c :
       {Case{"cpu", true, false, {}}, Case{"cuda", false, true, {}}, Case{"cuda:all", false, true, {}},
        Case{"cuda:0", false, false, {0}}, Case{"cuda:7", false, false, {7}},
        Case{"cuda:0,1", false, false, {0, 1}}, Case{"cuda:3,1,2", false, false, {3, 1, 2}},
        Case{"cuda:9999", false, false, {9999}}}) {
    Result<DeviceSpec> spec = parse_device(c.text);
    ASSERT_TRUE(spec.ok()) << c.text << ": " << spec.status().message();
    EXPECT_EQ(spec->text, c.text);
    EXPECT_EQ(spec->cpu(), c.cpu) << c.text;
    EXPECT_EQ(spec->gpu(), !c.cpu) << c.text;
    EXPECT_EQ(spec->kind, c.cpu ? "cpu" : "cuda") << c.text;
    EXPECT_EQ(spec->all, c.all) << c.text;
    EXPECT_EQ(spec->indices, c.indices) << c.text;
    EXPECT_EQ(is_cpu_device(c.text), c.cpu) << c.text;
    EXPECT_EQ(is_gpu_device(c.text), !c.cpu) << c.text;
  }
}

// Each refusal says what is wrong with the value and which forms are taken.
TEST(ParseDevice, EachRefusalSaysWhy) {
  const std::string accepted = " (accepted: cpu, cuda, cuda:all, cuda:N, cuda:N,M,...)";
  const std::pair<const char*, std::string> cases[] = {
      {"gpu", "device 'gpu': unknown device" + accepted},
      {"", "device '': unknown device" + accepted},
      {"Cpu", "device 'Cpu': unknown device" + accepted},
      {" cpu", "device ' cpu': unknown device" + accepted},
      {"cuda0", "device 'cuda0': unknown device" + accepted},
      {"cuda:", "device 'cuda:': '' is not a GPU ordinal" + accepted},
      {"cuda:a", "device 'cuda:a': 'a' is not a GPU ordinal" + accepted},
      {"cuda:+1", "device 'cuda:+1': '+1' is not a GPU ordinal" + accepted},
      {"cuda:0,", "device 'cuda:0,': '' is not a GPU ordinal" + accepted},
      {"cuda:0, 1", "device 'cuda:0, 1': ' 1' is not a GPU ordinal" + accepted},
      {"cuda:12345", "device 'cuda:12345': '12345' is not a GPU ordinal" + accepted},
      {"cuda:2,0,2", "device 'cuda:2,0,2': GPU 2 is named twice" + accepted},
      {"cuda:0,00", "device 'cuda:0,00': GPU 0 is named twice" + accepted},
  };
  for (const auto& [text, message] : cases) {
    Result<DeviceSpec> spec = parse_device(text);
    ASSERT_FALSE(spec.ok()) << text;
    EXPECT_EQ(spec.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_EQ(spec.status().message(), message);
    EXPECT_FALSE(is_cpu_device(text)) << text;
    EXPECT_FALSE(is_gpu_device(text)) << text;
  }
  // More forms refused, each naming the accepted ones.
  for (const char* bad : {"CUDA", "cuda:x", "cuda:-1", "cuda:1,1", "cuda:all,1", "cuda:99999", "cpu:0"}) {
    Result<DeviceSpec> spec = parse_device(bad);
    ASSERT_FALSE(spec.ok()) << bad;
    EXPECT_EQ(spec.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(spec.status().message().find(accepted), std::string::npos) << spec.status().message();
  }
}

// A parsed device decides the precisions it takes (int8 is the CPU's only).
TEST(ParseDevice, TypedReadersAgreeWithTheSpelling) {
  EXPECT_EQ(resolve_precision(*parse_device("cuda:0"), "int8").status().code(), StatusCode::kUnsupported);
  EXPECT_TRUE(resolve_precision(*parse_device("cpu"), "int8").ok());
}

// Sets INFERCOST_CUDA_MODULE while in scope, then puts back what was there.
class ModuleEnv {
 public:
  explicit ModuleEnv(const char* value) {
    if (const char* old = std::getenv("INFERCOST_CUDA_MODULE")) old_ = old;
    if (value) {
      ::setenv("INFERCOST_CUDA_MODULE", value, 1);
    } else {
      ::unsetenv("INFERCOST_CUDA_MODULE");
    }
  }
  ~ModuleEnv() {
    if (old_) {
      ::setenv("INFERCOST_CUDA_MODULE", old_->c_str(), 1);
    } else {
      ::unsetenv("INFERCOST_CUDA_MODULE");
    }
  }

 private:
  std::optional<std::string> old_;
};

TEST(CudaModule, AnExplicitPathIsTheOnlyCandidate) {
  ModuleEnv env("/nonexistent/libinfercost_cuda.so");
  EXPECT_EQ(cuda_module_candidates(), std::vector<std::string>{"/nonexistent/libinfercost_cuda.so"});
}

TEST(CudaModule, WithoutTheVariableTheModuleIsLookedForBesideTheProgram) {
  ModuleEnv env(nullptr);
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  ASSERT_GT(n, 0);
  const std::string exe(buf, static_cast<size_t>(n));
  const std::string dir = exe.substr(0, exe.rfind('/'));
  // This suite links the engine into its executable: the engine's folder
  // (dladdr) is the executable's, so it is not listed twice.
  EXPECT_EQ(cuda_module_candidates(),
            (std::vector<std::string>{dir + "/libinfercost_cuda.so",
                                      dir + "/../lib/infercost/libinfercost_cuda.so"}));
}

// The loader reads the variable once per process: a fresh one (threadsafe
// style re-executes this binary for the one test).
TEST(CudaModuleDeathTest, AMissingExplicitModuleIsNamed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        ::setenv("INFERCOST_CUDA_MODULE", "/nonexistent/libinfercost_cuda.so", 1);
        Result<std::vector<std::string>> r = resolve_devices(*parse_device("cuda"));
        std::fputs(r.status().message().c_str(), stderr);
        std::fflush(stderr);
        std::_Exit(!r.ok() && r.status().code() == StatusCode::kUnavailable ? 0 : 1);
      },
      ::testing::ExitedWithCode(0),
      "INFERCOST_CUDA_MODULE names /nonexistent/libinfercost_cuda.so, which does not exist");
}

TEST(ResolveDevices, CpuIsOneWorker) {
  Result<std::vector<std::string>> cpu = resolve_devices(*parse_device("cpu"));
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(*cpu, (std::vector<std::string>{"cpu"}));
}

TEST(Precision, Fp16ParsesAndTheCpuRefusesIt) {
  Result<Precision> fp16 = parse_precision("fp16");
  ASSERT_TRUE(fp16.ok());
  EXPECT_EQ(*fp16, Precision::kFp16);
  EXPECT_STREQ(precision_name(Precision::kFp16), "fp16");
  EXPECT_NE(parse_precision("half").status().message().find("fp32, bf16, fp16, int8"), std::string::npos);
  // auto on a GPU is bf16 (a GPU without bf16 turns it into fp16: precision_is_default).
  EXPECT_EQ(*resolve_precision("cuda:0", "auto"), Precision::kBf16);
  BackendOptions options;
  options.precision = Precision::kFp16;
  Result<std::unique_ptr<Backend>> cpu = create_backend("cpu", options);
  ASSERT_FALSE(cpu.ok());
  EXPECT_EQ(cpu.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(cpu.status().message().find("fp16 runs on GPUs only"), std::string::npos)
      << cpu.status().message();
}

TEST(CreateBackend, OneBackendPerGpu) {
  Result<std::unique_ptr<Backend>> two = create_backend("cuda:0,1", BackendOptions{});
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(two.status().message().find("one backend runs on one GPU"), std::string::npos);
  EXPECT_EQ(create_backend("tpu", BackendOptions{}).status().code(), StatusCode::kInvalidArgument);
}

TEST(Backend, CpuCapacityAndForkDefaults) {
  Result<std::unique_ptr<Backend>> cpu = create_backend("cpu", BackendOptions{});
  ASSERT_TRUE(cpu.ok());
  Result<BatchCapacity> capacity = (*cpu)->capacity(512);
  ASSERT_TRUE(capacity.ok());
  EXPECT_EQ(capacity->max_tokens, 4096);
  EXPECT_EQ(capacity->max_rows, 256);
  EXPECT_EQ(capacity->free_bytes, 0);
  Result<std::unique_ptr<Backend>> forked = (*cpu)->fork();
  ASSERT_FALSE(forked.ok());
  EXPECT_EQ(forked.status().code(), StatusCode::kUnsupported);
}

}  // namespace
}  // namespace infercost::backend
