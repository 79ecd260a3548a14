#include "core/threads.h"

#include <sched.h>

#include <thread>

namespace infercost {

namespace {

int count_available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

}  // namespace

int available_cpus() {
  static const int cpus = count_available_cpus();
  return cpus;
}

int resolve_threads(int requested) {
  return requested > 0 ? requested : available_cpus();
}

}  // namespace infercost
