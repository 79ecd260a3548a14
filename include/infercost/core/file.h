// Files: whole-file reads, read-only memory maps, and output files that appear
// only when complete (written to a temporary beside the target, renamed on
// commit, removed if never committed).
#pragma once

#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "infercost/core/status.h"

namespace infercost {

// Reads a whole file. Errors name the path and the OS reason.
Result<std::string> read_file(const std::string& path);

// A read-only mapping of a whole file. Move-only; unmaps on destruction.
// Views into data() are valid while the MappedFile lives.
class MappedFile {
 public:
  static Result<MappedFile> open(const std::string& path);
  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const unsigned char* data() const { return data_; }
  size_t size() const { return size_; }
  std::string_view view() const { return {reinterpret_cast<const char*>(data_), size_}; }
  const std::string& path() const { return path_; }

 private:
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

// Buffered writer to "<path>.tmp-<pid>"; commit() flushes, fsyncs and renames
// it to <path>. Destroying an uncommitted file removes the temporary, so a
// failed run leaves no partial output behind; after
// install_temporary_cleanup_on_signals() so does SIGINT, SIGTERM or SIGHUP.
// Not thread-safe.
class AtomicOutputFile {
 public:
  static Result<AtomicOutputFile> create(const std::string& path);
  AtomicOutputFile() = default;
  AtomicOutputFile(AtomicOutputFile&& other) noexcept;
  AtomicOutputFile& operator=(AtomicOutputFile&& other) noexcept;
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;
  ~AtomicOutputFile();

  Status write(std::string_view bytes);
  Status commit();
  // Removes the temporary without renaming; safe to call twice.
  void abandon();
  const std::string& path() const { return path_; }

 private:
  std::FILE* file_ = nullptr;
  std::string path_;
  // Heap-owned so its address survives moves: the signal handler reads it.
  std::unique_ptr<char[]> tmp_path_;
};

// Installs handlers for SIGINT, SIGTERM and SIGHUP that remove the temporaries
// of all live AtomicOutputFiles (at most 64 at once), then die of the signal
// as before. Call once from main().
void install_temporary_cleanup_on_signals();

// True when `path` names an existing regular file or directory.
bool path_exists(const std::string& path);

}  // namespace infercost
