// The parent's view of a run: /proc parsing, sampling, NVML's absence and
// child processes (their failures, timeouts and signals).
#include "bench/monitor.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "backend/gpu_monitor.h"
#include "bench/child.h"
#include "bench/environment.h"
#include "bench/nvml.h"
#include "core/file.h"
#include "engine/run_metrics.h"
#include "test_utils.h"

namespace infercost::bench {
namespace {

using testing::TempDir;

TEST(ProcStat, SumsUserAndSystemTicks) {
  // Fields 14 (utime) and 15 (stime) are 1234 and 56.
  const std::string line =
      "4242 (infercost) R 1 4242 4242 0 -1 4194304 1000 0 0 0 1234 56 0 0 20 0 9 0 100 123456789 2048 "
      "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
  Result<int64_t> ticks = parse_proc_stat_cpu_ticks(line);
  ASSERT_TRUE(ticks.ok()) << ticks.status().to_string();
  EXPECT_EQ(*ticks, 1234 + 56);
  // A command name with spaces and parentheses: only the last ')' ends it.
  const std::string odd = "77 (my (odd) name) S 1 77 77 0 -1 0 0 0 0 0 10 20 0 0 20 0 1 0 5 0 0";
  ASSERT_TRUE(parse_proc_stat_cpu_ticks(odd).ok());
  EXPECT_EQ(*parse_proc_stat_cpu_ticks(odd), 30);
}

TEST(ProcStat, RefusesMalformedLines) {
  EXPECT_FALSE(parse_proc_stat_cpu_ticks("").ok());
  EXPECT_FALSE(parse_proc_stat_cpu_ticks("12 infercost R 1 2 3").ok());
  EXPECT_FALSE(parse_proc_stat_cpu_ticks("12 (x) R 1 2 3 4 5 6 7 8 9").ok());  // too short
  Result<int64_t> bad = parse_proc_stat_cpu_ticks("12 (x) R 1 2 3 4 5 6 7 8 9 10 abc 5 0");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("field 14"), std::string::npos) << bad.status().message();
}

TEST(ProcStatus, ReadsVmRss) {
  const std::string status = "Name:\tinfercost\nVmPeak:\t  900000 kB\nVmRSS:\t  123456 kB\nThreads:\t9\n";
  Result<int64_t> rss = parse_vm_rss_bytes(status);
  ASSERT_TRUE(rss.ok()) << rss.status().to_string();
  EXPECT_EQ(*rss, int64_t{123456} * 1024);
  // A zombie's status has no VmRSS.
  EXPECT_EQ(parse_vm_rss_bytes("Name:\tx\nState:\tZ (zombie)\n").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(parse_vm_rss_bytes("VmRSS:\t12 MB\n").status().code(), StatusCode::kCorruption);
}

TEST(Monitor, SummarizesSamples) {
  MonitorAccumulator m(0.1);
  m.add_cpu(1.0);
  m.add_cpu(2.0);
  m.add_rss(100);
  m.add_rss(300);
  m.add_gpus({{0, 1000, 200, 0.5}, {1, 1000, 0, 0.0}});
  m.add_gpus({{0, 1000, 400, 1.0}, {1, 1000, 100, 0.2}});
  record::Monitor s = m.summary();
  EXPECT_DOUBLE_EQ(s.interval_seconds, 0.1);
  EXPECT_DOUBLE_EQ(s.cpu_busy_mean, 1.5);
  EXPECT_DOUBLE_EQ(s.cpu_busy_peak, 2.0);
  EXPECT_DOUBLE_EQ(s.rss_mean_bytes, 200);
  EXPECT_EQ(s.rss_peak_bytes, 300);
  ASSERT_EQ(s.gpus.size(), 2u);
  EXPECT_EQ(s.gpus[0].memory_total_bytes, 1000);
  EXPECT_EQ(s.gpus[0].memory_used_peak_bytes, 400);
  EXPECT_DOUBLE_EQ(s.gpus[0].memory_used_mean_bytes, 300);
  EXPECT_DOUBLE_EQ(s.gpus[0].utilization_mean, 0.75);
  EXPECT_DOUBLE_EQ(s.gpus[1].utilization_peak, 0.2);
}

double cpu_seconds() {
  struct timespec t {};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

TEST(Monitor, SamplesABusyProcess) {
  // A child that uses 0.5 s of CPU time and then stops itself (SIGSTOP):
  // stopped, its counters no longer move. The sampler's clock is a fake one
  // that this test moves, so a sample's CPU busy is the child's CPU time over
  // the fake seconds since the last sample, whatever else runs on the machine.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    volatile double sink = 0;
    while (cpu_seconds() < 0.5) {
      for (int i = 0; i < 100000; ++i) sink = sink + i * 0.5;
    }
    ::raise(SIGSTOP);
    ::_exit(0);
  }
  auto now = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  MonitorAccumulator m(0.05);
  ProcessSampler sampler(child, &m, nullptr, {}, [&now] { return now; });
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, WUNTRACED), child);
  ASSERT_TRUE(WIFSTOPPED(status)) << "status " << status;
  // Its CPU time as /proc says it, in clock ticks.
  const double ticks_per_second = static_cast<double>(::sysconf(_SC_CLK_TCK));
  Result<std::string> stat = read_file("/proc/" + std::to_string(child) + "/stat");
  ASSERT_TRUE(stat.ok()) << stat.status().to_string();
  Result<int64_t> ticks = parse_proc_stat_cpu_ticks(*stat);
  ASSERT_TRUE(ticks.ok()) << ticks.status().to_string();
  const double cpu = static_cast<double>(*ticks) / ticks_per_second;
  // utime and stime are each rounded down to a tick.
  EXPECT_GT(cpu, 0.5 - 2.0 / ticks_per_second);
  now += std::chrono::seconds(2);
  EXPECT_TRUE(sampler.sample());  // the 0.5 s of CPU over 2 s: a quarter of a CPU busy
  now += std::chrono::seconds(1);
  EXPECT_TRUE(sampler.sample());  // stopped: none
  // Reaped, the child's CPU time as the kernel accounts it to its parent.
  ::kill(child, SIGKILL);
  struct rusage usage {};
  ASSERT_EQ(::wait4(child, &status, 0, &usage), child);
  const double used = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                      static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
  EXPECT_GT(used, 0.5 - 2e-6);  // each rounded down to a microsecond
  // The ticks' rounding, and the few microseconds the killed child took to exit.
  EXPECT_NEAR(cpu, used, 3.0 / ticks_per_second);
  record::Monitor s = m.summary();
  EXPECT_EQ(s.samples, 2);
  EXPECT_DOUBLE_EQ(s.cpu_busy_peak, cpu / 2);
  EXPECT_DOUBLE_EQ(s.cpu_busy_mean, cpu / 4);
  EXPECT_GT(s.rss_peak_bytes, 0);
  EXPECT_GT(s.rss_mean_bytes, 0);
  EXPECT_GT(sampler.peak_rss_bytes(), 0);
  EXPECT_TRUE(s.gpus.empty());
  // A process that does not exist cannot be sampled.
  MonitorAccumulator none(0.1);
  ProcessSampler gone(999999999, &none);
  EXPECT_FALSE(gone.sample());
  EXPECT_EQ(none.summary().samples, 0);
  EXPECT_EQ(gone.peak_rss_bytes(), 0);
}

TEST(ProcStatus, ReadsAnyKibField) {
  const std::string status = "Name:\tx\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n";
  EXPECT_EQ(*parse_status_bytes(status, "VmHWM"), 2048 * 1024);
  EXPECT_EQ(*parse_status_bytes(status, "VmRSS"), 1024 * 1024);
  // "VmRSS" is not "VmRSSx", nor is "VmHW" a prefix match.
  EXPECT_EQ(parse_status_bytes(status, "VmHW").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(parse_status_bytes("VmRSSx:\t1 kB\n", "VmRSS").status().code(), StatusCode::kNotFound);
}

// The GPUs a device as written samples: none where it is not a device.
std::vector<int> gpus_of(std::string_view device, int gpu_count, const char* cuda_visible_devices) {
  Result<DeviceSpec> spec = parse_device(device);
  return spec.ok() ? device_gpu_indices(*spec, gpu_count, cuda_visible_devices) : std::vector<int>{};
}

TEST(Gpus, ADeviceSamplesItsOwnGpusOnly) {
  EXPECT_TRUE(gpus_of("cpu", 4, nullptr).empty());
  EXPECT_EQ(gpus_of("cuda", 4, nullptr), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(gpus_of("cuda:all", 2, nullptr), (std::vector<int>{0, 1}));
  EXPECT_EQ(gpus_of("cuda:1", 4, nullptr), (std::vector<int>{1}));
  EXPECT_EQ(gpus_of("cuda:0", 1, nullptr), (std::vector<int>{0}));
  EXPECT_TRUE(gpus_of("cuda:4", 4, nullptr).empty());  // no such GPU
  EXPECT_TRUE(gpus_of("cuda", 0, nullptr).empty());
  EXPECT_EQ(gpus_of("cuda:2,0", 4, nullptr), (std::vector<int>{2, 0}));
  EXPECT_EQ(gpus_of("cuda:1,7", 4, nullptr), (std::vector<int>{1}));  // 7: no such GPU
  EXPECT_TRUE(gpus_of("cuda:1,1", 4, nullptr).empty());               // not a valid device
}

TEST(Gpus, CudaVisibleDevicesRenumbersTheOrdinals) {
  // CUDA sees NVML's GPUs 2 and 3 as cuda:0 and cuda:1.
  EXPECT_EQ(gpus_of("cuda", 4, "2,3"), (std::vector<int>{2, 3}));
  EXPECT_EQ(gpus_of("cuda:all", 4, " 3 , 1 "), (std::vector<int>{3, 1}));
  EXPECT_EQ(gpus_of("cuda:1", 4, "2,3"), (std::vector<int>{3}));
  EXPECT_EQ(gpus_of("cuda:1,0", 4, "2,3"), (std::vector<int>{3, 2}));
  EXPECT_TRUE(gpus_of("cuda:2", 4, "2,3").empty());  // CUDA has no third GPU
  // CUDA stops at the first entry it cannot use.
  EXPECT_EQ(gpus_of("cuda", 4, "1,9,2"), (std::vector<int>{1}));
  EXPECT_EQ(gpus_of("cuda", 4, "1,x,2"), (std::vector<int>{1}));
  EXPECT_EQ(gpus_of("cuda", 4, "1,1"), (std::vector<int>{1}));
  EXPECT_TRUE(gpus_of("cuda", 4, "").empty());  // no GPU visible
  EXPECT_TRUE(gpus_of("cuda", 4, "-1").empty());
  // UUIDs cannot be matched here: the ordinals are taken to be NVML's.
  EXPECT_EQ(gpus_of("cuda:1", 4, "GPU-8f0c1e2a-0000"), (std::vector<int>{1}));
  EXPECT_TRUE(gpus_of("cpu", 4, "2,3").empty());
  // Without the third argument, the variable itself.
  const char* saved = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string saved_value = saved ? saved : "";
  ::setenv("CUDA_VISIBLE_DEVICES", "3", 1);
  EXPECT_EQ(device_gpu_indices(*parse_device("cuda:0"), 4), (std::vector<int>{3}));
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(device_gpu_indices(*parse_device("cuda:0"), 4), (std::vector<int>{0}));
  if (saved) ::setenv("CUDA_VISIBLE_DEVICES", saved_value.c_str(), 1);
}

// Only NVML's absence can be tested on a machine without an NVIDIA driver;
// the sampling path needs a GPU (checked by hand where one is present).
TEST(RunGpuSampling, ACudaRunSaysWhyItsGpusWereNotSampled) {
  // What every front door of a run reports (RunMetrics::gpu_monitor): a CUDA
  // device without NVML names why; a CPU run says nothing.
  backend::RunGpuSampling cpu(*parse_device("cpu"), "libnvidia-ml-not-here.so.1", 0.2);
  cpu.start();
  const backend::GpuSampling on_cpu = cpu.finish();
  EXPECT_TRUE(on_cpu.why_not.empty()) << on_cpu.why_not;
  EXPECT_EQ(on_cpu.samples, 0);
  EXPECT_EQ(on_cpu.interval_seconds, 0);
  backend::RunGpuSampling cuda(*parse_device("cuda:0"), "libnvidia-ml-not-here.so.1", 0.2);
  cuda.start();
  const backend::GpuSampling on_cuda = cuda.finish();
  EXPECT_EQ(on_cuda.why_not.rfind("NVML not available: ", 0), 0u) << on_cuda.why_not;
  EXPECT_TRUE(on_cuda.gpus.empty());
  EXPECT_EQ(on_cuda.samples, 0);
}

TEST(GpuUsageTotals, MeansAndPeaksPerGpu) {
  backend::GpuUsageTotals totals;
  totals.add({{1, 100, 40, 0.5}, {0, 200, 10, 0.0}});
  totals.add({{1, 100, 60, 1.0}});
  const std::vector<GpuUsage> usage = totals.summary();
  ASSERT_EQ(usage.size(), 2u);
  EXPECT_EQ(usage[0].index, 0);  // by index
  EXPECT_EQ(usage[0].memory_used_peak_bytes, 10);
  EXPECT_EQ(usage[1].memory_total_bytes, 100);
  EXPECT_EQ(usage[1].memory_used_peak_bytes, 60);
  EXPECT_DOUBLE_EQ(usage[1].memory_used_mean_bytes, 50);
  EXPECT_DOUBLE_EQ(usage[1].utilization_mean, 0.75);
  EXPECT_DOUBLE_EQ(usage[1].utilization_peak, 1.0);
}

TEST(Nvml, SaysWhyItIsNotAvailable) {
  Result<std::unique_ptr<Nvml>> missing = Nvml::load("libnvidia-ml-not-here.so.1");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(missing.status().message().rfind("NVML not available: ", 0), 0u) << missing.status().message();
  EXPECT_NE(missing.status().message().find("libnvidia-ml-not-here.so.1"), std::string::npos);
  // A library that is not NVML.
  Result<std::unique_ptr<Nvml>> wrong = Nvml::load("libc.so.6");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("NVML not available: libc.so.6 has no nvmlInit_v2"),
            std::string::npos)
      << wrong.status().message();
  Result<std::unique_ptr<Nvml>> real = Nvml::load();
  if (real.ok()) {
    EXPECT_EQ(static_cast<int>((*real)->devices().size()), (*real)->device_count());
  } else {
    EXPECT_EQ(real.status().message().rfind("NVML not available: ", 0), 0u) << real.status().message();
  }
}

// `script` run by /bin/sh as a benchmark run is; `tick` as ChildRun's.
ChildOutcome run_sh(const std::string& script, double timeout = 0, MonitorAccumulator* monitor = nullptr,
                    std::function<void()> tick = {}) {
  TempDir dir;
  ChildRun run;
  run.executable = "/bin/sh";
  run.argv = {"sh", "-c", script};
  run.stderr_path = dir.file("err.txt");
  run.timeout_seconds = timeout;
  run.monitor_interval = 0.02;
  run.monitor = monitor;
  run.tick = std::move(tick);
  Result<ChildOutcome> out = run_child(run);
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  return out.ok() ? *out : ChildOutcome{};
}

// A FIFO that a child's script waits on ("read x < path" returns once a line
// is written), and the tick that writes it: run_child calls the tick after it
// has sampled the child, so the child is sampled at least once before it goes
// on, however fast or slow the machine is.
class Gate {
 public:
  explicit Gate(const TempDir& dir) : path_(dir.file("gate")) {
    EXPECT_EQ(::mkfifo(path_.c_str(), 0600), 0) << std::strerror(errno);
    // Read and write: open at once, and the child's open for reading does not wait.
    fd_ = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
    EXPECT_GE(fd_, 0) << std::strerror(errno);
  }
  ~Gate() {
    if (fd_ >= 0) ::close(fd_);
  }
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;
  const std::string& path() const { return path_; }
  std::function<void()> tick() {
    return [this] {
      if (!opened_ && fd_ >= 0) opened_ = ::write(fd_, "go\n", 3) == 3;
    };
  }
  bool opened() const { return opened_; }

 private:
  std::string path_;
  int fd_ = -1;
  bool opened_ = false;
};

TEST(Child, ReportsSuccessAndPeakRss) {
  TempDir dir;
  Gate gate(dir);
  MonitorAccumulator monitor(0.02);
  ChildOutcome ok = run_sh("read x < " + gate.path() + "; echo done", 0, &monitor, gate.tick());
  EXPECT_TRUE(gate.opened());
  EXPECT_TRUE(ok.ok()) << ok.error;
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_GT(ok.seconds, 0);
  // The shell's own memory: a few MiB, never this test process's.
  constexpr int64_t kMiB = 1024 * 1024;
  EXPECT_GT(ok.peak_rss_bytes, 0);
  EXPECT_LT(ok.peak_rss_bytes, 64 * kMiB);
  const record::Monitor m = monitor.summary();
  EXPECT_GT(m.samples, 0);
  EXPECT_GT(m.rss_peak_bytes, 0);
  EXPECT_LE(m.rss_peak_bytes, ok.peak_rss_bytes);  // VmRSS samples never exceed VmHWM
  EXPECT_GT(m.rss_mean_bytes, 0);
  EXPECT_TRUE(m.gpus.empty());
}

// VmRSS of this process, in bytes.
int64_t own_rss_bytes() {
  Result<std::string> status = read_file("/proc/self/status");
  if (!status.ok()) return 0;
  Result<int64_t> rss = parse_vm_rss_bytes(*status);
  return rss.ok() ? *rss : 0;
}

TEST(Child, PeakRssIsTheProgramsNotTheForkedParents) {
  // A large parent: its forked copy, before the exec, holds as much.
  constexpr size_t kBytes = size_t{200} << 20;
  std::vector<char> big(kBytes);
  std::memset(big.data(), 1, big.size());
  const int64_t parent_rss = own_rss_bytes();
  ASSERT_GT(parent_rss, static_cast<int64_t>(kBytes));
  TempDir dir;
  Gate gate(dir);
  MonitorAccumulator monitor(0.02);
  ChildOutcome ok = run_sh("read x < " + gate.path(), 0, &monitor, gate.tick());
  EXPECT_TRUE(gate.opened());
  EXPECT_TRUE(ok.ok()) << ok.error;
  EXPECT_GT(ok.peak_rss_bytes, 0);
  EXPECT_LT(ok.peak_rss_bytes, parent_rss / 4) << "parent RSS " << parent_rss;
  EXPECT_GT(monitor.summary().samples, 0);
  EXPECT_LT(monitor.summary().rss_peak_bytes, parent_rss / 4);
  EXPECT_EQ(big[kBytes / 2], 1);
}

TEST(Child, TakesTheReasonFromTheErrorLine) {
  ChildOutcome failed =
      run_sh("echo 'progress' >&2; echo 'infercost: error: Unsupported: no CUDA here' >&2; exit 4");
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(failed.exit_code, 4);
  EXPECT_EQ(failed.error, "Unsupported: no CUDA here");
  ChildOutcome plain = run_sh("echo 'something broke' >&2; exit 9");
  EXPECT_EQ(plain.error, "exited with status 9: something broke");
}

TEST(Child, KillsRunsThatTimeOutAndNamesSignals) {
  // A run that never ends: it waits to read a FIFO that nobody opens. (How
  // long the kill took is not checked: a hang is ctest's timeout to catch.)
  TempDir dir;
  const std::string never = dir.file("never");
  ASSERT_EQ(::mkfifo(never.c_str(), 0600), 0) << std::strerror(errno);
  ChildOutcome slow = run_sh("read x < " + never, 0.2);
  EXPECT_TRUE(slow.timed_out);
  EXPECT_EQ(slow.signal, SIGKILL);
  EXPECT_NE(slow.error.find("timed out after 0.2 s"), std::string::npos) << slow.error;
  ChildOutcome killed = run_sh("kill -9 $$");
  EXPECT_EQ(killed.signal, 9);
  EXPECT_NE(killed.error.find("killed by signal 9"), std::string::npos) << killed.error;
  EXPECT_NE(killed.error.find("out of memory?"), std::string::npos) << killed.error;
}

TEST(Child, ReportsAnExecutableThatCannotRun) {
  TempDir dir;
  ChildRun run;
  run.executable = "/no/such/infercost";
  run.argv = {"infercost", "run"};
  run.stderr_path = dir.file("err.txt");
  Result<ChildOutcome> out = run_child(run);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->exit_code, 127);
  // The parent learns why from the child's errno (the child only writes it).
  EXPECT_EQ(out->error, "cannot run /no/such/infercost: No such file or directory");
  EXPECT_EQ(out->peak_rss_bytes, 0);
  run.executable = dir.path();  // a folder
  out = run_child(run);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->error, "cannot run " + dir.path() + ": Permission denied");
}

TEST(FailureReason, PrefersTheLastErrorLine) {
  EXPECT_EQ(failure_reason("infercost: error: a\ninfercost: error: b\n", 1, 0, false, 0), "b");
  EXPECT_EQ(failure_reason("\r10 rows\rinfercost: error: c\n", 3, 0, false, 0), "c");
  EXPECT_EQ(failure_reason("", 2, 0, false, 0), "exited with status 2");
  EXPECT_NE(failure_reason("", -1, 0, true, 30).find("timed out after 30 s"), std::string::npos);
}

TEST(Environment, ParsesMeminfoAndOsRelease) {
  EXPECT_EQ(parse_mem_total_bytes("MemTotal:       24576000 kB\nMemFree: 1 kB\n"), int64_t{24576000} * 1024);
  EXPECT_EQ(parse_mem_total_bytes("MemFree: 1 kB\n"), 0);
  EXPECT_EQ(
      parse_os_pretty_name("NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"),
      "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(parse_os_pretty_name("PRETTY_NAME=Plain\n"), "Plain");
  EXPECT_EQ(parse_os_pretty_name("NAME=x\n"), "");
}

TEST(Environment, DescribesThisMachineAndBuild) {
  record::Hardware h = collect_hardware(nullptr);
  EXPECT_FALSE(h.hostname.empty());
  EXPECT_GE(h.logical_cpus, 1);
  EXPECT_FALSE(h.isa.empty());
  EXPECT_GT(h.memory_bytes, 0);
  EXPECT_TRUE(h.gpus.empty());
  record::Software s = collect_software();
  EXPECT_EQ(s.infercost, "0.1.0");
  EXPECT_FALSE(s.compiler.empty());
  EXPECT_FALSE(s.onednn.empty());
  EXPECT_FALSE(s.kernel.empty());
}

}  // namespace
}  // namespace infercost::bench
