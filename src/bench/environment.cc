#include "bench/environment.h"

#include <fmt/format.h>
#include <oneapi/dnnl/dnnl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <utility>

#include "backend/cpu_info.h"
#include "core/file.h"
#include "core/sha256.h"
#include "engine/flops.h"
#include "infercost/metrics.h"
#include "infercost/version.h"
#include "io/row_source.h"
#include "model/describe.h"

#ifndef INFERCOST_GIT_REVISION
#define INFERCOST_GIT_REVISION ""
#endif

namespace infercost::bench {

namespace {

// The file's text; "" when it cannot be read (the record then leaves the field empty).
std::string text_of(const std::string& path) {
  Result<std::string> text = read_file(path);
  return text.ok() ? std::move(*text) : std::string();
}

}  // namespace

int64_t parse_mem_total_bytes(const std::string& meminfo) {
  std::istringstream in(meminfo);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemTotal:", 0) != 0) continue;
    std::istringstream fields(line.substr(9));
    long long kib = 0;
    std::string unit;
    if (fields >> kib >> unit && unit == "kB" && kib > 0) return static_cast<int64_t>(kib) * 1024;
    return 0;
  }
  return 0;
}

std::string parse_os_pretty_name(const std::string& os_release) {
  std::istringstream in(os_release);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("PRETTY_NAME=", 0) != 0) continue;
    std::string v = line.substr(12);
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
      v = v.substr(1, v.size() - 2);
    }
    return v;
  }
  return {};
}

record::Hardware collect_hardware(const Nvml* nvml) {
  record::Hardware h;
  char host[256] = {0};
  if (::gethostname(host, sizeof host - 1) == 0) h.hostname = host;
  const backend::CpuInfo& cpu = backend::cpu_info();
  h.cpu_model = cpu.model;
  h.logical_cpus = cpu.logical_cpus;
  h.isa = cpu.isa();
  h.memory_bytes = parse_mem_total_bytes(text_of("/proc/meminfo"));
  if (nvml != nullptr) h.gpus = nvml->devices();
  return h;
}

record::Software collect_software() {
  record::Software s;
  s.infercost = kVersion;
  s.git = INFERCOST_GIT_REVISION;
#if defined(__clang__)
  s.compiler = fmt::format("clang {}.{}.{}", __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  s.compiler = "gcc " __VERSION__;
#else
  s.compiler = __VERSION__;
#endif
  if (const dnnl_version_t* v = dnnl_version())
    s.onednn = fmt::format("{}.{}.{}", v->major, v->minor, v->patch);
  s.os = parse_os_pretty_name(text_of("/etc/os-release"));
  struct utsname u {};
  if (::uname(&u) == 0) s.kernel = u.release;
  return s;
}

Result<record::ModelInfo> read_model_info(const std::string& dir) {
  INFERCOST_ASSIGN_OR_RETURN(model::ModelDescription d, model::describe_model_dir(dir));
  record::ModelInfo m;
  m.name = d.config.name;
  m.architecture = d.config.model_type;
  m.synthetic = d.config.synthetic;
  m.layers = d.config.num_layers;
  m.hidden = d.config.hidden_size;
  m.heads = d.config.num_heads;
  m.intermediate = d.config.intermediate_size;
  m.vocab = d.config.vocab_size;
  const engine::EncoderShape shape = engine::encoder_shape(d.config);
  m.glu = shape.glu;
  m.attention_windows = shape.windows;
  m.relative_terms = shape.relative_terms;
  m.parameters = d.parameters;
  return m;
}

Result<InputFiles> describe_inputs(const std::vector<std::string>& inputs) {
  InputFiles out;
  INFERCOST_ASSIGN_OR_RETURN(out.files, io::expand_inputs(inputs));
  INFERCOST_ASSIGN_OR_RETURN(FilesDigest digest, sha256_of_files(out.files));
  out.bytes = digest.bytes;
  out.content_sha256 = digest.sha256_hex;
  return out;
}

std::string default_data_dir() {
  std::string cache;
  if (const char* dir = std::getenv("INFERCOST_CACHE"); dir && *dir) {
    cache = dir;
  } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    cache = std::string(xdg) + "/infercost";
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    cache = std::string(home) + "/.cache/infercost";
  } else {
    cache = ".infercost-cache";
  }
  return cache + "/bench-data";
}

}  // namespace infercost::bench
