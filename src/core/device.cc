#include "core/device.h"

#include <algorithm>

namespace infercost {

Result<DeviceSpec> parse_device(std::string_view device) {
  DeviceSpec spec;
  spec.text = std::string(device);
  if (device == "cpu") {
    spec.kind = "cpu";
    return spec;
  }
  const auto bad = [&](const std::string& why) {
    return invalid_argument("device '" + std::string(device) + "': " + why +
                            " (accepted: cpu, cuda, cuda:all, cuda:N, cuda:N,M,...)");
  };
  if (device == "cuda" || device == "cuda:all") {
    spec.kind = "cuda";
    spec.all = true;
    return spec;
  }
  if (device.substr(0, 5) != "cuda:") return bad("unknown device");
  spec.kind = "cuda";
  const std::string_view list = device.substr(5);
  size_t at = 0;
  while (at <= list.size()) {
    const size_t comma = std::min(list.find(',', at), list.size());
    const std::string item(list.substr(at, comma - at));
    if (item.empty() || item.size() > 4 || item.find_first_not_of("0123456789") != std::string::npos) {
      return bad("'" + item + "' is not a GPU ordinal");
    }
    const int index = std::stoi(item);
    for (int seen : spec.indices) {
      if (seen == index) return bad("GPU " + std::to_string(index) + " is named twice");
    }
    spec.indices.push_back(index);
    at = comma + 1;
  }
  return spec;
}

bool is_gpu_device(std::string_view device) {
  Result<DeviceSpec> spec = parse_device(device);
  return spec.ok() && spec->gpu();
}

bool is_cpu_device(std::string_view device) {
  Result<DeviceSpec> spec = parse_device(device);
  return spec.ok() && spec->cpu();
}

}  // namespace infercost
