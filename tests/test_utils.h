// Helpers shared by the test suites.
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace infercost::testing {

// A fresh folder under $TMPDIR, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "infercost-test-XXXXXX").string();
    char* made = ::mkdtemp(tmpl.data());
    if (!made) std::abort();
    path_ = made;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  // Writes `content` to `name`, creating its parent folders.
  std::string write(const std::string& name, const std::string& content) const {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(file(name)).parent_path(), ec);
    std::ofstream(file(name), std::ios::binary) << content;
    return file(name);
  }

 private:
  std::string path_;
};

// The test's side of INFERCOST_TEST_HOLD_AT (src/core/test_point.h):
// a FIFO in `dir`, opened for reading at once (without waiting for a writer)
// and kept open. Pass env() to the process; poll fd() for POLLIN, then
// take_point() gives the point where a thread of it is held ("" while a
// whole line has not come); release() lets the last one taken go on.
class HoldFifo {
 public:
  HoldFifo(const TempDir& dir, std::string points)
      : path_(dir.file("hold.fifo")), points_(std::move(points)) {
    if (::mkfifo(path_.c_str(), 0600) != 0) std::abort();
    fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    // A writer of its own, so that the FIFO never reads as closed (POLLHUP)
    // between the held threads' lines.
    keep_ = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  }
  ~HoldFifo() {
    if (fd_ >= 0) ::close(fd_);
    if (keep_ >= 0) ::close(keep_);
  }
  HoldFifo(const HoldFifo&) = delete;
  HoldFifo& operator=(const HoldFifo&) = delete;
  std::vector<std::string> env() const {
    return {"INFERCOST_TEST_HOLD_AT=" + points_, "INFERCOST_TEST_HOLD_FIFO=" + path_};
  }
  int fd() const { return fd_; }
  std::string take_point() {
    char c;
    while (::read(fd_, &c, 1) == 1) {
      if (c == '\n') {
        taken_.swap(pending_);
        pending_.clear();
        return taken_;
      }
      pending_ += c;
    }
    return "";
  }
  // Lets the thread of `pid` held at the last point taken go on: it waits,
  // reading its own FIFO, for a writer to come and go (or has died, which
  // waitid is asked about without reaping it).
  void release(pid_t pid) {
    const std::string go = path_ + "." + taken_;
    for (;;) {
      const int w = ::open(go.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (w >= 0) {
        ::close(w);
        return;
      }
      siginfo_t info{};
      if ((errno != ENXIO && errno != ENOENT) ||
          ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
          info.si_pid == pid) {
        return;
      }
      std::this_thread::yield();
    }
  }

 private:
  std::string path_, points_;
  int fd_ = -1, keep_ = -1;
  std::string pending_, taken_;
};

// The test's reader of a FIFO that code under test writes: the FIFO opened
// for reading at once (so the writer's open never waits) with a writer of
// the reader's own (so reading never ends before the writer has come and
// gone), read by a thread. finish() drops the own writer and returns all the
// bytes read: a writer that replaced the FIFO with a file leaves nothing
// read, never a hang.
class FifoReader {
 public:
  explicit FifoReader(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) std::abort();
    keep_ = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (keep_ < 0 || ::fcntl(fd_, F_SETFL, 0) != 0) std::abort();  // reads block from here on
    thread_ = std::thread([this] {
      char buf[4096];
      ssize_t n;
      while ((n = ::read(fd_, buf, sizeof buf)) > 0) got_.append(buf, static_cast<size_t>(n));
    });
  }
  ~FifoReader() { finish(); }
  FifoReader(const FifoReader&) = delete;
  FifoReader& operator=(const FifoReader&) = delete;
  std::string finish() {
    if (keep_ >= 0) {
      ::close(keep_);
      keep_ = -1;
    }
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
    return got_;
  }

 private:
  int fd_ = -1, keep_ = -1;
  std::thread thread_;
  std::string got_;
};

// One TempDir for the whole test process, made on first use and removed when
// the process exits (each test runs in its own process under ctest).
inline const TempDir& process_temp_dir() {
  static const TempDir dir;
  return dir;
}

// A fresh, empty folder `name` inside the process's TempDir.
inline std::string scratch_dir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(process_temp_dir().path()) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// A string's bytes, as the byte-oriented APIs take them.
inline const uint8_t* bytes_of(const std::string& s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A gtest-safe parameter name: "tiny-bert" -> "tiny_bert".
struct DashesToUnderscores {
  template <typename Info>
  std::string operator()(const Info& info) const {
    std::string s = info.param;
    for (char& c : s) {
      if (c == '-') c = '_';
    }
    return s;
  }
};

// Number of entries in a folder (to check that no temporary was left behind).
inline int count_entries(const std::string& dir) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

// What a shell command printed (stdout and stderr together) and its exit
// status (-1 when it was killed by a signal or could not start).
struct CommandOutcome {
  int exit_code = -1;
  std::string output;
};

inline CommandOutcome run_shell(const std::string& command) {
  CommandOutcome o;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return o;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) o.output.append(buf, n);
  const int status = ::pclose(pipe);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

#ifdef INFERCOST_BINARY_DIR
// Runs the built `infercost` binary with `args` (a shell-quoted string).
inline CommandOutcome run_infercost(const std::string& args) {
  // Appended, not `std::string(...) + "..."`: GCC 12 warns falsely
  // (-Warray-bounds) on that temporary at -O1.
  std::string command = INFERCOST_BINARY_DIR;
  command += "/infercost ";
  command += args;
  return run_shell(command);
}
#endif

}  // namespace infercost::testing
