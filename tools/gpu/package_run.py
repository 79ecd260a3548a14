#!/usr/bin/env python3
"""The Python package (infercost.Model) on the GPU check's inputs, as `infercost run` writes them.

  package_run.py --model DIR --input FILE --out FILE --metrics FILE [--device cuda]
                 [--precision auto] [--auto-batch] [--max-length 512]

Loads DIR once with infercost.Model(device, precision) (the package beside this check's
binaries: PYTHONPATH at the archive's python/ folder), classifies the text column of FILE
(JSON lines or Parquet, column full_text; nulls stay null) in one Model.classify call, and
writes the predictions in `infercost run --no-text`'s JSON lines shape (one probability per
label, "label") for tools/gpu/compare_predictions.py, and the call's metrics
(Model.last_metrics: the run metrics' keys, its wall_seconds the classify call alone) with
load_seconds added, which tools/gpu/gpu_table.py reads as it reads the CLI's. --auto-batch
sizes batches from the device's memory (batch_size="auto", max_batch_tokens="auto").
Exit status 1 with the engine's message when the package cannot load or classify.
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_common as gc  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--metrics", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--precision", default="auto")
    ap.add_argument("--auto-batch", action="store_true")
    ap.add_argument("--max-length", type=int, default=512)
    args = ap.parse_args()

    try:
        import infercost
    except ImportError as e:
        sys.exit("package_run: cannot import infercost (%s); PYTHONPATH=%s, Python %s" %
                 (e, os.environ.get("PYTHONPATH", ""), sys.version.split()[0]))
    texts, nulls = gc.read_texts(args.input)
    for i in nulls:
        texts[i] = None
    batch = {"batch_size": "auto", "max_batch_tokens": "auto"} if args.auto_batch else {}
    try:
        start = time.perf_counter()
        model = infercost.Model(args.model, device=args.device, precision=args.precision,
                                max_length=args.max_length, **batch)
        load = time.perf_counter() - start
        result = model.classify(texts)
    except (RuntimeError, ValueError, OSError) as e:
        sys.exit("package_run: %s: %s" % (type(e).__name__, e))
    labels = model.info["labels"]
    probs = result.probabilities.tolist()
    gc.write_predictions(args.out, probs, labels, nulls=[i for i, n in enumerate(result.is_null.tolist()) if n])
    metrics = dict(model.last_metrics)
    metrics["load_seconds"] = load
    metrics["method"] = "infercost.Model.classify (Python package)"
    with open(args.metrics, "w", encoding="utf-8") as f:
        json.dump(metrics, f, indent=1)
    model.close()
    print("package_run: %d rows on %s (%s) in %.2f s (%.0f rows/s), model loaded in %.2f s; %s" %
          (metrics.get("rows", 0), args.device, metrics.get("precision"), metrics.get("wall_seconds", 0.0),
           metrics.get("rows_per_second") or 0.0, load, args.out))


if __name__ == "__main__":
    main()
