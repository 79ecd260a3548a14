"""The real all-MiniLM-L6-v2 on the emulated CUDA backend (tests/backend's emulated GPU, loaded as the
CUDA module), `infercost embed --device cuda` in fp32: every element of every vector within 1e-5 of
sentence-transformers', on the golden tweets real_golden.emulator_indexes() picks (all those over 64
tokens, the longest included, and the first of each shorter length: fewer than 150 of the 2,000, every
length they have; the CPU's suite, test_real_embedding.py, takes all 2,000). Its own ctest, so that
ctest -j runs it beside the others.
"""

import os
import subprocess

import pytest

from conftest import CLI
from real_golden import EMULATED_CUDA_MODULE_NAME, EMULATOR_LONG, ROWS, assert_matches_golden, \
    emulator_indexes, parquet_vectors, write_input

EMULATED_CUDA_MODULE = CLI.parent / EMULATED_CUDA_MODULE_NAME


def test_emulated_cuda_fp32_matches_sentence_transformers(minilm, tweets, tmp_path):
    if not EMULATED_CUDA_MODULE.exists():
        pytest.skip(f"this build has no CUDA module: no emulated GPU at {EMULATED_CUDA_MODULE}")
    indexes = emulator_indexes(ROWS)
    # Every long row, and few rows in all: the emulator's time is in proportion to its tokens.
    assert {i for i, g in enumerate(ROWS) if g["tokens"] > EMULATOR_LONG} <= set(indexes)
    assert len(indexes) < 150, len(indexes)
    source = write_input(tmp_path / "tweets.jsonl", tweets, [ROWS[i] for i in indexes])
    out = tmp_path / "vectors.parquet"
    env = {**os.environ, "INFERCOST_CUDA_MODULE": str(EMULATED_CUDA_MODULE)}
    proc = subprocess.run([str(CLI), "embed", str(source), "--model", str(minilm), "--output", str(out),
                           "--device", "cuda", "--precision", "fp32", "--streams-per-device", "1", "--quiet"],
                          env=env, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr
    assert_matches_golden(parquet_vectors(out)[1], "emulated cuda fp32", indexes)
