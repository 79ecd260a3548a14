#!/usr/bin/env python3
"""HF tokenizers' single-threaded throughput on the texts tokenizer_speed_bench
reads: roberta-base's tokenizer (RobertaTokenizerFast from vocab.json +
merges.txt, `<mask>` lstrip), truncation 512, or a tokenizer.json
(tokenizers.Tokenizer.from_file, truncation MAX_LENGTH), special tokens added,
Tokenizer.encode_batch over all texts; best of 3 passes of REPS rounds.
Run with RAYON_NUM_THREADS=1 (bench/tokenizer_speed.sh does).

  hf_tokenizer_speed.py VOCAB_JSON MERGES_TXT TEXTS_JSONL [REPS]
  hf_tokenizer_speed.py --json TOKENIZER_JSON MAX_LENGTH TEXTS_JSONL [REPS]
"""
import json
import sys
import time

from tokenizers import AddedToken
from transformers import RobertaTokenizerFast


def main():
    args = sys.argv[1:]
    json_file = args[0] == "--json"
    if json_file:
        args = args[1:]
    first, second, path = args[:3]
    reps = int(args[3]) if len(args) > 3 else 5
    if json_file:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(first)
        tok.enable_truncation(int(second))
    else:
        mask = AddedToken("<mask>", lstrip=True, rstrip=False, normalized=False, special=True)
        tok = RobertaTokenizerFast(vocab=first, merges=second, mask_token=mask).backend_tokenizer
        tok.enable_truncation(512)
    texts = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            j = json.loads(line)
            if j.get("v", "default") == "default":
                texts.append(j["t"])
    best = float("inf")
    tokens = 0
    for _ in range(3):
        tokens = 0
        t0 = time.perf_counter()
        for _ in range(reps):
            for enc in tok.encode_batch(texts):
                tokens += len(enc.ids)
        best = min(best, time.perf_counter() - t0)
    print("hf texts=%d reps=%d tokens=%d seconds=%.4f tokens_per_s=%.0f" % (len(texts), reps, tokens, best,
                                                                            tokens / best))


if __name__ == "__main__":
    main()
