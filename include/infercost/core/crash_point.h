// Test-only crash points, for the crash tests of resumable runs
// (tests/cli/resume_test.cc): when the environment variable
// INFERCOST_TEST_CRASH_AT is "NAME" or "NAME:N", the process kills itself
// with SIGKILL at the point called NAME (at its N-th hit; the first without
// N), as a power cut or the out-of-memory killer would, so a test can stop a
// run exactly between two writes. Unset, a point costs a test of an empty
// string.
#pragma once

namespace infercost {

void crash_point(const char* name);

}  // namespace infercost
