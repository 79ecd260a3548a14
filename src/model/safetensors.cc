#include "model/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "core/json_text.h"

namespace infercost::model {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

namespace {

using nlohmann::json;

// The Python library refuses headers above 100 MB; so do we, before allocating.
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;
// nlohmann's parser recurses per nesting level; a legal header nests 3 deep.
constexpr int kMaxJsonDepth = 16;
constexpr size_t kMaxRank = 16;

struct DTypeEntry {
  DType dtype;
  std::string_view name;
  size_t size;
};
constexpr DTypeEntry kDTypes[] = {
    {DType::kF32, "F32", 4}, {DType::kF16, "F16", 2},   {DType::kBF16, "BF16", 2}, {DType::kF64, "F64", 8},
    {DType::kI64, "I64", 8}, {DType::kI32, "I32", 4},   {DType::kI16, "I16", 2},   {DType::kI8, "I8", 1},
    {DType::kU8, "U8", 1},   {DType::kBool, "BOOL", 1},
};
// Real safetensors dtypes we do not convert; named so the error says "unsupported", not "corrupt".
constexpr std::string_view kKnownUnsupported[] = {"F8_E4M3", "F8_E5M2", "U16", "U32", "U64", "F8_E8M0"};

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Result<TensorInfo> parse_tensor_entry(const std::string& name, const json& entry, uint64_t data_size) {
  auto bad = [&](const std::string& why) { return corruption("tensor '" + name + "': " + why); };
  if (!entry.is_object()) return bad("header entry is not an object");
  auto dt = entry.find("dtype");
  auto sh = entry.find("shape");
  auto off = entry.find("data_offsets");
  if (dt == entry.end() || !dt->is_string()) return bad("missing or non-string 'dtype'");
  if (sh == entry.end() || !sh->is_array()) return bad("missing or non-array 'shape'");
  if (off == entry.end() || !off->is_array() || off->size() != 2)
    return bad("'data_offsets' must be [begin, end]");
  TensorInfo info;
  info.name = name;
  const std::string& dname = dt->get_ref<const std::string&>();
  bool found = false;
  for (const auto& d : kDTypes) {
    if (d.name == dname) {
      info.dtype = d.dtype;
      found = true;
    }
  }
  if (!found) {
    for (auto u : kKnownUnsupported) {
      if (u == dname) return unsupported("tensor '" + name + "': dtype " + dname + " is not supported");
    }
    return bad("unknown dtype '" + dname + "'");
  }
  if (sh->size() > kMaxRank) return bad("shape has " + std::to_string(sh->size()) + " dimensions");
  uint64_t numel = 1;
  for (const auto& d : *sh) {
    if (!d.is_number_unsigned()) return bad("shape dimensions must be non-negative integers");
    uint64_t v = d.get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return bad("shape dimension too large");
    info.shape.push_back(static_cast<int64_t>(v));
    if (__builtin_mul_overflow(numel, v, &numel)) return bad("element count overflows");
  }
  for (const auto& o : *off) {
    if (!o.is_number_unsigned()) return bad("data_offsets must be non-negative integers");
  }
  info.begin = (*off)[0].get<uint64_t>();
  info.end = (*off)[1].get<uint64_t>();
  if (info.begin > info.end) {
    return bad("data_offsets begin " + std::to_string(info.begin) + " > end " + std::to_string(info.end));
  }
  if (info.end > data_size) {
    return bad("data_offsets end " + std::to_string(info.end) + " is past the data section (" +
               std::to_string(data_size) + " bytes)");
  }
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(numel, static_cast<uint64_t>(dtype_size(info.dtype)), &bytes)) {
    return bad("byte count overflows");
  }
  if (bytes != info.end - info.begin) {
    return bad("shape " + shape_string(info.shape) + " of " + dname + " needs " + std::to_string(bytes) +
               " bytes but data_offsets span " + std::to_string(info.end - info.begin));
  }
  return info;
}

// The header length at the start of a file of `size` bytes: within the limit and the file.
Status check_header_length(const std::string& path, uint64_t size, uint64_t header_len) {
  auto bad = [&](const std::string& why) { return corruption(path + ": " + why); };
  if (size < 8)
    return bad("file is " + std::to_string(size) + " bytes, too short for the 8-byte header length");
  if (header_len > kMaxHeaderBytes) {
    return bad("header length " + std::to_string(header_len) + " exceeds the 100 MB limit");
  }
  if (header_len > size - 8) {
    return bad("header length " + std::to_string(header_len) + " runs past the end of the file (" +
               std::to_string(size) + " bytes)");
  }
  return Status();
}

// The header's JSON text (the `header.size()` bytes after the length); every
// tensor's end offset must be within `data_size`.
Result<SafeTensorsHeader> parse_header(const std::string& path, std::string_view header, uint64_t data_size) {
  auto bad = [&](const std::string& why) { return corruption(path + ": " + why); };
  INFERCOST_RETURN_IF_ERROR(check_json_nesting(header, path + ": header", kMaxJsonDepth));
  json doc = json::parse(header.begin(), header.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded())
    return bad("header (bytes 8.." + std::to_string(8 + header.size()) + ") is not valid JSON");
  if (!doc.is_object()) return bad("header is not a JSON object");
  SafeTensorsHeader out;
  for (const auto& [key, value] : doc.items()) {
    if (key == "__metadata__") {
      if (!value.is_object()) return bad("__metadata__ is not an object");
      for (const auto& [mk, mv] : value.items()) {
        if (!mv.is_string()) return bad("__metadata__ value '" + mk + "' is not a string");
        out.metadata[mk] = mv.get<std::string>();
      }
      continue;
    }
    auto info = parse_tensor_entry(key, value, data_size);
    if (!info.ok()) return info.status().with_context(path);
    out.tensors[key] = std::move(info).value();
  }
  return out;
}

}  // namespace

float f16_to_f32(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalize into an f32 normal
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mant & 0x3ffu) << 13;
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp + (127 - 15)) << 23 | mant << 13;
  }
  return std::bit_cast<float>(bits);
}

uint16_t f32_to_f16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return sign | 0x7c00u | (mant ? 0x200u : 0u);  // inf / quiet NaN
  int32_t e = static_cast<int32_t>(exp) - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00u;  // overflow to inf
  if (e <= 0) {
    if (e < -10) return sign;  // below half the smallest subnormal: rounds to zero
    mant |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = static_cast<uint32_t>(e) << 10 | mant >> 13;
  uint32_t rem = mant & 0x1fffu;
  // A carry out of the mantissa correctly bumps the exponent (up to inf).
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

float bf16_to_f32(uint16_t h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

uint16_t f32_to_bf16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

std::string_view dtype_name(DType dtype) {
  for (const auto& d : kDTypes) {
    if (d.dtype == dtype) return d.name;
  }
  return "?";
}

size_t dtype_size(DType dtype) {
  for (const auto& d : kDTypes) {
    if (d.dtype == dtype) return d.size;
  }
  return 0;
}

int64_t TensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;  // overflow excluded when the header was parsed
  return n;
}

Result<SafeTensorsFile> SafeTensorsFile::open(const std::string& path) {
  SafeTensorsFile st;
  INFERCOST_ASSIGN_OR_RETURN(st.file_, MappedFile::open(path));
  const uint64_t size = st.file_.size();
  uint64_t header_len = 0;
  if (size >= 8) std::memcpy(&header_len, st.file_.data(), 8);
  INFERCOST_RETURN_IF_ERROR(check_header_length(path, size, header_len));
  st.data_start_ = 8 + header_len;
  std::string_view header(reinterpret_cast<const char*>(st.file_.data()) + 8, header_len);
  INFERCOST_ASSIGN_OR_RETURN(st.header_, parse_header(path, header, size - st.data_start_));
  return st;
}

Result<SafeTensorsHeader> read_safetensors_header(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const std::string why = path + ": cannot open: " + std::strerror(errno);
    return errno == ENOENT ? not_found(why) : io_error(why);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return io_error(path + ": not a regular file");
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  // Reads exactly `n` bytes at `offset`; the length checks below keep them in the file.
  auto read_at = [&](void* out, uint64_t n, uint64_t offset) -> Status {
    auto* p = static_cast<char*>(out);
    while (n > 0) {
      const ssize_t got = ::pread(fd, p, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return io_error(path + ": read failed: " + std::strerror(errno));
      if (got == 0) return corruption(path + ": the file ends at byte " + std::to_string(offset));
      p += got;
      n -= static_cast<uint64_t>(got);
      offset += static_cast<uint64_t>(got);
    }
    return Status();
  };
  uint64_t header_len = 0;
  Status s = size >= 8 ? read_at(&header_len, 8, 0) : Status();
  if (s.ok()) s = check_header_length(path, size, header_len);
  std::string header;
  if (s.ok()) {
    header.resize(header_len);
    s = read_at(header.data(), header_len, 8);
  }
  ::close(fd);
  INFERCOST_RETURN_IF_ERROR(s);
  // No bound on the offsets but their own consistency: the data section is not looked at.
  return parse_header(path, header, std::numeric_limits<uint64_t>::max());
}

const TensorInfo* SafeTensorsFile::find(const std::string& name) const {
  auto it = header_.tensors.find(name);
  return it == header_.tensors.end() ? nullptr : &it->second;
}

Result<std::vector<float>> SafeTensorsFile::read_f32(const std::string& name,
                                                     const std::vector<int64_t>& expected_shape) const {
  const TensorInfo* info = find(name);
  if (!info) return not_found(path() + ": tensor '" + name + "' not found");
  INFERCOST_RETURN_IF_ERROR(check_f32_tensor(path(), *info, expected_shape));
  const size_t n = static_cast<size_t>(info->numel());
  const unsigned char* src = file_.data() + data_start_ + info->begin;
  std::vector<float> out(n);
  switch (info->dtype) {
    case DType::kF32:
      if (n) std::memcpy(out.data(), src, n * 4);
      break;
    case DType::kF16:
    case DType::kBF16: {
      const bool half = info->dtype == DType::kF16;
      for (size_t i = 0; i < n; ++i) {
        uint16_t v;
        std::memcpy(&v, src + 2 * i, 2);  // offsets need not be aligned
        out[i] = half ? f16_to_f32(v) : bf16_to_f32(v);
      }
      break;
    }
    default: break;  // refused by check_f32_tensor
  }
  return out;
}

Status check_f32_tensor(const std::string& path, const TensorInfo& info,
                        const std::vector<int64_t>& expected_shape) {
  if (info.shape != expected_shape) {
    return invalid_argument(path + ": tensor '" + info.name + "': expected shape " +
                            shape_string(expected_shape) + ", found " + shape_string(info.shape));
  }
  if (info.dtype != DType::kF32 && info.dtype != DType::kF16 && info.dtype != DType::kBF16) {
    return unsupported(path + ": tensor '" + info.name + "' has dtype " +
                       std::string(dtype_name(info.dtype)) + "; only F32, F16 and BF16 weights are read");
  }
  return Status();
}

Status write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                         const std::map<std::string, std::string>& metadata, DType dtype) {
  if (dtype != DType::kF32 && dtype != DType::kF16 && dtype != DType::kBF16) {
    return invalid_argument(path + ": can only write F32, F16 or BF16, not " +
                            std::string(dtype_name(dtype)));
  }
  const size_t esize = dtype_size(dtype);
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::set<std::string> names;
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    if (t.name.empty() || t.name == "__metadata__")
      return invalid_argument(path + ": bad tensor name '" + t.name + "'");
    if (!names.insert(t.name).second) return invalid_argument(path + ": duplicate tensor '" + t.name + "'");
    if (!t.data) return invalid_argument(path + ": tensor '" + t.name + "' has no data");
    uint64_t numel = 1;
    for (int64_t d : t.shape) {
      if (d < 0) return invalid_argument(path + ": tensor '" + t.name + "' has a negative dimension");
      numel *= static_cast<uint64_t>(d);
    }
    if (numel != t.data->size()) {
      return invalid_argument(path + ": tensor '" + t.name + "': shape " + shape_string(t.shape) + " holds " +
                              std::to_string(numel) + " values, data has " + std::to_string(t.data->size()));
    }
    uint64_t bytes = numel * esize;
    header[t.name] = {{"dtype", std::string(dtype_name(dtype))},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const json::exception& e) {
    return invalid_argument(path + ": tensor or metadata name is not valid UTF-8: " + e.what());
  }
  // Pad with spaces so the data section starts 8-byte aligned, as the Python library does.
  while ((8 + text.size()) % 8 != 0) text.push_back(' ');
  INFERCOST_ASSIGN_OR_RETURN(auto out, AtomicOutputFile::create(path));
  uint64_t len = text.size();
  char len_bytes[8];
  std::memcpy(len_bytes, &len, 8);
  INFERCOST_RETURN_IF_ERROR(out.write(std::string_view(len_bytes, 8)));
  INFERCOST_RETURN_IF_ERROR(out.write(text));
  std::string buf;
  constexpr size_t kChunk = 1 << 16;
  for (const auto& t : tensors) {
    const std::vector<float>& v = *t.data;
    if (dtype == DType::kF32) {
      INFERCOST_RETURN_IF_ERROR(
          out.write(std::string_view(reinterpret_cast<const char*>(v.data()), v.size() * 4)));
      continue;
    }
    for (size_t i = 0; i < v.size(); i += kChunk) {
      size_t n = std::min(kChunk, v.size() - i);
      buf.resize(n * 2);
      for (size_t j = 0; j < n; ++j) {
        uint16_t h = dtype == DType::kF16 ? f32_to_f16(v[i + j]) : f32_to_bf16(v[i + j]);
        std::memcpy(buf.data() + 2 * j, &h, 2);
      }
      INFERCOST_RETURN_IF_ERROR(out.write(buf));
    }
  }
  return out.commit();
}

}  // namespace infercost::model
