#!/usr/bin/env python3
"""The table scripts/gpu-check.sh prints last: every configuration side by side, the targets
and the parity verdicts, from the files the check left in its work folder.

  gpu_table.py --work DIR [--out-md FILE] [--reference NAME]
  gpu_table.py --self-test

Reads DIR/results.jsonl (steps, parity), DIR/configs.jsonl (the end-to-end configurations in
order, each naming its metrics JSON), DIR/logs/gemm_peak.log and DIR/logs/encoder_bench.log
(the JSON lines of bench/cuda_gemm_peak and bench/cuda_encoder_bench). Anything missing or
malformed shows as "-" or "not measured", never as a number. Per configuration: rows, wall
seconds, rows/s, tokens/s (real tokens), model TFLOP/s (real lengths) and its share of the
measured bf16 GEMM peak (square, bf16 output), GPU memory peak/total and mean utilization,
and the ratio of rows/s to the reference (--reference, default the study's method at batch 40).
Targets: end to end >= 10x the reference's rows/s; model-only bf16 at 256x128 >= 40% of the
peak. Exit status 0 when every step ran OK and every target and parity line passed, else 1.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_common as gc  # noqa: E402

GIB = 1024.0 ** 3
E2E_RATIO_TARGET = 10.0
MODEL_PEAK_TARGET = 40.0
MODEL_SHAPE = (256, 128)


def read_jsonl(path):
    """JSON objects of the lines that hold one; other lines (log text) are skipped."""
    out = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                line = line.strip()
                if line.startswith("{") and line.endswith("}"):
                    try:
                        rec = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(rec, dict):
                        out.append(rec)
    except OSError:
        pass
    return out


def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            rec = json.load(f)
        return rec if isinstance(rec, dict) else None
    except (OSError, ValueError):
        return None


def num(x):
    """x as a finite float, or None."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    x = float(x)
    return x if x == x and abs(x) != float("inf") else None


def fmt_int(x):
    return "-" if x is None else "{:,}".format(int(round(x)))


def fmt_rate(x):
    if x is None:
        return "-"
    if x >= 1e6:
        return "%.2fM" % (x / 1e6)
    return "{:,}".format(int(round(x)))


def fmt_f(x, digits=1, suffix=""):
    return "-" if x is None else ("%.*f" % (digits, x)) + suffix


class Check:
    def __init__(self, work):
        self.work = work
        recs = read_jsonl(os.path.join(work, "results.jsonl"))
        self.steps = [r for r in recs if r.get("kind") == "step"]
        self.parity = [r for r in recs if r.get("kind") == "parity"]
        self.configs = [r for r in read_jsonl(os.path.join(work, "configs.jsonl")) if r.get("kind") == "config"]
        self.gemm = [r for r in read_jsonl(os.path.join(work, "logs", "gemm_peak.log"))
                     if r.get("bench") == "cuda_gemm_peak"]
        self.encoder = [r for r in read_jsonl(os.path.join(work, "logs", "encoder_bench.log"))
                        if r.get("bench") == "cuda_encoder_bench"]
        self.peak = None
        self.device = None
        for r in self.gemm:
            if r.get("shape") == "square" and r.get("out") == r.get("in") == "bf16":
                self.peak = num(r.get("tflops"))
            self.device = self.device or r.get("device")

    def metrics(self, cfg):
        m = read_json(os.path.join(self.work, cfg.get("metrics", "")))
        if m is None:
            return None
        rows, wall = num(m.get("rows")), num(m.get("wall_seconds"))
        flops = num(m.get("model_flops"))
        tokens = num(m.get("tokens"))
        out = {"rows": rows, "wall": wall,
               "rows_s": rows / wall if rows is not None and wall else None,
               "tokens_s": tokens / wall if tokens is not None and wall else None,
               "tflops": flops / wall / 1e12 if flops is not None and wall else None,
               "mem": None, "util": None}
        gpus = [g for g in m.get("gpus") or [] if isinstance(g, dict)]
        peaks = [num(g.get("memory_used_peak_bytes")) for g in gpus]
        allocs = [num(g.get("torch_max_allocated_bytes")) for g in gpus]
        totals = [num(g.get("memory_total_bytes")) for g in gpus]
        utils = [num(g.get("utilization_mean")) for g in gpus]
        total = max([t for t in totals if t is not None], default=None)
        peak = max([p for p in peaks if p is not None], default=None)
        alloc = max([a for a in allocs if a is not None], default=None)
        if total is not None and (peak is not None or alloc is not None):
            text = "%.1f / %.1f GiB" % ((peak if peak is not None else alloc) / GIB, total / GIB)
            if peak is None:
                text += " (torch alloc)"
            elif alloc is not None:
                text += " (torch alloc %.1f)" % (alloc / GIB)
            out["mem"] = text
        known = [u for u in utils if u is not None]
        if known:
            out["util"] = 100.0 * sum(known) / len(known)
        return out

    def step_status(self, name):
        for s in self.steps:
            if s.get("name") == name:
                return s.get("status", "?")
        return "not run"

    def encoder_row(self, precision, batch, seq):
        for r in self.encoder:
            if r.get("precision") == precision and r.get("batch") == batch and r.get("seq") == seq \
                    and "error" not in r:
                return r
        return None


def pct(x, of):
    return 100.0 * x / of if x is not None and of else None


def build(work, reference="e2e_study_b40"):
    """(markdown text, failures): the whole report and what did not pass."""
    c = Check(work)
    lines, failures, incomplete = [], [], []
    lines.append("# GPU check%s" % (": " + c.device if c.device else ""))
    lines.append("")

    # Steps.
    if c.steps:
        lines.append("Steps: " + ", ".join("%s %s%s" % (s.get("name"), s.get("status"),
                                                         " %ss" % s["seconds"] if s.get("rc") is not None
                                                         and s.get("status") not in ("SKIP", "DRY") else "")
                                            for s in c.steps))
    else:
        lines.append("Steps: none recorded")
    for s in c.steps:
        if s.get("status") in ("FAIL", "TIMEOUT"):
            failures.append("step %s %s" % (s.get("name"), s.get("status")))
        elif s.get("status") == "SKIPPED":
            failures.append("step %s SKIPPED (its tests saw no GPU)" % s.get("name"))
        elif s.get("status") in ("SKIP", "DRY"):
            incomplete.append("step %s %s" % (s.get("name"), s.get("status")))
    lines.append("")

    # GEMM ceilings.
    if c.gemm:
        lines.append("cuBLASLt GEMM (bf16 in, fp32 compute), TFLOP/s: " + "; ".join(
            "%s %sx%sx%s %s-out %s" % (r.get("shape"), r.get("M"), r.get("N"), r.get("K"), r.get("out"),
                                       fmt_f(num(r.get("tflops")))) for r in c.gemm))
    lines.append("bf16 GEMM peak (square, bf16 out): %s" % (fmt_f(c.peak, 1, " TFLOP/s") if c.peak else
                                                            "not measured"))
    lines.append("")

    # The table.
    header = ["configuration", "rows", "wall s", "rows/s", "tokens/s", "model TFLOP/s", "% bf16 peak",
              "GPU mem peak / total", "GPU util mean", "x study b40"]
    table = [header]
    ref_cfg = next((cfg for cfg in c.configs if cfg.get("name") == reference), None)
    ref = c.metrics(ref_cfg) if ref_cfg else None
    ref_rate = ref["rows_s"] if ref else None
    e2e = {}
    for cfg in c.configs:
        m = c.metrics(cfg)
        label = cfg.get("label") or cfg.get("name")
        if cfg.get("note"):
            label += " [%s]" % cfg["note"]
        if m is None:
            table.append([label, "not measured (%s)" % c.step_status(cfg.get("name"))] + ["-"] * 8)
            continue
        e2e[cfg.get("name")] = m
        ratio = m["rows_s"] / ref_rate if m["rows_s"] is not None and ref_rate else None
        table.append([label, fmt_int(m["rows"]), fmt_f(m["wall"], 2), fmt_rate(m["rows_s"]), fmt_rate(m["tokens_s"]),
                      fmt_f(m["tflops"]), fmt_f(pct(m["tflops"], c.peak), 1, "%"), m["mem"] or "-",
                      fmt_f(m["util"], 0, "%"), fmt_f(ratio, 2, "x")])
    for r in c.encoder:
        if "error" in r:
            shape = " %sx%s" % (r.get("batch"), r.get("seq")) if r.get("batch") else ""
            table.append(["model only %s%s" % (r.get("precision"), shape),
                          "error: %s" % str(r["error"])[:80]] + ["-"] * 8)
            continue
        tflops = num(r.get("tflops"))
        table.append(["model only %s (%s rows x %s tokens per batch)" % (r.get("precision"), r.get("batch"),
                                                                       r.get("seq")),
                      "-", fmt_f(num(r.get("median_ms")), 2, " ms/batch"), fmt_rate(num(r.get("rows_per_second"))),
                      fmt_rate(num(r.get("tokens_per_second"))), fmt_f(tflops),
                      fmt_f(pct(tflops, c.peak), 1, "%"), "-", "-", "-"])
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join("---" for _ in header) + "|")
    for row in table[1:]:
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")

    # Targets.
    lines.append("Targets:")
    ours = e2e.get("e2e_ours_bf16")
    if ours and ours["rows_s"] is not None and ref_rate:
        ratio = ours["rows_s"] / ref_rate
        ok = ratio >= E2E_RATIO_TARGET
        lines.append("- %s end to end >= %gx the study's method (b40/GPU) in rows/s: %.2fx (%s vs %s rows/s)" %
                     ("PASS" if ok else "FAIL", E2E_RATIO_TARGET, ratio, fmt_rate(ours["rows_s"]),
                      fmt_rate(ref_rate)))
        if not ok:
            failures.append("end-to-end ratio %.2fx" % ratio)
    else:
        lines.append("- FAIL end to end >= %gx the study's method: not measured" % E2E_RATIO_TARGET)
        failures.append("end-to-end ratio not measured")
    enc = c.encoder_row("bf16", *MODEL_SHAPE)
    enc_tflops = num(enc.get("tflops")) if enc else None
    share = pct(enc_tflops, c.peak)
    if share is not None:
        ok = share >= MODEL_PEAK_TARGET
        lines.append("- %s model-only bf16 (%dx%d) >= %g%% of the bf16 GEMM peak: %.1f%% (%.1f of %.1f TFLOP/s)" %
                     ("PASS" if ok else "FAIL", MODEL_SHAPE[0], MODEL_SHAPE[1], MODEL_PEAK_TARGET, share,
                      enc_tflops, c.peak))
        if not ok:
            failures.append("model-only share %.1f%%" % share)
    else:
        lines.append("- FAIL model-only bf16 >= %g%% of the bf16 GEMM peak: not measured" % MODEL_PEAK_TARGET)
        failures.append("model-only share not measured")
    lines.append("")

    # Parity.
    lines.append("Parity (%s):" % ("%d pairs" % len(c.parity) if c.parity else "not measured"))
    for p in c.parity:
        if p.get("error"):
            lines.append("- %s %s: %s" % (p.get("verdict"), p.get("name"), p["error"]))
        else:
            lines.append("- %s %s: rows %s, max|dp| %.2e, mean|dp| %.2e, labels agree %.3f%% (target %s)%s" % (
                p.get("verdict"), p.get("name"), p.get("rows"), num(p.get("max_abs_prob_diff")) or 0.0,
                num(p.get("mean_abs_prob_diff")) or 0.0, 100 * (num(p.get("label_agreement")) or 0.0),
                p.get("target"), " (%s)" % p["why"] if p.get("why") else ""))
        if p.get("verdict") == "FAIL":
            failures.append("parity %s" % p.get("name"))
    if not c.parity:
        failures.append("parity not measured")
    lines.append("")
    if failures:
        lines.append("Overall: FAIL (%s)%s" % ("; ".join(failures),
                                                ("; incomplete: " + ", ".join(incomplete)) if incomplete else ""))
    else:
        lines.append("Overall: PASS%s" % (("; incomplete: " + ", ".join(incomplete)) if incomplete else ""))
    return "\n".join(lines) + "\n", failures


def self_test():
    """The table of the committed fixture work folder against its expected Markdown, and
    an empty work folder (nothing measured: every target FAIL, no numbers)."""
    import tempfile

    check = gc.Checks()
    fixture = os.path.join(gc.REPO, "tests", "data_files", "gpu_check")
    text, fails = build(os.path.join(fixture, "work"))
    with open(os.path.join(fixture, "expected.md"), encoding="utf-8") as f:
        expected = f.read()
    if text != expected:
        import difflib

        sys.stdout.writelines(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                                   "expected.md", "built"))
    check(text == expected, "fixture table matches tests/data_files/gpu_check/expected.md")
    check(any("parity cuda-fp16 vs cpu-fp32" in x for x in fails), "the fixture's failed parity line counts")
    with tempfile.TemporaryDirectory() as d:
        text, fails = build(d)
        check("Overall: FAIL" in text and "not measured" in text, "an empty work folder fails, saying why")
        check("end-to-end ratio not measured" in fails and "parity not measured" in fails, "empty: %r" % fails)
        # Test binaries whose tests all skipped (no GPU seen) fail the check.
        with open(os.path.join(d, "results.jsonl"), "w", encoding="utf-8") as f:
            f.write('{"kind": "step", "name": "cuda_backend_tests", "status": "SKIPPED", "rc": 0, "seconds": 0.1}\n')
        text, fails = build(d)
        check("step cuda_backend_tests SKIPPED (its tests saw no GPU)" in fails, "skipped tests fail: %r" % fails)
        check("Steps: cuda_backend_tests SKIPPED 0.1s" in text, "the step line: %s" % text.splitlines()[2])
    return check.count()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work")
    ap.add_argument("--out-md")
    ap.add_argument("--reference", default="e2e_study_b40")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return gc.self_test_exit("gpu_table", self_test)
    if not args.work:
        ap.error("--work is required")
    text, failures = build(args.work, args.reference)
    print(text, end="", flush=True)
    if args.out_md:
        with open(args.out_md, "w", encoding="utf-8") as f:
            f.write(text)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
