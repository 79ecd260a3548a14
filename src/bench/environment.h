// What a benchmark record says about where and with what it ran: the
// machine, the software, the model and the input data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/nvml.h"
#include "infercost/status.h"
#include "record/record.h"

namespace infercost::bench {

// Hostname, CPU (backend::cpu_info()), MemTotal of /proc/meminfo, and the
// GPUs NVML lists (none when `nvml` is null).
record::Hardware collect_hardware(const Nvml* nvml);

// infercost version, git revision at configure time ("" outside a git
// checkout), compiler, oneDNN version, OS (PRETTY_NAME of /etc/os-release)
// and kernel (uname -r).
record::Software collect_software();

// MemTotal of /proc/meminfo text, in bytes; 0 when absent.
int64_t parse_mem_total_bytes(const std::string& meminfo);
// PRETTY_NAME of /etc/os-release text, unquoted; "" when absent.
std::string parse_os_pretty_name(const std::string& os_release);

// The model's name, architecture (model_type), synthetic flag, sizes and
// parameter count, from its description (model::describe_model_dir: config,
// tokenizer and the header of model.safetensors; no tensor is read). Errors
// are the description's, naming the directory or file.
Result<record::ModelInfo> read_model_info(const std::string& dir);

// The files `inputs` expand to (as `infercost run` expands them), their total
// size and the SHA-256 of their bytes read in that order.
struct InputFiles {
  std::vector<std::string> files;
  int64_t bytes = 0;
  std::string content_sha256;
};
Result<InputFiles> describe_inputs(const std::vector<std::string>& inputs);

// The default folder for generated benchmark data: $INFERCOST_CACHE,
// $XDG_CACHE_HOME/infercost or ~/.cache/infercost, then /bench-data.
std::string default_data_dir();

}  // namespace infercost::bench
