#!/usr/bin/env python3
"""Prints the slowest tests of ctest's last run in a build folder, with their share of the tests' time.

usage: scripts/slowest-tests.py BUILD_DIR [COUNT]

Reads BUILD_DIR/Testing/Temporary/LastTest.log (each test's "Test time"); .ci/run prints the ten
slowest of `make test` at its end, beside each step's time.
"""
import pathlib
import re
import sys


def test_times(log):
    """(seconds, name) of every test in ctest's log, in run order."""
    times = []
    name = None
    for line in log.splitlines():
        m = re.match(r"^\d+/\d+ Testing: (.+)$", line)
        if m:
            name = re.sub(r"\s+# GetParam\(\) = .*$", "", m.group(1).strip())
            continue
        m = re.match(r"^Test time =\s+([0-9.]+) sec", line)
        if m and name is not None:
            times.append((float(m.group(1)), name))
            name = None
    return times


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    count = int(sys.argv[2]) if len(sys.argv) == 3 else 10
    log = pathlib.Path(sys.argv[1]) / "Testing" / "Temporary" / "LastTest.log"
    times = test_times(log.read_text(errors="replace"))
    total = sum(t for t, _ in times)
    print(f"{len(times)} tests, {total:.0f} s of test time in all; the {count} slowest:")
    for seconds, name in sorted(times, reverse=True)[:count]:
        print(f"  {seconds:8.1f} s  {100 * seconds / total if total else 0:5.1f} %  {name}")


if __name__ == "__main__":
    main()
