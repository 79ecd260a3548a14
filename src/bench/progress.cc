#include "bench/progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace infercost::bench {

std::string format_duration(double seconds) {
  const long long s = std::llround(std::max(seconds, 0.0));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

Progress::Progress(std::FILE* out, bool terminal, int points, int runs_per_point)
    : out_(out),
      terminal_(terminal),
      points_(points),
      runs_per_point_(runs_per_point),
      start_(std::chrono::steady_clock::now()),
      runs_planned_(points * runs_per_point) {}

double Progress::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string Progress::left() const {
  if (runs_done_ == 0) return "estimating time left";
  const int remaining = std::max(runs_planned_ - runs_done_, k_ > 0 ? 1 : 0);
  return fmt::format("~{} left", format_duration(remaining * runs_seconds_ / runs_done_));
}

void Progress::clear() {
  if (terminal_ && line_shown_) {
    std::fputs("\r\033[K", out_);
    line_shown_ = false;
  }
}

void Progress::draw() {
  if (!terminal_ || point_ == 0) return;
  const std::string run = k_ == 0   ? std::string("starting")
                          : warmup_ ? fmt::format("warm-up {}/{}", k_, n_)
                                    : fmt::format("rep {}/{}", k_, std::max(k_, n_));
  std::string line = fmt::format("[point {}/{}] {} | {} | elapsed {} | {}", point_, points_, description_,
                                 run, format_duration(elapsed()), left());
  std::fprintf(out_, "\r\033[K%s", line.c_str());
  std::fflush(out_);
  line_shown_ = true;
  last_draw_ = std::chrono::steady_clock::now();
}

void Progress::message(const std::string& line) {
  clear();
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
  draw();
}

void Progress::start_point(int point, const std::string& description) {
  point_ = point;
  description_ = description;
  point_runs_ = 0;
  k_ = n_ = 0;
  if (!terminal_) {
    std::fprintf(out_, "bench: point %d/%d: %s\n", point, points_, description.c_str());
    std::fflush(out_);
  }
  draw();
}

void Progress::start_run(bool warmup, int k, int n) {
  warmup_ = warmup;
  k_ = k;
  n_ = n;
  draw();
}

void Progress::run_finished(bool warmup, double seconds, const std::string& detail) {
  ++runs_done_;
  ++point_runs_;
  runs_seconds_ += seconds;
  if (point_runs_ > runs_per_point_) ++runs_planned_;  // --min-seconds asked for more
  if (!terminal_) {
    const std::string run =
        warmup ? fmt::format("warm-up {}/{}", k_, n_) : fmt::format("repetition {}/{}", k_, std::max(k_, n_));
    std::fprintf(out_, "bench: point %d/%d %s: %s (elapsed %s, %s)\n", point_, points_, run.c_str(),
                 detail.c_str(), format_duration(elapsed()).c_str(), left().c_str());
    std::fflush(out_);
  }
  draw();
}

void Progress::end_point(const std::string& summary) {
  // The point planned max(runs_per_point_, point_runs_) runs (run_finished()
  // added those --min-seconds asked for); it used the finished ones only.
  if (point_runs_ < runs_per_point_) runs_planned_ -= runs_per_point_ - point_runs_;
  clear();
  std::fprintf(out_, "%s\n", summary.c_str());
  std::fflush(out_);
  k_ = 0;
}

void Progress::tick() {
  if (!terminal_) return;
  if (std::chrono::steady_clock::now() - last_draw_ < std::chrono::milliseconds(250)) return;
  draw();
}

void Progress::finish() {
  clear();
  point_ = 0;
}

}  // namespace infercost::bench
