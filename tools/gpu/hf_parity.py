#!/usr/bin/env python3
"""HF transformers predictions on the GPU, the oracle the CUDA backend is compared with.

  hf_parity.py --model DIR --input FILE --out-dir DIR [--precisions fp32,bf16,fp16]
               [--device cuda] [--batch-size 64] [--max-length 512] [--rows N]
  hf_parity.py --self-test

Loads DIR (an `infercost model synth` directory or any HF DistilBERT/BERT classifier) with
AutoModelForSequenceClassification and AutoTokenizer, unchanged, and for each precision
classifies the texts of FILE (JSON lines or Parquet, column full_text) in input order:
batches of --batch-size rows, tokenizer(padding=True, truncation=True, max_length), the
model converted from the fp32 checkpoint to that dtype (a fresh copy each time), softmax
in fp32. fp32 runs with TF32 off (IEEE fp32 matmuls), as the engine's fp32 does.
Writes OUT_DIR/hf-<precision>.jsonl in the engine's --no-text JSON lines shape (one
probability per label, "label"), for tools/gpu/compare_predictions.py.
"""

import argparse
import copy
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_common as gc  # noqa: E402


def tokenize_batches(tokenizer, texts, batch_size, max_length):
    """(start, numpy encodings) per batch of texts, each padded to its own longest row."""
    for start in range(0, len(texts), batch_size):
        enc = tokenizer(texts[start:start + batch_size], padding=True, truncation=True, max_length=max_length,
                        return_tensors="np")
        yield start, dict(enc)


def run(args):
    import numpy as np
    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        sys.exit("hf_parity: --device %s but torch sees no CUDA device (torch %s)" % (args.device, torch.__version__))
    dev = torch.device(args.device)
    gc.ieee_fp32(torch)
    dtypes = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
    precisions = [p for p in args.precisions.split(",") if p]
    for p in precisions:
        if p not in dtypes:
            sys.exit("hf_parity: --precisions: %r is not fp32, bf16 or fp16" % p)

    texts, nulls = gc.read_texts(args.input, args.column, args.rows)
    labels = gc.model_shape(args.model)[3]
    tokenizer = gc.load_tokenizer(args.model)
    base = gc.load_classifier(args.model)
    print("hf_parity: %s (%s), %d rows of %s, torch %s, attention %s, device %s" %
          (args.model, type(base).__name__, len(texts), args.input, torch.__version__,
           getattr(base.config, "_attn_implementation", "?"), torch.cuda.get_device_name(dev)
           if dev.type == "cuda" else dev), flush=True)
    batches = list(tokenize_batches(tokenizer, texts, args.batch_size, args.max_length))
    os.makedirs(args.out_dir, exist_ok=True)
    for p in precisions:
        model = copy.deepcopy(base).to(device=dev, dtype=dtypes[p])
        t0 = time.perf_counter()
        probs = np.zeros((len(texts), len(labels)), np.float32)
        with torch.inference_mode():
            for start, enc in batches:
                inputs = {k: torch.from_numpy(v).to(dev) for k, v in gc.forward_inputs(model, enc).items()}
                logits = model(**inputs).logits.float()
                probs[start:start + logits.shape[0]] = torch.softmax(logits, dim=-1).cpu().numpy()
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        seconds = time.perf_counter() - t0
        path = os.path.join(args.out_dir, "hf-%s.jsonl" % p)
        gc.write_predictions(path, probs, labels, nulls)
        print("hf_parity: %s: %d rows in %.2f s -> %s" % (p, len(texts), seconds, path), flush=True)
        del model
        if dev.type == "cuda":
            torch.cuda.empty_cache()
    return 0


def self_test():
    """What runs without torch: batching and writing (with transformers' tokenizer on the
    committed tiny model when transformers is importable)."""
    import tempfile

    check = gc.Checks()
    with tempfile.TemporaryDirectory() as d:
        gc.write_predictions(os.path.join(d, "x.jsonl"), [[0.1, 0.9]], ["NEGATIVE", "POSITIVE"])
        check(gc.read_predictions(os.path.join(d, "x.jsonl"))[1] == [[0.1, 0.9]], "write/read round trip")
    tok = gc.tiny_tokenizer()
    if tok is None:
        return check.count()
    texts = ["a b c", "a", "", "a b c d e f g h i j k l m n o p"]
    batches = list(tokenize_batches(tok, texts, 3, 8))
    check([s for s, _ in batches] == [0, 3], "batch starts %r" % [s for s, _ in batches])
    first = batches[0][1]
    check(first["input_ids"].shape[0] == 3 and first["attention_mask"].shape == first["input_ids"].shape,
          "first batch shape %r" % (first["input_ids"].shape,))
    check(batches[1][1]["input_ids"].shape[1] == 8, "truncation to max_length 8")
    check(int(first["attention_mask"][1].sum()) == 3, "[CLS] a [SEP] is 3 tokens")
    return check.count()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model")
    ap.add_argument("--input")
    ap.add_argument("--out-dir")
    ap.add_argument("--column", default="full_text")
    ap.add_argument("--precisions", default="fp32,bf16,fp16")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--max-length", type=int, default=512)
    ap.add_argument("--rows", type=int, default=0, help="first N rows only (0: all)")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return gc.self_test_exit("hf_parity", self_test)
    if not (args.model and args.input and args.out_dir):
        ap.error("--model, --input and --out-dir are required")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
