// How many threads "all" is: the one reading of `--threads 0` that the run,
// its backend, `infercost bench` and `infercost plan` share.
#pragma once

namespace infercost {

// The CPUs this process may run on: the count of its affinity mask
// (sched_getaffinity), else std::thread::hardware_concurrency(), at least 1.
// Read once, on the first call, and cached (thread-safe).
int available_cpus();

// A thread count as an option gives it: `requested` when positive, else (0:
// all) available_cpus().
int resolve_threads(int requested);

}  // namespace infercost
