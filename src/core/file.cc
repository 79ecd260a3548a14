#include "infercost/core/file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <utility>

#include "core/test_point.h"

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
  // st_size is only a hint: files of /proc report 0 and are read to the end.
  std::string out;
  out.resize(static_cast<size_t>(st.st_size) + 1);
  if (out.size() < 4096) out.resize(4096);
  size_t done = 0;
  while (true) {
    if (done == out.size()) out.resize(out.size() * 2);
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

// Temporaries of live AtomicOutputFiles and TempDirs, and the children to stop
// first, for the signal handler. Lock-free slots: the handler may run at any
// point of track()/untrack().
constexpr int kMaxTracked = 64;
constexpr int kMaxTrackedDirs = 16;
constexpr int kMaxTrackedChildren = 16;
std::atomic<const char*> g_tracked[kMaxTracked];
std::atomic<const char*> g_tracked_dirs[kMaxTrackedDirs];
std::atomic<pid_t> g_children[kMaxTrackedChildren];

template <typename T, size_t N>
void track_in(std::atomic<T> (&slots)[N], T value, T empty) {
  for (auto& slot : slots) {
    T expected = empty;
    if (slot.compare_exchange_strong(expected, value)) return;
  }
  // More than N at once: this one is only cleaned up on unwinding.
}

template <typename T, size_t N>
void untrack_in(std::atomic<T> (&slots)[N], T value, T empty) {
  for (auto& slot : slots) {
    T expected = value;
    if (slot.compare_exchange_strong(expected, empty)) return;
  }
}

void track(const char* path) {
  track_in(g_tracked, path, static_cast<const char*>(nullptr));
}

void untrack(const char* path) {
  untrack_in(g_tracked, path, static_cast<const char*>(nullptr));
}

// Removes everything in the folder `dir_fd` with system calls only (the
// signal handler cannot use opendir or std::filesystem: they allocate).
// Entries removed while getdents64 reads may be skipped, so it reads again
// until a pass removes nothing.
void remove_contents_at(int dir_fd, int depth) {
  constexpr int kMaxDepth = 16;
  alignas(8) char buf[2048];
  for (int pass = 0; pass < 64; ++pass) {
    if (::lseek(dir_fd, 0, SEEK_SET) < 0) return;
    bool removed = false;
    long n;
    while ((n = ::syscall(SYS_getdents64, dir_fd, buf, sizeof buf)) > 0) {
      for (long at = 0; at < n;) {
        // struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, name.
        uint16_t reclen = 0;
        std::memcpy(&reclen, buf + at + 16, sizeof reclen);
        const unsigned char type = static_cast<unsigned char>(buf[at + 18]);
        const char* name = buf + at + 19;
        at += reclen;
        if (reclen == 0) return;
        if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
        if (type != DT_DIR && ::unlinkat(dir_fd, name, 0) == 0) {
          removed = true;
          continue;
        }
        if (depth < kMaxDepth) {
          const int sub = ::openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (sub >= 0) {
            remove_contents_at(sub, depth + 1);
            ::close(sub);
          }
        }
        if (::unlinkat(dir_fd, name, AT_REMOVEDIR) == 0) removed = true;
      }
    }
    if (!removed) return;
  }
}

void remove_tree(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  remove_contents_at(fd, 0);
  ::close(fd);
  ::rmdir(path);
}

// SIGTERM to every tracked child, SIGKILL to those still there after 2 s;
// each reaped. Async-signal-safe.
void stop_children() {
  bool any = false;
  for (auto& slot : g_children) {
    if (const pid_t pid = slot.load(); pid > 0) {
      ::kill(pid, SIGTERM);
      any = true;
    }
  }
  if (!any) return;
  const struct timespec tick { 0, 10 * 1000 * 1000 };
  for (int i = 0; i < 200; ++i) {
    bool running = false;
    for (auto& slot : g_children) {
      const pid_t pid = slot.load();
      if (pid <= 0) continue;
      const pid_t r = ::waitpid(pid, nullptr, WNOHANG);
      if (r == pid || (r < 0 && errno == ECHILD)) {
        slot.store(0);
      } else {
        running = true;
      }
    }
    if (!running) return;
    ::nanosleep(&tick, nullptr);
  }
  for (auto& slot : g_children) {
    if (const pid_t pid = slot.load(); pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      slot.store(0);
    }
  }
}

// Set by stop_gracefully_on_signals: the first SIGINT or SIGTERM is only
// recorded there.
std::atomic<std::atomic<int>*> g_stop_flag{nullptr};

extern "C" void remove_temporaries_and_die(int sig) {
  if (sig != SIGHUP) {
    if (std::atomic<int>* flag = g_stop_flag.load()) {
      int none = 0;
      if (flag->compare_exchange_strong(none, sig)) return;  // the first one: stop at the next durable step
    }
  }
  stop_children();
  for (auto& slot : g_tracked) {
    if (const char* p = slot.load()) ::unlink(p);  // async-signal-safe
  }
  for (auto& slot : g_tracked_dirs) {
    if (const char* p = slot.load()) remove_tree(p);
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP};

}  // namespace

void install_temporary_cleanup_on_signals() {
  struct sigaction action {};
  action.sa_handler = remove_temporaries_and_die;
  // The handler runs once: the other cleanup signals wait until it has re-raised.
  sigemptyset(&action.sa_mask);
  for (int sig : kCleanupSignals) sigaddset(&action.sa_mask, sig);
  action.sa_flags = SA_RESTART;
  for (int sig : kCleanupSignals) ::sigaction(sig, &action, nullptr);
}

void stop_gracefully_on_signals(std::atomic<int>* signal_seen) {
  g_stop_flag.store(signal_seen);
}

void track_child_process(pid_t pid) {
  if (pid > 0) track_in(g_children, pid, pid_t{0});
}

void untrack_child_process(pid_t pid) {
  if (pid > 0) untrack_in(g_children, pid, pid_t{0});
}

pid_t wait_child_process(pid_t pid, int* status, int options) {
  sigset_t block, old;
  sigemptyset(&block);
  for (int sig : kCleanupSignals) sigaddset(&block, sig);
  ::pthread_sigmask(SIG_BLOCK, &block, &old);
  const pid_t r = ::waitpid(pid, status, options);
  const int saved = errno;
  if (r == pid || (r < 0 && errno == ECHILD)) untrack_child_process(pid);
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = saved;
  return r;
}

Result<TempDir> TempDir::create(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/" + prefix + "XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) {
    return io_error(os_error("cannot create a temporary folder", tmpl));
  }
  TempDir d;
  d.path_ = tmpl;
  d.tracked_ = std::make_unique<char[]>(tmpl.size() + 1);
  std::memcpy(d.tracked_.get(), tmpl.c_str(), tmpl.size() + 1);
  track_in(g_tracked_dirs, static_cast<const char*>(d.tracked_.get()), static_cast<const char*>(nullptr));
  return d;
}

TempDir::TempDir(TempDir&& o) noexcept : path_(std::move(o.path_)), tracked_(std::move(o.tracked_)) {
  o.path_.clear();
}

TempDir& TempDir::operator=(TempDir&& o) noexcept {
  if (this != &o) {
    remove();
    path_ = std::move(o.path_);
    tracked_ = std::move(o.tracked_);
    o.path_.clear();
  }
  return *this;
}

TempDir::~TempDir() {
  remove();
}

void TempDir::remove() {
  if (!path_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
    path_.clear();
  }
  if (tracked_) {
    untrack_in(g_tracked_dirs, static_cast<const char*>(tracked_.get()), static_cast<const char*>(nullptr));
    tracked_.reset();
  }
}

int remove_stale_temporaries(const std::string& path) {
  const std::filesystem::path target(path);
  const std::string prefix = target.filename().string() + ".tmp-";
  const std::string dir = target.has_parent_path() ? target.parent_path().string() : ".";
  DIR* listing = ::opendir(dir.c_str());
  if (!listing) return 0;
  int removed = 0;
  while (const dirent* entry = ::readdir(listing)) {
    const std::string_view name(entry->d_name);
    if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) continue;
    const std::string_view digits = name.substr(prefix.size());
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string_view::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::strtol(std::string(digits).c_str(), nullptr, 10));
    // Only a process that is certainly gone: a live one (ours, another run's,
    // or an unrelated process that reused the number) keeps its file.
    if (pid <= 0 || pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    const std::string stale = dir + "/" + std::string(name);
    struct stat st {};
    if (::lstat(stale.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::unlink(stale.c_str()) == 0) ++removed;
  }
  ::closedir(listing);
  return removed;
}

Result<AtomicOutputFile> AtomicOutputFile::create(const std::string& path) {
  remove_stale_temporaries(path);
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

Result<AtomicOutputFile> AtomicOutputFile::open_resumable(const std::string& path, const std::string& partial,
                                                          uint64_t resume_bytes) {
  AtomicOutputFile f;
  f.path_ = path;
  f.keep_ = true;
  const int flags = O_WRONLY | O_CLOEXEC | (resume_bytes == 0 ? O_CREAT | O_TRUNC : 0);
  const int fd = ::open(partial.c_str(), flags, 0644);
  if (fd < 0) {
    return errno == ENOENT ? not_found(os_error("the partial output to resume is missing", partial))
                           : io_error(os_error("cannot open the partial output", partial));
  }
  struct stat st {};
  Status s;
  if (::fstat(fd, &st) != 0) {
    s = io_error(os_error("cannot stat", partial));
  } else if (static_cast<uint64_t>(st.st_size) < resume_bytes) {
    s = corruption(partial + ": the partial output holds " + std::to_string(st.st_size) +
                   " bytes, fewer than the " + std::to_string(resume_bytes) +
                   " the checkpoint says were written");
  } else if (::ftruncate(fd, static_cast<off_t>(resume_bytes)) != 0 ||
             ::lseek(fd, static_cast<off_t>(resume_bytes), SEEK_SET) < 0) {
    s = io_error(os_error("cannot cut the partial output to its checkpoint", partial));
  }
  if (s.ok()) {
    f.file_ = ::fdopen(fd, "wb");
    if (!f.file_) s = io_error(os_error("cannot open the partial output", partial));
  }
  if (!s.ok()) {
    ::close(fd);
    return s;
  }
  f.bytes_ = resume_bytes;
  f.tmp_path_ = std::make_unique<char[]>(partial.size() + 1);
  std::memcpy(f.tmp_path_.get(), partial.c_str(), partial.size() + 1);
  static constexpr size_t kBufferBytes = 1 << 20;
  std::setvbuf(f.file_, nullptr, _IOFBF, kBufferBytes);
  return f;
}

AtomicOutputFile::AtomicOutputFile(AtomicOutputFile&& o) noexcept
    : file_(std::exchange(o.file_, nullptr)),
      path_(std::move(o.path_)),
      bytes_(std::exchange(o.bytes_, 0)),
      keep_(std::exchange(o.keep_, false)),
      tmp_path_(std::move(o.tmp_path_)) {}

AtomicOutputFile& AtomicOutputFile::operator=(AtomicOutputFile&& o) noexcept {
  if (this != &o) {
    abandon();
    file_ = std::exchange(o.file_, nullptr);
    path_ = std::move(o.path_);
    bytes_ = std::exchange(o.bytes_, 0);
    keep_ = std::exchange(o.keep_, false);
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
  bytes_ += bytes.size();
  return Status();
}

Status AtomicOutputFile::flush() {
  if (!file_) return internal_error(path_ + ": flush after commit or abandon");
  if (std::fflush(file_) != 0) return io_error(os_error("write failed", path_));
  return Status();
}

Status AtomicOutputFile::sync() {
  if (!file_) return internal_error(path_ + ": sync after commit or abandon");
  if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0)
    return io_error(os_error("write failed", path_));
  return Status();
}

Status AtomicOutputFile::commit() {
  if (!file_) return internal_error(path_ + ": commit after commit or abandon");
  bool ok = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  ok = (std::fclose(file_) == 0) && ok;
  file_ = nullptr;
  if (keep_) test_point("output-rename");
  Status s;
  if (!ok) {
    s = io_error(os_error("write failed", path_));
  } else if (std::rename(tmp_path_.get(), path_.c_str()) != 0) {
    s = io_error(os_error("cannot rename temporary output into place", path_));
  } else {
    sync_parent_folder(path_);
  }
  if (!s.ok() && !keep_) ::unlink(tmp_path_.get());
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
    if (!keep_) ::unlink(tmp_path_.get());
    untrack(tmp_path_.get());
    tmp_path_.reset();
  }
}

void AtomicOutputFile::discard() {
  keep_ = false;
  abandon();
}

void sync_parent_folder(const std::string& path) {
  const std::filesystem::path p(path);
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

bool path_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace infercost
