#!/usr/bin/env python3
"""Fails when a test was skipped for a reason tests/allowed_skips.txt does not list.

usage: scripts/check-skips.py BUILD_DIR

Reads ctest's log of the last run (BUILD_DIR/Testing/Temporary/LastTest.log) and finds every skip
in it: a GoogleTest GTEST_SKIP (its message), a test that exited 77 (ctest's skip; its output), and
a pytest skip inside a suite (pytest -rs prints "SKIPPED [n] file:line: reason"). Each reason must
match one of the allowed patterns; the others are listed and the exit status is 1. CI runs it after
`make test` (.ci/run): on CI every suite runs but those that need a GPU or ../shared.
"""
import pathlib
import re
import sys


def allowed_patterns(root):
    lines = (root / "tests" / "allowed_skips.txt").read_text().splitlines()
    return [re.compile(line) for line in lines if line.strip() and not line.startswith("#")]


def sections(log):
    """(test name, its whole section) for each test in ctest's log."""
    starts = list(re.finditer(r"^\d+/\d+ Testing: (.+)$", log, re.M))
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(log)
        yield m.group(1).strip(), log[m.start():end]


def skip_reasons(text):
    reasons = []
    for m in re.finditer(r": Skipped\n(.*?)\n*\[  SKIPPED \]", text, re.S):  # GoogleTest
        reasons.append(m.group(1).strip() or "(no reason given)")
    for m in re.finditer(r"^SKIPPED \[\d+\] (.+)$", text, re.M):  # pytest -rs
        reasons.append(m.group(1).strip())
    for m in re.finditer(r"^skip(?:ped)?: (.+)$", text, re.M | re.I):  # an exit-77 test's own line
        reasons.append(m.group(1).strip())
    if re.search(r"^Test (Skipped|Not Run)", text, re.M) and not reasons:  # ctest's skip (exit 77)
        output = text.split("Output:", 1)[-1].split("<end of output>", 1)[0].strip("-\n ")
        reasons.append(" ".join(output.split()) or "(no output)")
    return reasons


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = pathlib.Path(__file__).resolve().parent.parent
    log_path = pathlib.Path(sys.argv[1]) / "Testing" / "Temporary" / "LastTest.log"
    log = log_path.read_text(errors="replace")
    patterns = allowed_patterns(root)
    allowed, refused = 0, []
    for name, text in sections(log):
        for reason in skip_reasons(text):
            if any(p.search(reason) for p in patterns):
                allowed += 1
            else:
                refused.append((name, reason))
    for name, reason in refused:
        print(f"check-skips: {name}: skipped: {reason}")
    print(f"check-skips: {allowed} skip(s) allowed (tests/allowed_skips.txt), {len(refused)} not allowed")
    sys.exit(1 if refused else 0)


if __name__ == "__main__":
    main()
