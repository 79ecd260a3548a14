// SHA-256 (FIPS 180-4): incremental hashing of byte streams, e.g. the content
// hash of a benchmark's input files.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "infercost/status.h"

namespace infercost {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  void update(std::string_view bytes) { update(bytes.data(), bytes.size()); }
  // The digest of everything updated so far. The object is then spent:
  // call reset() before hashing anything else.
  std::array<uint8_t, 32> finish();
  // finish() as 64 lowercase hex digits.
  std::string hex_digest();
  void reset();

 private:
  void compress(const uint8_t* block);

  std::array<uint32_t, 8> state_{};
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// Lowercase hex SHA-256 of `bytes`.
std::string sha256_hex(std::string_view bytes);

// The content hash of a list of files: one SHA-256 over their bytes,
// concatenated in the order given (what benchmark records and `infercost
// plan` compare), and their total size. Errors name the file.
struct FilesDigest {
  std::string sha256_hex;
  int64_t bytes = 0;
};
Result<FilesDigest> sha256_of_files(const std::vector<std::string>& paths);

}  // namespace infercost
