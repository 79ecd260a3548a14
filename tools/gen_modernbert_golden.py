#!/usr/bin/env python3
"""Writes the golden file for infercost's byte-level BPE tokenizer on ModernBERT's tokenizer.json.

The oracle is transformers' AutoTokenizer.from_pretrained on a directory holding ModernBERT's real
tokenizer.json (../shared/data/modernbert: NFC, ByteLevel, 116 added tokens, `[CLS] $A [SEP]`) and
the tokenizer_config.json answerdotai/ModernBERT-base publishes beside it (PreTrainedTokenizerFast,
model_max_length 8192). Output, under --out-dir (tests/text/bpe_golden_test.cc runs this script into a
temporary folder when ../shared/data is present: the file is 5 MB and is never committed):

  modernbert_golden.jsonl   {"v": variant, "t": text, "ids": [...]} per line; >= 10,000 "default"
                            texts (truncation=True, max_length=8192), among them rows longer than
                            8,192 tokens, and a subset under each other variant (see VARIANTS).

The texts are gen_bpe_golden.py's pools (tweets, emoji, CJK, contractions, whitespace runs, ...) with
ModernBERT's own added tokens as the special-token text ([MASK] with lstrip, runs of spaces, the
|||EMAIL_ADDRESS||| kind, [unusedN]) and text that NFC changes (decomposed accents, Hangul jamo).
tokenizers.Tokenizer.from_file on the same file must give the same ids on every text.

Deterministic (fixed seed). Run from anywhere:
  python3 tools/gen_modernbert_golden.py --out-dir DIR [--modernbert DIR]
Python is for generating these files only; infercost never runs it.
"""

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import unicodedata

from tokenizers import Tokenizer
from transformers import AutoTokenizer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_bpe_golden import BpeGen  # noqa: E402  (the RoBERTa goldens' text pools)
from gen_tokenizer_golden import encode_all  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DIR = os.path.join(ROOT, "..", "shared", "data", "modernbert")

SEED = 20261205
N_DEFAULT_SHORT = 10_000
N_LONG = 80  # a few hundred to a few thousand tokens each
N_VERY_LONG = 10  # past 8,192 tokens
N_PER_VARIANT = 400
MAX_LENGTH = 8192

# name -> call kwargs. tests/text/bpe_golden_test.cc maps the same names to its tokenizers.
VARIANTS = {
    "default": {"max_length": MAX_LENGTH},
    "max16": {"max_length": 16},
    "nospecial": {"max_length": MAX_LENGTH, "add_special_tokens": False},
}

# What answerdotai/ModernBERT-base's tokenizer_config.json says that matters for encoding.
TOKENIZER_CONFIG = {
    "tokenizer_class": "PreTrainedTokenizerFast",
    "model_max_length": MAX_LENGTH,
    "clean_up_tokenization_spaces": True,
    "cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "unk_token": "[UNK]",
    "mask_token": "[MASK]",
    "model_input_names": ["input_ids", "attention_mask"],
}


class ModernBertGen(BpeGen):
    """BpeGen with ModernBERT's added tokens as the special text, and text NFC changes."""

    def special(self):
        pool = ["[CLS]", "[SEP]", "[MASK]", " [MASK]", "  [MASK]", "\t[MASK]", "\u00a0[MASK]", "x[MASK]y",
                "[MASK][MASK]", "[PAD]", "[UNK]", "[mask]", "[ MASK]", "[MASK]\u0301", "[CLS][SEP]",
                "[unused0]", "[unused41]", "[unused82]", "[unused83]", "|||EMAIL_ADDRESS|||",
                "|||IP_ADDRESS|||", "|||PHONE_NUMBER|||", "||IP_ADDRESS||", "<|endoftext|>", "<|padding|>",
                "<mask>", "<s>", "[unused0]x", "x[unused0]"]
        if self.r.random() < 0.3:
            return " " * self.r.randint(1, 30)
        return self.pick(pool)

    def nfc_text(self):
        """Text whose NFC differs from it: decomposed letters, Hangul jamo, singletons."""
        word = self.pick(["café", "naïve", "Ångström", "résumé", "한국어", "Ελλάδα", "ñandú", "Åland"])
        form = self.pick(["NFD", "NFKD", "NFC"])
        extra = self.pick(["", "\u212b", "\u2126", "e\u0301\u0327", "\u1100\u1161\u11a8", "a\u0328\u0301"])
        return unicodedata.normalize(form, word) + extra

    def fragment(self):
        if self.r.random() < 0.06:
            return self.nfc_text()
        return super().fragment()


def tokenizer_dir(source, tmp):
    shutil.copy(os.path.join(source, "tokenizer.json"), os.path.join(tmp, "tokenizer.json"))
    with open(os.path.join(tmp, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(TOKENIZER_CONFIG, f)
    return tmp


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--modernbert", default=DEFAULT_DIR, help="folder with ModernBERT's tokenizer.json")
    ap.add_argument("--out-dir", required=True)
    args = ap.parse_args()

    with open(os.path.join(args.modernbert, "tokenizer.json"), encoding="utf-8") as f:
        vocab = json.load(f)["model"]["vocab"]
    words = sorted(w[1:] for w in vocab if w.startswith("\u0120") and w[1:].isalpha())

    rng = random.Random(SEED)
    g = ModernBertGen(rng, words)
    short = [g.short() for _ in range(N_DEFAULT_SHORT)]
    long_texts = [g.text(rng.randint(100, 1000)) for _ in range(N_LONG)]
    very_long = [g.text(rng.randint(3500, 4500)) for _ in range(N_VERY_LONG)]
    fixed = ["", " ", "  ", "   ", " " * 24, " " * 25, " " * 49, "\t", "\n", "\r\n", "Hello world!",
             "   spaces   ", "a [MASK] b", "a[MASK]b", " [MASK]", "[MASK]", "[CLS]", "[SEP]", "[PAD]",
             "x [CLS] y [SEP] z [PAD]", "it's", "It'S", "they're", "don't", "hello  world", "hello   world",
             "a \tb", "x\u00a0y", "x\u3000y", "end  ", "e\u0301", "e\u0301" * 50, "\u212b", "\u1100\u1161\u11a8",
             "x" * 600, "ab" * 400, "1234567890" * 30, "👍🏽" * 40, "👨\u200d👩\u200d👧\u200d👦", "🏳️\u200d🌈",
             "https://example.com/a?b=c&d=e#f", "@user #tag", "مرحبا بالعالم", "中文字符", "日本語のテキスト",
             "한국어", "\x00\x01\x02\x1f\x7f", "<|endoftext|>", "\ufeffbom", "|||EMAIL_ADDRESS|||",
             "mail me at |||EMAIL_ADDRESS||| now", "[unused0][unused1]", "Ⅻ ½ ²", "a\u0300\u0301b"]
    default_texts = fixed + short + long_texts + very_long

    lines = []
    counts = {"over": 0}
    with tempfile.TemporaryDirectory() as tmp:
        tok = AutoTokenizer.from_pretrained(tokenizer_dir(args.modernbert, tmp))
        raw = Tokenizer.from_file(os.path.join(tmp, "tokenizer.json"))
        for name, call in VARIANTS.items():
            texts = default_texts if name == "default" else fixed + short[:N_PER_VARIANT] + long_texts[:3] + very_long[:1]
            ids_all = encode_all(tok, texts, call)
            raw.enable_truncation(call["max_length"])
            add = call.get("add_special_tokens", True)
            for t, ids, enc in zip(texts, ids_all, raw.encode_batch(texts, add_special_tokens=add)):
                if enc.ids != ids:
                    sys.exit("%s: tokenizers.Tokenizer differs from AutoTokenizer on %r" % (name, t[:80]))
            for t, ids in zip(texts, ids_all):
                lines.append({"v": name, "t": t, "ids": ids})
                counts["over"] += name == "default" and len(ids) == MAX_LENGTH

    path = os.path.join(args.out_dir, "modernbert_golden.jsonl")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
    print("%s: %d lines (%d default, %d cut at %d), %d bytes" %
          (path, len(lines), len(default_texts), counts["over"], MAX_LENGTH, os.path.getsize(path)))


if __name__ == "__main__":
    main()
