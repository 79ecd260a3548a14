// Finds and opens the CUDA module (libinfercost_cuda.so) on first use. The
// infercost executable never links CUDA: a machine without a driver, or a
// build without the module, still runs everything on the CPU and says why a
// GPU run cannot start.
#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <mutex>

#include "backend/backend.h"
#include "backend/cuda_module_api.h"
#include "infercost/version.h"

namespace infercost::backend {
namespace {

std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string executable_dir() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  return dir_of(std::string(buf, size_t(n)));
}

// The folder of the file this code was loaded from: the executable when the
// engine is linked into it, or a shared object that links it (a Python
// native module, whose executable is python3). Empty when unknown.
std::string engine_dir() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<const void*>(&cuda_module_candidates), &info) == 0 ||
      info.dli_fname == nullptr || info.dli_fname[0] == '\0') {
    return "";
  }
  char real[PATH_MAX];
  if (::realpath(info.dli_fname, real) == nullptr) return dir_of(info.dli_fname);
  return dir_of(real);
}

bool file_exists(const std::string& path) {
  return ::access(path.c_str(), F_OK) == 0;
}

struct Loaded {
  const InfercostCudaModule* module = nullptr;
  Status status;  // why not, when module is null
};

Loaded load_module() {
  Loaded out;
  const std::vector<std::string> candidates = cuda_module_candidates();
  std::string path;
  for (const std::string& c : candidates) {
    if (file_exists(c)) {
      path = c;
      break;
    }
  }
  const char* env = std::getenv("INFERCOST_CUDA_MODULE");
  if (path.empty() && env != nullptr && *env != '\0') {
    out.status = unavailable(fmt::format(
        "INFERCOST_CUDA_MODULE names {}, which does not exist (set it to the path of {}, or unset it to look "
        "beside the program)",
        env, INFERCOST_CUDA_MODULE_FILE));
    return out;
  }
  if (path.empty()) {
    std::string looked;
    for (const std::string& c : candidates) looked += (looked.empty() ? "" : ", ") + c;
    out.status = unavailable(
        fmt::format("this build has no CUDA module ({} not found; looked at {}). Build with nvcc installed "
                    "(cmake -DINFERCOST_CUDA=ON) or set INFERCOST_CUDA_MODULE",
                    INFERCOST_CUDA_MODULE_FILE, looked));
    return out;
  }
  // RTLD_LOCAL: the module's own copies of our libraries stay private to it.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    out.status = unavailable(fmt::format(
        "the CUDA module {} could not be loaded: {} (it needs the CUDA 13 libcublasLt.so.13 on the library "
        "path, e.g. LD_LIBRARY_PATH=/usr/local/cuda/lib64)",
        path, why ? why : "unknown error"));
    return out;
  }
  auto entry = reinterpret_cast<InfercostCudaModuleEntry>(::dlsym(handle, INFERCOST_CUDA_MODULE_SYMBOL));
  if (entry == nullptr) {
    out.status = unavailable(
        fmt::format("{} is not an infercost CUDA module (no symbol {})", path, INFERCOST_CUDA_MODULE_SYMBOL));
    ::dlclose(handle);
    return out;
  }
  const InfercostCudaModule* module = entry();
  if (module == nullptr || module->abi != INFERCOST_CUDA_MODULE_ABI ||
      std::string(module->version ? module->version : "") != kVersion) {
    out.status = unavailable(fmt::format(
        "the CUDA module {} comes from another build (module ABI {}, version {}; this program: ABI {}, "
        "version {}): rebuild both together",
        path, module ? module->abi : 0, module && module->version ? module->version : "?",
        INFERCOST_CUDA_MODULE_ABI, kVersion));
    ::dlclose(handle);
    return out;
  }
  out.module = module;  // never closed: backends made by it live until exit
  return out;
}

const Loaded& loaded_module() {
  static const Loaded loaded = load_module();
  return loaded;
}

}  // namespace

std::vector<std::string> cuda_module_candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("INFERCOST_CUDA_MODULE"); env != nullptr && *env != '\0') {
    out.push_back(env);
    return out;  // an explicit path is the only one tried
  }
  const std::string exe = executable_dir();
  const std::string engine = engine_dir();
  if (!engine.empty() && engine != exe) out.push_back(engine + "/" + INFERCOST_CUDA_MODULE_FILE);
  out.push_back(exe + "/" + INFERCOST_CUDA_MODULE_FILE);
  out.push_back(exe + "/../lib/infercost/" + INFERCOST_CUDA_MODULE_FILE);
  return out;
}

Result<std::vector<CudaDeviceInfo>> cuda_devices() {
  const Loaded& loaded = loaded_module();
  if (loaded.module == nullptr) return loaded.status;
  char err[512] = {0};
  const int count = loaded.module->device_count(err, sizeof err);
  if (count < 0) return unavailable(fmt::format("CUDA cannot run here: {}", err));
  if (count == 0) return unavailable("CUDA cannot run here: the driver sees no GPU");
  std::vector<CudaDeviceInfo> out;
  for (int i = 0; i < count; ++i) {
    CudaDeviceInfo info;
    info.index = i;
    char name[256] = {0};
    if (loaded.module->device_info(i, name, sizeof name, &info.memory_total_bytes, &info.compute_major,
                                   &info.compute_minor, err, sizeof err) != 0) {
      return unavailable(fmt::format("CUDA device {}: {}", i, err));
    }
    info.name = name;
    out.push_back(std::move(info));
  }
  return out;
}

Result<std::unique_ptr<Backend>> create_cuda_backend(const BackendOptions& options) {
  const Loaded& loaded = loaded_module();
  if (loaded.module == nullptr) return loaded.status;
  char err[1024] = {0};
  int code = 0;
  Backend* backend = loaded.module->create(&options, &code, err, sizeof err);
  if (backend == nullptr) {
    const StatusCode status_code =
        code > 0 && code <= int(StatusCode::kUnavailable) ? StatusCode(code) : StatusCode::kInternal;
    return Status(status_code, err[0] ? err : "the CUDA module could not create a backend");
  }
  return std::unique_ptr<Backend>(backend);
}

}  // namespace infercost::backend
