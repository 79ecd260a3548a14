#!/usr/bin/env python3
"""Writes the golden file for infercost's reading of DeBERTa-v3's tokenizer (spm.model and tokenizer.json).

The oracle is transformers' AutoTokenizer.from_pretrained on a directory holding DeBERTa-v3's real
spm.model (../shared/data/deberta-v3) and the tokenizer_config.json microsoft/deberta-v3-base publishes
beside it ({"do_lower_case": false, "vocab_type": "spm"}; config.json's model_type deberta-v2 picks the
class): transformers converts the SentencePiece
model into a Unigram tokenizer (no byte fallback), adds [MASK] at 128,000 and builds DebertaV2Tokenizer's
pipeline. The script also saves that tokenizer (save_pretrained: the tokenizer.json kind of directory)
and checks that loading the saved directory gives the same ids on every text. Output, under --out-dir
(tests/text/deberta_tokenizer_test.cc and tests/python/test_deberta_tokenizer.py run this script into a
temporary folder when ../shared/data is present: the file is 2.8 MB and is never committed):

  deberta_golden.jsonl   {"v": variant, "t": text, "ids": [...]} per line; >= 10,000 "default" texts
                         (truncation=True, max_length=512), among them rows longer than 512 tokens, and a
                         subset under each other variant (see VARIANTS).

The texts are gen_bpe_golden.py's pools (tweets, emoji, CJK, accents, contractions, whitespace runs,
...) with DeBERTa's special tokens as the special-token text and text that NFC changes.

Deterministic (fixed seed). Needs transformers, sentencepiece and protobuf (build/pyenv has them, as
tools/requirements.txt's venv does). Run from anywhere:
  build/pyenv/bin/python tools/gen_deberta_golden.py --out-dir DIR [--deberta DIR]
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

from transformers import AutoTokenizer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_bpe_golden import BpeGen  # noqa: E402  (the RoBERTa goldens' text pools)
from gen_tokenizer_golden import encode_all  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DIR = os.path.join(ROOT, "..", "shared", "data", "deberta-v3")

SEED = 20261206
N_DEFAULT_SHORT = 10_000
N_LONG = 60
N_PER_VARIANT = 400
MAX_LENGTH = 512

# name -> call kwargs. tests/text/deberta_tokenizer_test.cc maps the same names to its tokenizers.
VARIANTS = {
    "default": {"max_length": MAX_LENGTH},
    "max16": {"max_length": 16},
    "nospecial": {"max_length": MAX_LENGTH, "add_special_tokens": False},
}

# What microsoft/deberta-v3-base's tokenizer_config.json says.
TOKENIZER_CONFIG = {"do_lower_case": False, "vocab_type": "spm"}


class DebertaGen(BpeGen):
    """BpeGen with DeBERTa's special tokens as the special text, and text NFC changes."""

    def special(self):
        return self.pick(["[CLS]", "[SEP]", "[MASK]", " [MASK]", "  [MASK]", "\t[MASK]", "x[MASK]y", "[MASK][MASK]",
                          "[PAD]", "[UNK]", "[mask]", "[ MASK]", "[MASK]\u0301", "[CLS][SEP]", "<0x41>", "<0xFF>",
                          "\u2581", "\u2581\u2581x", "<s>", "</s>", "<unk>"])

    def nfc_text(self):
        word = self.pick(["café", "naïve", "Ångström", "résumé", "한국어", "Ελλάδα", "ñandú", "Åland"])
        form = self.pick(["NFD", "NFKD", "NFC"])
        extra = self.pick(["", "\u212b", "\u2126", "e\u0301\u0327", "\u1100\u1161\u11a8", "a\u0328\u0301", "ﬁ", "①"])
        return unicodedata.normalize(form, word) + extra

    def fragment(self):
        if self.r.random() < 0.06:
            return self.nfc_text()
        return super().fragment()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--deberta", default=DEFAULT_DIR, help="folder with DeBERTa-v3's spm.model")
    ap.add_argument("--out-dir", required=True)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        spm_dir = os.path.join(tmp, "spm")
        os.makedirs(spm_dir)
        shutil.copy(os.path.join(args.deberta, "spm.model"), os.path.join(spm_dir, "spm.model"))
        with open(os.path.join(spm_dir, "tokenizer_config.json"), "w", encoding="utf-8") as f:
            json.dump(TOKENIZER_CONFIG, f)
        with open(os.path.join(spm_dir, "config.json"), "w", encoding="utf-8") as f:
            json.dump({"model_type": "deberta-v2"}, f)  # what picks DebertaV2Tokenizer, as in a model directory
        tok = AutoTokenizer.from_pretrained(spm_dir)
        saved_dir = os.path.join(tmp, "saved")
        tok.save_pretrained(saved_dir)
        saved = AutoTokenizer.from_pretrained(saved_dir)

        vocab = tok.get_vocab()
        words = sorted(w[1:] for w in vocab if w.startswith("\u2581") and w[1:].isalpha() and w[1:].isascii())
        rng = random.Random(SEED)
        g = DebertaGen(rng, words)
        short = [g.short() for _ in range(N_DEFAULT_SHORT)]
        long_texts = [g.text(rng.randint(150, 900)) for _ in range(N_LONG)]
        fixed = ["", " ", "  ", "\t", "\n", "\r\n", " \n ", "Hello world!", "   spaces   ", "a  b", "a   b",
                 "a\tb", "a\t\tb", "a\n\nb", "a \n b", "x\u00a0y", "x\u00a0\u00a0y", "x\u3000y", "x\u3000\u3000y",
                 "end  ", "  start", "[MASK]", "a [MASK] b", "a[MASK]b", "[CLS] x [SEP]", "[PAD][UNK]", "<0x41>",
                 "e\u0301", "e\u0301" * 50, "\u212b", "\u1100\u1161\u11a8", "ﬁne ①", "x" * 600, "ab" * 400,
                 "1234567890" * 30, "👍🏽" * 40, "👨\u200d👩\u200d👧\u200d👦", "https://example.com/a?b=c&d=e#f",
                 "@user #tag", "مرحبا بالعالم", "中文字符", "日本語のテキスト", "한국어", "\x00\x01\x02\x1f\x7f",
                 "\ufeffbom", "Ⅻ ½ ²", "a\u0300\u0301b", "it's", "don't", "HELLO World", "\u2581x"]
        default_texts = fixed + short + long_texts

        lines = []
        over = 0
        for name, call in VARIANTS.items():
            texts = default_texts if name == "default" else fixed + short[:N_PER_VARIANT] + long_texts[:3]
            ids_all = encode_all(tok, texts, call)
            if encode_all(saved, texts, call) != ids_all:
                sys.exit("%s: the saved tokenizer.json directory differs from the spm.model one" % name)
            for t, ids in zip(texts, ids_all):
                lines.append({"v": name, "t": t, "ids": ids})
                over += name == "default" and len(ids) == MAX_LENGTH

    path = os.path.join(args.out_dir, "deberta_golden.jsonl")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
    print("%s: %d lines (%d default, %d cut at %d), %d bytes" %
          (path, len(lines), len(default_texts), over, MAX_LENGTH, os.path.getsize(path)))


if __name__ == "__main__":
    main()
