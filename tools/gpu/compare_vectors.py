#!/usr/bin/env python3
"""Compares embedding files row by row (same rows, same order) and says PASS or FAIL per pair.

  compare_vectors.py --pair NAME=A,B,KIND [--pair ...] [--results FILE]
                     [--max-diff 1e-4] [--min-cosine 0.99]
  compare_vectors.py --self-test

A and B are JSON lines as `infercost embed --no-text` writes them ({"embedding": [...]} per row,
null for a null text). KIND is
  fp32  every element within --max-diff (fp32 on two backends);
  low   a reduced precision against a reference: every row's cosine >= --min-cosine;
  info  reported without a verdict.
Per pair: rows, the largest element difference, the least and mean cosine, and the verdict. A
missing or unreadable file, a row-count or length mismatch, a null in one file only, or a NaN is a
FAIL. Each pair also goes to --results as one JSON line. Exit status 1 when any pair failed.
Standard library only (the GPU machine's Python has no numpy guarantee).
"""

import argparse
import json
import math
import os
import sys
import tempfile


def read_vectors(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f.read().split("\n"), 1):
            if not line:
                continue
            value = json.loads(line).get("embedding", "missing")
            if value == "missing":
                raise ValueError(f"{path}: line {n} has no 'embedding'")
            rows.append(value)
    return rows


def compare(path_a, path_b):
    a_rows, b_rows = read_vectors(path_a), read_vectors(path_b)
    if len(a_rows) != len(b_rows):
        raise ValueError(f"{len(a_rows)} rows in {path_a}, {len(b_rows)} in {path_b}")
    max_diff, least, total, compared = 0.0, 1.0, 0.0, 0
    for i, (a, b) in enumerate(zip(a_rows, b_rows)):
        if a is None or b is None:
            if (a is None) != (b is None):
                raise ValueError(f"row {i}: null in one file only")
            continue
        if len(a) != len(b):
            raise ValueError(f"row {i}: {len(a)} values against {len(b)}")
        if any(math.isnan(x) for x in a + b):
            raise ValueError(f"row {i}: NaN")
        max_diff = max(max_diff, max(abs(x - y) for x, y in zip(a, b)))
        dot = sum(x * y for x, y in zip(a, b))
        norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
        cos = dot / norms if norms > 0 else 1.0
        least = min(least, cos)
        total += cos
        compared += 1
    return {"rows": len(a_rows), "compared": compared, "max_diff": max_diff, "min_cosine": least,
            "mean_cosine": total / compared if compared else 1.0}


def verdict(kind, stats, args):
    if kind == "fp32":
        return "PASS" if stats["max_diff"] <= args.max_diff else "FAIL"
    if kind == "low":
        return "PASS" if stats["min_cosine"] >= args.min_cosine else "FAIL"
    return "INFO"


def run_pairs(args):
    failed = False
    for spec in args.pair:
        name, _, files = spec.partition("=")
        path_a, path_b, kind = files.split(",")
        try:
            stats = compare(path_a, path_b)
            status = verdict(kind, stats, args)
        except (OSError, ValueError) as e:
            stats, status = {"error": str(e)}, "FAIL"
        failed |= status == "FAIL"
        line = {"kind": "embedding_pair", "name": name, "pair_kind": kind, "status": status, **stats}
        print(json.dumps(line))
        if args.results:
            with open(args.results, "a") as f:
                f.write(json.dumps(line) + "\n")
    return 1 if failed else 0


def self_test():
    with tempfile.TemporaryDirectory() as tmp:
        def write(name, rows):
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                for r in rows:
                    f.write(json.dumps({"embedding": r}) + "\n")
            return path

        a = write("a.jsonl", [[1.0, 0.0], None, [0.6, 0.8]])
        b = write("b.jsonl", [[1.0, 0.00005], None, [0.6, 0.8]])
        c = write("c.jsonl", [[0.0, 1.0], None, [0.6, 0.8]])
        d = write("d.jsonl", [[1.0, 0.0], [1.0, 0.0], [0.6, 0.8]])
        args = argparse.Namespace(max_diff=1e-4, min_cosine=0.99)
        assert verdict("fp32", compare(a, b), args) == "PASS"
        assert verdict("fp32", compare(a, c), args) == "FAIL"
        assert verdict("low", compare(a, c), args) == "FAIL" and compare(a, c)["min_cosine"] < 1e-9
        assert compare(a, b)["compared"] == 2
        try:
            compare(a, d)
            raise AssertionError("a null in one file only must fail")
        except ValueError:
            pass
    print("compare_vectors.py: self-test passed")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pair", action="append", default=[])
    parser.add_argument("--results")
    parser.add_argument("--max-diff", type=float, default=1e-4)
    parser.add_argument("--min-cosine", type=float, default=0.99)
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    return run_pairs(args)


if __name__ == "__main__":
    sys.exit(main())
