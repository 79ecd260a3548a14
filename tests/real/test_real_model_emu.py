"""The real-encoder sentiment classifier on the emulated CUDA backend (tests/backend's emulated GPU,
loaded as the CUDA module), `infercost run --device cuda` in fp32, against HF transformers'
text-classification pipeline: probabilities within 1e-4 and the same labels on the golden tweets
real_golden.emulator_indexes() picks (all those over 64 tokens, the longest included, and the first of
each shorter length: fewer than 150 of the 2,000, every length they have; the CPU's suite,
test_real_model.py, takes all 2,000). Its own ctest, so that ctest -j runs it beside the others.
"""

import os
import subprocess

import pytest

from conftest import CLI
from real_golden import EMULATED_CUDA_MODULE_NAME, EMULATOR_LONG, emulator_indexes, write_input
from test_real_model import GOLDEN, assert_matches_golden, run_outputs

EMULATED_CUDA_MODULE = CLI.parent / EMULATED_CUDA_MODULE_NAME


def test_emulated_cuda_fp32_matches_hf(classifier, tweets, tmp_path):
    if not EMULATED_CUDA_MODULE.exists():
        pytest.skip(f"this build has no CUDA module: no emulated GPU at {EMULATED_CUDA_MODULE}")
    indexes = emulator_indexes(GOLDEN["rows"])
    # Every long row, and few rows in all: the emulator's time is in proportion to its tokens.
    assert {i for i, g in enumerate(GOLDEN["rows"]) if g["tokens"] > EMULATOR_LONG} <= set(indexes)
    assert len(indexes) < 150, len(indexes)
    rows = [GOLDEN["rows"][i] for i in indexes]
    source = write_input(tmp_path / "tweets.jsonl", tweets, rows)
    out = tmp_path / "pred.jsonl"
    env = {**os.environ, "INFERCOST_CUDA_MODULE": str(EMULATED_CUDA_MODULE)}
    proc = subprocess.run([str(CLI), "run", str(source), "--model", str(classifier), "--output", str(out),
                           "--device", "cuda", "--precision", "fp32", "--streams-per-device", "1"],
                          env=env, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr
    assert_matches_golden(run_outputs(out), "emulated cuda fp32", rows)
