// Changes a model's weight file in place, for tests of what broken or
// extreme weights do: `edit` is called on every value of the F32 tensor
// `name` of a safetensors file.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "test_utils.h"

namespace infercost::testing {

inline void edit_tensor(const std::string& path, const std::string& name,
                        const std::function<void(float&)>& edit) {
  std::string bytes = slurp(path);
  uint64_t header_size = 0;
  std::memcpy(&header_size, bytes.data(), 8);
  const nlohmann::json header = nlohmann::json::parse(bytes.substr(8, header_size));
  ASSERT_TRUE(header.contains(name)) << header.dump();
  ASSERT_EQ(header[name]["dtype"], "F32");
  const size_t begin = 8 + header_size + header[name]["data_offsets"][0].get<size_t>();
  const size_t end = 8 + header_size + header[name]["data_offsets"][1].get<size_t>();
  for (size_t at = begin; at + 4 <= end; at += 4) {
    float v;
    std::memcpy(&v, bytes.data() + at, 4);
    edit(v);
    std::memcpy(bytes.data() + at, &v, 4);
  }
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

}  // namespace infercost::testing
