#!/usr/bin/env python3
"""Compares prediction files row by row (same rows, same order) and says PASS or FAIL per pair.

  compare_predictions.py --pair NAME=A,B,KIND [--pair ...] [--results FILE]
                         [--max-prob-diff 1e-3] [--min-agreement 0.995]
  compare_predictions.py --self-test

A and B are JSON lines or Parquet predictions as `infercost run --no-text` writes them (one
probability column per label, "label"; tools/gpu/hf_parity.py writes the same). KIND is
  fp32  the pair must agree within --max-prob-diff in every probability (the issue's 1e-3);
  low   fp16/bf16 against a reference: label agreement >= --min-agreement (99.5%);
  info  reported without a verdict.
Per pair: rows, max and mean |p_a - p_b|, the largest difference of log-probability margins
(log p_j - log p_0) over rows where every probability is in [1e-6, 1 - 1e-6] (the logits as
far as probabilities give them back), label agreement (argmax), and the verdict. A missing or
unreadable file, a row-count mismatch, a null in one file only, or a NaN is a FAIL. Each pair
also goes to --results as one JSON line. Exit status 1 when any pair failed.
"""

import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_common as gc  # noqa: E402


def compare(path_a, path_b):
    """Statistics of A against B; raises ValueError for what makes them incomparable."""
    cols_a, rows_a = gc.read_predictions(path_a)
    cols_b, rows_b = gc.read_predictions(path_b)
    if len(rows_a) != len(rows_b):
        raise ValueError("%d rows in %s, %d in %s" % (len(rows_a), path_a, len(rows_b), path_b))
    if rows_a and cols_a != cols_b:
        raise ValueError("columns %s in %s, %s in %s" % (cols_a, path_a, cols_b, path_b))
    max_diff, sum_diff, n_values, agree, compared, nulls, nans = 0.0, 0.0, 0, 0, 0, 0, 0
    null_mismatch = 0
    max_margin, margin_rows = 0.0, 0
    for a, b in zip(rows_a, rows_b):
        if a is None or b is None:
            if a is None and b is None:
                nulls += 1
            else:
                null_mismatch += 1
            continue
        if any(math.isnan(x) for x in a + b):
            nans += 1
            continue
        compared += 1
        for x, y in zip(a, b):
            d = abs(x - y)
            max_diff = max(max_diff, d)
            sum_diff += d
            n_values += 1
        if max(range(len(a)), key=a.__getitem__) == max(range(len(b)), key=b.__getitem__):
            agree += 1
        lo, hi = 1e-6, 1.0 - 1e-6
        if all(lo <= x <= hi for x in a + b):
            margin_rows += 1
            for j in range(1, len(a)):
                ma = math.log(a[j]) - math.log(a[0])
                mb = math.log(b[j]) - math.log(b[0])
                max_margin = max(max_margin, abs(ma - mb))
    return {
        "rows": len(rows_a),
        "compared": compared,
        "nulls": nulls,
        "null_mismatch": null_mismatch,
        "nan_rows": nans,
        "max_abs_prob_diff": max_diff,
        "mean_abs_prob_diff": sum_diff / n_values if n_values else 0.0,
        "max_margin_diff": max_margin if margin_rows else None,
        "margin_rows": margin_rows,
        "label_agreement": agree / compared if compared else 0.0,
    }


def verdict(stats, kind, max_prob_diff, min_agreement):
    """('PASS'|'FAIL'|'INFO', why)."""
    if stats.get("error"):
        return "FAIL", stats["error"]
    problems = []
    if stats["compared"] == 0:
        problems.append("no rows compared")
    if stats["nan_rows"]:
        problems.append("%d rows with NaN" % stats["nan_rows"])
    if stats["null_mismatch"]:
        problems.append("%d rows null in one file only" % stats["null_mismatch"])
    if kind == "fp32" and stats["max_abs_prob_diff"] > max_prob_diff:
        problems.append("max |dp| %.3g > %g" % (stats["max_abs_prob_diff"], max_prob_diff))
    if kind == "low" and stats["label_agreement"] < min_agreement:
        problems.append("label agreement %.3f%% < %.1f%%" % (100 * stats["label_agreement"], 100 * min_agreement))
    if kind == "info":
        return "INFO", "; ".join(problems)
    return ("FAIL", "; ".join(problems)) if problems else ("PASS", "")


def target_text(kind, max_prob_diff, min_agreement):
    if kind == "fp32":
        return "max |dp| <= %g" % max_prob_diff
    if kind == "low":
        return "labels >= %.1f%%" % (100 * min_agreement)
    return "(no target)"


def run_pair(name, path_a, path_b, kind, max_prob_diff, min_agreement):
    rec = {"kind": "parity", "name": name, "a": path_a, "b": path_b, "class": kind,
           "target": target_text(kind, max_prob_diff, min_agreement)}
    try:
        for p in (path_a, path_b):
            if not os.path.exists(p):
                raise ValueError("%s does not exist (its step failed or did not run)" % p)
        rec.update(compare(path_a, path_b))
    except (ValueError, OSError) as e:
        rec["error"] = str(e)
    rec["verdict"], rec["why"] = verdict(rec, kind, max_prob_diff, min_agreement)
    return rec


def format_line(rec):
    if rec.get("error"):
        return "PARITY %-26s %s: %s" % (rec["name"], rec["verdict"], rec["error"])
    margin = "n/a" if rec["max_margin_diff"] is None else "%.2e" % rec["max_margin_diff"]
    line = ("PARITY %-26s rows %d  max|dp| %.2e  mean|dp| %.2e  max|dmargin| %s  labels %.3f%%  target %s  %s"
            % (rec["name"], rec["rows"], rec["max_abs_prob_diff"], rec["mean_abs_prob_diff"], margin,
               100 * rec["label_agreement"], rec["target"], rec["verdict"]))
    return line + ("  (%s)" % rec["why"] if rec["why"] else "")


def parse_pair(spec):
    name, sep, rest = spec.partition("=")
    parts = rest.split(",")
    if not sep or not name or len(parts) != 3 or parts[2] not in ("fp32", "low", "info"):
        raise argparse.ArgumentTypeError("--pair %r: expected NAME=A,B,KIND with KIND fp32, low or info" % spec)
    return name, parts[0], parts[1], parts[2]


def self_test():
    import tempfile

    check = gc.Checks()

    labels = ["NEGATIVE", "POSITIVE"]
    with tempfile.TemporaryDirectory() as d:
        p = lambda name: os.path.join(d, name)  # noqa: E731
        ref = [[0.9, 0.1], [0.2, 0.8], [0.5001, 0.4999], [1.0, 0.0]]
        gc.write_predictions(p("ref.jsonl"), ref, labels, nulls=[3])
        gc.write_predictions(p("close.jsonl"), [[0.9004, 0.0996], [0.2, 0.8], [0.5001, 0.4999], [1, 0]],
                             labels, nulls=[3])
        gc.write_predictions(p("far.jsonl"), [[0.9, 0.1], [0.2, 0.8], [0.4990, 0.5010], [1, 0]], labels, nulls=[3])
        gc.write_predictions(p("short.jsonl"), ref[:2], labels)
        gc.write_predictions(p("nullone.jsonl"), ref, labels)
        with open(p("nan.jsonl"), "w") as f:
            f.write('{"negative": NaN, "positive": 0.1}\n' + '{"negative": 0.2, "positive": 0.8}\n' * 3)

        r = run_pair("close", p("close.jsonl"), p("ref.jsonl"), "fp32", 1e-3, 0.995)
        check(r["verdict"] == "PASS", "within 1e-3 passes: %s" % format_line(r))
        check(abs(r["max_abs_prob_diff"] - 4e-4) < 1e-9, "max diff 4e-4: %r" % r["max_abs_prob_diff"])
        check(r["compared"] == 3 and r["nulls"] == 1, "nulls in both are skipped: %r" % r)
        check(r["max_margin_diff"] is not None and r["max_margin_diff"] > 0, "margin diff measured")
        r = run_pair("far", p("far.jsonl"), p("ref.jsonl"), "fp32", 1e-3, 0.995)
        check(r["verdict"] == "FAIL" and "max |dp|" in r["why"], "1.1e-3 fails fp32: %s" % format_line(r))
        r = run_pair("far-low", p("far.jsonl"), p("ref.jsonl"), "low", 1e-3, 0.995)
        check(r["verdict"] == "FAIL" and abs(r["label_agreement"] - 2 / 3) < 1e-9,
              "a flipped label of 3 fails 99.5%%: %s" % format_line(r))
        r = run_pair("far-low-loose", p("far.jsonl"), p("ref.jsonl"), "low", 1e-3, 0.5)
        check(r["verdict"] == "PASS", "2/3 passes a 50%% agreement target")
        r = run_pair("info", p("far.jsonl"), p("ref.jsonl"), "info", 1e-3, 0.995)
        check(r["verdict"] == "INFO", "info has no verdict")
        r = run_pair("short", p("short.jsonl"), p("ref.jsonl"), "fp32", 1e-3, 0.995)
        check(r["verdict"] == "FAIL" and "2 rows" in r["error"], "row-count mismatch fails: %s" % r.get("error"))
        r = run_pair("nullone", p("nullone.jsonl"), p("ref.jsonl"), "fp32", 1e-3, 0.995)
        check(r["verdict"] == "FAIL" and "null in one" in r["why"], "a null in one file only fails: %s" % r["why"])
        r = run_pair("nan", p("nan.jsonl"), p("ref.jsonl"), "fp32", 1e-3, 0.995)
        check(r["verdict"] == "FAIL", "NaN fails: %s" % format_line(r))
        r = run_pair("missing", p("none.jsonl"), p("ref.jsonl"), "fp32", 1e-3, 0.995)
        check(r["verdict"] == "FAIL" and "does not exist" in r["error"], "a missing file fails")
        check(format_line(r).startswith("PARITY missing"), "format_line of an error")

        out = p("results.jsonl")
        rc = main(["--pair", "a=%s,%s,fp32" % (p("close.jsonl"), p("ref.jsonl")),
                   "--pair", "b=%s,%s,fp32" % (p("far.jsonl"), p("ref.jsonl")), "--results", out])
        check(rc == 1, "main exits 1 when a pair fails")
        with open(out) as f:
            lines = [json.loads(x) for x in f]
        check([x["verdict"] for x in lines] == ["PASS", "FAIL"], "results file: %r" % lines)
        check(main(["--pair", "a=%s,%s,fp32" % (p("close.jsonl"), p("ref.jsonl"))]) == 0, "main exits 0")
    try:
        parse_pair("x=a,b,wrong")
        check(False, "parse_pair accepts a bad kind")
    except argparse.ArgumentTypeError:
        pass
    return check.count()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pair", action="append", type=parse_pair, default=[], help="NAME=A,B,KIND")
    ap.add_argument("--results", help="append one JSON line per pair here")
    ap.add_argument("--max-prob-diff", type=float, default=1e-3)
    ap.add_argument("--min-agreement", type=float, default=0.995)
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args(argv)
    if args.self_test:
        return gc.self_test_exit("compare_predictions", self_test, gc.self_test)
    if not args.pair:
        ap.error("give at least one --pair")
    failed = False
    for name, a, b, kind in args.pair:
        rec = run_pair(name, a, b, kind, args.max_prob_diff, args.min_agreement)
        print(format_line(rec), flush=True)
        failed |= rec["verdict"] == "FAIL"
        if args.results:
            with open(args.results, "a", encoding="utf-8") as f:
                f.write(json.dumps(rec) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
