"""infercost.model_info() and infercost.tokenize(): what `infercost model info` and `infercost tokenize` say."""

import json
import re

import pyarrow as pa
import pytest

import infercost
from conftest import TINY_MODELS, model_dir, run_cli

TEXTS = ["Hello world! #nlp", "Ünïcödé, 中文 and 🙂", "", "a b c " * 100]


def cli_info(directory):
    """`infercost model info DIR` as {field: value text}."""
    out = run_cli("model", "info", directory).stdout
    return {m.group(1): m.group(2) for m in re.finditer(r"^(\w[\w ]*?)\s{2,}(.*)$", out, re.M)}


@pytest.mark.parametrize("name", TINY_MODELS)
def test_model_info_is_the_clis(name):
    info = infercost.model_info(model_dir(name))
    cli = cli_info(model_dir(name))
    assert cli["architecture"] == f"{info['architecture']} (model_type {info['model_type']})"
    assert int(cli["parameters"].replace(",", "")) == info["parameters"] > 0
    assert int(cli["layers"]) == info["layers"]
    assert cli["hidden"].startswith(f"{info['hidden_size']} ({info['num_heads']} heads")
    assert cli["vocab"] == str(info["vocab_size"])
    assert cli["labels"] == ", ".join(f"{i}={label}" for i, label in enumerate(info["labels"]))
    assert cli["head function"].startswith(f"{info['head_function']} ({info['head_function_reason']})")
    assert ("multi-label" in cli["head function"]) == info["labels_column"]
    tok = info["tokenizer"]
    assert cli["tokenizer"] == (f"{tok['kind']} ({tok['source']}), {tok['vocab_size']} tokens, "
                                f"max length {tok['max_length']}")
    assert cli["synthetic"] == "no" and info["synthetic"] is False and info["synthetic_preset"] is None


def test_model_info_says_how_deberta_attends():
    # The tiny DeBERTas' configs: buckets or none, c2p and p2c or c2p only, shared projections or not.
    assert cli_info(model_dir("tiny-deberta"))["attention"] == (
        "disentangled (c2p, p2c), relative positions: 16 log buckets over distances up to 64, "
        "shared key/query projections")
    assert cli_info(model_dir("tiny-deberta-3"))["attention"] == (
        "disentangled (c2p, p2c), relative positions: 32 log buckets over distances up to 128")
    assert cli_info(model_dir("tiny-deberta-multilabel"))["attention"] == (
        "disentangled (c2p), relative positions: distances up to 24, shared key/query projections")
    assert "attention" not in cli_info(model_dir("tiny-bert"))


def test_model_info_of_a_synthetic_model(tmp_path):
    run_cli("model", "synth", "--preset", "tiny", "--seed", "7", "--out", tmp_path / "m")
    info = infercost.model_info(tmp_path / "m")
    assert info["synthetic"] is True
    assert (info["synthetic_preset"], info["synthetic_seed"]) == ("tiny", 7)
    assert cli_info(tmp_path / "m")["synthetic"] == "yes (preset tiny, seed 7)"


def test_model_info_errors(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        infercost.model_info(tmp_path / "absent")
    assert str(info.value) in run_cli("model", "info", tmp_path / "absent", check=False).stderr


def cli_ids(*args):
    out = run_cli("tokenize", *args).stdout
    return [json.loads(line)["ids"] for line in out.splitlines()]


@pytest.mark.parametrize("name", ["tiny-distilbert", "tiny-bert", "tiny-roberta", "tiny-xlm-roberta"])
def test_tokenize_is_the_clis(name):
    directory = model_dir(name)
    assert infercost.tokenize(TEXTS, directory) == cli_ids("--model", directory, "--", *TEXTS)
    short = infercost.tokenize(TEXTS, directory, max_length=5, add_special_tokens=False)
    assert short == cli_ids("--model", directory, "--max-length", "5", "--no-special-tokens", "--", *TEXTS)
    assert max(len(ids) for ids in short) == 5


def test_tokenize_a_tokenizer_file_and_arrow_texts():
    path = model_dir("tiny-roberta") / "tokenizer.json"
    expected = cli_ids("--tokenizer", path, "--", *TEXTS)
    assert infercost.tokenize(TEXTS, tokenizer=path) == expected
    arrow = pa.chunked_array([TEXTS[:2], [None], TEXTS[2:]])
    assert infercost.tokenize(arrow, tokenizer=path) == expected[:2] + [None] + expected[2:]


def test_tokenize_errors(tmp_path):
    with pytest.raises(TypeError, match="exactly one"):
        infercost.tokenize(["a"])
    with pytest.raises(TypeError, match="exactly one"):
        infercost.tokenize(["a"], model_dir("tiny-bert"), tokenizer=model_dir("tiny-bert") / "vocab.txt")
    with pytest.raises(FileNotFoundError):
        infercost.tokenize(["a"], tmp_path / "absent")
    with pytest.raises(ValueError, match="max_length"):
        infercost.tokenize(["a"], model_dir("tiny-bert"), max_length=-1)
    bad_utf8 = pa.Array.from_buffers(pa.string(), 2, [None, pa.py_buffer(b"\0\0\0\0\1\0\0\0\3\0\0\0"),
                                                       pa.py_buffer(b"a\xff\xfe")])
    with pytest.raises(ValueError, match="text 2") as info:
        infercost.tokenize(bad_utf8, model_dir("tiny-bert"))
    assert info.value.status_code == "Corrupt input"
