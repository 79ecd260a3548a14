#!/usr/bin/env python3
"""Embedding goldens of random-weight encoders: what sentence-transformers gives, text in, vector
out, for the HF-saved tiny model directories of tests/data_files/golden (BERT, RoBERTa, XLM-R:
made by tools/gen_model_golden.py with their WordPiece / BPE / Unigram tokenizers; ModernBERT with
mean-pooling head: tools/gen_modernbert_models.py; DeBERTa-v3 with its Unigram tokenizer:
tools/gen_deberta_models.py).

For each directory and each pooling (cls, mean, max), a SentenceTransformer of two modules
    Transformer(dir, max_seq_length=the model's usable positions), Pooling(hidden, that mode)
(the classifier's head is not part of the encoder: sentence-transformers loads AutoModel) encodes
tools/gen_family_golden.py's texts on the CPU in float32, without normalizing. The vectors are
stored as float32 written in full; `infercost embed --model DIR --pooling MODE` must give them
within 1e-5 (tests/python/test_embed.py, on the CPU and the emulated CUDA backend).

It also saves tests/data_files/golden/tiny-st-roberta: tiny-roberta as a sentence-transformers
directory written by sentence-transformers itself (modules.json, 1_Pooling/config.json with mean
pooling, a Normalize module, sentence_bert_config.json with max_seq_length 64), and its normalized
vectors: `infercost embed --model tiny-st-roberta` reads all of that from the directory.

Needs torch, transformers and sentence-transformers (tools/requirements.txt):
    build/tools-venv/bin/python tools/gen_embedding_golden.py   (writes tests/data_files/golden/embedding.json)
"""
import json
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_family_golden import TEXTS  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(ROOT, "tests", "data_files", "golden")
MODELS = ["tiny-bert", "tiny-roberta", "tiny-xlm-roberta", "tiny-modernbert-mean", "tiny-deberta"]
POOLINGS = ["cls", "mean", "max"]
ST_DIR = "tiny-st-roberta"
ST_MAX_SEQ_LENGTH = 64


def f32_list(v):
    return [float(x) for x in np.asarray(v, dtype=np.float32)]


def usable_positions(config):
    # RoBERTa-style positions start after the padding index.
    offset = config.pad_token_id + 1 if config.model_type in ("roberta", "xlm-roberta") else 0
    return config.max_position_embeddings - offset


def main():
    import sentence_transformers
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer, models

    torch.manual_seed(0)
    doc = {
        "generator": "tools/gen_embedding_golden.py",
        "sentence_transformers": sentence_transformers.__version__,
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "tolerance_abs": 1e-5,
        "texts": TEXTS,
        "models": [],
    }
    for name in MODELS:
        d = os.path.join(GOLDEN, name)
        config = transformers.AutoConfig.from_pretrained(d)
        max_length = usable_positions(config)
        entry = {"dir": name, "max_length": max_length, "dimensions": config.hidden_size, "vectors": {}}
        for pooling in POOLINGS:
            encoder = models.Transformer(d, max_seq_length=max_length)
            pool = models.Pooling(encoder.get_word_embedding_dimension(), pooling_mode=pooling)
            model = SentenceTransformer(modules=[encoder, pool], device="cpu")
            vectors = model.encode(TEXTS, batch_size=8, convert_to_numpy=True, normalize_embeddings=False)
            entry["vectors"][pooling] = [f32_list(v) for v in vectors]
        doc["models"].append(entry)
        print(f"{name}: {len(TEXTS)} texts x {POOLINGS}, {config.hidden_size} dimensions, max_length {max_length}")

    # A sentence-transformers directory as sentence-transformers writes it.
    out = os.path.join(GOLDEN, ST_DIR)
    shutil.rmtree(out, ignore_errors=True)
    encoder = models.Transformer(os.path.join(GOLDEN, "tiny-roberta"), max_seq_length=ST_MAX_SEQ_LENGTH)
    pool = models.Pooling(encoder.get_word_embedding_dimension(), pooling_mode="mean")
    model = SentenceTransformer(modules=[encoder, pool, models.Normalize()], device="cpu")
    model.save(out)
    os.remove(os.path.join(out, "README.md"))  # the model card sentence-transformers writes: not ours to keep
    vectors = SentenceTransformer(out, device="cpu").encode(TEXTS, batch_size=8, convert_to_numpy=True)
    doc["sentence_transformers_dir"] = {"dir": ST_DIR, "max_seq_length": ST_MAX_SEQ_LENGTH, "pooling": "mean",
                                        "normalize": True, "vectors": [f32_list(v) for v in vectors]}
    print(f"{ST_DIR}: saved by sentence-transformers ({sorted(os.listdir(out))})")

    path = os.path.join(GOLDEN, "embedding.json")
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"), ensure_ascii=False)
        f.write("\n")
    print(f"wrote {os.path.relpath(path, ROOT)}")


if __name__ == "__main__":
    main()
