#!/usr/bin/env python3
"""Golden logits from HF transformers for the CPU encoder test.

(a) Builds tiny DistilBERT / BERT classifiers with transformers' random init
    (fixed torch seed), saves them with save_pretrained(safe_serialization=True)
    under tests/data_files/golden/<name>/ and records HF fp32 logits for 60
    inputs of 1..128 tokens.
(b) For DistilBERT-base and BERT-base shapes, runs our synthesizer
    (`<synth-cmd> --preset P --seed 7 --out DIR`, e.g. `build/infercost model
    synth`) into a temporary directory and records HF logits for 56 inputs of
    1..300 tokens. The weights are not committed: the C++ test regenerates the
    same directory with model::synthesize_model and checks a weight checksum.

Each golden JSON holds input_ids (real tokens only) and logits per input. HF
runs the inputs as one right-padded batch with attention_mask, model.eval().

usage: tools/gen_model_golden.py [--tiny] [--synth-cmd "build/infercost model synth"]
"""
import argparse
import json
import os
import shlex
import subprocess
import tempfile

import numpy as np
import safetensors.numpy
import torch
import transformers
from transformers import (BertConfig, BertForSequenceClassification, BertTokenizer, DistilBertConfig,
                          DistilBertForSequenceClassification)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(ROOT, "tests", "data_files", "golden")
SYNTH_SEED = 7


def hf_logits(model, seqs):
    """fp32 logits for token-id lists, as one right-padded batch."""
    model.eval()
    width = max(len(s) for s in seqs)
    ids = torch.zeros((len(seqs), width), dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for r, s in enumerate(seqs):
        ids[r, :len(s)] = torch.tensor(s, dtype=torch.long)
        mask[r, :len(s)] = 1
    with torch.no_grad():
        return model(input_ids=ids, attention_mask=mask).logits.float().numpy()


def sequences(rng, vocab, lengths):
    return [[int(x) for x in rng.integers(0, vocab, size=n)] for n in lengths]


def write_golden(path, model_name, seqs, logits, extra=None):
    doc = {
        "model": model_name,
        "generator": "tools/gen_model_golden.py",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "tolerance_abs": 1e-4,
    }
    doc.update(extra or {})
    doc["cases"] = [{"input_ids": s, "logits": [float(v) for v in l]} for s, l in zip(seqs, logits)]
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {os.path.relpath(path, ROOT)}: {len(seqs)} cases, |logit| max {np.abs(logits).max():.3f}")


def perturb(model):
    # HF init leaves biases at 0 and LayerNorm at (1, 0); random values there
    # make the test sensitive to every bias and LayerNorm parameter.
    g = torch.Generator().manual_seed(1234)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(".bias"):
                p.copy_(torch.randn(p.shape, generator=g) * 0.1)
            elif "LayerNorm" in name or "layer_norm" in name:
                p.copy_(1.0 + torch.randn(p.shape, generator=g) * 0.1)


def write_vocab(dir_, vocab):
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    words = special + [f"w{i}" for i in range(vocab - len(special))]
    path = os.path.join(dir_, "vocab.txt")
    with open(path, "w") as f:
        f.write("\n".join(words) + "\n")
    BertTokenizer(path, do_lower_case=True).save_pretrained(dir_)


TINY = {
    # initializer_range 0.2 (HF default 0.02) so attention is far from uniform
    # and logits are O(1): a 1e-4 tolerance then means something.
    "tiny-distilbert": lambda: DistilBertForSequenceClassification(DistilBertConfig(
        vocab_size=512, dim=64, n_layers=2, n_heads=4, hidden_dim=128, max_position_embeddings=160,
        activation="gelu", num_labels=2, initializer_range=0.2)),
    "tiny-distilbert-relu": lambda: DistilBertForSequenceClassification(DistilBertConfig(
        vocab_size=300, dim=48, n_layers=3, n_heads=3, hidden_dim=96, max_position_embeddings=140,
        activation="relu", num_labels=2, initializer_range=0.2)),
    "tiny-bert": lambda: BertForSequenceClassification(BertConfig(
        vocab_size=512, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        max_position_embeddings=160, type_vocab_size=2, hidden_act="gelu", num_labels=2,
        initializer_range=0.2)),
}


def gen_tiny():
    for i, (name, build) in enumerate(TINY.items()):
        torch.manual_seed(42 + i)
        model = build()
        perturb(model)
        model.eval()
        out = os.path.join(GOLDEN, name)
        os.makedirs(out, exist_ok=True)
        model.save_pretrained(out, safe_serialization=True)
        write_vocab(out, model.config.vocab_size)
        rng = np.random.default_rng(100 + i)
        lengths = [1, 2, 3, 4, 127, 128, 64, 65] + [int(x) for x in rng.integers(1, 129, size=52)]
        seqs = sequences(rng, model.config.vocab_size, lengths)
        write_golden(os.path.join(GOLDEN, f"{name}.json"), name, seqs, hf_logits(model, seqs),
                     {"model_dir": name})
        size = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
        print(f"  {name}/: {size / 1e6:.2f} MB")


def checksums(dir_):
    # Sum of squares over every float tensor: any change in synth's output
    # shows up here, so the C++ test can tell "synth changed" from "backend wrong".
    t = safetensors.numpy.load_file(os.path.join(dir_, "model.safetensors"))
    total = sum(float(np.square(v.astype(np.float64)).sum()) for v in t.values() if v.dtype.kind == "f")
    return {"weights_sum_of_squares": total}


def gen_synth(synth_cmd):
    for i, (preset, cls) in enumerate([("distilbert-base", DistilBertForSequenceClassification),
                                       ("bert-base", BertForSequenceClassification)]):
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(shlex.split(synth_cmd) + ["--preset", preset, "--seed", str(SYNTH_SEED), "--out", tmp],
                           check=True)
            model = cls.from_pretrained(tmp, torch_dtype=torch.float32)
            rng = np.random.default_rng(200 + i)
            # Mostly short inputs, as tweets are, plus a tail up to 300.
            lengths = [1, 2, 300, 299, 128, 129, 256, 33] + [int(x) for x in rng.integers(1, 64, size=32)] + \
                      [int(x) for x in rng.integers(64, 301, size=16)]
            seqs = sequences(rng, model.config.vocab_size, lengths)
            extra = {"synth_preset": preset, "synth_seed": SYNTH_SEED}
            extra.update(checksums(tmp))
            write_golden(os.path.join(GOLDEN, f"synth-{preset}.json"), f"synth {preset} seed {SYNTH_SEED}", seqs,
                         hf_logits(model, seqs), extra)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tiny", action="store_true", help="only the tiny models (a)")
    ap.add_argument("--synth-cmd", default=os.path.join(ROOT, "build", "infercost") + " model synth",
                    help="command that synthesizes a model; gets --preset --seed --out appended")
    args = ap.parse_args()
    torch.set_num_threads(2)
    os.makedirs(GOLDEN, exist_ok=True)
    gen_tiny()
    if not args.tiny:
        gen_synth(args.synth_cmd)


if __name__ == "__main__":
    main()
