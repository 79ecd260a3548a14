// The sweep's progress lines and their estimate of the time left.
#include "bench/progress.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace infercost::bench {
namespace {

// What a Progress wrote, through an in-memory FILE.
class Captured {
 public:
  Captured() : file_(::open_memstream(&buf_, &size_)) {}
  ~Captured() {
    if (file_) std::fclose(file_);
    std::free(buf_);
  }
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    return std::string(buf_, size_);
  }

 private:
  char* buf_ = nullptr;
  size_t size_ = 0;
  std::FILE* file_;
};

TEST(Progress, AFailedPointLeavesNoRunPlanned) {
  Captured out;
  // Two points of two runs each (one warm-up, one repetition).
  Progress p(out.file(), /*terminal=*/false, 2, 2);
  p.start_point(1, "one");
  p.start_run(true, 1, 1);
  p.run_finished(true, 1.0, "1.00 s");
  EXPECT_NE(out.text().find(", ~3s left)"), std::string::npos) << out.text();
  // Its repetition fails: nothing of point 1 is left to run.
  p.start_run(false, 1, 1);
  p.end_point("point 1 FAILED");
  p.start_point(2, "two");
  p.start_run(true, 1, 1);
  p.run_finished(true, 1.0, "1.00 s");
  // One run of point 2 left, at a mean of 1 s a run.
  EXPECT_NE(out.text().find(", ~1s left)"), std::string::npos) << out.text();
  p.start_run(false, 1, 1);
  p.run_finished(false, 1.0, "done");
  p.end_point("point 2 ok");
  p.finish();
  EXPECT_NE(out.text().find("repetition 1/1: done"), std::string::npos) << out.text();
}

TEST(Progress, FormatsDurations) {
  EXPECT_EQ(format_duration(0.4), "0s");
  EXPECT_EQ(format_duration(45), "45s");
  EXPECT_EQ(format_duration(62), "1m02s");
  EXPECT_EQ(format_duration(7500), "2h05m");
}

}  // namespace
}  // namespace infercost::bench
