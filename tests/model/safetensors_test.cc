#include "model/safetensors.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "test_utils.h"

namespace infercost::model {
namespace {

std::string temp_path(const std::string& name) {
  return testing::process_temp_dir().file(name);
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A file from an 8-byte length and a header text (plus data bytes).
std::string make_file(const std::string& header, const std::string& data = "") {
  uint64_t n = header.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

Status open_bytes(const std::string& bytes) {
  // Thousands of rewrites: prefer a RAM-backed folder when there is one.
  struct Scratch {
    std::string path = std::filesystem::is_directory("/dev/shm")
                           ? "/dev/shm/infercost_fuzz_" + std::to_string(::getpid()) + ".safetensors"
                           : temp_path("fuzz_.safetensors");
    ~Scratch() { std::filesystem::remove(path); }
  };
  static const Scratch scratch;
  const std::string& path = scratch.path;
  write_bytes(path, bytes);
  auto f = SafeTensorsFile::open(path);
  if (!f.ok()) return f.status();
  // Reading every tensor must also be safe after a successful parse.
  for (const auto& [name, info] : f->tensors()) {
    auto v = f->read_f32(name, info.shape);
    if (v.ok()) {
      EXPECT_EQ(v->size(), static_cast<size_t>(info.numel()));
    }
  }
  return Status();
}

TEST(HalfConversion, KnownValues) {
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);  // rounds up to infinity
  EXPECT_EQ(f32_to_f16(1e10f), 0x7c00);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -25)), 0x0000);  // tie to even: zero
  EXPECT_EQ(f32_to_f16(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(f32_to_f16(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 ulp: tie to even (2)
  // 1 + 2^-11 is exactly between 1 and the next half: ties to even (1.0).
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(f32_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_to_f32(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(f16_to_f32(0xfc00), -std::numeric_limits<float>::infinity());
  // Every finite half survives half -> float -> half.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00) continue;
    ASSERT_EQ(f32_to_f16(f16_to_f32(static_cast<uint16_t>(h))), h) << std::hex << h;
  }
}

TEST(BFloat16Conversion, RoundsToNearestEven) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3f808000u)), 0x3f80);  // tie, even stays
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3f818000u)), 0x3f82);  // tie, odd rounds up
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3f808001u)), 0x3f81);
  EXPECT_EQ(f32_to_bf16(3.0e38f), 0x7f62);  // the values torch produced in the Python fixture
  EXPECT_EQ(f32_to_bf16(1e-3f), 0x3a83);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);
}

class RoundTrip : public ::testing::TestWithParam<DType> {};

TEST_P(RoundTrip, WritesAndReadsBack) {
  const DType dtype = GetParam();
  std::vector<float> a{0.0f, 1.0f, -1.5f, 3.25f, 1e-3f, -70000.0f}, b{42.0f}, empty;
  std::string path = temp_path("rt.safetensors");
  ASSERT_TRUE(write_safetensors(path, {{"a.weight", {2, 3}, &a}, {"b", {}, &b}, {"z", {0, 5}, &empty}},
                                {{"format", "pt"}}, dtype)
                  .ok());
  auto f = SafeTensorsFile::open(path);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f->metadata().at("format"), "pt");
  ASSERT_EQ(f->tensors().size(), 3u);
  EXPECT_EQ(f->find("a.weight")->dtype, dtype);
  auto ra = f->read_f32("a.weight", {2, 3});
  ASSERT_TRUE(ra.ok()) << ra.status().to_string();
  for (size_t i = 0; i < a.size(); ++i) {
    float expect = dtype == DType::kF32   ? a[i]
                   : dtype == DType::kF16 ? f16_to_f32(f32_to_f16(a[i]))
                                          : bf16_to_f32(f32_to_bf16(a[i]));
    EXPECT_EQ((*ra)[i], expect) << i;
  }
  EXPECT_EQ(f->read_f32("b", {}).value(), std::vector<float>{42.0f});
  EXPECT_TRUE(f->read_f32("z", {0, 5}).value().empty());
  // The data section starts 8-byte aligned, as the Python library writes it.
  uint64_t header_len = 0;
  std::memcpy(&header_len, read_bytes(path).data(), 8);
  EXPECT_EQ(header_len % 8, 0u);
}

INSTANTIATE_TEST_SUITE_P(AllFloatTypes, RoundTrip, ::testing::Values(DType::kF32, DType::kF16, DType::kBF16));

TEST(SafeTensors, ErrorsNameTensorAndShapes) {
  std::vector<float> a(6, 1.0f);
  std::string path = temp_path("shape.safetensors");
  ASSERT_TRUE(write_safetensors(path, {{"layer.w", {2, 3}, &a}}, {}).ok());
  auto f = SafeTensorsFile::open(path);
  ASSERT_TRUE(f.ok());
  auto wrong = f->read_f32("layer.w", {3, 2});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find("'layer.w'"), std::string::npos);
  EXPECT_NE(wrong.status().message().find("expected shape [3, 2], found [2, 3]"), std::string::npos)
      << wrong.status().message();
  auto missing = f->read_f32("nope", {1});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("'nope'"), std::string::npos);
}

TEST(SafeTensors, WriterRejectsBadInput) {
  std::vector<float> a(5);
  std::string path = temp_path("bad_write.safetensors");
  EXPECT_FALSE(write_safetensors(path, {{"a", {2, 3}, &a}}, {}).ok());  // 6 != 5
  EXPECT_FALSE(write_safetensors(path, {{"a", {5}, &a}, {"a", {5}, &a}}, {}).ok());
  EXPECT_FALSE(write_safetensors(path, {{"a", {5}, nullptr}}, {}).ok());
  EXPECT_FALSE(write_safetensors(path, {{"a", {5}, &a}}, {}, DType::kI32).ok());
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(SafeTensors, ReadsFileWrittenByPythonLibrary) {
  const std::string path = std::string(INFERCOST_TEST_DATA_DIR) + "/model/python_written.safetensors";
  auto f = SafeTensorsFile::open(path);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f->metadata().at("writer"), "python-safetensors");
  EXPECT_EQ(f->tensors().size(), 5u);
  auto f32 = f->read_f32("f32", {2, 3});
  ASSERT_TRUE(f32.ok());
  for (int i = 0; i < 6; ++i) EXPECT_EQ((*f32)[static_cast<size_t>(i)], i * 0.5f - 1.0f);
  EXPECT_EQ(f->find("f16")->dtype, DType::kF16);
  EXPECT_EQ(f->read_f32("f16", {4}).value(), (std::vector<float>{1.0f, -2.5f, 65504.0f, 6.103515625e-05f}));
  auto bf = f->read_f32("bf16", {2, 2});
  ASSERT_TRUE(bf.ok());
  EXPECT_EQ((*bf)[0], 1.0f);
  EXPECT_EQ((*bf)[1], -0.15625f);
  EXPECT_EQ(std::bit_cast<uint32_t>((*bf)[2]), 0x7f620000u);
  EXPECT_EQ(std::bit_cast<uint32_t>((*bf)[3]), 0x3a830000u);
  EXPECT_EQ(f->find("i64")->dtype, DType::kI64);
  EXPECT_EQ(f->read_f32("i64", {3}).status().code(), StatusCode::kUnsupported);
  EXPECT_TRUE(f->read_f32("empty", {0, 4}).value().empty());
}

TEST(SafeTensors, BadHeadersAreCleanErrors) {
  struct Case {
    const char* what;
    std::string bytes;
  };
  const std::string four_floats(16, '\0');
  std::vector<Case> cases = {
      {"empty file", ""},
      {"short length", std::string(5, '\0')},
      {"length past end", make_file("{}").substr(0, 8) + "{"},
      {"huge length", std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8) + "{}"},
      {"not json", make_file("{\"a\": ")},
      {"not an object", make_file("[1, 2]")},
      {"entry not object", make_file(R"({"a": 3})")},
      {"missing dtype", make_file(R"({"a": {"shape": [4], "data_offsets": [0, 16]}})", four_floats)},
      {"unknown dtype",
       make_file(R"({"a": {"dtype": "F33", "shape": [4], "data_offsets": [0, 16]}})", four_floats)},
      {"negative dim",
       make_file(R"({"a": {"dtype": "F32", "shape": [-4], "data_offsets": [0, 16]}})", four_floats)},
      {"float dim",
       make_file(R"({"a": {"dtype": "F32", "shape": [4.0], "data_offsets": [0, 16]}})", four_floats)},
      {"size mismatch",
       make_file(R"({"a": {"dtype": "F32", "shape": [5], "data_offsets": [0, 16]}})", four_floats)},
      {"end past data",
       make_file(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [4, 20]}})", four_floats)},
      {"begin after end",
       make_file(R"({"a": {"dtype": "F32", "shape": [0], "data_offsets": [8, 4]}})", four_floats)},
      {"one offset", make_file(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0]}})", four_floats)},
      {"negative offset",
       make_file(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [-16, 0]}})", four_floats)},
      {"overflowing numel",
       make_file(R"({"a": {"dtype": "F32", "shape": [4294967296, 4294967296, 16], "data_offsets": [0, 16]}})",
                 four_floats)},
      {"overflowing bytes",
       make_file(R"({"a": {"dtype": "F64", "shape": [4611686018427387904], "data_offsets": [0, 16]}})",
                 four_floats)},
      {"offset beyond u64",
       make_file(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 1e30]}})", four_floats)},
      {"metadata not strings", make_file(R"({"__metadata__": {"a": 1}})")},
      {"deep nesting", make_file(std::string(100000, '[') + std::string(100000, ']'))},
      {"invalid utf8", make_file("{\"\xff\xfe\": {}}")},
  };
  for (const auto& c : cases) {
    Status s = open_bytes(c.bytes);
    EXPECT_FALSE(s.ok()) << c.what;
    EXPECT_TRUE(s.code() == StatusCode::kCorruption || s.code() == StatusCode::kUnsupported)
        << c.what << ": " << s.to_string();
    EXPECT_NE(s.message().find("fuzz_"), std::string::npos) << c.what << ": " << s.to_string();
  }
  // A real but unconverted dtype is "unsupported", not "corrupt".
  Status f8 =
      open_bytes(make_file(R"({"a": {"dtype": "F8_E4M3", "shape": [4], "data_offsets": [0, 4]}})", "abcd"));
  EXPECT_EQ(f8.code(), StatusCode::kUnsupported);
  // Sanity: the well-formed variant of the cases above opens.
  EXPECT_TRUE(
      open_bytes(make_file(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})", four_floats))
          .ok());
}

std::string small_valid_file() {
  std::vector<float> a{1, 2, 3, 4, 5, 6}, b{7, 8};
  std::string path = temp_path("small.safetensors");
  EXPECT_TRUE(
      write_safetensors(path, {{"a", {2, 3}, &a}, {"b", {2}, &b}}, {{"format", "pt"}}, DType::kF16).ok());
  return read_bytes(path);
}

TEST(SafeTensorsCorruption, EveryTruncationIsAnErrorOrComplete) {
  const std::string full = small_valid_file();
  ASSERT_TRUE(open_bytes(full).ok());
  for (size_t len = 0; len < full.size(); ++len) {
    Status s = open_bytes(full.substr(0, len));
    EXPECT_FALSE(s.ok()) << "truncated to " << len << " of " << full.size() << " bytes";
  }
}

// read_safetensors_header: open()'s header, read without the data section.
TEST(SafeTensorsHeader, ReadsWhatOpenReadsWithoutTheData) {
  const std::string full = small_valid_file();
  uint64_t header_len = 0;
  std::memcpy(&header_len, full.data(), 8);
  const std::string path = temp_path("header_only.safetensors");
  write_bytes(path, full);
  Result<SafeTensorsFile> file = SafeTensorsFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  Result<SafeTensorsHeader> header = read_safetensors_header(path);
  ASSERT_TRUE(header.ok()) << header.status().to_string();
  EXPECT_EQ(header->metadata, file->metadata());
  ASSERT_EQ(header->tensors.size(), 2u);
  for (const auto& [name, info] : file->tensors()) {
    ASSERT_EQ(header->tensors.count(name), 1u) << name;
    const TensorInfo& h = header->tensors.at(name);
    EXPECT_EQ(h.name, info.name);
    EXPECT_EQ(h.dtype, info.dtype);
    EXPECT_EQ(h.shape, info.shape);
    EXPECT_EQ(h.begin, info.begin);
    EXPECT_EQ(h.end, info.end);
  }
  // Cut anywhere in the length or the header: the same error as open()'s.
  // Cut in the data: open() refuses it, the header still reads.
  for (size_t len = 0; len < full.size(); ++len) {
    write_bytes(path, full.substr(0, len));
    Result<SafeTensorsHeader> cut = read_safetensors_header(path);
    Result<SafeTensorsFile> opened = SafeTensorsFile::open(path);
    ASSERT_FALSE(opened.ok()) << len;
    if (len < 8 + header_len) {
      ASSERT_FALSE(cut.ok()) << len;
      EXPECT_EQ(cut.status().message(), opened.status().message());
    } else {
      ASSERT_TRUE(cut.ok()) << len << ": " << cut.status().to_string();
      EXPECT_EQ(cut->tensors.size(), 2u);
    }
  }
  // The offsets are still checked against the shapes.
  write_bytes(path, make_file(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 12]}})"));
  Result<SafeTensorsHeader> short_span = read_safetensors_header(path);
  ASSERT_FALSE(short_span.ok());
  EXPECT_NE(short_span.status().message().find("needs 16 bytes but data_offsets span 12"), std::string::npos)
      << short_span.status().to_string();
  EXPECT_EQ(read_safetensors_header(temp_path("absent.safetensors")).status().code(), StatusCode::kNotFound);
}

TEST(SafeTensorsCorruption, RandomByteFlipsNeverCrash) {
  const std::string full = small_valid_file();
  std::mt19937_64 rng(20240601);
  int failures = 0, successes = 0;
  constexpr int kIterations = 5000;
  for (int i = 0; i < kIterations; ++i) {
    std::string bytes = full;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) {
      size_t pos = rng() % bytes.size();
      // Bias towards the length prefix and the header, where parsing happens.
      if (rng() % 2) pos = rng() % std::min<size_t>(bytes.size(), 80);
      bytes[pos] = static_cast<char>(rng() % 2 ? bytes[pos] ^ (1 << (rng() % 8)) : rng() % 256);
    }
    Status s = open_bytes(bytes);
    (s.ok() ? successes : failures)++;
    if (!s.ok()) {
      ASSERT_TRUE(s.code() == StatusCode::kCorruption || s.code() == StatusCode::kUnsupported)
          << s.to_string();
    }
  }
  // Most flips in the header must be caught; flips in the data are legal.
  EXPECT_GT(failures, kIterations / 4);
  EXPECT_GT(successes, 0);
}

}  // namespace
}  // namespace infercost::model
