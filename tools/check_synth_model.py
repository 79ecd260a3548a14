#!/usr/bin/env python3
"""Oracle for `infercost model synth`: loads the synthesized directory with
Hugging Face transformers, unchanged, and prints how the classifier's
confidence is distributed over a few hundred varied texts.

    infercost model synth --out /tmp/synth --preset distilbert-base   # or roberta-base, xlm-roberta-base
    python3 tools/check_synth_model.py /tmp/synth [--texts tweets.jsonl] [--n 400] [--check]

The tokenizer is loaded the way HF loads the preset's files: BertTokenizerFast
from vocab.txt, RobertaTokenizerFast from vocab.json + merges.txt (roberta),
tokenizers.Tokenizer.from_file on tokenizer.json (xlm-roberta), and
AutoTokenizer on the directory for all of them.

Texts: `full_text` of the given JSON-lines files (e.g. from `infercost datagen`),
else texts this script composes from the directory's own vocabulary (words,
mentions, hashtags, URLs, emoji, numbers; 3 to 120 words, long-tailed).

With --check it exits 1 unless the distribution looks like a trained
classifier's: 70-90% of rows with p(max) > 0.9, some rows below 0.6, and each
label predicted for at least 20% of rows (10% for the middle, neutral label
of a 3-label head), and no unknown token. This is how kTargetLogitStd in
src/model/synth.cc was chosen; docs/weights_format.md records the output.
"""
import argparse
import json
import pathlib
import random
import sys

import numpy as np
import torch
import tokenizers
from transformers import (AutoConfig, AutoModelForSequenceClassification, AutoTokenizer, BertTokenizerFast,
                          RobertaTokenizerFast, XLMRobertaTokenizerFast)


def vocab_words(vocab):
    # Lexicon words sit between the single characters and the letter-pair
    # filler that starts at "aa" (see build_vocab in src/model/synth.cc).
    end = vocab.index("aa") if "aa" in vocab else len(vocab)
    words = [t for t in vocab[104:end] if len(t) > 1 and not t.startswith("##") and t.isalpha()]
    return words or [t for t in vocab[104:] if t.isalpha()]


def family_words(pieces, start):
    # RoBERTa's BPE and XLM-R's Unigram: the word-start pieces ("Ġword", "▁word") of letters.
    words = [t[len(start):] for t in pieces if t.startswith(start) and len(t) > len(start) + 1]
    return [w for w in words if w.isascii() and w.isalpha()]


def compose_texts(vocab, n, seed, words=None, emoji=None):
    rng = random.Random(seed)
    words = words or vocab_words(vocab)
    emoji = emoji or [t for t in vocab[104:] if len(t) == 1 and ord(t) > 0x2000] or ["!"]
    extras = ["@user{}".format, "#tag{}".format, "https://t.co/x{}".format, "{}%".format,
              lambda k: rng.choice(emoji)]
    texts = []
    for _ in range(n):
        length = min(120, max(3, int(rng.lognormvariate(2.7, 0.7))))
        parts = []
        for _ in range(length):
            r = rng.random()
            if r < 0.85:
                w = rng.choice(words)
                parts.append(w.capitalize() if rng.random() < 0.1 else w)
            elif r < 0.95:
                parts.append(rng.choice(extras)(rng.randrange(100)))
            else:
                parts.append(rng.choice([".", "!", "?", ",", "..."]))
        texts.append(" ".join(parts))
    return texts


def read_texts(paths, n):
    texts = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            for line in f:
                texts.append(json.loads(line)["full_text"])
                if len(texts) >= n:
                    return texts
    return texts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir")
    ap.add_argument("--texts", nargs="*", default=[])
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    d = pathlib.Path(args.model_dir)

    config = AutoConfig.from_pretrained(d)
    assert getattr(config, "infercost_synthetic", None), "config.json lacks the infercost_synthetic marker"
    AutoTokenizer.from_pretrained(d)  # must load unchanged too
    words = None
    if config.model_type == "roberta":
        tok = RobertaTokenizerFast.from_pretrained(d)  # no tokenizer.json there: vocab.json + merges.txt
        pieces = list(json.loads((d / "vocab.json").read_text(encoding="utf-8")))
        words, vocab_file = family_words(pieces, "\u0120"), "vocab.json"
    elif config.model_type == "xlm-roberta":
        raw = tokenizers.Tokenizer.from_file(str(d / "tokenizer.json"))
        tok = XLMRobertaTokenizerFast(tokenizer_object=raw)
        pieces = [p for p, _ in json.loads((d / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]]
        words, vocab_file = family_words(pieces, "\u2581"), "tokenizer.json"
    else:
        tok = BertTokenizerFast(vocab_file=str(d / "vocab.txt"), do_lower_case=True)
        pieces, vocab_file = (d / "vocab.txt").read_text(encoding="utf-8").split("\n")[:-1], "vocab.txt"
    model = AutoModelForSequenceClassification.from_pretrained(d).eval()
    emoji = [t for t in pieces[4:] if len(t) == 1 and ord(t) > 0x2000] if words else None
    texts = read_texts(args.texts, args.n) if args.texts else compose_texts(pieces, args.n, args.seed, words, emoji)
    source = ", ".join(args.texts) if args.texts else "composed from " + vocab_file

    pmax, labels, lengths, unk, total = [], [], [], 0, 0
    torch.set_num_threads(2)
    with torch.no_grad():
        for i in range(0, len(texts), 16):
            enc = tok(texts[i:i + 16], padding=True, truncation=True, max_length=512, return_tensors="pt",
                      return_token_type_ids=config.model_type == "bert")
            probs = torch.softmax(model(**enc).logits, dim=-1)
            pmax += probs.max(-1).values.tolist()
            labels += probs.argmax(-1).tolist()
            lengths += enc["attention_mask"].sum(-1).tolist()
            unk += int((enc["input_ids"] == tok.unk_token_id).sum())
            total += int(enc["attention_mask"].sum())
    pmax, labels, lengths = np.array(pmax), np.array(labels), np.array(lengths)

    print(f"model {d} ({config.model_type}, {config.num_hidden_layers if hasattr(config, 'num_hidden_layers') else '?'} "
          f"layers), {len(texts)} texts ({source}), tokens/row median {int(np.median(lengths))}, "
          f"max {lengths.max()}, [UNK] {unk}/{total}")
    print("p(max) quantiles: " + ", ".join(f"q{int(q * 100)}={np.quantile(pmax, q):.3f}"
                                           for q in (0.05, 0.1, 0.25, 0.5, 0.75, 0.9)))
    frac = lambda m: f"{100 * m.mean():.1f}%"
    print(f"p(max) > 0.99: {frac(pmax > 0.99)}   > 0.9: {frac(pmax > 0.9)}   0.6-0.9: "
          f"{frac((pmax > 0.6) & (pmax <= 0.9))}   < 0.6: {frac(pmax < 0.6)}")
    names = [config.id2label[i] for i in range(config.num_labels)]
    print("predicted: " + ", ".join(f"{names[k]} {frac(labels == k)}" for k in range(len(names))))
    for lo, hi in ((0, 16), (16, 32), (32, 64), (64, 10**9)):
        m = (lengths >= lo) & (lengths < hi)
        if m.any():
            print(f"  tokens {lo}-{hi if hi < 10**9 else 'max'}: {m.sum()} rows, p(max) > 0.9 {frac(pmax[m] > 0.9)}")

    if args.check:
        share = [(labels == k).mean() for k in range(len(names))]
        middle_ok = len(names) != 3 or share[1] >= 0.1
        ok = 0.70 <= (pmax > 0.9).mean() <= 0.90 and (pmax < 0.6).mean() > 0.0 and \
            min(share[0], share[-1]) >= 0.2 and middle_ok and unk == 0
        print("check:", "ok" if ok else "FAILED")
        return 0 if ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
