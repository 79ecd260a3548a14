// The --device grammar, in one place: `infercost run`, `bench`, `report` and
// `plan` all read device strings through parse_device().
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "infercost/status.h"

namespace infercost {

// A --device value: "cpu"; "cuda" or "cuda:all" (every GPU CUDA can see);
// "cuda:N" or "cuda:N,M,..." (those CUDA device ordinals, as CUDA numbers
// them under CUDA_VISIBLE_DEVICES).
// parse_device() is the one place that reads the spelling; everything after
// it (the run's resolved settings, the backends' registry, GPU sampling, the
// bench and the report) reads these fields.
struct DeviceSpec {
  std::string text;          // as given: "cuda:all", "cuda:0,1" (for messages)
  std::string kind;          // "cpu" or "cuda"
  bool all = false;          // "cuda" / "cuda:all": the ordinals are the machine's
  std::vector<int> indices;  // cuda: the ordinals, in the order given, no repeats

  bool cpu() const { return kind == "cpu"; }
  bool gpu() const { return kind == "cuda"; }
};

// kInvalidArgument naming the accepted forms for anything else.
Result<DeviceSpec> parse_device(std::string_view device);

// True for "cpu" (a well-formed CPU device).
bool is_cpu_device(std::string_view device);

// True for a well-formed GPU device: "cuda", "cuda:all", "cuda:N", "cuda:N,M".
bool is_gpu_device(std::string_view device);

}  // namespace infercost
