#!/usr/bin/env python3
"""Length distribution of a synthetic tweet corpus in BERT tokens.

Reads JSON lines {"id", "full_text"} (as written by `infercost datagen` or the
test-only tests/corpus/datagen_tool) and tokenizes every text with the real
bert-base-uncased WordPiece vocabulary, without truncation. Token counts
include [CLS] and [SEP], so "truncated" means more than --max-length tokens.

    python3 tools/datagen_stats.py corpus.jsonl \
        --vocab PATH/TO/bert-base-uncased/vocab.txt
"""
import argparse
import json
import sys

import numpy as np
from transformers import BertTokenizerFast


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("jsonl")
    parser.add_argument("--vocab", required=True, help="a BERT uncased vocab.txt")
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()

    texts = []
    with open(args.jsonl, encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            row = json.loads(line)
            if not isinstance(row.get("full_text"), str):
                print(f"{args.jsonl}: line {line_no}: no string full_text", file=sys.stderr)
                return 1
            texts.append(row["full_text"])

    tokenizer = BertTokenizerFast(vocab_file=args.vocab, do_lower_case=True)
    lengths = np.zeros(len(texts), dtype=np.int64)
    unk = 0
    total = 0
    chunk = 4096
    for start in range(0, len(texts), chunk):
        enc = tokenizer(texts[start:start + chunk], add_special_tokens=True, truncation=False)
        for i, ids in enumerate(enc["input_ids"]):
            lengths[start + i] = len(ids)
            unk += ids.count(tokenizer.unk_token_id)
            total += len(ids)
    words = np.array([len(t.split()) for t in texts], dtype=np.int64)

    stats = {
        "rows": int(len(texts)),
        "tokens_mean": float(lengths.mean()),
        "tokens_p50": float(np.percentile(lengths, 50)),
        "tokens_p90": float(np.percentile(lengths, 90)),
        "tokens_p99": float(np.percentile(lengths, 99)),
        "tokens_p999": float(np.percentile(lengths, 99.9)),
        "tokens_max": int(lengths.max()),
        "tokens_min": int(lengths.min()),
        "fraction_over_max_length": float((lengths > args.max_length).mean()),
        "rows_over_max_length": int((lengths > args.max_length).sum()),
        "tokens_total": int(total),
        "unk_fraction": float(unk / max(total, 1)),
        "words_mean": float(words.mean()),
        "words_p50": float(np.percentile(words, 50)),
        "chars_mean": float(np.mean([len(t) for t in texts])),
    }
    if args.json:
        print(json.dumps(stats, indent=2))
        return 0
    print(f"rows                 {stats['rows']}")
    print(f"BERT tokens (with [CLS]/[SEP]): mean {stats['tokens_mean']:.1f}  p50 {stats['tokens_p50']:.0f}  "
          f"p90 {stats['tokens_p90']:.0f}  p99 {stats['tokens_p99']:.0f}  p99.9 {stats['tokens_p999']:.0f}  "
          f"min {stats['tokens_min']}  max {stats['tokens_max']}")
    print(f"over {args.max_length} tokens        {stats['rows_over_max_length']} rows "
          f"({100 * stats['fraction_over_max_length']:.2f}%)")
    print(f"[UNK] share          {100 * stats['unk_fraction']:.2f}% of tokens")
    print(f"whitespace words     mean {stats['words_mean']:.1f}  p50 {stats['words_p50']:.0f}")
    print(f"characters           mean {stats['chars_mean']:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
