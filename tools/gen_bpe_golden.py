#!/usr/bin/env python3
"""Writes the golden files for infercost's byte-level BPE tokenizer (RoBERTa / GPT-2).

The oracle is Hugging Face `tokenizers` (the Rust library behind
RobertaTokenizerFast), built from roberta-base's vocab.json and merges.txt.
Outputs, under tests/data_files/tokenizer/:

  bpe_golden.jsonl            {"v": variant, "t": text, "ids": [...]} per line;
                              >= 10,000 "default" texts (RobertaTokenizerFast,
                              truncation=True, max_length=512) and a subset
                              under each other variant (see VARIANTS).
  bpe_char_classes.txt        how the GPT-2 split pattern, as HF's regex
                              engine (onig) runs it, classes every code point:
                              "FIRST LAST CLASS" (hex), CLASS L (\\p{L}),
                              N (\\p{N}) or S (\\s); code points not listed
                              (and surrogates) are neither.
  tiny_bpe_tokenizer.json     a small ByteLevel BPE trained by BpeTrainer
                              (add_prefix_space, TemplateProcessing, added
                              tokens with lstrip / rstrip / single_word /
                              normalized), and
  tiny_bpe_suffix_tokenizer.json  one trained with a continuing_subword_prefix,
                              an end_of_word_suffix, a cut alphabet, unk_token
                              and fuse_unk, RobertaProcessing;
  tiny_bpe_expected.jsonl     {"f": file, "t": text, "ids": [...]} for both.

RobertaTokenizerFast is given `<mask>` with lstrip=True, as roberta-base's
published tokenizer.json has it (transformers 5 no longer sets it when it
builds the tokenizer from vocab.json + merges.txt). The tokenizer.json HF
builds is saved to a temporary directory and reloaded with
tokenizers.Tokenizer.from_file; it must give the same ids on every text.

Deterministic (fixed seed). Run from anywhere:
  python3 tools/gen_bpe_golden.py [--roberta DIR]
Python is for generating these files only; infercost never runs it.
"""

import argparse
import json
import os
import random
import sys
import tempfile

from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import RobertaTokenizerFast

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_tokenizer_golden import Gen, encode_all  # noqa: E402  (the WordPiece goldens' text pools)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "tests", "data_files", "tokenizer")
DEFAULT_ROBERTA = os.path.join(ROOT, "..", "shared", "data", "roberta")

SEED = 20261202
N_DEFAULT_SHORT = 10_000
N_LONG = 120
N_PER_VARIANT = 400

# name -> (RobertaTokenizerFast kwargs, call kwargs).
# tests/text/bpe_golden_test.cc maps the same names to its tokenizers.
VARIANTS = {
    "default": ({}, {"max_length": 512}),
    "prefix": ({"add_prefix_space": True}, {"max_length": 512}),
    "max16": ({}, {"max_length": 16}),
    "nospecial": ({}, {"max_length": 512, "add_special_tokens": False}),
}


def make_tokenizer(roberta_dir, variant):
    kwargs, _ = VARIANTS[variant]
    mask = AddedToken("<mask>", lstrip=True, rstrip=False, normalized=False, special=True)
    return RobertaTokenizerFast(vocab=os.path.join(roberta_dir, "vocab.json"),
                                merges=os.path.join(roberta_dir, "merges.txt"), mask_token=mask, **kwargs)


class BpeGen(Gen):
    """Gen's pools plus what byte-level BPE cares about: contractions, runs of
    whitespace, RoBERTa's special tokens inside a text."""

    def special(self):
        return self.pick(["<mask>", " <mask>", "  <mask>", "<s>", "</s>", "<pad>", "<unk>", "<mask><mask>",
                          "x<mask>y", "<MASK>", "< mask>", "<s", "s>", "<</s>>", "<|endoftext|>", "<mask>\u0301",
                          "\u00a0<mask>", "\t<mask>", "\n<mask>\n", "<ma\u200bsk>", "<s><pad></s>"])

    def contraction(self):
        base = self.english()
        return base + self.pick(["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'LL", "'D",
                                 "’s", "''s", "'", "'x", "'ss", "'lll", "'dd"])

    def space_run(self):
        pool = [" ", "\t", "\n", "\r", "\r\n", "\u00a0", "\u2028", "\u2029", "\u3000", "\u2003", "\u205f",
                "\u1680", "\x0b", "\x0c", "\x85", "\u200b", "\u180e", "\ufeff"]
        return "".join(self.pick(pool) for _ in range(self.r.randint(1, 5)))

    def tweet(self):
        parts = [self.pick(["RT ", "", "", "@" + self.english() + ": "])]
        for _ in range(self.r.randint(3, 14)):
            parts.append(self.pick([self.english, self.english, self.english, self.web, self.emoji,
                                    self.contraction, self.number, self.punct])())
            parts.append(self.pick([" ", " ", " ", "  ", "", "\n", "! ", ", ", ". ", "... "]))
        return "".join(parts).strip(self.pick(["", " "]))

    def fragment(self):
        kinds = [(self.english, 34), (self.accented, 8), (self.cjk, 5), (self.korean, 2), (self.other_script, 7),
                 (self.emoji, 7), (self.control, 3), (self.web, 6), (self.number, 7), (self.long_word, 1),
                 (self.punct, 7), (self.special, 4), (self.contraction, 5), (self.space_run, 4)]
        return self.r.choices([f for f, _ in kinds], [w for _, w in kinds])[0]()

    def short(self):
        if self.r.random() < 0.25:
            return self.tweet()
        return super().short()


# ---------------------------------------------------------------- char classes


def char_classes():
    """Each code point as the ByteLevel pre-tokenizer's regex sees it, probed
    through the pre-tokenizer itself: "a"+c is one piece when c is \\p{L},
    "1"+c when \\p{N}, "!"+c when neither nor \\s, "\\t"+c when \\s."""
    pre = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    ranges = []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        hits = [k for k, lead in (("L", "a"), ("N", "1"), ("O", "!"), ("S", "\t"))
                if len(pre.pre_tokenize_str(lead + ch)) == 1]
        if len(hits) != 1:
            sys.exit("unexpected HF behaviour for U+%04X: one piece after %s" % (cp, hits))
        k = hits[0]
        if k == "O":
            continue
        if ranges and ranges[-1][1] == cp - 1 and ranges[-1][2] == k:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp, k])
    return "".join("%X %X %s\n" % (a, b, k) for a, b, k in ranges)


# ---------------------------------------------------------------- tiny tokenizer.json files


def tiny_tokenizers(out_dir, corpus):
    texts = ["Hello world", "hello  world", " leading space", "it's they're we've I'm you'll he'd 'S",
             "<mask> a <mask> b  <mask>", "<s>x</s>", "[X] x[X] [X]x", "wordy word words", "café naïve 中文",
             "emoji 👍🏽 👨\u200d👩\u200d👧", "tabs\tand\nnewlines\r\n", "", " ", "   ", "a", "123 4567 89",
             "#hashtag @mention https://t.co/abc", "UPPER lower MiXeD", "\u00a0nbsp\u3000ideo", "ǅ ǈ ΣΑΣ",
             "keep_Me rstrip_me  after", "the the the the the the the the the the the the the the the",
             "Zürich ZÜRICH zürich", "\x00\x01\x7f", "aaaa bbbb abab", "\U0001F600\U0001F601"]
    texts += corpus[:60]
    # 1: ByteLevel with a prefix space, a template post-processor and added tokens of every kind.
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, min_frequency=2, special_tokens=["<s>", "<pad>", "</s>", "<unk>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, normalized=False, special=True),
                            AddedToken("[X]", single_word=True, normalized=False, special=True)])
    tok.add_tokens([AddedToken("rstrip_me", rstrip=True, normalized=True), AddedToken("keep_Me", normalized=True)])
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s> </s>", pair="<s> $A </s> $B:1 </s>:1",
        special_tokens=[("<s>", tok.token_to_id("<s>")), ("</s>", tok.token_to_id("</s>"))])
    tok.enable_truncation(24)
    # 2: WordPiece-like affixes on a cut alphabet: unknown bytes become (fused) <unk>.
    tok2 = Tokenizer(models.BPE(unk_token="<unk>", continuing_subword_prefix="##", end_of_word_suffix="</w>",
                                fuse_unk=True))
    tok2.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    trainer2 = trainers.BpeTrainer(vocab_size=400, min_frequency=2, special_tokens=["<s>", "<pad>", "</s>", "<unk>"],
                                   limit_alphabet=60, continuing_subword_prefix="##", end_of_word_suffix="</w>",
                                   show_progress=False)
    tok2.train_from_iterator(corpus, trainer2)
    tok2.post_processor = processors.RobertaProcessing(("</s>", tok2.token_to_id("</s>")),
                                                       ("<s>", tok2.token_to_id("<s>")))
    lines = []
    for name, t in (("tiny_bpe_tokenizer.json", tok), ("tiny_bpe_suffix_tokenizer.json", tok2)):
        path = os.path.join(out_dir, name)
        t.save(path)
        reloaded = Tokenizer.from_file(path)
        for text in texts:
            ids = reloaded.encode(text).ids
            if ids != t.encode(text).ids:
                sys.exit("%s: reloaded tokenizer differs on %r" % (name, text))
            lines.append({"f": name, "t": text, "ids": ids})
    with open(os.path.join(out_dir, "tiny_bpe_expected.jsonl"), "w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--roberta", default=DEFAULT_ROBERTA, help="folder with roberta-base vocab.json, merges.txt")
    ap.add_argument("--out-dir", default=OUT_DIR)
    ap.add_argument("--skip-char-classes", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)

    with open(os.path.join(args.roberta, "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    words = sorted(w[1:] for w in vocab if w.startswith("\u0120") and w[1:].isalpha())

    rng = random.Random(SEED)
    g = BpeGen(rng, words)
    short = [g.short() for _ in range(N_DEFAULT_SHORT)]
    long_texts = [g.long() for _ in range(N_LONG)]
    fixed = ["", " ", "  ", "\t", "\n", "\r\n", "a <mask> b", "a<mask>b", " <mask>", "<mask>", "<s>", "</s>",
             "<pad>", "<unk>", "x <s> y </s> z <pad>", "it's", "It'S", "they're", "'s", "''", "' s", "don't",
             "hello  world", "hello   world", "a \tb", "a\t b", "x\u00a0y", "x\u2028y", "x\u3000y", "end  ",
             "\u00a0", "x" * 600, "ab" * 400, "1234567890" * 30, "é" * 300, "e\u0301" * 50, "👍🏽" * 40,
             "👨\u200d👩\u200d👧\u200d👦", "🏳️\u200d🌈", "https://example.com/a?b=c&d=e#f", "@user #tag",
             "مرحبا بالعالم", "שלום עולם", "中文字符", "日本語のテキスト", "한국어", "\x00\x01\x02\x1f\x7f",
             "<|endoftext|>", "\ufeffbom", "ǅ ǈ", "٣٤ ١٢", "Ⅻ ½ ²", "a\u0300\u0301b"]
    default_texts = fixed + short + long_texts

    lines = []
    n_over = 0
    for name, (_, call) in VARIANTS.items():
        texts = default_texts if name == "default" else fixed + short[:N_PER_VARIANT] + long_texts[:3]
        tok = make_tokenizer(args.roberta, name)
        ids_all = encode_all(tok, texts, call)
        # The tokenizer.json HF builds must say the same as the tokenizer it was built from.
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "tokenizer.json")
            tok.backend_tokenizer.save(path)
            reloaded = Tokenizer.from_file(path)
            reloaded.enable_truncation(call["max_length"])
            add = call.get("add_special_tokens", True)
            for t, ids, enc in zip(texts, ids_all, reloaded.encode_batch(texts, add_special_tokens=add)):
                if enc.ids != ids:
                    sys.exit("%s: the saved tokenizer.json differs on %r" % (name, t))
        for t, ids in zip(texts, ids_all):
            lines.append({"v": name, "t": t, "ids": ids})
            n_over += name == "default" and len(ids) == 512

    path = os.path.join(args.out_dir, "bpe_golden.jsonl")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
    print("%s: %d lines (%d default, %d truncated at 512), %d bytes" %
          (path, len(lines), len(default_texts), n_over, os.path.getsize(path)))

    tiny_tokenizers(args.out_dir, short[:3000])
    print("tiny tokenizers written")

    if not args.skip_char_classes:
        path = os.path.join(args.out_dir, "bpe_char_classes.txt")
        with open(path, "w", encoding="ascii", newline="\n") as f:
            f.write(char_classes())
        print("%s: %d bytes" % (path, os.path.getsize(path)))


if __name__ == "__main__":
    main()
