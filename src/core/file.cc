#include "infercost/core/file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <utility>

namespace infercost {

namespace {
std::string os_error(const std::string& what, const std::string& path) {
  return path + ": " + what + ": " + std::strerror(errno);
}
}  // namespace

Result<std::string> read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? not_found(os_error("cannot open", path))
                           : io_error(os_error("cannot open", path));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    Status s = io_error(os_error("cannot stat", path));
    ::close(fd);
    return s;
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return invalid_argument(path + ": is a directory, expected a file");
  }
  std::string out;
  out.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      Status s = io_error(os_error("read failed", path));
      ::close(fd);
      return s;
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  out.resize(done);
  ::close(fd);
  return out;
}

Result<MappedFile> MappedFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? not_found(os_error("cannot open", path))
                           : io_error(os_error("cannot open", path));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return io_error(path + ": not a regular file");
  }
  MappedFile m;
  m.path_ = path;
  m.size_ = static_cast<size_t>(st.st_size);
  if (m.size_ > 0) {
    void* p = ::mmap(nullptr, m.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      Status s = io_error(os_error("mmap failed", path));
      ::close(fd);
      return s;
    }
    m.data_ = static_cast<const unsigned char*>(p);
  }
  ::close(fd);  // the mapping keeps the file alive
  return m;
}

MappedFile::MappedFile(MappedFile&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)), path_(std::move(o.path_)) {}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    if (data_) ::munmap(const_cast<unsigned char*>(data_), size_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    path_ = std::move(o.path_);
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<unsigned char*>(data_), size_);
}

namespace {

// Temporaries of live AtomicOutputFiles, for the signal handler. Lock-free
// slots: the handler may run at any point of track()/untrack().
constexpr int kMaxTracked = 64;
std::atomic<const char*> g_tracked[kMaxTracked];

void track(const char* path) {
  for (auto& slot : g_tracked) {
    const char* expected = nullptr;
    if (slot.compare_exchange_strong(expected, path)) return;
  }
  // More than kMaxTracked open outputs: this one is only removed on unwinding.
}

void untrack(const char* path) {
  for (auto& slot : g_tracked) {
    const char* expected = path;
    if (slot.compare_exchange_strong(expected, nullptr)) return;
  }
}

extern "C" void remove_temporaries_and_die(int sig) {
  for (auto& slot : g_tracked) {
    if (const char* p = slot.load()) ::unlink(p);  // async-signal-safe
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

void install_temporary_cleanup_on_signals() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, remove_temporaries_and_die);
}

Result<AtomicOutputFile> AtomicOutputFile::create(const std::string& path) {
  AtomicOutputFile f;
  f.path_ = path;
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  f.tmp_path_ = std::make_unique<char[]>(tmp.size() + 1);
  std::memcpy(f.tmp_path_.get(), tmp.c_str(), tmp.size() + 1);
  f.file_ = std::fopen(f.tmp_path_.get(), "wb");
  if (!f.file_) {
    f.tmp_path_.reset();
    return io_error(os_error("cannot create output file", path));
  }
  track(f.tmp_path_.get());
  static constexpr size_t kBufferBytes = 1 << 20;
  std::setvbuf(f.file_, nullptr, _IOFBF, kBufferBytes);
  return f;
}

AtomicOutputFile::AtomicOutputFile(AtomicOutputFile&& o) noexcept
    : file_(std::exchange(o.file_, nullptr)), path_(std::move(o.path_)), tmp_path_(std::move(o.tmp_path_)) {}

AtomicOutputFile& AtomicOutputFile::operator=(AtomicOutputFile&& o) noexcept {
  if (this != &o) {
    abandon();
    file_ = std::exchange(o.file_, nullptr);
    path_ = std::move(o.path_);
    tmp_path_ = std::move(o.tmp_path_);
  }
  return *this;
}

AtomicOutputFile::~AtomicOutputFile() {
  abandon();
}

Status AtomicOutputFile::write(std::string_view bytes) {
  if (!file_) return internal_error(path_ + ": write after commit or abandon");
  if (bytes.empty()) return Status();
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    return io_error(os_error("write failed", path_));
  }
  return Status();
}

Status AtomicOutputFile::commit() {
  if (!file_) return internal_error(path_ + ": commit after commit or abandon");
  bool ok = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  ok = (std::fclose(file_) == 0) && ok;
  file_ = nullptr;
  Status s;
  if (!ok) {
    s = io_error(os_error("write failed", path_));
  } else if (std::rename(tmp_path_.get(), path_.c_str()) != 0) {
    s = io_error(os_error("cannot rename temporary output into place", path_));
  }
  if (!s.ok()) ::unlink(tmp_path_.get());
  untrack(tmp_path_.get());
  tmp_path_.reset();
  return s;
}

void AtomicOutputFile::abandon() {
  if (file_) {
    std::fclose(file_);
    file_ = nullptr;
  }
  if (tmp_path_) {
    ::unlink(tmp_path_.get());
    untrack(tmp_path_.get());
    tmp_path_.reset();
  }
}

bool path_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace infercost
