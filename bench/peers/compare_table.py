#!/usr/bin/env python3
"""Prints bench/cpu_compare.sh's table from the runs' metrics and predictions.

  compare_table.py RUN... where each RUN is three arguments: NAME:KIND:PRECISION METRICS OUTPUT

KIND is `ours` or `peer`; PRECISION is fp32, bf16 or int8. The first run must be ours at fp32: it is
the reference for label agreement and probability differences (row by row, input order). Each peer's
"ours / peer" ratio uses our run at the peer's precision (our first run of that precision), so ORT
int8 is compared with our int8 and the study's fp32 PyTorch with our fp32. METRICS is
`infercost run --metrics` JSON or the JSON line a peer script wrote.
"""

import json
import sys

import numpy as np
import pandas as pd


def load_predictions(path):
    if path.endswith(".parquet"):
        return pd.read_parquet(path)
    if path.endswith(".jsonl"):
        return pd.read_json(path, lines=True, dtype=False)
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


def load_metrics(path):
    with open(path, encoding="utf-8") as f:
        text = f.read().strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return json.loads(text.splitlines()[0])


def main():
    args = sys.argv[1:]
    if not args or len(args) % 3:
        sys.exit(__doc__)
    runs = []
    for i in range(0, len(args), 3):
        name, kind, precision = args[i].rsplit(":", 2)
        runs.append({"name": name, "kind": kind, "precision": precision, "m": load_metrics(args[i + 1]),
                     "pred": load_predictions(args[i + 2])})
    ref = runs[0]
    if ref["kind"] != "ours" or ref["precision"] != "fp32":
        sys.exit("compare_table: the first run must be ours at fp32 (the reference)")
    ours_at = {}
    for r in runs:
        if r["kind"] == "ours":
            ours_at.setdefault(r["precision"], r)
    prob_cols = [c for c in ref["pred"].columns if c not in ("text", "label")]

    print("| run | precision | rows | rows/s | tokens/s (real) | padding efficiency | wall s | infer s |"
          " infer share | peak RSS MiB | ours / this (rows/s, same precision) | label agreement with ours fp32 |"
          " max / mean abs prob diff |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        m, pred = r["m"], r["pred"]
        computed = m.get("computed_tokens") or m["tokens"]
        eff = m["tokens"] / computed if computed else 1.0
        infer = m["stages"].get("infer", float("nan"))
        share = infer / m["wall_seconds"] if m["wall_seconds"] else float("nan")
        ratio = "-"
        if r["kind"] == "peer" and r["precision"] in ours_at:
            ratio = "%.2fx (ours %s)" % (ours_at[r["precision"]]["m"]["rows_per_second"] / m["rows_per_second"],
                                         r["precision"])
        elif r["kind"] == "peer":
            ratio = "no ours at %s" % r["precision"]
        if r is ref:
            agree, diff = "-", "-"
        elif len(pred) != len(ref["pred"]):
            agree, diff = "row count differs (%d vs %d)" % (len(pred), len(ref["pred"])), "-"
        else:
            both = ref["pred"]["label"].notna() & pred["label"].notna()
            same = ref["pred"]["label"][both] == pred["label"][both]
            agree = "%.2f%% (%d/%d)" % (100.0 * same.mean(), int(same.sum()), int(both.sum()))
            d = np.abs(ref["pred"].loc[both, prob_cols].to_numpy(np.float64) -
                       pred.loc[both, prob_cols].to_numpy(np.float64))
            diff = "%.2e / %.2e" % (d.max(), d.mean()) if d.size else "-"
        print("| %s | %s | %d | %.1f | %.0f | %.1f%% | %.1f | %.1f | %.2f | %.0f | %s | %s | %s |" % (
            r["name"], r["precision"], m["rows"], m["rows_per_second"], m["tokens_per_second"], 100.0 * eff,
            m["wall_seconds"], infer, share, m["peak_rss_bytes"] / 2**20, ratio, agree, diff))
    print()
    print("wall s excludes model load (and the ONNX export) for every run; tokens/s counts real tokens only;")
    print("padding efficiency = real tokens / tokens the model computed on; infer share = inference seconds /")
    print("wall seconds (ours: busy seconds of the inference stage, which overlaps reading, tokenizing and writing).")
    for r in runs:
        m = r["m"]
        extra = {k: m[k] for k in ("batching", "batch_size", "max_batch_tokens", "threads", "padded_length",
                                   "attn_implementation", "torch", "onnxruntime") if k in m}
        stages = " ".join("%s %.2f" % (k, v) for k, v in sorted(m["stages"].items()))
        print("- %s: stages (s) %s; %s" % (r["name"], stages, ", ".join("%s %s" % kv for kv in extra.items())))


if __name__ == "__main__":
    main()
