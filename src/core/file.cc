#include "core/file.h"

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
  Mapping mapping;
  mapping.size = static_cast<size_t>(st.st_size);
  if (mapping.size > 0) {
    void* p = ::mmap(nullptr, mapping.size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      Status s = io_error(os_error("mmap failed", path));
      ::close(fd);
      return s;
    }
    mapping.data = static_cast<const unsigned char*>(p);
  }
  ::close(fd);  // the mapping keeps the file alive
  m.map_ = Owned<Mapping>(mapping);
  return m;
}

void MappedFile::Mapping::release() {
  ::munmap(const_cast<unsigned char*>(data), size);
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
  Folder folder;
  folder.path = tmpl;
  folder.tracked = std::make_unique<char[]>(tmpl.size() + 1);
  std::memcpy(folder.tracked.get(), tmpl.c_str(), tmpl.size() + 1);
  track_in(g_tracked_dirs, static_cast<const char*>(folder.tracked.get()), static_cast<const char*>(nullptr));
  TempDir d;
  d.folder_ = Owned<Folder>(std::move(folder));
  return d;
}

void TempDir::Folder::release() {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  untrack_in(g_tracked_dirs, static_cast<const char*>(tracked.get()), static_cast<const char*>(nullptr));
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

namespace {

// The descriptor a path names by itself (/dev/stdout, /dev/stderr,
// /dev/fd/N, /proc/self/fd/N, /proc/<this pid>/fd/N), else -1. Such paths
// are links the kernel makes up: their targets ("pipe:[123]") are not paths.
int descriptor_named(std::string_view path) {
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  const std::string own = "/proc/" + std::to_string(::getpid()) + "/fd/";
  std::string_view digits;
  for (std::string_view prefix : {std::string_view("/dev/fd/"), std::string_view("/proc/self/fd/"),
                                  std::string_view(own), std::string_view("/proc/thread-self/fd/")}) {
    if (path.size() > prefix.size() && path.substr(0, prefix.size()) == prefix) {
      digits = path.substr(prefix.size());
      break;
    }
  }
  if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string_view::npos)
    return -1;
  return static_cast<int>(std::strtol(std::string(digits).c_str(), nullptr, 10));
}

std::string folder_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

Result<OutputTarget> resolve_output_target(const std::string& path) {
  if (path.empty()) return invalid_argument("an empty output path");
  OutputTarget target;
  std::string at = path;
  for (int hops = 0;; ++hops) {
    if (const int fd = descriptor_named(at); fd >= 0) {
      struct stat st {};
      if (::fstat(fd, &st) != 0) {
        return invalid_argument(path + ": file descriptor " + std::to_string(fd) + " is not open");
      }
      if (S_ISDIR(st.st_mode)) {
        return invalid_argument(path + ": file descriptor " + std::to_string(fd) + " is a folder");
      }
      target.kind = OutputTarget::Kind::kStream;
      target.path = at;
      target.descriptor = fd;
      target.what = "file descriptor " + std::to_string(fd);
      return target;
    }
    struct stat link {};
    if (::lstat(at.c_str(), &link) != 0) {
      if (errno != ENOENT) return io_error(os_error("cannot stat", at));
      target.path = at;  // nothing there yet: a new file
      return target;
    }
    if (!S_ISLNK(link.st_mode)) break;
    if (hops == 40) return invalid_argument(path + ": too many levels of symbolic links");
    std::string to(static_cast<size_t>(link.st_size > 0 ? link.st_size : 255) + 1, '\0');
    const ssize_t n = ::readlink(at.c_str(), to.data(), to.size());
    if (n < 0) return io_error(os_error("cannot read the symbolic link", at));
    to.resize(static_cast<size_t>(n));
    at = !to.empty() && to[0] == '/' ? to : folder_of(at) + "/" + to;
  }
  struct stat st {};
  if (::stat(at.c_str(), &st) != 0) return io_error(os_error("cannot stat", at));
  target.path = at;
  const std::string named = at == path ? path : path + " (a link to " + at + ")";
  if (S_ISREG(st.st_mode)) {
    if ((st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0 || ::access(at.c_str(), W_OK) != 0) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
      return invalid_argument(named + ": the file is read-only (mode " + mode +
                              "); infercost does not replace a protected file: make it writable or name "
                              "another output");
    }
    return target;
  }
  if (S_ISDIR(st.st_mode)) return invalid_argument(named + ": is a folder, not a file");
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
    target.kind = OutputTarget::Kind::kStream;
    target.what = S_ISCHR(st.st_mode) ? "a character device" : "a FIFO";
    return target;
  }
  return invalid_argument(named + ": is " + (S_ISBLK(st.st_mode) ? "a block device" : "a socket") +
                          "; infercost writes outputs to files, character devices and FIFOs");
}

Result<AtomicOutputFile> AtomicOutputFile::create(const std::string& path) {
  INFERCOST_ASSIGN_OR_RETURN(OutputTarget target, resolve_output_target(path));
  AtomicOutputFile f;
  f.path_ = target.path;
  static constexpr size_t kBufferBytes = 1 << 20;
  if (target.kind == OutputTarget::Kind::kStream) {
    // Opening a FIFO waits for its reader, as any writer of one does.
    const int fd = target.descriptor >= 0 ? ::fcntl(target.descriptor, F_DUPFD_CLOEXEC, 0)
                                          : ::open(target.path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return io_error(os_error("cannot open the output", path));
    f.file_ = ::fdopen(fd, "wb");
    if (!f.file_) {
      ::close(fd);
      return io_error(os_error("cannot open the output", path));
    }
    f.path_ = path;
    f.stream_ = true;
    std::setvbuf(f.file_, nullptr, _IOFBF, kBufferBytes);
    return f;
  }
  remove_stale_temporaries(target.path);
  const std::string tmp = target.path + ".tmp-" + std::to_string(::getpid());
  f.tmp_path_ = std::make_unique<char[]>(tmp.size() + 1);
  std::memcpy(f.tmp_path_.get(), tmp.c_str(), tmp.size() + 1);
  f.file_ = std::fopen(f.tmp_path_.get(), "wb");
  if (!f.file_) {
    f.tmp_path_.reset();
    return io_error(os_error("cannot create output file", path));
  }
  track(f.tmp_path_.get());
  // The file it replaces keeps its permissions.
  struct stat old {};
  if (::stat(target.path.c_str(), &old) == 0 && S_ISREG(old.st_mode)) {
    ::fchmod(::fileno(f.file_), old.st_mode & 07777);
  }
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
      stream_(std::exchange(o.stream_, false)),
      tmp_path_(std::move(o.tmp_path_)) {}

AtomicOutputFile& AtomicOutputFile::operator=(AtomicOutputFile&& o) noexcept {
  if (this != &o) {
    abandon();
    file_ = std::exchange(o.file_, nullptr);
    path_ = std::move(o.path_);
    bytes_ = std::exchange(o.bytes_, 0);
    keep_ = std::exchange(o.keep_, false);
    stream_ = std::exchange(o.stream_, false);
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
  if (std::fflush(file_) != 0 || (!stream_ && ::fsync(::fileno(file_)) != 0))
    return io_error(os_error("write failed", path_));
  return Status();
}

Status AtomicOutputFile::commit() {
  if (!file_) return internal_error(path_ + ": commit after commit or abandon");
  if (stream_) {  // in place: flushed, nothing to rename
    const bool flushed = std::fflush(file_) == 0;
    const bool closed = std::fclose(file_) == 0;
    file_ = nullptr;
    return flushed && closed ? Status() : io_error(os_error("write failed", path_));
  }
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
