#!/usr/bin/env python3
"""HF tokenizers' side of bench/unigram_speed.sh: Tokenizer.from_file on the
same tokenizer.json, truncation to 512, then Tokenizer.encode on each text in a
loop on one thread (TOKENIZERS_PARALLELISM=false, RAYON_NUM_THREADS=1).
Prints one JSON line with the same fields as unigram_speed_bench.

  hf_unigram_speed.py --tokenizer PATH --texts FILE [--passes 5]
"""
import argparse
import json
import os
import statistics
import time

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("RAYON_NUM_THREADS", "1")

from tokenizers import Tokenizer, __version__  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--texts", required=True)
    ap.add_argument("--passes", type=int, default=5)
    a = ap.parse_args()
    t0 = time.perf_counter()
    tok = Tokenizer.from_file(a.tokenizer)
    tok.enable_truncation(512)
    load = time.perf_counter() - t0
    with open(a.texts, encoding="utf-8") as f:
        texts = [json.loads(line) for line in f]
    seconds = []
    tokens = checksum = 0
    for p in range(a.passes + 1):  # the first pass warms up
        n = s = 0
        start = time.perf_counter()
        for t in texts:
            ids = tok.encode(t).ids
            n += len(ids)
        elapsed = time.perf_counter() - start
        if p > 0:
            seconds.append(elapsed)
        tokens = n
    # The checksum outside the timed loop (Python arithmetic is not HF's cost).
    for t in texts:
        checksum += sum(i * (k + 1) for k, i in enumerate(tok.encode(t).ids))
    med = statistics.median(seconds)
    print(json.dumps({"impl": f"hf tokenizers {__version__}", "load_s": load, "texts": len(texts),
                      "tokens": tokens, "pass_s": med, "tokens_per_s": tokens / med,
                      "texts_per_s": len(texts) / med, "checksum": checksum % 2**64}))


if __name__ == "__main__":
    main()
