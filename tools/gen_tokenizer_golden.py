#!/usr/bin/env python3
"""Writes the golden files for infercost's BERT WordPiece tokenizer.

The oracle is Hugging Face's fast tokenizer (the Rust `tokenizers` library,
what AutoTokenizer loads for BERT/DistilBERT), built from the real
bert-base-uncased vocab.txt. Outputs, under tests/data_files/tokenizer/:

  wordpiece_golden.jsonl   {"v": variant, "t": text, "ids": [...]} per line;
                           >= 10,000 "default" texts (lowercase, accents
                           stripped, [CLS]/[SEP], truncation to 512) and a
                           subset under each other variant (see VARIANTS).
  hf_char_props.txt        what HF's BertNormalizer and BertPreTokenizer do
                           with every code point, as ranges (format below).
  tiny_tokenizer.json      a small WordPiece tokenizer saved by `tokenizers`
  tiny_tokenizer_expected.jsonl   {"t": text, "ids": [...]} for it.

Deterministic (fixed seed). Run from anywhere:
  python3 tools/gen_tokenizer_golden.py [--vocab PATH]
Python is for generating these files only; infercost never runs it.
"""

import argparse
import json
import os
import random
import sys

from tokenizers import Tokenizer
from tokenizers.normalizers import BertNormalizer
from tokenizers.pre_tokenizers import BertPreTokenizer
from transformers import BertTokenizerFast

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "tests", "data_files", "tokenizer")
DEFAULT_VOCAB = os.path.join(ROOT, "..", "shared", "data", "vocab", "bert-base-uncased-vocab.txt")

SEED = 20240517
N_DEFAULT_SHORT = 10_000
N_LONG = 180
N_PER_VARIANT = 300

# name -> (BertTokenizerFast kwargs, normalizer override or None, call kwargs).
# tests/text/wordpiece_golden_test.cc maps the same names to TokenizerOptions.
VARIANTS = {
    "default": ({"do_lower_case": True}, None, {"max_length": 512}),
    "cased": ({"do_lower_case": False}, None, {"max_length": 512}),
    "lower_nostrip": ({"do_lower_case": True, "strip_accents": False}, None, {"max_length": 512}),
    "cased_strip": ({"do_lower_case": False, "strip_accents": True}, None, {"max_length": 512}),
    "nochinese": ({"do_lower_case": True, "tokenize_chinese_chars": False}, None, {"max_length": 512}),
    "noclean": ({"do_lower_case": True},
                dict(clean_text=False, handle_chinese_chars=True, strip_accents=None, lowercase=True),
                {"max_length": 512}),
    "nospecial": ({"do_lower_case": True}, None, {"max_length": 512, "add_special_tokens": False}),
    "max16": ({"do_lower_case": True}, None, {"max_length": 16}),
}


def make_tokenizer(vocab, variant):
    kwargs, norm, _ = VARIANTS[variant]
    tok = BertTokenizerFast(vocab_file=vocab, **kwargs)
    if norm is not None:
        tok.backend_tokenizer.normalizer = BertNormalizer(**norm)
    return tok


def encode_all(tok, texts, call):
    ids = []
    for i in range(0, len(texts), 512):
        enc = tok(texts[i:i + 512], truncation=True, **call)
        ids.extend(enc["input_ids"])
    return ids


# ---------------------------------------------------------------- text pools


class Gen:
    def __init__(self, rng, vocab_words):
        self.r = rng
        self.words = vocab_words

    def pick(self, seq):
        return seq[self.r.randrange(len(seq))]

    def chars(self, lo, hi, n):
        out = []
        while len(out) < n:
            c = self.r.randint(lo, hi)
            if not 0xD800 <= c <= 0xDFFF:  # lone surrogates are not text
                out.append(chr(c))
        return "".join(out)

    def english(self):
        w = self.pick(self.words)
        k = self.r.random()
        if k < 0.15:
            w = w.capitalize()
        elif k < 0.2:
            w = w.upper()
        return w

    def accented(self):
        fixed = ["café", "naïve", "résumé", "Ångström", "Zürich", "São Paulo", "Ærøskøbing", "œuvre", "straße",
                 "ÉCOLE", "façade", "jalapeño", "Crème Brûlée", "İstanbul", "ıi", "ẞig", "ΣΑΣ", "Ὀδυσσεύς",
                 "Привет", "ПРИВЕТ", "Ǆemal", "ǅ", "ﬁnish", "ＡＢＣｄｅ", "Ⅻ", "K", "Å", "Ω", "ᏣᎳᎩ", "Ა", "ꭰ"]
        k = self.r.random()
        if k < 0.4:
            return self.pick(fixed)
        if k < 0.7:
            return self.chars(0xC0, 0x24F, self.r.randint(1, 8))
        # base letters with combining marks (some decomposable, some not)
        s = ""
        for _ in range(self.r.randint(1, 6)):
            s += self.pick("aeiouAEIOUnNcCzZ")
            for _ in range(self.r.choice([0, 1, 1, 2, 3])):
                s += chr(self.r.randint(0x300, 0x36F))
        return s

    def cjk(self):
        k = self.r.random()
        if k < 0.5:
            return self.chars(0x4E00, 0x9FFF, self.r.randint(1, 6))
        if k < 0.6:
            return self.chars(0x3040, 0x30FF, self.r.randint(1, 6))  # kana
        if k < 0.7:
            return self.chars(0xF900, 0xFAFF, self.r.randint(1, 3))  # compatibility ideographs
        if k < 0.8:
            return self.chars(0x20000, 0x2A6DF, self.r.randint(1, 3))
        if k < 0.9:
            return self.chars(0x2B800, 0x2B93F, self.r.randint(1, 3))  # where Rust and Python differ
        return self.pick(["東京タワー", "我爱北京天安门", "中文，标点。", "「引用」", "漢字かな交じり文", "３０日"])

    def korean(self):
        k = self.r.random()
        if k < 0.6:
            return self.chars(0xAC00, 0xD7A3, self.r.randint(1, 5))
        if k < 0.8:
            return self.chars(0x1100, 0x11FF, self.r.randint(1, 4))
        return self.pick(["안녕하세요", "한국어 텍스트", "ㅋㅋㅋ", "서울특별시"])

    def other_script(self):
        return self.pick([
            lambda: self.chars(0x600, 0x6FF, self.r.randint(1, 6)),  # Arabic, incl. U+061D (Unicode 14)
            lambda: self.pick(["مرحبا بالعالم", "السلام عليكم", "كِتَابٌ", "۱۲۳"]),
            lambda: self.chars(0x590, 0x5FF, self.r.randint(1, 5)),
            lambda: self.chars(0x900, 0x97F, self.r.randint(1, 5)),
            lambda: self.chars(0xE00, 0xE7F, self.r.randint(1, 5)),
            lambda: self.chars(0x370, 0x3FF, self.r.randint(1, 5)),
            lambda: self.chars(0x1700, 0x177F, self.r.randint(1, 4)),  # U+1734 changed category
            lambda: self.chars(0x1680, 0x16FF, self.r.randint(1, 4)),
            lambda: self.chars(0x11100, 0x111FF, self.r.randint(1, 4)),
            lambda: self.chars(0x11900, 0x1195F, self.r.randint(1, 4)),  # U+11938 decomposes in Unicode 13
            lambda: self.chars(0x1D150, 0x1D1AF, self.r.randint(2, 6)),  # musical symbols, Mc reordering
            lambda: "\U0001D165\U0001D16D\U0001D165\u0301\U0001D16E\U0001D172",
            lambda: "a\u302F\u302E\U0001D165b",
            lambda: self.chars(0x2E00, 0x2E7F, self.r.randint(1, 4)),
            lambda: self.chars(0x1F00, 0x1FFF, self.r.randint(1, 5)),  # Greek extended
            lambda: self.chars(0x10A0, 0x10FF, self.r.randint(1, 4)),
            lambda: self.chars(0x1C80, 0x1CBF, self.r.randint(1, 4)),
            lambda: self.chars(0x13A0, 0x13FF, self.r.randint(1, 4)),
            lambda: self.chars(0x2000, 0x206F, self.r.randint(1, 4)),
            lambda: self.chars(0xFE00, 0xFFFF, self.r.randint(1, 4)),
            lambda: self.chars(0x80, 0xFF, self.r.randint(1, 5)),
            lambda: self.chars(0x80, 0x2FFFF, self.r.randint(1, 4)),
            lambda: self.chars(0x80, 0x10FFFF, self.r.randint(1, 3)),
        ])()

    def emoji(self):
        k = self.r.random()
        if k < 0.5:
            return self.chars(0x1F600, 0x1F64F, self.r.randint(1, 4))
        if k < 0.7:
            return self.chars(0x1F300, 0x1FAFF, self.r.randint(1, 3))
        return self.pick(["👨\u200d👩\u200d👧\u200d👦", "👍🏽", "🇺🇸🇯🇵", "❤️", "☺︎", "1️⃣", "🥰🥺", "✔", "©®™",
                          "🏳️\u200d🌈", "😂😂😂", "♥"])

    def control(self):
        pool = ([chr(c) for c in range(0, 0x20)] + ["\x7f", "\x85", "\u200b", "\u200c", "\u200d", "\u200e",
                                                     "\u200f", "\u2028", "\u2029", "\ufeff", "\ufffd", "\u00ad",
                                                     "\u0600", "\ue000", "\U000F0000", "\u2060", "\u180e",
                                                     "\U000E0001", "\u061c"])
        return "".join(self.pick(pool) for _ in range(self.r.randint(1, 3)))

    def space(self):
        return self.pick([" ", " ", " ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u2003", "\u1680",
                          "\u202f", "\u205f", "\x0b", "\x0c", "\x1c", ""])

    def web(self):
        k = self.r.random()
        if k < 0.3:
            return self.pick(["https://t.co/", "http://", "https://www.", "www."]) + \
                "".join(self.pick("abcdefghijkLMNOPQ0123456789") for _ in range(self.r.randint(3, 12))) + \
                self.pick([".com", ".org/path?q=1&x=2#frag", "/a_b-c.html", ".co.uk/~user/", ""])
        if k < 0.55:
            return "#" + self.english() + self.pick(["", "2024", self.english().capitalize(), "_fun"])
        if k < 0.8:
            return "@" + self.english() + self.pick(["", "_", "123", "_official"])
        return self.pick(["user@example.com", "RT", "&amp;", "&lt;3", "<br/>", "C++", "node.js", "a/b\\c"])

    def number(self):
        return self.pick([
            lambda: str(self.r.randint(0, 10**self.r.randint(1, 12))),
            lambda: "%.*f" % (self.r.randint(1, 4), self.r.uniform(-1000, 1000)),
            lambda: "{:,}".format(self.r.randint(1000, 10**9)),
            lambda: "$%d.%02d" % (self.r.randint(0, 999), self.r.randint(0, 99)),
            lambda: "%d%%" % self.r.randint(0, 100),
            lambda: "%d:%02d%s" % (self.r.randint(1, 12), self.r.randint(0, 59), self.pick(["am", "pm", "", " PM"])),
            lambda: "%04d-%02d-%02d" % (self.r.randint(1900, 2100), self.r.randint(1, 12), self.r.randint(1, 28)),
            lambda: self.pick(["1st", "2nd", "3rd", "4th", "½", "²", "³", "٣", "१२३", "¼", "1e-5", "0x1F"]),
        ])()

    def long_word(self):
        n = self.pick([99, 100, 101, 102, self.r.randint(50, 300)])
        k = self.r.random()
        if k < 0.4:
            return "".join(self.pick("abcdefghijklmnopqrstuvwxyz") for _ in range(n))
        if k < 0.6:
            return self.pick(["a", "ab", "la", "é", "İ", "x"]) * (n // 2 + 1)
        if k < 0.8:
            return "".join(self.english() for _ in range(n // 5 + 1))
        return "".join(self.pick("éüñçåøİ") for _ in range(n))

    def punct(self):
        return self.pick([
            lambda: self.pick("!?.,;:") * self.r.randint(2, 12),
            lambda: "".join(self.pick("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") for _ in range(self.r.randint(1, 8))),
            lambda: self.pick(["...", "…", "?!?!", "—", "–", "“quoted”", "‘single’", "«guillemets»", "¿qué?",
                               "¡hola!", "、", "。", "・", "•", "§", "¶", "†", "‰", "′″", "⁂", "※", ";", "·",
                               "`", "~~", "^_^", ":-)", ";)", "<3", "xD", "(╯°□°)╯︵ ┻━┻", "¯\\_(ツ)_/¯"]),
        ])()

    def special(self):
        return self.pick(["[CLS]", "[SEP]", "[MASK]", "[UNK]", "[PAD]", "[cls]", "[Sep]", "[CLS", "CLS]",
                          "[[SEP]]", "x[MASK]y", "[MASK][MASK]", "[ CLS ]", "[unused0]", "[SEP]]", "[[CLS",
                          "[ＣＬＳ]", "[CLS]\u0301", "[MA\u200bSK]"])

    def fragment(self):
        kinds = [(self.english, 40), (self.accented, 8), (self.cjk, 5), (self.korean, 3), (self.other_script, 6),
                 (self.emoji, 6), (self.control, 3), (self.web, 6), (self.number, 6), (self.long_word, 1),
                 (self.punct, 8), (self.special, 3)]
        total = sum(w for _, w in kinds)
        x = self.r.uniform(0, total)
        for f, w in kinds:
            x -= w
            if x <= 0:
                return f()
        return kinds[0][0]()

    def text(self, n_fragments):
        parts = []
        for _ in range(n_fragments):
            parts.append(self.fragment())
            parts.append(self.space() if self.r.random() < 0.85 else self.pick(["", ",", ".", "!", "-", "/"]))
        return "".join(parts)

    def short(self):
        k = self.r.random()
        if k < 0.02:
            return self.pick(["", " ", "\t", "\n\n", "\u3000", " \u00a0 ", "\x00", "\ufffd", "\u200b"])
        if k < 0.1:
            return self.fragment()
        return self.text(self.r.randint(1, 9))

    def long(self):
        return self.text(self.r.randint(200, 300))


# ---------------------------------------------------------------- char props


def char_props():
    """One line per range of code points that HF treats alike:
    "FIRST LAST CLEAN CJK STRIP LOWER PRETOK" (hex code points), where
    CLEAN is R (removed by clean_text), S (becomes a space) or K (kept);
    CJK is C (padded by handle_chinese_chars) or -; STRIP is what NFD plus
    Mn removal makes of it: = (itself), - (nothing) or hex code points
    joined by '+'; LOWER is = , a signed decimal offset, or hex code points
    joined by '+'; PRETOK is W (whitespace), P (punctuation) or -.
    Code points not listed (and surrogates) are K - = = -."""
    clean = BertNormalizer(clean_text=True, handle_chinese_chars=False, strip_accents=False, lowercase=False)
    chinese = BertNormalizer(clean_text=False, handle_chinese_chars=True, strip_accents=False, lowercase=False)
    strip = BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False)
    lower = BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=False, lowercase=True)
    pre = BertPreTokenizer()
    ranges = []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        c = clean.normalize_str(ch)
        c = "R" if c == "" else "S" if c == " " else "K" if c == ch else None
        h = chinese.normalize_str(ch)
        h = "C" if h == " " + ch + " " else "-" if h == ch else None
        s = strip.normalize_str(ch)
        s = "=" if s == ch else "-" if s == "" else "+".join("%X" % ord(x) for x in s)
        lo = lower.normalize_str(ch)
        lo = "=" if lo == ch else ("%+d" % (ord(lo) - cp)) if len(lo) == 1 else "+".join("%X" % ord(x) for x in lo)
        words = [w for w, _ in pre.pre_tokenize_str("a" + ch + "b")]
        p = "P" if words == ["a", ch, "b"] else "W" if words == ["a", "b"] else "-" if words == ["a" + ch + "b"] \
            else None
        if c is None or h is None or p is None:
            sys.exit("unexpected HF behaviour for U+%04X: %r %r %r" % (cp, c, h, words))
        key = (c, h, s, lo, p)
        if key == ("K", "-", "=", "=", "-"):
            continue
        if ranges and ranges[-1][1] == cp - 1 and ranges[-1][2] == key and s in "=-" and "+" not in lo:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp, key])
    return "".join("%X %X %s\n" % (a, b, " ".join(k)) for a, b, k in ranges)


# ---------------------------------------------------------------- tiny tokenizer.json


def tiny_tokenizer(out_dir):
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "quick", "brown", "fox", "jump", "##s", "##ed",
             "over", "lazy", "dog", "cafe", "café", "un", "##believ", "##able", "!", ",", ".", "?", "a", "b", "c",
             "##a", "##b", "##c", "é", "e", "##e", "ü", "u", "##u", "中", "文", "Hello", "hello", "##lo", "hel",
             # NFD's canonical reordering decides which of these match.
             "x", "\U0001D165\U0001D16D", "##\U0001D165\U0001D16D", "\U0001D16D", "##\U0001D165",
             "##\U0001D165\u302F\u302Eb"]
    vocab_path = os.path.join(out_dir, "tiny_vocab.txt.tmp")
    with open(vocab_path, "w", encoding="utf-8") as f:
        f.write("\n".join(words) + "\n")
    # Cased, accents stripped, truncation 12: flags that differ from the
    # defaults, so the loader must read them.
    tok = BertTokenizerFast(vocab_file=vocab_path, do_lower_case=False, strip_accents=True)
    os.unlink(vocab_path)
    backend = tok.backend_tokenizer
    backend.enable_truncation(12)
    path = os.path.join(out_dir, "tiny_tokenizer.json")
    backend.save(path)
    reloaded = Tokenizer.from_file(path)
    texts = ["the quick brown fox jumps over the lazy dog", "Hello hello HELLO", "café cafe CAFÉ",
             "unbelievable!", "中文 text", "[CLS] a [SEP] b [MASK]", "abc abca", "ü u ü", "", "?!,.",
             "a b c a b c a b c a b c a b c", "jumped jumps jumpeds", "helloworld",
             "\U0001D16D\U0001D165", "x\U0001D16D\u0301\U0001D165", "a\u302F\u302E\U0001D165b",
             "\U0001D16D\u0F71\U0001D165", "\U0001D16D\u0900\U0001D165"]
    with open(os.path.join(out_dir, "tiny_tokenizer_expected.jsonl"), "w", encoding="utf-8") as f:
        for t in texts:
            f.write(json.dumps({"t": t, "ids": reloaded.encode(t).ids}, ensure_ascii=False) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vocab", default=DEFAULT_VOCAB)
    ap.add_argument("--out-dir", default=OUT_DIR)
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)

    with open(args.vocab, encoding="utf-8") as f:
        vocab_words = [w.rstrip("\n") for w in f]
    vocab_words = [w for w in vocab_words if w.isalpha() and not w.startswith("[")]

    rng = random.Random(SEED)
    g = Gen(rng, vocab_words)
    short = [g.short() for _ in range(N_DEFAULT_SHORT)]
    long_texts = [g.long() for _ in range(N_LONG)]
    fixed = ["", " ", "[CLS]", "[SEP] [SEP]", "hello [MASK] world", "a" * 100, "a" * 101, "İ" * 50, "İ" * 51,
             "é" * 100 + " é" * 3, "x\u0130y", "\U0001D16D\U0001D165", "\U00011938", "\u166D\U000111C9\u1734",
             "\u037E\u0387\u1FEF\u2000\u2001", "ǅ ǈ ǋ ǲ", "ΣΑΣ σας"]
    default_texts = fixed + short + long_texts

    lines = []
    tok = make_tokenizer(args.vocab, "default")
    n_over = 0
    for t, ids in zip(default_texts, encode_all(tok, default_texts, VARIANTS["default"][2])):
        lines.append({"v": "default", "t": t, "ids": ids})
        n_over += len(ids) == 512
    for name in VARIANTS:
        if name == "default":
            continue
        subset = fixed + short[:N_PER_VARIANT] + long_texts[:2]
        tok = make_tokenizer(args.vocab, name)
        for t, ids in zip(subset, encode_all(tok, subset, VARIANTS[name][2])):
            lines.append({"v": name, "t": t, "ids": ids})

    path = os.path.join(args.out_dir, "wordpiece_golden.jsonl")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
    print("%s: %d lines (%d default, %d truncated at 512), %d bytes" %
          (path, len(lines), len(default_texts), n_over, os.path.getsize(path)))

    path = os.path.join(args.out_dir, "hf_char_props.txt")
    with open(path, "w", encoding="ascii", newline="\n") as f:
        f.write(char_props())
    print("%s: %d bytes" % (path, os.path.getsize(path)))

    tiny_tokenizer(args.out_dir)
    print("tiny tokenizer written")


if __name__ == "__main__":
    main()
