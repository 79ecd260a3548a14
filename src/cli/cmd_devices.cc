// `infercost devices`: the CPU and the GPUs of this machine, and which
// backends of this build can use them.
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "backend/backend.h"
#include "backend/cpu_info.h"
#include "bench/environment.h"
#include "bench/nvml.h"
#include "cli/commands.h"
#include "core/file.h"

namespace infercost::cli {
namespace {

struct DevicesFlags {
  std::string json;  // "" or a file, "-" for stdout
  std::string nvml_library = "libnvidia-ml.so.1";
};

std::string gib(int64_t bytes) {
  return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024.0 * 1024.0));
}

void execute_devices(const DevicesFlags& flags) {
  Result<std::unique_ptr<bench::Nvml>> nvml = bench::Nvml::load(flags.nvml_library);
  const record::Hardware hw = bench::collect_hardware(nvml.ok() ? nvml->get() : nullptr);
  const backend::CpuInfo& cpu = backend::cpu_info();
  // The CUDA module answers for itself: where it cannot run, why.
  Result<std::vector<backend::CudaDeviceInfo>> cuda = backend::cuda_devices();
  const std::string cuda_status = cuda.ok() ? "available" : cuda.status().message();

  nlohmann::ordered_json j;
  j["cpu"] = {{"model", hw.cpu_model},
              {"logical_cpus", hw.logical_cpus},
              {"isa", hw.isa},
              {"native_bf16", cpu.native_bf16()},
              {"int8_dot_product", cpu.int8_dot_product()},
              {"memory_bytes", hw.memory_bytes}};
  j["gpus"] = nlohmann::ordered_json::array();
  for (const record::GpuInfo& g : hw.gpus) {
    j["gpus"].push_back({{"index", g.index},
                         {"name", g.name},
                         {"memory_bytes", g.memory_bytes},
                         {"compute_capability", g.compute_capability},
                         {"driver", g.driver}});
  }
  j["nvml"] = nvml.ok() ? "available" : nvml.status().message();
  j["cuda_devices"] = nlohmann::ordered_json::array();
  if (cuda.ok()) {
    for (const backend::CudaDeviceInfo& g : *cuda) {
      j["cuda_devices"].push_back(
          {{"device", fmt::format("cuda:{}", g.index)},
           {"name", g.name},
           {"memory_bytes", g.memory_total_bytes},
           {"compute_capability", fmt::format("{}.{}", g.compute_major, g.compute_minor)}});
    }
  }
  j["backends"] = {{"cpu", "available"}, {"cuda", cuda_status}};
  if (!flags.json.empty()) {
    const std::string text = j.dump(2) + "\n";
    if (flags.json == "-") {
      fmt::print("{}", text);
      return;
    }
    Result<AtomicOutputFile> out = AtomicOutputFile::create(flags.json);
    if (!out.ok()) fail(out.status());
    Status written = out->write(text);
    if (written.ok()) written = out->commit();
    if (!written.ok()) fail(written.with_context(flags.json));
  }

  fmt::print("cpu       {}, {} logical CPU{} ({}; native bf16: {}, int8 dot product: {}), {} memory\n",
             hw.cpu_model, hw.logical_cpus, hw.logical_cpus == 1 ? "" : "s", hw.isa,
             cpu.native_bf16() ? "yes" : "no", cpu.int8_dot_product() ? "yes" : "no", gib(hw.memory_bytes));
  if (!nvml.ok()) {
    fmt::print("gpus      none found ({})\n", nvml.status().message());
  } else if (hw.gpus.empty()) {
    fmt::print("gpus      none (NVML lists no GPU)\n");
  }
  for (const record::GpuInfo& g : hw.gpus) {
    fmt::print("gpu {:<5} {}, {}, compute capability {}, driver {}\n", g.index, g.name, gib(g.memory_bytes),
               g.compute_capability.empty() ? "?" : g.compute_capability, g.driver);
  }
  if (cuda.ok()) {
    for (const backend::CudaDeviceInfo& g : *cuda) {
      fmt::print("cuda:{:<4} {}, {}, compute capability {}.{}\n", g.index, g.name, gib(g.memory_total_bytes),
                 g.compute_major, g.compute_minor);
    }
  }
  fmt::print("backends  cpu: available; cuda: {}\n", cuda_status);
}

}  // namespace

void define_devices(CLI::App* cmd) {
  auto flags = bind_flags<DevicesFlags>(*cmd, execute_devices);
  cmd->add_option("--json", flags->json,
                  "Also write the list as JSON to this file ('-': only JSON, on stdout)");
  cmd->add_option("--nvml-library", flags->nvml_library,
                  "The NVML library to load (default libnvidia-ml.so.1)");
  cmd->footer(
      "GPUs are found through NVML (the NVIDIA driver); without a driver the list says why none was found.");
}

}  // namespace infercost::cli
