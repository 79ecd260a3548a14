#!/usr/bin/env python3
"""Writes the golden files for infercost's SentencePiece Unigram tokenizer.

The oracle is Hugging Face `tokenizers` (Tokenizer.from_file on the real
XLM-R tokenizer.json, ../shared/data/xlm-roberta/tokenizer.json), checked
against transformers' XLMRobertaTokenizerFast(tokenizer_file=...), which must
agree. Outputs, under tests/data_files/tokenizer/:

  unigram_golden.jsonl          {"v": variant, "t": text, "ids": [...]}:
                                >= 10,000 "default" texts (truncation=True,
                                max_length=512), and a subset as "max16"
                                (max_length=16) and "nospecial"
                                (add_special_tokens=False, max_length=512).
  tiny_unigram_tokenizer.json   a small Unigram trained here with UnigramTrainer
                                (NFKC + Replace + Lowercase, Metaspace with
                                prepend_scheme "first"), and
  tiny_unigram_bytes_tokenizer.json  the same with byte_fallback and <0xXX> pieces;
  tiny_unigram_expected.jsonl   {"v": "tiny"|"tiny_bytes", "t": text, "ids": [...]}
                                for them (max_length 512).

Deterministic (fixed seed). Run from anywhere:
  python3 tools/gen_unigram_golden.py [--tokenizer PATH]
Python is for generating these files only; infercost never runs it.
"""

import argparse
import json
import os
import random

from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers, AddedToken
from tokenizers import Regex

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "tests", "data_files", "tokenizer")
DEFAULT_TOKENIZER = os.path.join(ROOT, "..", "shared", "data", "xlm-roberta", "tokenizer.json")
SEED = 20261202
N_DEFAULT = 10_000
N_LONG = 30
N_PER_VARIANT = 400

SPACES = [" ", "  ", "   ", "\t", "\n", "\r\n", "\r", "\u00a0", "\u3000", "\u2002", "\u200b", "\u2028",
          "\u202f", "\u205f", "\u1680", "\x0b", "\x0c", "\x85", " \t ", "\n\n", "     "]
CONTROL = ["\x00", "\x01", "\x07", "\x1b", "\x1e", "\x7f", "\u200d", "\u200e", "\u202e", "\ufeff", "\ufffd",
           "\u00ad", "\ue000", "\U000f0000", "\u0600", "\u2066"]
SPECIAL = ["<s>", "</s>", "<pad>", "<unk>", "<mask>", "<mask><mask>", " <mask> ", "<s", "mask>", "<MASK>", "< s >"]
EMOJI = ["😀", "👍🏽", "👩‍💻", "👨‍👩‍👧‍👦", "🇫🇷", "🇯🇵🇺🇸", "❤️", "❤", "🏳️‍🌈", "🤷🏻‍♀️", "✌🏿", "🙏", "😂😂😂", "🔥",
         "1️⃣", "#️⃣", "©", "™", "🧑🏾‍🤝‍🧑🏻", "👁‍🗨", "🫠", "🇦", "🏴󠁧󠁢󠁳󠁣󠁴󠁿"]
ACCENTS = ["café", "cafe\u0301", "naïve", "nai\u0308ve", "Ångström", "A\u030angstro\u0308m", "résumé",
           "über", "u\u0308ber", "ñandú", "n\u0303", "Ελληνικά", "Ё", "Е\u0308", "ﬁ", "ﬀ", "ǆ", "Å", "Ω",
           "e\u0301\u0301", "a\u0323\u0302", "ḍ̇", "Ｈｅｌｌｏ", "ＡＢＣ１２３", "ｶﾀｶﾅ", "①②③", "㈱", "㍻", "℡", "½",
           "Ａ\u0301", "x²", "ℌ", "ﾟ", "\uff61", "…", "‼", "﹏", "＂", "＇", "～", "￥", "ｶﾞ", "ㄱ", "ᄀ"]
WEB = ["https://t.co/AbC123xyz", "http://example.com/path?q=1&r=2#frag", "www.bbc.co.uk", "@user_name",
       "@JohnDoe123", "#MachineLearning", "#COVID19", "#日本", "user@example.org", "RT @news:", "&amp;",
       "&lt;3", ":-)", ":D", "<3", "...", "!!!", "???", "$100", "€50", "10:30pm", "2024-01-31", "+1 (555) 123-4567",
       "v2.0.1", "C++", "e.g.", "U.S.A.", "50%", "#1", "😀https://x.co"]
SCRIPTS = ["日本語のテキストです", "我爱自然语言处理", "한국어 텍스트", "ภาษาไทยไม่มีช่องว่าง", "हिन्दी में लिखा",
           "क्षत्रिय", "العربية لغة جميلة", "مرحبا بالعالم", "עברית מימין לשמאל", "שָׁלוֹם", "Русский язык",
           "Українська мова", "Ελληνικά κείμενα", "Tiếng Việt có dấu", "ქართული", "Հայերեն", "বাংলা ভাষা",
           "தமிழ்", "తెలుగు", "ಕನ್ನಡ", "മലയാളം", "ગુજરાતી", "ਪੰਜਾਬੀ", "සිංහල", "မြန်မာ", "ខ្មែរ", "ລາວ",
           "አማርኛ", "ᏣᎳᎩ", "ᚠᚢᚦ", "𝕳𝖊𝖑𝖑𝖔", "𝐁𝐨𝐥𝐝", "Türkçe ğüşıöç", "Polski żółć", "Čeština ěščřž",
           "Íslenska þð", "Deutsch ß ẞ", "Español ¿qué? ¡sí!", "Português ção", "Română ășț", "Kiswahili",
           "isiZulu", "Yorùbá", "𓀀𓀁", "🀄", "ꦗꦮ", "ᠮᠣᠩᠭᠣᠯ", "ཀ྄", "ꯃꯤꯇꯩ"]


class Gen:
    def __init__(self, rng, words):
        self.r = rng
        self.words = words

    def pick(self, seq):
        return seq[self.r.randrange(len(seq))]

    def word(self):
        k = self.r.random()
        if k < 0.55:
            return self.pick(self.words)
        if k < 0.65:
            return self.pick(self.words) + self.pick(self.words)
        if k < 0.72:
            return self.pick(self.words).upper()
        if k < 0.78:
            return self.pick(self.words).capitalize()
        return "".join(chr(self.r.randrange(0x20, 0x7F)) for _ in range(self.r.randrange(1, 8)))

    def fragment(self):
        k = self.r.random()
        if k < 0.50:
            return self.word()
        if k < 0.58:
            return self.pick(SCRIPTS)
        if k < 0.66:
            return self.pick(EMOJI)
        if k < 0.74:
            return self.pick(ACCENTS)
        if k < 0.82:
            return self.pick(WEB)
        if k < 0.86:
            return self.pick(SPECIAL)
        if k < 0.89:
            return self.pick(CONTROL)
        if k < 0.92:
            return chr(self.r.choice([self.r.randrange(0x80, 0x3000), self.r.randrange(0x3000, 0xD800),
                                      self.r.randrange(0xE000, 0x10000), self.r.randrange(0x10000, 0x30000)]))
        if k < 0.95:
            return str(self.r.randrange(0, 10 ** self.r.randrange(1, 12)))
        if k < 0.97:
            return self.pick(self.words) * self.r.randrange(5, 40)  # very long word
        return self.pick(SPACES)

    def text(self, n):
        parts = []
        for i in range(n):
            if i:
                parts.append(self.pick(SPACES) if self.r.random() < 0.25 else (" " if self.r.random() < 0.85 else ""))
            parts.append(self.fragment())
        s = "".join(parts)
        k = self.r.random()
        if k < 0.05:
            s = " " + s
        elif k < 0.10:
            s = s + " "
        elif k < 0.12:
            s = "\t" + s + "\n"
        return s


def fixed_texts():
    out = ["", " ", "  ", "\t", "\n", "\r\n", "\u3000", "\u00a0", "a", "▁", "▁▁a", " ▁ ", "hello world",
           "hello  world", "Hello   World  !", "\x00", "a\x00b", "\ufffd", "<s>", "</s>", "<pad>", "<unk>", "<mask>",
           "x<s>y", "a <mask> b", "<mask>.", " <mask> ", "<s></s><pad><unk><mask>", "<<mask>>"]
    out += SPACES + CONTROL + SPECIAL + EMOJI + ACCENTS + WEB + SCRIPTS
    out += ["a" * n for n in (50, 200, 1000)]
    out += ["🇫🇷" * 10, "👍🏽" * 20, "e\u0301" * 30, "x" + "\u0301" * 40, "한" * 100, "\r\n" * 5]
    return out


def xlmr_golden(path):
    from transformers import XLMRobertaTokenizerFast
    tok = Tokenizer.from_file(path)
    fast = XLMRobertaTokenizerFast(tokenizer_file=path)
    rng = random.Random(SEED)
    words = [p.lstrip("▁") for p, _ in json.load(open(path, encoding="utf-8"))["model"]["vocab"][5:]]
    words = [w for w in words if w]
    g = Gen(rng, words)
    texts = fixed_texts()
    while len(texts) < N_DEFAULT:
        texts.append(g.text(rng.randrange(1, 20)))
    longs = [g.text(rng.randrange(300, 500)) for _ in range(N_LONG)]
    texts += longs
    rows = []
    variants = {"default": dict(truncation=True, max_length=512),
                "max16": dict(truncation=True, max_length=16),
                "nospecial": dict(truncation=True, max_length=512, add_special_tokens=False)}
    subset = texts[:150] + rng.sample(texts[150:], N_PER_VARIANT - 150) + longs[:10]
    for v, kw in variants.items():
        tok.no_truncation()
        tok.enable_truncation(kw["max_length"])
        for t in (texts if v == "default" else subset):
            ids = tok.encode(t, add_special_tokens=kw.get("add_special_tokens", True)).ids
            ref = fast(t, **kw)["input_ids"]
            assert ids == ref, (v, t, ids, ref)
            rows.append({"v": v, "t": t, "ids": ids})
    tok.no_truncation()
    past = sum(1 for t in texts if len(tok.encode(t).ids) > 512)
    print(f"xlm-r: {len(texts)} default texts ({past} past 512 tokens), {len(rows)} rows")
    with open(os.path.join(OUT_DIR, "unigram_golden.jsonl"), "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return texts


def tiny_tokenizers(texts):
    rng = random.Random(SEED + 1)
    # Latin-script texts only, so that the other scripts are unknown to it.
    corpus = [t for t in texts if t and all(ord(c) < 0x250 for c in t)][:4000]
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " "),
                                           normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=True)
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    trainer = trainers.UnigramTrainer(vocab_size=600, special_tokens=specials, unk_token="<unk>",
                                      show_progress=False)
    tok.train_from_iterator(corpus, trainer=trainer)
    tok.add_tokens([AddedToken("[URL]", normalized=True), AddedToken("<tag>", normalized=False, lstrip=True,
                                                                     rstrip=True)])
    tok.post_processor = processors.TemplateProcessing(single="<s> $A </s>",
                                                       special_tokens=[("<s>", 0), ("</s>", 2)])
    tiny_path = os.path.join(OUT_DIR, "tiny_unigram_tokenizer.json")
    tok.save(tiny_path)
    # The same with byte_fallback: <0xXX> pieces appended at the lowest score.
    d = json.load(open(tiny_path, encoding="utf-8"))
    low = min(s for _, s in d["model"]["vocab"])
    d["model"]["vocab"] += [[f"<0x{b:02X}>", low - 1.0] for b in range(256)]
    d["model"]["byte_fallback"] = True
    n = len(d["model"]["vocab"])
    for a in d["added_tokens"]:
        if a["id"] >= n - 256:
            a["id"] += 256
    bytes_tok = Tokenizer.from_str(json.dumps(d))
    bytes_path = os.path.join(OUT_DIR, "tiny_unigram_bytes_tokenizer.json")
    bytes_tok.save(bytes_path)

    tests = fixed_texts() + ["[URL] [url] x[URL]y", "a<tag>b", "a <tag> b", "  <tag>  ", "Hello HELLO"] + \
        rng.sample(texts, 600)
    rows = []
    for v, t in (("tiny", Tokenizer.from_file(tiny_path)), ("tiny_bytes", Tokenizer.from_file(bytes_path))):
        t.enable_truncation(512)
        for s in tests:
            rows.append({"v": v, "t": s, "ids": t.encode(s).ids})
    with open(os.path.join(OUT_DIR, "tiny_unigram_expected.jsonl"), "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"tiny: {len(rows)} rows")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokenizer", default=DEFAULT_TOKENIZER)
    args = ap.parse_args()
    texts = xlmr_golden(args.tokenizer)
    tiny_tokenizers(texts)


if __name__ == "__main__":
    main()
