"""Shared pieces of the peer benchmarks (bench/peers/*_method.py).

Peers are benchmark opponents only: nothing in the engine imports Python.
Each peer reads the same input with pandas, writes the same output columns as
`infercost run` (text, one lowercased probability column per label, label)
and prints one JSON line of metrics with the keys of `infercost run --metrics`
where they mean the same thing.
"""

import json
import os
import resource
import sys
import time


def add_common_args(ap):
    """The arguments every peer takes: input file, model directory, output file, text column, threads."""
    ap.add_argument("input")
    ap.add_argument("--model", required=True)
    ap.add_argument("--output", required=True)
    ap.add_argument("--column", default="full_text")
    ap.add_argument("--threads", type=int, default=os.cpu_count())


def read_config(model_dir):
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        return json.load(f)


def labels_of(config):
    id2label = config.get("id2label") or {"0": "NEGATIVE", "1": "POSITIVE"}
    return [id2label[str(i)] if str(i) in id2label else id2label[i] for i in range(len(id2label))]


def read_input(path, column):
    """Reads a JSON lines / JSON / CSV / Parquet file (or a folder of them) into a DataFrame with pandas."""
    import pandas as pd

    if os.path.isdir(path):
        names = sorted(n for n in os.listdir(path) if not n.startswith("."))
        frames = [read_input(os.path.join(path, n), column) for n in names]
        return pd.concat(frames, ignore_index=True)
    lower = path.lower()
    if lower.endswith(".parquet"):
        df = pd.read_parquet(path, columns=[column])
    elif lower.endswith(".jsonl") or lower.endswith(".ndjson"):
        df = pd.read_json(path, lines=True, dtype=False)
    elif lower.endswith(".json"):
        df = pd.read_json(path, dtype=False)
    elif lower.endswith(".csv"):
        df = pd.read_csv(path, dtype={column: "string"}, keep_default_na=False)
    else:
        sys.exit("peers: unknown input format: %s" % path)
    if column not in df.columns:
        sys.exit("peers: %s has no column %r" % (path, column))
    return df[[column]]


def texts_of(df, column):
    """The column as a list of str; nulls become "" (their predictions are nulled afterwards)."""
    values = df[column].tolist()
    nulls = [i for i, v in enumerate(values) if not isinstance(v, str)]
    for i in nulls:
        values[i] = ""
    return values, nulls


def write_output(df, column, probs, labels, nulls, path):
    """probs: numpy [rows, num_labels] float32, rows in input order."""
    import numpy as np

    out = df.rename(columns={column: "text"})
    for j, name in enumerate(labels):
        out[name.lower()] = probs[:, j]
    out["label"] = [labels[k] for k in np.argmax(probs, axis=1)]
    if nulls:
        out.loc[nulls, [n.lower() for n in labels] + ["label"]] = None
    if path.lower().endswith(".parquet"):
        out.to_parquet(path, index=False)
    elif path.lower().endswith(".jsonl"):
        out.to_json(path, orient="records", lines=True, force_ascii=False)
    else:
        out.to_csv(path, index=False)


class Stages:
    """Wall-clock seconds per stage, like the engine's summary."""

    def __init__(self):
        self.seconds = {}

    def time(self, name):
        stages = self

        class _Timer:
            def __enter__(self):
                self.start = time.perf_counter()

            def __exit__(self, *exc):
                stages.seconds[name] = stages.seconds.get(name, 0.0) + time.perf_counter() - self.start

        return _Timer()


def peak_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def emit_metrics(method, rows, tokens, computed_tokens, stages, threads, batch_size, extra=None, path=None):
    """Prints (and optionally writes) one JSON line. wall_seconds excludes model load, as the engine's does."""
    wall = sum(v for k, v in stages.seconds.items() if k != "load")
    metrics = {
        "method": method,
        "rows": rows,
        "tokens": tokens,
        "computed_tokens": computed_tokens,
        "padding_efficiency": tokens / computed_tokens if computed_tokens else 1.0,
        "wall_seconds": wall,
        "rows_per_second": rows / wall if wall else 0.0,
        "tokens_per_second": tokens / wall if wall else 0.0,
        "peak_rss_bytes": peak_rss_bytes(),
        "stages": dict(sorted(stages.seconds.items())),
        "threads": threads,
        "batch_size": batch_size,
    }
    if extra:
        metrics.update(extra)
    line = json.dumps(metrics)
    print(line, flush=True)
    if path:
        with open(path, "w", encoding="utf-8") as f:
            f.write(line + "\n")
    return metrics
