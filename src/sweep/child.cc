#include "infercost/sweep/child.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace infercost::sweep {

namespace {

constexpr std::string_view kErrorPrefix = "infercost: error: ";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
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

Result<ChildOutcome> run_child(const ChildRun& run) {
  if (run.argv.empty()) return invalid_argument("run_child: empty argv");
  // Everything the child needs is prepared before fork: after it, only
  // async-signal-safe calls.
  std::vector<char*> argv;
  for (const std::string& a : run.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const int err_fd = ::open(run.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (err_fd < 0)
    return io_error(fmt::format("{}: cannot create: {}", run.stderr_path, std::strerror(errno)));
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) {
    ::close(err_fd);
    return io_error(fmt::format("/dev/null: cannot open: {}", std::strerror(errno)));
  }
  const std::string exec_failed = fmt::format("{}cannot run {}: ", kErrorPrefix, run.executable);
  const pid_t parent = ::getpid();
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(err_fd);
    ::close(null_fd);
    return io_error(fmt::format("cannot start a benchmark run: fork: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    // The run dies with the bench (no orphan burning CPU after Ctrl-C or a kill).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(null_fd, STDIN_FILENO);
    ::dup2(null_fd, STDOUT_FILENO);
    ::dup2(err_fd, STDERR_FILENO);
    ::execv(run.executable.c_str(), argv.data());
    const char* why = ::strerror(errno);
    (void)!::write(STDERR_FILENO, exec_failed.data(), exec_failed.size());
    (void)!::write(STDERR_FILENO, why, std::strlen(why));
    (void)!::write(STDERR_FILENO, "\n", 1);
    ::_exit(127);
  }
  ::close(err_fd);
  ::close(null_fd);
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  std::optional<ProcessSampler> sampler;
  if (run.monitor != nullptr) sampler.emplace(pid, run.nvml, run.monitor);
  ChildOutcome out;
  int status = 0;
  struct rusage usage {};
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  while (true) {
    const pid_t done = ::wait4(pid, &status, WNOHANG, &usage);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      if (pidfd >= 0) ::close(pidfd);
      return io_error(fmt::format("waiting for benchmark run {}: {}", pid, std::strerror(errno)));
    }
    if (run.timeout_seconds > 0 && elapsed() >= run.timeout_seconds && !out.timed_out) {
      out.timed_out = true;
      ::kill(pid, SIGKILL);
    }
    if (sampler && !out.timed_out) sampler->sample();
    if (run.tick) run.tick();
    double wait = run.monitor_interval;
    if (run.timeout_seconds > 0 && !out.timed_out) wait = std::min(wait, run.timeout_seconds - elapsed());
    wait_for(pidfd, std::max(wait, 0.001));
  }
  out.seconds = elapsed();
  if (pidfd >= 0) ::close(pidfd);
  out.peak_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
  if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
  if (out.timed_out || out.signal != 0 || out.exit_code != 0) {
    out.error = failure_reason(read_text(run.stderr_path), out.exit_code, out.signal, out.timed_out,
                               run.timeout_seconds);
  }
  return out;
}

}  // namespace infercost::sweep
