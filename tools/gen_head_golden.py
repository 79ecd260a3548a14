#!/usr/bin/env python3
"""Golden outputs of HF's text-classification pipeline for the head's output function.

For the committed tiny models (tests/data_files/golden/tiny-distilbert, tiny-bert), each
with config.json's problem_type as committed (absent), multi_label_classification,
single_label_classification and regression, runs
    pipeline("text-classification", model=dir, top_k=None, function_to_apply=f)
for f = None (HF's default, which `infercost run --function default` must match),
"softmax", "sigmoid" and "none" on a few texts, and records each text's scores in
label order and, for the default, which of the three HF's scores are. tests/pipeline/head_test.cc replays them
through run_classification.

usage: tools/gen_head_golden.py   (writes tests/data_files/golden/head.json)
"""
import json
import os
import shutil
import tempfile

import numpy as np
import torch
import transformers
from transformers import pipeline

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(ROOT, "tests", "data_files", "golden")

TEXTS = [
    "hello world",
    "a",
    "the cat sat on the mat and would not move",
    "Why, oh why?!",
    "numbers 1 2 3 and more 42",
    "UPPER lower MiXeD",
    "",
    "one more text, with a comma",
]
PROBLEM_TYPES = [None, "multi_label_classification", "single_label_classification", "regression"]
FUNCTIONS = [None, "softmax", "sigmoid", "none"]


def applied(cases):
    """The function HF applied by default: the explicit one whose scores it gave (read from
    HF's outputs, not from its rule, so the golden holds what HF does)."""
    default = np.array(cases["default"])
    matches = [f for f in ["softmax", "sigmoid", "none"] if np.array_equal(default, np.array(cases[f]))]
    assert len(matches) == 1, matches
    return matches[0]


def main():
    torch.manual_seed(0)
    doc = {
        "generator": "tools/gen_head_golden.py",
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "tolerance_abs": 1e-4,
        "texts": TEXTS,
        "cases": [],
    }
    with tempfile.TemporaryDirectory() as tmp:
        for model in ["tiny-distilbert", "tiny-bert"]:
            for problem in PROBLEM_TYPES:
                d = os.path.join(tmp, f"{model}-{problem}")
                shutil.copytree(os.path.join(GOLDEN, model), d)
                with open(os.path.join(d, "config.json")) as f:
                    config = json.load(f)
                if problem is not None:
                    config["problem_type"] = problem
                with open(os.path.join(d, "config.json"), "w") as f:
                    json.dump(config, f, indent=2)
                pipe = pipeline("text-classification", model=d, tokenizer=d, device="cpu")
                labels = [pipe.model.config.id2label[i] for i in range(pipe.model.config.num_labels)]
                by_function = {}
                for function in FUNCTIONS:
                    kwargs = {"top_k": None}
                    if function is not None:
                        kwargs["function_to_apply"] = function
                    out = pipe(TEXTS, **kwargs)
                    scores = []
                    for row in out:
                        by_label = {s["label"]: s["score"] for s in row}
                        scores.append([float(by_label[l]) for l in labels])
                    by_function[function if function is not None else "default"] = scores
                for function, scores in by_function.items():
                    doc["cases"].append({
                        "model": model,
                        "problem_type": problem,
                        "function": function,
                        "applied": function if function != "default" else applied(by_function),
                        "labels": labels,
                        "scores": scores,
                    })
                print(f"{model} problem_type={problem}: default applies {applied(by_function)}")
    path = os.path.join(GOLDEN, "head.json")
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {os.path.relpath(path, ROOT)}: {len(doc['cases'])} cases")


if __name__ == "__main__":
    main()
