// The safetensors format (our own reader and writer): an 8-byte little-endian
// header length N, N bytes of JSON {name: {dtype, shape, data_offsets}, ...,
// "__metadata__": {str: str}}, then the tensor bytes. Every header field and
// offset is bounds-checked; a corrupt file is an error, never a crash.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/file.h"
#include "infercost/status.h"

namespace infercost::model {

enum class DType { kF32, kF16, kBF16, kF64, kI64, kI32, kI16, kI8, kU8, kBool };
std::string_view dtype_name(DType dtype);
size_t dtype_size(DType dtype);

// IEEE half and bfloat16 <-> fp32. To-16-bit conversions round to nearest
// even; overflow gives infinity, NaN stays NaN.
float f16_to_f32(uint16_t bits);
uint16_t f32_to_f16(float value);
float bf16_to_f32(uint16_t bits);
uint16_t f32_to_bf16(float value);

struct TensorInfo {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte offsets into the data section
  int64_t numel() const;
};

// A safetensors header: the tensors by name (without their bytes) and the
// metadata.
struct SafeTensorsHeader {
  std::map<std::string, TensorInfo> tensors;
  std::map<std::string, std::string> metadata;
};

// Reads the 8-byte length and the JSON header of `path`, and nothing after
// them: the tensor bytes are neither mapped nor read. Checks every entry as
// SafeTensorsFile::open() does, except that data_offsets are checked against
// the shapes and dtypes only, not against the file's size: a file whose data
// section is cut short reads here, and open() refuses it.
Result<SafeTensorsHeader> read_safetensors_header(const std::string& path);

// Whether `info` (a tensor of the file at `path`) reads as fp32 with
// `expected_shape`: the errors SafeTensorsFile::read_f32 gives before reading
// any byte (kInvalidArgument naming tensor, expected and actual shape;
// kUnsupported for a dtype other than F32, F16 or BF16).
Status check_f32_tensor(const std::string& path, const TensorInfo& info,
                        const std::vector<int64_t>& expected_shape);

// A memory-mapped safetensors file. Views stay valid while it lives.
class SafeTensorsFile {
 public:
  static Result<SafeTensorsFile> open(const std::string& path);

  const SafeTensorsHeader& header() const { return header_; }
  const std::map<std::string, TensorInfo>& tensors() const { return header_.tensors; }
  const std::map<std::string, std::string>& metadata() const { return header_.metadata; }
  const TensorInfo* find(const std::string& name) const;
  // Converts F32/F16/BF16 data to fp32. kNotFound naming the tensor if absent;
  // kInvalidArgument naming tensor, expected and actual shape on mismatch.
  Result<std::vector<float>> read_f32(const std::string& name,
                                      const std::vector<int64_t>& expected_shape) const;
  const std::string& path() const { return file_.path(); }

 private:
  MappedFile file_;
  uint64_t data_start_ = 0;
  SafeTensorsHeader header_;
};

// Tensors to write; data is fp32 and written as `dtype` (F32, F16 or BF16).
struct TensorToWrite {
  std::string name;
  std::vector<int64_t> shape;
  const std::vector<float>* data = nullptr;
};
Status write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                         const std::map<std::string, std::string>& metadata, DType dtype = DType::kF32);

}  // namespace infercost::model
