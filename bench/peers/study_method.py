#!/usr/bin/env python3
"""The 2021 study's method, faithfully, on CPU: the peer `infercost run` is measured against.

  study_method.py INPUT --model DIR --output FILE [--threads N] [--batch-size N] [--metrics FILE]

What it does, as the study did:
  - HF transformers AutoModelForSequenceClassification (DistilBertForSequenceClassification for a
    DistilBERT directory) and its AutoTokenizer, loaded from the model directory;
  - the input read with pandas (JSON lines / JSON / CSV / Parquet), column full_text;
  - the whole file tokenized at once with padding=True, truncation=True, max_length=512, so every row
    is padded to the longest row of the file;
  - a torch DataLoader over the padded tensors, fixed batch size 100 x vCPUs (the study's CPU setting;
    --batch-size overrides), no shuffling;
  - PyTorch eager fp32 under torch.no_grad(), softmax over the logits;
  - the predictions written with pandas beside the text (CSV, Parquet or JSON lines by extension).
The one thing not from 2021: the attention implementation is whatever this transformers version picks
by default (recorded in the metrics as attn_implementation); --attn eager forces the 2021 one.

Prints one JSON line of metrics (rows, tokens, computed_tokens, padding_efficiency, wall_seconds,
stages, rows_per_second, tokens_per_second, peak_rss_bytes). wall_seconds excludes the model load,
like the engine's summary; the load is reported as stages.load.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers_common as pc  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    pc.add_common_args(ap)
    ap.add_argument("--batch-size", type=int, default=0, help="default: 100 x vCPUs (os.cpu_count())")
    ap.add_argument("--max-length", type=int, default=512)
    ap.add_argument("--attn", default="default", choices=["default", "eager", "sdpa"])
    ap.add_argument("--metrics", help="also write the JSON line here")
    args = ap.parse_args()
    batch_size = args.batch_size or 100 * (os.cpu_count() or 1)

    import numpy as np
    import pandas  # noqa: F401  (imported before the clock starts, as in a long-running job)
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.set_num_threads(args.threads)
    stages = pc.Stages()
    config = pc.read_config(args.model)
    labels = pc.labels_of(config)

    with stages.time("load"):
        tokenizer = AutoTokenizer.from_pretrained(args.model)
        kwargs = {} if args.attn == "default" else {"attn_implementation": args.attn}
        model = AutoModelForSequenceClassification.from_pretrained(args.model, **kwargs)
        model.eval()

    with stages.time("read"):
        df = pc.read_input(args.input, args.column)
        texts, nulls = pc.texts_of(df, args.column)

    with stages.time("tokenize"):
        enc = tokenizer(texts, padding=True, truncation=True, max_length=args.max_length, return_tensors="pt")
        dataset = TensorDataset(enc["input_ids"], enc["attention_mask"])
        loader = DataLoader(dataset, batch_size=batch_size, shuffle=False)

    rows = len(texts)
    tokens = int(enc["attention_mask"].sum())
    computed = int(enc["input_ids"].numel())
    with stages.time("infer"):
        parts = []
        with torch.no_grad():
            for input_ids, attention_mask in loader:
                logits = model(input_ids=input_ids, attention_mask=attention_mask).logits
                parts.append(torch.softmax(logits, dim=-1).numpy())
        probs = np.concatenate(parts) if parts else np.zeros((0, len(labels)), np.float32)

    with stages.time("write"):
        pc.write_output(df, args.column, probs, labels, nulls, args.output)

    pc.emit_metrics("study (PyTorch eager, padded to file's longest row)", rows, tokens, computed, stages,
                    args.threads, batch_size, path=args.metrics,
                    extra={"padded_length": int(enc["input_ids"].shape[1]) if rows else 0,
                           "attn_implementation": getattr(model.config, "_attn_implementation", "?"),
                           "torch": torch.__version__, "load_seconds": stages.seconds["load"]})


if __name__ == "__main__":
    main()
