"""Shared fixtures of the Python package's suites (ctest label python).

ctest runs them with PYTHONPATH at the build's python/ folder (the module of
the main build beside a copy of python/infercost), INFERCOST_BINARY at the
build's `infercost` and INFERCOST_TEST_DATA_DIR at tests/data_files
(tests/python/CMakeLists.txt). By hand:
    PYTHONPATH=build/python build/pyenv/bin/python -m pytest tests/python
Every file a test writes is under its tmp_path.
"""

import json
import os
import pathlib
import subprocess

import pytest

import infercost

HERE = pathlib.Path(__file__).resolve().parent
DATA = pathlib.Path(os.environ.get("INFERCOST_TEST_DATA_DIR", HERE.parent / "data_files"))
GOLDEN = DATA / "golden"
# The CLI of the same build: beside the package folder's parent by default
# (build/python/infercost/_native*.so -> build/infercost).
CLI = pathlib.Path(
    os.environ.get("INFERCOST_BINARY", pathlib.Path(infercost._native.__file__).resolve().parents[2] / "infercost")
)

# The tiny models have 160 positions; run's default max_length (512) is refused for them.
MAX_LENGTH = 128

TINY_MODELS = ["tiny-distilbert", "tiny-bert", "tiny-roberta", "tiny-xlm-roberta", "tiny-roberta-multilabel"]

# Rows that exercise the reader and the tokenizers: plain, unicode, empty,
# null, long, and repeated so that batches hold several lengths.
ROWS = [
    {"full_text": "I love this movie! #best", "text": "a"},
    {"full_text": "worst day ever :(", "text": "b"},
    {"full_text": "Ünïcödé, 中文字符 and emoji 🙂🙃", "text": "c"},
    {"full_text": "", "text": "d"},
    {"full_text": None, "text": "e"},
    {"full_text": "long " * 300, "text": "f"},
] + [{"full_text": f"tweet number {i} about {'things ' * (i % 7)}", "text": str(i)} for i in range(40)]


def model_dir(name):
    return GOLDEN / name


def write_jsonl(path, rows=ROWS):
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def run_cli(*args, check=True):
    """`infercost ARGS...`; the CompletedProcess (stdout, stderr as text)."""
    if not CLI.exists():
        pytest.fail(f"the infercost CLI is not built at {CLI} (set INFERCOST_BINARY)")
    proc = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, timeout=120)
    if check and proc.returncode != 0:
        pytest.fail(f"infercost {' '.join(map(str, args))} exited {proc.returncode}: {proc.stderr}")
    return proc


@pytest.fixture
def tweets(tmp_path):
    return write_jsonl(tmp_path / "tweets.jsonl")
