#include "core/threads.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <cstdlib>

namespace infercost {
namespace {

TEST(ResolveThreads, PositiveCountsAreKept) {
  EXPECT_EQ(resolve_threads(1), 1);
  EXPECT_EQ(resolve_threads(7), 7);
  EXPECT_EQ(resolve_threads(512), 512);
}

TEST(ResolveThreads, ZeroIsEveryCpuOfTheAffinityMask) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  EXPECT_EQ(available_cpus(), CPU_COUNT(&set));
  EXPECT_EQ(resolve_threads(0), available_cpus());
  EXPECT_GE(available_cpus(), 1);
}

// A process pinned to one CPU gets one thread for "all", however many the
// machine has (the mask, not the machine). A fresh process (the threadsafe
// death-test style re-executes the binary), since the count is cached.
TEST(ResolveThreadsDeathTest, ZeroFollowsARestrictedMask) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        cpu_set_t set;
        CPU_ZERO(&set);
        if (sched_getaffinity(0, sizeof(set), &set) != 0) std::_Exit(2);
        int first = 0;
        while (!CPU_ISSET(first, &set)) ++first;
        CPU_ZERO(&set);
        CPU_SET(first, &set);
        if (sched_setaffinity(0, sizeof(set), &set) != 0) std::_Exit(3);
        std::_Exit(resolve_threads(0) == 1 && available_cpus() == 1 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace infercost
