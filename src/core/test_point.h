// Test points: named places in a run where a test can stop the process, or
// hold it until the test lets it go on. Unset, a point costs two getenv().
//
// - INFERCOST_TEST_CRASH_AT is "NAME" or "NAME:N": the process kills itself
//   with SIGKILL at the point called NAME (at its N-th hit; the first without
//   N; a comma-separated list names several), as a power cut or the out-of-memory killer would, so a test can
//   stop a run exactly between two writes (tests/cli/resume_test.cc).
// - INFERCOST_TEST_HOLD_AT is a comma-separated list of "NAME" or "NAME:N",
//   with INFERCOST_TEST_HOLD_FIFO the path of a FIFO the test made and keeps
//   open for reading: at each hit listed, the thread that reached the point
//   makes a FIFO of its own, PATH.NAME, writes "NAME\n" into PATH (the open
//   waits for the test's reader) and opens PATH.NAME for reading, which waits
//   until the test opens it for writing; the test's release is to open
//   PATH.NAME for writing (retrying while the held thread has not opened its
//   end) and close it: the held thread reads the end and goes on. The test
//   thus knows the run is at NAME, and nothing after NAME on that thread
//   happens until it says so: it can send a signal, or look at the files or
//   the screen, at a moment that does not depend on the machine's speed.
//   Holds at different points release separately. tests/test_utils.h
//   (HoldFifo) and tests/python/conftest.py (Hold) are the tests' side.
// Hits are counted per point from the moment a variable took its value: a
// new value counts from 0.
//
// The variables are read at each hit, so a process that runs the engine in
// place (the Python package's tests) can set them between calls.
//
// Points: output-synced, checkpoint-write, checkpoint-saved, parquet-footer,
// parquet-footer-half, output-rename, part-done, job-finish (the file run's
// durable steps), batch-done (after each batch's outputs are checked), and
// signal-seen (the run has seen its first SIGINT or SIGTERM and will stop at
// its next durable step); datagen-progress and scan-progress (`datagen` and
// `plan` have updated their progress counters).
#pragma once

namespace infercost {

void test_point(const char* name);

}  // namespace infercost
