#include "bench/child.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

#include "core/file.h"
#include "engine/run_metrics.h"

namespace infercost::bench {

namespace {

constexpr std::string_view kErrorPrefix = "infercost: error: ";

std::string read_text(const std::string& path) {
  Result<std::string> text = read_file(path);
  return text.ok() ? std::move(*text) : std::string();
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Kills a child on an error path and reaps it.
void kill_and_reap(pid_t pid) {
  ::kill(pid, SIGKILL);
  while (wait_child_process(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

// Waits until the child exits or `seconds` pass. With a pidfd (Linux 5.3+)
// it wakes as the child exits; otherwise it sleeps.
void wait_for(int pidfd, double seconds) {
  if (seconds <= 0) return;
  if (pidfd >= 0) {
    struct pollfd p {
      pidfd, POLLIN, 0
    };
    ::poll(&p, 1, static_cast<int>(seconds * 1000 + 0.5));
    return;
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

}  // namespace

std::string failure_reason(const std::string& stderr_text, int exit_code, int signal, bool timed_out,
                           double timeout_seconds) {
  if (timed_out)
    return fmt::format("timed out after {:g} s (--timeout-seconds); the run was killed", timeout_seconds);
  std::string last_error, last_line;
  std::istringstream in(stderr_text);
  std::string line;
  while (std::getline(in, line)) {
    // A progress line ends with '\r' rewrites; keep the text after the last.
    if (const size_t cr = line.rfind('\r'); cr != std::string::npos) line = line.substr(cr + 1);
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    last_line = line;
    if (line.rfind(kErrorPrefix, 0) == 0) last_error = line.substr(kErrorPrefix.size());
  }
  if (signal != 0) {
    std::string reason = fmt::format("killed by signal {} ({})", signal, ::strsignal(signal));
    if (signal == SIGKILL) reason += "; out of memory? the kernel's OOM killer sends SIGKILL";
    if (!last_line.empty()) reason += "; its last words: " + last_line;
    return reason;
  }
  if (!last_error.empty()) return last_error;
  std::string reason = fmt::format("exited with status {}", exit_code);
  if (!last_line.empty()) reason += ": " + last_line;
  return reason;
}

namespace {

// What the close-on-exec pipe of a fork says: the child's errno where its
// exec failed, nothing where it succeeded (end of file, the pipe closed by
// the exec).
Result<std::optional<int>> exec_status(int fd) {
  int exec_errno = 0;
  size_t got = 0;
  while (got < sizeof exec_errno) {
    const ssize_t n = ::read(fd, reinterpret_cast<char*>(&exec_errno) + got, sizeof exec_errno - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return io_error(
          fmt::format("cannot start a benchmark run: reading its exec status: {}", std::strerror(errno)));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got == sizeof exec_errno) return std::optional<int>(exec_errno);
  return std::optional<int>();
}

// The run's end from its wait status: exit code or signal, and why it failed.
void set_exit(const ChildRun& run, int status, ChildOutcome& out) {
  if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
  if (out.timed_out || out.signal != 0 || out.exit_code != 0) {
    out.error = failure_reason(read_text(run.stderr_path), out.exit_code, out.signal, out.timed_out,
                               run.timeout_seconds);
  }
}

// Waits for the run `pid` to end: samples it every run.monitor_interval
// (its peak RSS into `out`), kills it at run.timeout_seconds; its wait status
// into `status`, its wall time since `start` into `out`.
Status watch_run(const ChildRun& run, pid_t pid, std::chrono::steady_clock::time_point start,
                 ChildOutcome& out, int& status) {
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  // From here on /proc/<pid> is the program run, not the parent's forked copy.
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  ProcessSampler sampler(pid, run.monitor, run.nvml, run.nvml != nullptr ? run.gpus : std::vector<int>{});
  while (true) {
    const pid_t done = wait_child_process(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      const int error = errno;
      if (pidfd >= 0) ::close(pidfd);
      kill_and_reap(pid);
      return io_error(fmt::format("waiting for benchmark run {}: {}", pid, std::strerror(error)));
    }
    if (run.timeout_seconds > 0 && elapsed() >= run.timeout_seconds && !out.timed_out) {
      out.timed_out = true;
      ::kill(pid, SIGKILL);
    }
    if (!out.timed_out) sampler.sample();
    if (run.tick) run.tick();
    double wait = run.monitor_interval;
    if (run.timeout_seconds > 0 && !out.timed_out) wait = std::min(wait, run.timeout_seconds - elapsed());
    wait_for(pidfd, std::max(wait, 0.001));
  }
  out.seconds = elapsed();
  if (pidfd >= 0) ::close(pidfd);
  out.peak_rss_bytes = sampler.peak_rss_bytes();
  return Status();
}

}  // namespace

Result<ChildOutcome> run_child(const ChildRun& run) {
  if (run.argv.empty()) return invalid_argument("run_child: empty argv");
  // Everything the child needs is prepared before fork: after it, only
  // async-signal-safe calls.
  std::vector<char*> argv;
  for (const std::string& a : run.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int err_fd = ::open(run.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (err_fd < 0)
    return io_error(fmt::format("{}: cannot create: {}", run.stderr_path, std::strerror(errno)));
  int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) {
    close_fd(err_fd);
    return io_error(fmt::format("/dev/null: cannot open: {}", std::strerror(errno)));
  }
  // Close-on-exec: end of file when the exec succeeded; the child's errno
  // (an int) when it failed.
  int exec_pipe[2] = {-1, -1};
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    close_fd(err_fd);
    close_fd(null_fd);
    return io_error(fmt::format("cannot start a benchmark run: pipe: {}", std::strerror(errno)));
  }
  const pid_t parent = ::getpid();
  // Signals wait until the child is tracked (core/file.h), and the child
  // drops the parent's handlers before it takes any.
  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, &old);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::signal(sig, SIG_DFL);
    // The run ends with the bench (no orphan burning CPU after a kill): SIGTERM,
    // so that it removes its partial outputs.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    ::dup2(null_fd, STDIN_FILENO);
    ::dup2(null_fd, STDOUT_FILENO);
    ::dup2(err_fd, STDERR_FILENO);
    ::execv(run.executable.c_str(), argv.data());
    const int error = errno;
    (void)!::write(exec_pipe[1], &error, sizeof error);
    ::_exit(127);
  }
  const int fork_errno = errno;
  if (pid > 0) track_child_process(pid);
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  close_fd(err_fd);
  close_fd(null_fd);
  close_fd(exec_pipe[1]);
  if (pid < 0) {
    close_fd(exec_pipe[0]);
    return io_error(fmt::format("cannot start a benchmark run: fork: {}", std::strerror(fork_errno)));
  }
  Result<std::optional<int>> exec_errno = exec_status(exec_pipe[0]);
  close_fd(exec_pipe[0]);
  if (!exec_errno.ok()) {
    kill_and_reap(pid);
    return exec_errno.status();
  }
  ChildOutcome out;
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  int status = 0;
  if (*exec_errno) {
    // The exec failed: the child exits 127 without running anything.
    while (wait_child_process(pid, &status, 0) < 0 && errno == EINTR) {
    }
    out.seconds = elapsed();
    out.exit_code = 127;
    out.error = fmt::format("cannot run {}: {}", run.executable, std::strerror(**exec_errno));
    return out;
  }
  INFERCOST_RETURN_IF_ERROR(watch_run(run, pid, start, out, status));
  set_exit(run, status, out);
  return out;
}

}  // namespace infercost::bench
