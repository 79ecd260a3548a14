#!/usr/bin/env python3
"""Fails when a test was skipped without a reason tests/allowed_skips.txt allows it, there and then.

usage: scripts/check-skips.py BUILD_DIR
       scripts/check-skips.py --self-test

Reads ctest's log of the last run (BUILD_DIR/Testing/Temporary/LastTest.log) and finds every skip
in it: a GoogleTest GTEST_SKIP (its message), a test that exited 77 (ctest's skip; its output), and
a pytest skip inside a suite (pytest -rs prints "SKIPPED [n] file:line: reason"). Each skip must
match one line of tests/allowed_skips.txt whole: its test name, its reason, and the condition under
which that line allows it (a GPU absent, ../shared absent, ...) must hold on this machine. The
others are listed and the exit status is 1. CI runs it after `make test` (.ci/run): there every
suite runs but those that need a GPU (and, where ../shared is absent, those that read it).
"""
import os
import pathlib
import re
import shutil
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"


def cpu_has_native_bf16():
    try:
        flags = pathlib.Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return bool(re.search(r"\b(avx512_bf16|amx_bf16)\b", flags))


def gpu_absent():
    return not os.path.exists("/dev/nvidia0") and shutil.which("nvidia-smi") is None


# When a line of allowed_skips.txt applies: each condition, and what it checks.
CONDITIONS = {
    "no-gpu": gpu_absent,
    "gpu-present": lambda: not gpu_absent(),
    "shared-absent": lambda: not SHARED_DATA.is_dir(),
    "cpu-bf16": cpu_has_native_bf16,
    "always": lambda: True,
}


class Rule:
    def __init__(self, test, reason, when, line):
        self.test = re.compile(test)
        self.reason = re.compile(reason)
        self.when = when
        self.line = line

    def allows(self, name, reason):
        return bool(self.test.fullmatch(name) and self.reason.fullmatch(reason))


def parse_rules(text, origin):
    """The lines of allowed_skips.txt: TEST | REASON | WHEN, each regex matched whole."""
    rules = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [f.strip() for f in line.split(" | ")]
        if len(fields) != 3:
            sys.exit(f"{origin}:{number}: expected 'TEST | REASON | WHEN', got: {line}")
        test, reason, when = fields
        if when not in CONDITIONS:
            sys.exit(f"{origin}:{number}: unknown condition '{when}' (one of {', '.join(CONDITIONS)})")
        try:
            rules.append(Rule(test, reason, when, number))
        except re.error as e:
            sys.exit(f"{origin}:{number}: {e}")
    return rules


def sections(log):
    """(test name, its whole section) for each test in ctest's log."""
    starts = list(re.finditer(r"^\d+/\d+ Testing: (.+)$", log, re.M))
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(log)
        name = re.sub(r"\s+# GetParam\(\) = .*$", "", m.group(1).strip())  # a parameterized test's value
        yield name, log[m.start():end]


def skip_reasons(text):
    reasons = []
    for m in re.finditer(r": Skipped\n(.*?)\n*\[  SKIPPED \]", text, re.S):  # GoogleTest
        reasons.append(" ".join(m.group(1).split()) or "(no reason given)")
    for m in re.finditer(r"^SKIPPED \[\d+\] (.+)$", text, re.M):  # pytest -rs
        reasons.append(m.group(1).strip())
    for m in re.finditer(r"^skip(?:ped)?: (.+)$", text, re.M | re.I):  # an exit-77 test's own line
        reasons.append(m.group(1).strip())
    if re.search(r"^Test (Skipped|Not Run)", text, re.M) and not reasons:  # ctest's skip (exit 77)
        output = text.split("Output:", 1)[-1].split("<end of output>", 1)[0].strip("-\n ")
        reasons.append(" ".join(output.split()) or "(no output)")
    return reasons


def judge(log, rules, conditions):
    """(allowed skips, refused (name, reason, why) triples)."""
    allowed, refused = 0, []
    for name, text in sections(log):
        for reason in skip_reasons(text):
            matching = [r for r in rules if r.allows(name, reason)]
            if any(conditions[r.when]() for r in matching):
                allowed += 1
            elif matching:
                whens = ", ".join(sorted({r.when for r in matching}))
                refused.append((name, reason, f"allowed only when {whens}, which does not hold here"))
            else:
                refused.append((name, reason, "no line of tests/allowed_skips.txt allows it"))
    return allowed, refused


def self_test():
    rules = parse_rules(
        "# comment\n"
        r"Golden\..* | shared vocabulary /\S+ is absent; golden tokenizer test skipped | shared-absent" "\n"
        r"Cuda\..* | no GPU: .* | no-gpu" "\n", "self-test")
    log = ("1/3 Testing: Golden.Ids\nGolden.Ids: Skipped\nshared vocabulary /x/vocab.txt is absent; golden "
           "tokenizer test skipped\n[  SKIPPED ] Golden.Ids\n"
           "2/3 Testing: Other.Test\nOther.Test: Skipped\nshared vocabulary /x/vocab.txt is absent; golden "
           "tokenizer test skipped\n[  SKIPPED ] Other.Test\n"
           "3/3 Testing: Cuda.Run\nCuda.Run: Skipped\nno GPU: none\n[  SKIPPED ] Cuda.Run\n")
    present = {"shared-absent": lambda: False, "no-gpu": lambda: True, "always": lambda: True}
    allowed, refused = judge(log, rules, present)
    assert allowed == 1 and [r[0] for r in refused] == ["Golden.Ids", "Other.Test"], refused
    assert "does not hold" in refused[0][2] and "no line" in refused[1][2], refused
    absent = dict(present, **{"shared-absent": lambda: True})
    allowed, refused = judge(log, rules, absent)
    assert allowed == 2 and [r[0] for r in refused] == ["Other.Test"], refused
    # A reason must match whole: one that merely contains an allowed one is refused.
    allowed, refused = judge(log.replace("no GPU: none", "a pip package is absent, no GPU: none"), rules, absent)
    assert [r[0] for r in refused] == ["Other.Test", "Cuda.Run"], refused
    print("check-skips: self-test ok")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    allowed_path = ROOT / "tests" / "allowed_skips.txt"
    rules = parse_rules(allowed_path.read_text(), str(allowed_path))
    log_path = pathlib.Path(sys.argv[1]) / "Testing" / "Temporary" / "LastTest.log"
    allowed, refused = judge(log_path.read_text(errors="replace"), rules, CONDITIONS)
    for name, reason, why in refused:
        print(f"check-skips: {name}: skipped: {reason}\n  ({why})")
    held = ", ".join(c for c, holds in CONDITIONS.items() if c != "always" and holds()) or "none"
    print(f"check-skips: {allowed} skip(s) allowed (tests/allowed_skips.txt; conditions holding here: {held}), "
          f"{len(refused)} not allowed")
    sys.exit(1 if refused else 0)


if __name__ == "__main__":
    main()
