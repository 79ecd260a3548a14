#include "cli/progress_line.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>

#include "core/numbers.h"
#include "infercost/progress.h"

namespace infercost::cli {

namespace {

// The terminal's width, so the line never wraps (a wrapped line cannot be
// rewritten in place); 80 where it cannot be asked.
size_t terminal_columns() {
  winsize size{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

// Cuts `text` to `columns` characters at most, not inside a UTF-8 sequence.
std::string fit(std::string text, size_t columns) {
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (++chars > columns) {
      text.resize(i);
      break;
    }
  }
  return text;
}

}  // namespace

ProgressLine::ProgressLine(bool enabled, Render render, double delay_s, double interval_s)
    : render_(std::move(render)) {
  if (enabled) thread_ = std::thread([this, delay_s, interval_s] { loop(delay_s, interval_s); });
}

ProgressLine::~ProgressLine() {
  stop();
}

bool ProgressLine::wanted(bool quiet) {
  return !quiet && ::isatty(STDERR_FILENO) == 1;
}

void ProgressLine::loop(double delay_s, double interval_s) {
  std::unique_lock<std::mutex> lock(mu_);
  if (wake_.wait_for(lock, std::chrono::duration<double>(delay_s), [this] { return stop_; })) return;
  do {
    const std::string line = fit(render_(), terminal_columns() - 1);
    std::fprintf(stderr, "\r%s\033[K", line.c_str());
    std::fflush(stderr);
    drawn_ = true;
  } while (!wake_.wait_for(lock, std::chrono::duration<double>(interval_s), [this] { return stop_; }));
}

void ProgressLine::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (drawn_) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    drawn_ = false;
  }
}

void ProgressLine::print(const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  if (drawn_) std::fputs("\r\033[K", stderr);
  drawn_ = false;
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
}

std::string progress_rate(double per_second) {
  if (!std::isfinite(per_second) || per_second <= 0) return "0";
  if (per_second < 10) return fmt::format("{:.1f}", per_second);
  return group_thousands(std::llround(per_second));
}

std::string progress_duration(double seconds) {
  const int64_t s = std::llround(std::max(0.0, seconds));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m {:02}s", s / 60, s % 60);
  if (s < 100 * 3600) return fmt::format("{}h {:02}m", s / 3600, s % 3600 / 60);
  return fmt::format("{} days", s / 86400);
}

std::string progress_text(const std::string& what, int64_t done, double expected, bool expected_is_exact,
                          double seconds, int64_t tokens_done, int64_t done_before) {
  std::string text;
  const double share = expected > 0 ? std::min(100.0, 100.0 * static_cast<double>(done) / expected) : 0;
  if (expected > 0 && expected_is_exact) {
    text = fmt::format("{} of {} {} ({:.1f}%)", group_thousands(done),
                       group_thousands(std::llround(expected)), what, share);
  } else if (expected > 0) {
    text = fmt::format("{} {} (~{:.1f}%)", group_thousands(done), what, share);
  } else {
    text = fmt::format("{} {}", group_thousands(done), what);
  }
  if (seconds <= 0 || done - done_before <= 0) return text;
  // The time left first: on a narrow terminal the line is cut at its end.
  const double rate = static_cast<double>(done - done_before) / seconds;
  if (expected > 0) {
    text += ", " + progress_duration(std::max(0.0, expected - static_cast<double>(done)) / rate) + " left";
  }
  text += fmt::format(", {} {}/s", progress_rate(rate), what);
  if (tokens_done > 0) {
    text += fmt::format(", {} tokens/s", progress_rate(static_cast<double>(tokens_done) / seconds));
  }
  return text;
}

// The run's progress line: rows done (classified, or null / skipped) of the
// rows the inputs hold (Parquet footers) or are estimated to hold (from the
// bytes a row has taken so far), the rates since the rows started to flow,
// and the time left at that rate.
std::string run_progress_text(const RunProgress& p) {
  if (p.started_ns.load() == 0) return "infercost: loading the model...";
  const int64_t before = p.rows_resumed.load();
  return "infercost: " + progress_text("rows", before + p.rows_done.load(), p.rows_expected(),
                                       p.rows_total.load() >= 0, p.seconds_running(), p.tokens_done.load(),
                                       before);
}

}  // namespace infercost::cli
