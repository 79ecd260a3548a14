#!/usr/bin/env python3
"""The 2021 study's method on GPUs, the baseline scripts/gpu-check.sh measures the engine against.

  study_method.py --model DIR --input FILE [--rows N] [--batch-size-per-gpu 40]
                  [--padding batch|file] [--max-length 512] [--attn default|eager|sdpa]
                  [--metrics FILE] [--name NAME] [--corpus-rows N] [--device cuda|cpu]
  study_method.py --self-test

As the study did ("Are GPUs Really Expensive? Benchmarking GPUs for Inference on Databricks
Clusters", Databricks engineering blog, 2021-12-15): HF AutoModelForSequenceClassification in PyTorch
eager fp32 (TF32 off; loaded as fp32 whatever the config's dtype), attention as transformers
picks it (--attn default: SDPA in transformers 5, faster than the study's), wrapped in torch.nn.DataParallel over every visible GPU, a fixed batch
of --batch-size-per-gpu x GPUs rows in input order, tokenizer(padding=True, truncation=True,
max_length=512), softmax probabilities moved to the CPU batch by batch.
  --padding file  the study's own tokenization: the whole input at once, every row padded
                  to the longest row of the file, then a DataLoader (no shuffling);
  --padding batch each batch tokenized in the loop and padded to its own longest row (a
                  stronger baseline than the study: far less padding).
Timed from before reading the input to after the last batch's probabilities are on the CPU
(read + tokenize + infer); the model load and one warm-up batch are left out, and nothing is
written (both favour this baseline over `infercost run`, whose wall time includes writing).
--rows N takes the first N rows (a subset when the corpus is larger: --corpus-rows says so in
the metrics). Prints a summary and writes the metrics as JSON (--metrics): rows, wall_seconds,
rows_per_second, tokens, computed_tokens, tokens_per_second, model_flops (real lengths, the
engine's formula), stages, gpus[] (torch peak allocated; NVML memory and utilization, sampled
every 0.2 s, when nvidia-ml-py is importable).
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_common as gc  # noqa: E402


class TokenCounts:
    """Real and computed tokens and model FLOPs of the batches seen (numpy attention masks)."""

    def __init__(self, shape):
        self.layers, self.hidden, self.ffn = shape[:3]
        self.tokens = 0
        self.computed = 0
        self.sum_len_sq = 0

    def add(self, mask):
        lengths = mask.sum(axis=1).astype("int64")
        self.tokens += int(lengths.sum())
        self.computed += int(mask.size)
        self.sum_len_sq += int((lengths * lengths).sum())

    def model_flops(self):
        # Sum over rows of gc.encoder_row_flops(L): linear in sum(L) and sum(L^2).
        h, f = float(self.hidden), float(self.ffn)
        return self.layers * (2.0 * (4 * h * h + 2 * h * f) * self.tokens + 4.0 * h * self.sum_len_sq)


def batches_of(tokenizer, texts, batch_size, max_length, timer):
    """Numpy encodings per batch in input order, each padded to its own longest row
    (--padding batch); tokenizing is timed as stage 'tokenize'."""
    for start in range(0, len(texts), batch_size):
        with timer.time("tokenize"):
            enc = dict(tokenizer(texts[start:start + batch_size], padding=True, truncation=True,
                                 max_length=max_length, return_tensors="np"))
        yield enc


def run(args):
    import numpy as np
    import torch
    import transformers
    from torch.utils.data import DataLoader, TensorDataset

    cuda = args.device == "cuda"
    if cuda and not torch.cuda.is_available():
        sys.exit("study_method: torch sees no CUDA device (torch %s)" % torch.__version__)
    gc.ieee_fp32(torch)
    n_gpus = torch.cuda.device_count() if cuda else 0
    batch_size = args.batch_size_per_gpu * max(n_gpus, 1)
    shape = gc.model_shape(args.model)

    tokenizer = gc.load_tokenizer(args.model)
    kwargs = {} if args.attn == "default" else {"attn_implementation": args.attn}
    dev0 = torch.device("cuda:0" if cuda else "cpu")
    module = gc.load_classifier(args.model, **kwargs).to(dev0)
    # The study's wrapper over every GPU (on one GPU it moves the inputs and calls the
    # module); --device cpu (testing the tool) calls the module itself.
    model = torch.nn.DataParallel(module, device_ids=list(range(n_gpus))) if cuda else module

    def infer(enc):
        inputs = {k: torch.from_numpy(v).to(dev0) for k, v in gc.forward_inputs(module, enc).items()}
        out = model(**inputs)
        logits = out.logits if hasattr(out, "logits") else out[0]
        return torch.softmax(logits, dim=-1).cpu().numpy()

    # One warm-up batch (cuBLAS handles, kernels), left out of the timing.
    with torch.no_grad():
        warm, _ = gc.read_texts(args.input, args.column, batch_size)
        infer(dict(tokenizer(warm, padding=True, truncation=True, max_length=args.max_length,
                             return_tensors="np")))
    for i in range(n_gpus):
        torch.cuda.synchronize(i)
        torch.cuda.reset_peak_memory_stats(i)

    timer = gc.Stopwatch()
    counts = TokenCounts(shape)
    sampler = gc.NvmlSampler().start()
    t0 = time.perf_counter()
    with timer.time("read"):
        texts, nulls = gc.read_texts(args.input, args.column, args.rows)
    parts = []
    padded_length = 0
    with torch.no_grad():
        if args.padding == "file":
            # The study: the whole file tokenized and padded at once, then a DataLoader.
            with timer.time("tokenize"):
                enc = tokenizer(texts, padding=True, truncation=True, max_length=args.max_length, return_tensors="pt")
                names = [k for k in ("input_ids", "attention_mask", "token_type_ids")
                         if k in enc and k in gc.forward_inputs(module, enc)]
                loader = DataLoader(TensorDataset(*[enc[k] for k in names]), batch_size=batch_size, shuffle=False)
            padded_length = int(enc["input_ids"].shape[1]) if texts else 0
            for tensors in loader:
                batch = {k: t.numpy() for k, t in zip(names, tensors)}
                counts.add(batch["attention_mask"])
                with timer.time("infer"):
                    parts.append(infer(batch))
        else:
            for batch in batches_of(tokenizer, texts, batch_size, args.max_length, timer):
                counts.add(batch["attention_mask"])
                padded_length = max(padded_length, int(batch["input_ids"].shape[1]))
                with timer.time("infer"):
                    parts.append(infer(batch))
    probs = np.concatenate(parts) if parts else np.zeros((0, len(shape[3])), np.float32)
    wall = time.perf_counter() - t0
    gpus = sampler.stop()
    if probs.shape[0] != len(texts):
        sys.exit("study_method: %d probabilities for %d rows" % (probs.shape[0], len(texts)))

    for i in range(n_gpus):
        entry = gpus[i] if i < len(gpus) else {"index": i}
        entry["memory_total_bytes"] = entry.get("memory_total_bytes") or torch.cuda.get_device_properties(i).total_memory
        entry["torch_max_allocated_bytes"] = int(torch.cuda.max_memory_allocated(i))
        entry["name"] = torch.cuda.get_device_name(i)
        if i >= len(gpus):
            gpus.append(entry)
    rows = len(texts)
    flops = counts.model_flops()
    metrics = {
        "name": args.name or "study b%d/GPU %s padding" % (args.batch_size_per_gpu, args.padding),
        "method": "study",
        "rows": rows,
        "rows_null": len(nulls),
        "corpus_rows": args.corpus_rows or rows,
        "subset": bool(args.corpus_rows and rows < args.corpus_rows),
        "wall_seconds": wall,
        "rows_per_second": rows / wall if wall > 0 else 0.0,
        "tokens": counts.tokens,
        "computed_tokens": counts.computed,
        "padding_efficiency": counts.tokens / counts.computed if counts.computed else 0.0,
        "tokens_per_second": counts.tokens / wall if wall > 0 else 0.0,
        "model_flops": flops,
        "model_flops_per_second": flops / wall if wall > 0 else 0.0,
        "stages": timer.seconds,
        "batch_size": batch_size,
        "batch_size_per_gpu": args.batch_size_per_gpu,
        "gpus_used": n_gpus,
        "device": args.device,
        "padding": args.padding,
        "padded_length_max": padded_length,
        "max_length": args.max_length,
        "precision": "fp32",
        "attn_implementation": getattr(module.config, "_attn_implementation", "?"),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "gpus": gpus,
        "gpu_monitor": sampler.error,
        "output": "not written (probabilities kept in memory)",
    }
    print("study_method: %s: %d rows in %.2f s = %.0f rows/s, %.0f tokens/s (%.1f%% padding efficiency), "
          "%.1f model TFLOP/s; stages %s" %
          (metrics["name"], rows, wall, metrics["rows_per_second"], metrics["tokens_per_second"],
           100 * metrics["padding_efficiency"], metrics["model_flops_per_second"] / 1e12,
           ", ".join("%s %.2f" % kv for kv in sorted(timer.seconds.items()))), flush=True)
    if args.metrics:
        with open(args.metrics, "w", encoding="utf-8") as f:
            json.dump(metrics, f, indent=2)
            f.write("\n")
    return 0


def self_test():
    """What runs without torch: token and FLOP accounting, batching (with transformers'
    tokenizer on the committed tiny model when it is importable)."""
    check = gc.Checks()
    try:
        import numpy as np
    except ImportError:
        print("skip: numpy not importable")
        return 0
    counts = TokenCounts((6, 768, 3072, ["N", "P"]))
    counts.add(np.array([[1, 1, 1, 0], [1, 1, 1, 1]]))
    counts.add(np.array([[1, 1]]))
    check(counts.tokens == 9 and counts.computed == 10, "tokens %d computed %d" % (counts.tokens, counts.computed))
    expect = sum(gc.encoder_row_flops(6, 768, 3072, n) for n in (3, 4, 2))
    check(abs(counts.model_flops() - expect) <= 1e-9 * expect, "model_flops %g vs %g" % (counts.model_flops(), expect))
    tok = gc.tiny_tokenizer()
    if tok is None:
        return check.count()
    texts = ["a", "a b c d e f", "a b", "a b c"]
    timer = gc.Stopwatch()
    got = [b["input_ids"].shape for b in batches_of(tok, texts, 2, 512, timer)]
    check(got == [(2, 8), (2, 5)], "each batch padded to its own longest row: %r" % got)
    check("tokenize" in timer.seconds, "the tokenizer is timed")
    got = [b["input_ids"].shape for b in batches_of(tok, texts, 3, 4, timer)]
    check(got == [(3, 4), (1, 4)], "truncation to max_length 4: %r" % got)
    return check.count()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model")
    ap.add_argument("--input")
    ap.add_argument("--column", default="full_text")
    ap.add_argument("--rows", type=int, default=0, help="first N rows only (0: all)")
    ap.add_argument("--corpus-rows", type=int, default=0, help="rows of the whole corpus (marks a subset)")
    ap.add_argument("--batch-size-per-gpu", type=int, default=40)
    ap.add_argument("--padding", choices=["batch", "file"], default="batch")
    ap.add_argument("--max-length", type=int, default=512)
    ap.add_argument("--attn", default="default", choices=["default", "eager", "sdpa"])
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                    help="cpu: no GPU, for testing the tool (the figures mean nothing)")
    ap.add_argument("--metrics")
    ap.add_argument("--name")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return gc.self_test_exit("study_method", self_test, gc.self_test)
    if not (args.model and args.input):
        ap.error("--model and --input are required")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
