#!/usr/bin/env python3
"""End-to-end goldens for the RoBERTa family: what HF transformers' text-classification
pipeline gives, text in, probabilities out, for the HF-saved tiny model directories
(tests/data_files/golden/tiny-roberta, tiny-roberta-multilabel, tiny-xlm-roberta, tiny-camembert:
made by tools/gen_model_golden.py with their BPE / Unigram tokenizers).

For each directory, loaded unchanged with
    pipeline("text-classification", model=dir, tokenizer=dir, top_k=None)
and called with truncation=True, max_length = the model's usable positions (HF's pipeline does
not truncate by itself; `infercost run` truncates to min(--max-length, those positions)), it
records every text's token ids (the pipeline's tokenizer, same truncation), the scores in
label order under HF's default function, and which function that was (read from HF's scores:
softmax when they sum to 1 over the labels, else sigmoid). tests/cli/family_test.cc runs
`infercost run` and `infercost tokenize` on the same directories and texts.

usage: tools/gen_family_golden.py   (writes tests/data_files/golden/family.json)
"""
import json
import os

import numpy as np
import torch
import transformers
from transformers import pipeline

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(ROOT, "tests", "data_files", "golden")
MODELS = ["tiny-roberta", "tiny-roberta-multilabel", "tiny-xlm-roberta", "tiny-camembert"]

TEXTS = [
    "hello world",
    "I love this so much!!! 😍😍",
    "worst. day. ever. @united lost my bag #fail",
    "Café au lait, naïve façade, Zürich",
    "Cafe\u0301 with a combining accent",
    "新年快乐！今天天气很好",
    "مرحبا بالعالم",
    "שלום עולם",
    "Привет, как дела?",
    "check https://example.com/a?b=c&d=e now",
    "👩🏽‍💻 👨‍👩‍👧‍👦 🇫🇷 ❤️",
    "tabs\tand\nnewlines\r\nand\u00a0nbsp\u3000ideographic",
    "  leading and trailing spaces  ",
    "multiple     spaces    inside",
    "a <mask> in the middle",
    "<s> a start token and an end </s> inside",
    "a pad <pad> inside the text",
    "<unk> and <mask><mask>",
    "it's they're we've I'm you'll he'd",
    "numbers 1234567 and 3.14159 and 1,000,000",
    "ALL CAPS SHOUTING",
    "",
    " ",
    "x",
    "supercalifragilisticexpialidocious" * 3,
    "control\u0007chars\u001bhere",
    "zero\u200bwidth\u200djoiner",
    "Ｆｕｌｌｗｉｄｔｈ ｆｏｒｍｓ",
    "emoji at the end 🙂",
    "so long " + " ".join(f"word{i}" for i in range(200)),
]


def usable_positions(model):
    c = model.config
    return c.max_position_embeddings - (c.pad_token_id + 1)


def function_of(scores):
    sums = np.array(scores).sum(axis=1)
    return "softmax" if np.allclose(sums, 1.0, atol=1e-5) else "sigmoid"


def main():
    torch.manual_seed(0)
    doc = {
        "generator": "tools/gen_family_golden.py",
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "tolerance_abs": 1e-4,
        "texts": TEXTS,
        "models": [],
    }
    for name in MODELS:
        d = os.path.join(GOLDEN, name)
        pipe = pipeline("text-classification", model=d, tokenizer=d, device="cpu")
        max_length = usable_positions(pipe.model)
        labels = [pipe.model.config.id2label[i] for i in range(pipe.model.config.num_labels)]
        out = pipe(TEXTS, top_k=None, truncation=True, max_length=max_length)
        scores = []
        for row in out:
            by_label = {s["label"]: s["score"] for s in row}
            scores.append([float(by_label[label]) for label in labels])
        ids = [pipe.tokenizer(t, truncation=True, max_length=max_length)["input_ids"] for t in TEXTS]
        doc["models"].append({
            "dir": name,
            "max_length": max_length,
            "labels": labels,
            "function": function_of(scores),
            "ids": ids,
            "scores": scores,
        })
        print(f"{name}: {len(TEXTS)} texts, {function_of(scores)}, max_length {max_length}, "
              f"longest {max(len(i) for i in ids)} ids")
    path = os.path.join(GOLDEN, "family.json")
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"), ensure_ascii=False)
        f.write("\n")
    print(f"wrote {os.path.relpath(path, ROOT)}")


if __name__ == "__main__":
    main()
