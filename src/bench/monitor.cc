#include "bench/monitor.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <string>
#include <utility>

#include "core/file.h"

namespace infercost::bench {

Result<int64_t> parse_proc_stat_cpu_ticks(std::string_view line) {
  // "pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ..."
  const size_t close = line.rfind(')');
  if (close == std::string_view::npos) return corruption("/proc stat line has no ')' after the command name");
  std::string_view rest = line.substr(close + 1);
  // Fields after the name, from field 3 (state): utime is field 14, stime 15.
  int64_t ticks = 0;
  int field = 2;
  size_t at = 0;
  while (at < rest.size() && field < 15) {
    while (at < rest.size() && rest[at] == ' ') ++at;
    const size_t end = std::min(rest.find(' ', at), rest.size());
    if (at >= end) break;
    ++field;
    if (field == 14 || field == 15) {
      int64_t value = 0;
      auto [ptr, ec] = std::from_chars(rest.data() + at, rest.data() + end, value);
      if (ec != std::errc() || ptr != rest.data() + end || value < 0) {
        return corruption(
            fmt::format("/proc stat field {} is not a tick count: '{}'", field, rest.substr(at, end - at)));
      }
      ticks += value;
    }
    at = end;
  }
  if (field < 15)
    return corruption(fmt::format("/proc stat line has {} fields, expected at least 15", field));
  return ticks;
}

Result<int64_t> parse_status_bytes(std::string_view text, std::string_view field) {
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    if (line.size() > field.size() && line.compare(0, field.size(), field) == 0 &&
        line[field.size()] == ':') {
      std::string_view v = line.substr(field.size() + 1);
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
      int64_t kib = 0;
      auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), kib);
      std::string_view unit = v.substr(static_cast<size_t>(ptr - v.data()));
      while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
      if (ec != std::errc() || kib < 0 || unit != "kB") {
        return corruption(fmt::format("/proc status: unexpected {} line '{}'", field, line));
      }
      return kib * 1024;
    }
    at = end + 1;
  }
  return not_found(fmt::format("/proc status has no {} line", field));
}

Result<int64_t> parse_vm_rss_bytes(std::string_view text) {
  return parse_status_bytes(text, "VmRSS");
}

void MonitorAccumulator::add_cpu(double cpus_busy) {
  ++cpu_samples_;
  cpu_sum_ += cpus_busy;
  cpu_peak_ = std::max(cpu_peak_, cpus_busy);
}

void MonitorAccumulator::add_rss(int64_t bytes) {
  ++rss_samples_;
  rss_sum_ += static_cast<double>(bytes);
  rss_peak_ = std::max(rss_peak_, bytes);
}

void MonitorAccumulator::add_gpus(const std::vector<GpuSample>& gpus) {
  gpus_.add(gpus);
}

record::Monitor MonitorAccumulator::summary() const {
  record::Monitor m;
  m.interval_seconds = interval_;
  m.samples = samples_;
  m.cpu_busy_mean = cpu_samples_ > 0 ? cpu_sum_ / static_cast<double>(cpu_samples_) : 0;
  m.cpu_busy_peak = cpu_peak_;
  m.rss_mean_bytes = rss_samples_ > 0 ? rss_sum_ / static_cast<double>(rss_samples_) : 0;
  m.rss_peak_bytes = rss_peak_;
  m.gpus = gpus_.summary();
  return m;
}

ProcessSampler::ProcessSampler(pid_t pid, MonitorAccumulator* out, const Nvml* nvml, std::vector<int> gpus,
                               Clock clock)
    : pid_(pid),
      out_(out),
      nvml_(nvml),
      gpus_(std::move(gpus)),
      clock_(clock ? std::move(clock) : Clock(&std::chrono::steady_clock::now)),
      last_time_(clock_()),
      ticks_per_second_(static_cast<double>(std::max<long>(::sysconf(_SC_CLK_TCK), 1))) {}

bool ProcessSampler::sample() {
  const auto now = clock_();
  Result<std::string> stat = read_file(fmt::format("/proc/{}/stat", pid_));
  if (!stat.ok() || stat->empty()) return false;
  Result<std::string> status = read_file(fmt::format("/proc/{}/status", pid_));
  if (!status.ok()) return false;
  Result<int64_t> rss = parse_vm_rss_bytes(*status);
  // An exited, unreaped child has no VmRSS and its counters are final: no sample.
  if (!rss.ok()) return false;
  peak_rss_ = std::max(peak_rss_, *rss);
  if (Result<int64_t> hwm = parse_status_bytes(*status, "VmHWM"); hwm.ok())
    peak_rss_ = std::max(peak_rss_, *hwm);
  if (out_ == nullptr) return true;
  ++out_->samples_;
  out_->add_rss(*rss);
  Result<int64_t> ticks = parse_proc_stat_cpu_ticks(*stat);
  const double seconds = std::chrono::duration<double>(now - last_time_).count();
  if (ticks.ok() && seconds > 0) {
    out_->add_cpu(static_cast<double>(*ticks - last_ticks_) / ticks_per_second_ / seconds);
    last_ticks_ = *ticks;
    last_time_ = now;
  }
  if (nvml_ != nullptr && !gpus_.empty()) {
    Result<std::vector<GpuSample>> gpus = nvml_->sample(gpus_);
    if (gpus.ok()) out_->add_gpus(*gpus);
  }
  return true;
}

}  // namespace infercost::bench
