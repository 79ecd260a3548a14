#!/usr/bin/env python3
"""Prints bench/cpu_compare.sh's table from the runs' metrics and predictions.

  compare_table.py OURS_METRICS OURS_OUTPUT [NAME METRICS OUTPUT]...

OURS_METRICS is `infercost run --metrics` JSON; each peer's METRICS is the JSON line its script wrote.
Predictions are compared row by row (input order): label agreement with ours, and the largest and
mean absolute difference of the per-label probabilities.
"""

import json
import sys

import numpy as np
import pandas as pd


def load_predictions(path):
    if path.endswith(".parquet"):
        df = pd.read_parquet(path)
    elif path.endswith(".jsonl"):
        df = pd.read_json(path, lines=True, dtype=False)
    else:
        df = pd.read_csv(path, keep_default_na=False, na_values=[""])
    return df


def main():
    args = sys.argv[1:]
    if len(args) < 2 or (len(args) - 2) % 3:
        sys.exit(__doc__)
    with open(args[0], encoding="utf-8") as f:
        ours = json.load(f)
    ours_pred = load_predictions(args[1])
    runs = [("infercost (ours)", ours, ours_pred)]
    for i in range(2, len(args), 3):
        with open(args[i + 1], encoding="utf-8") as f:
            runs.append((args[i], json.loads(f.readline()), load_predictions(args[i + 2])))

    prob_cols = [c for c in ours_pred.columns if c not in ("text", "label")]
    print("| run | rows | rows/s | tokens/s (real) | padding efficiency | wall s | infer s | peak RSS MiB |"
          " ours / this (rows/s) | label agreement with ours | max / mean abs prob diff |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, m, pred in runs:
        computed = m.get("computed_tokens") or m["tokens"]
        eff = m["tokens"] / computed if computed else 1.0
        if m is ours:
            ratio, agree, diff = "-", "-", "-"
        else:
            ratio = "%.2fx" % (ours["rows_per_second"] / m["rows_per_second"])
            if len(pred) != len(ours_pred):
                agree, diff = "row count differs (%d vs %d)" % (len(pred), len(ours_pred)), "-"
            else:
                both = ours_pred["label"].notna() & pred["label"].notna()
                agree = "%.2f%% (%d/%d)" % (100.0 * (ours_pred["label"][both] == pred["label"][both]).mean(),
                                            int((ours_pred["label"][both] == pred["label"][both]).sum()),
                                            int(both.sum()))
                d = np.abs(ours_pred.loc[both, prob_cols].to_numpy(np.float64) -
                           pred.loc[both, prob_cols].to_numpy(np.float64))
                diff = "%.2e / %.2e" % (d.max(), d.mean()) if d.size else "-"
        print("| %s | %d | %.1f | %.0f | %.1f%% | %.1f | %.1f | %.0f | %s | %s | %s |" % (
            name, m["rows"], m["rows_per_second"], m["tokens_per_second"], 100.0 * eff, m["wall_seconds"],
            m["stages"].get("infer", float("nan")), m["peak_rss_bytes"] / 2**20, ratio, agree, diff))
    print()
    print("wall s excludes model load (and the ONNX export) for every run; tokens/s counts real tokens only;")
    print("padding efficiency = real tokens / tokens the model computed on.")
    for name, m, _ in runs:
        extra = {k: m[k] for k in ("batch_size", "threads", "padded_length", "attn_implementation", "torch",
                                   "onnxruntime") if k in m}
        stages = " ".join("%s %.2f" % (k, v) for k, v in sorted(m["stages"].items()))
        print("- %s: stages (s) %s; %s" % (name, stages, ", ".join("%s %s" % kv for kv in extra.items())))


if __name__ == "__main__":
    main()
