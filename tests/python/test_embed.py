"""Embeddings of random-weight encoders against sentence-transformers (tests/data_files/golden/
embedding.json, made by tools/gen_embedding_golden.py): `infercost embed` on the CPU and the
emulated CUDA backend in fp32 and infercost.Model.embed give its vectors within 1e-5, for HF-saved
BERT, RoBERTa, XLM-R, ModernBERT and DeBERTa-v3 directories with --pooling cls, mean and max, and
for a sentence-transformers directory saved by sentence-transformers (mean pooling, Normalize,
max_seq_length from its files).
And what a user meets around them: the output formats (Parquet read by pyarrow and DuckDB, JSON
lines), null texts, the prefix, the settings of one task refused by the other, errors that leave
nothing behind.
"""

import json
import os
import subprocess

import numpy as np
import pytest

import infercost
from conftest import CLI, DATA, GOLDEN, model_dir

GOLDEN_DOC = json.loads((GOLDEN / "embedding.json").read_text(encoding="utf-8"))
TEXTS = GOLDEN_DOC["texts"]
TOL = GOLDEN_DOC["tolerance_abs"]
CASES = [(m["dir"], pooling) for m in GOLDEN_DOC["models"] for pooling in m["vectors"]]
ST = GOLDEN_DOC["sentence_transformers_dir"]
# The emulated GPU of this build's tests (tests/backend), loaded as the CUDA module.
EMULATED_CUDA_MODULE = CLI.parent / "tests" / "backend" / "infercost_cuda_emu.so"


def golden(name, pooling):
    entry = next(m for m in GOLDEN_DOC["models"] if m["dir"] == name)
    return entry, np.array(entry["vectors"][pooling], dtype=np.float32)


def assert_close(vectors, want, where):
    assert vectors.shape == want.shape, where
    diff = np.abs(vectors.astype(np.float64) - want.astype(np.float64)).max(axis=1)
    worst = int(diff.argmax())
    assert diff[worst] <= TOL, f"{where}: text {worst} {TEXTS[worst][:40]!r} differs by {diff[worst]:.2e}"
    cos = (vectors * want).sum(1) / np.maximum(np.linalg.norm(vectors, axis=1) * np.linalg.norm(want, axis=1), 1e-30)
    assert cos.min() >= 0.99999, f"{where}: cosine {cos.min()}"


def write_texts(path, texts=TEXTS):
    with open(path, "w", encoding="utf-8") as f:
        for t in texts:
            f.write(json.dumps({"full_text": t}, ensure_ascii=False) + "\n")
    return path


def run_cli(*args, env=None, check=True):
    proc = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, env=env, timeout=900)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def read_jsonl(path):
    # split("\n"): a text may hold U+2028, which JSON keeps raw.
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]


def jsonl_vectors(path):
    return np.array([r["embedding"] for r in read_jsonl(path)], dtype=np.float32)


@pytest.fixture(scope="module")
def texts_file(tmp_path_factory):
    return write_texts(tmp_path_factory.mktemp("in") / "texts.jsonl")


@pytest.mark.parametrize("name,pooling", CASES)
def test_cli_matches_sentence_transformers(name, pooling, texts_file, tmp_path):
    entry, want = golden(name, pooling)
    out = tmp_path / "v.jsonl"
    run_cli("embed", texts_file, "--model", model_dir(name), "--pooling", pooling, "--precision", "fp32",
            "--output", out, "--quiet")
    assert_close(jsonl_vectors(out), want, f"{name} {pooling} cpu")


@pytest.mark.parametrize("name,pooling", CASES)
def test_model_embed_matches_sentence_transformers(name, pooling):
    _, want = golden(name, pooling)
    with infercost.Model(model_dir(name), pooling=pooling, precision="fp32", threads=2) as model:
        assert model.task == "embed"
        result = model.embed(TEXTS)
    assert len(result) == len(TEXTS) and result.dimensions == want.shape[1]
    assert result.vectors.dtype == np.float32 and not result.is_null.any()
    assert_close(result.vectors, want, f"{name} {pooling} Model.embed")


@pytest.mark.parametrize("name,pooling", [c for c in CASES if c[1] != "max"])
def test_emulated_cuda_matches_sentence_transformers(name, pooling, texts_file, tmp_path):
    if not EMULATED_CUDA_MODULE.exists():
        pytest.skip(f"this build has no CUDA module: no emulated GPU at {EMULATED_CUDA_MODULE}")
    _, want = golden(name, pooling)
    out = tmp_path / "v.jsonl"
    env = {**os.environ, "INFERCOST_CUDA_MODULE": str(EMULATED_CUDA_MODULE)}
    run_cli("embed", texts_file, "--model", model_dir(name), "--pooling", pooling, "--device", "cuda",
            "--precision", "fp32", "--streams-per-device", "1", "--output", out, "--quiet", env=env)
    assert_close(jsonl_vectors(out), want, f"{name} {pooling} emulated cuda")


def test_sentence_transformers_directory(texts_file, tmp_path):
    # Pooling, Normalize and the truncation come from the files sentence-transformers wrote.
    want = np.array(ST["vectors"], dtype=np.float32)
    st_dir = model_dir(ST["dir"])
    info = infercost.model_info(st_dir)
    assert info["embedding"]["pooling"] == "mean" and info["embedding"]["normalize"] is True
    out = tmp_path / "v.parquet"
    metrics = tmp_path / "m.json"
    run_cli("embed", texts_file, "--model", st_dir, "--precision", "fp32", "--output", out, "--metrics", metrics,
            "--quiet")
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(out)
    assert table.column_names == ["text", "embedding"]
    assert table.schema.field("embedding").type == pa.list_(pa.field("element", pa.float32(), False), ST_DIMS())
    assert table.column("text").to_pylist() == TEXTS
    vectors = np.stack(table.column("embedding").to_numpy(zero_copy_only=False))
    assert_close(vectors, want, "sentence-transformers directory")
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    m = json.loads(metrics.read_text())
    assert m["task"] == "embed" and m["max_length"] == ST["max_seq_length"]
    assert m["embedding"] == {"dimensions": ST_DIMS(), "pooling": "mean", "normalized": True, "prefix": ""}
    with infercost.Model(st_dir, precision="fp32") as model:  # the task from the directory
        assert model.task == "embed"
        assert model.info["embedding_run"]["source"] == "sentence-transformers modules.json"
        assert_close(model.embed(TEXTS).vectors, want, "sentence-transformers directory, Model")


def ST_DIMS():
    return len(ST["vectors"][0])


def test_normalize_and_its_opposite(texts_file, tmp_path):
    _, want = golden("tiny-roberta", "mean")
    out = tmp_path / "v.jsonl"
    run_cli("embed", texts_file, "--model", model_dir("tiny-roberta"), "--pooling", "mean", "--normalize",
            "--precision", "fp32", "--output", out, "--quiet")
    unit = want / np.linalg.norm(want, axis=1, keepdims=True)
    assert_close(jsonl_vectors(out), unit, "--normalize")
    run_cli("embed", texts_file, "--model", model_dir(ST["dir"]), "--no-normalize", "--precision", "fp32",
            "--output", out, "--quiet", "--force")
    raw = jsonl_vectors(out)
    assert not np.allclose(np.linalg.norm(raw, axis=1), 1.0, atol=1e-3)
    # Normalized afterwards, they are the directory's normalized vectors.
    assert_close(raw / np.linalg.norm(raw, axis=1, keepdims=True), np.array(ST["vectors"], np.float32), "raw")
    both = run_cli("embed", texts_file, "--model", model_dir(ST["dir"]), "--normalize", "--no-normalize",
                   "--output", out, check=False)
    assert both.returncode == 2 and "not both" in both.stderr


def test_prefix_is_text_before_each_row(tmp_path):
    texts = ["hello world", "worst. day. ever.", ""]
    plain = write_texts(tmp_path / "plain.jsonl", ["query: " + t for t in texts])
    short = write_texts(tmp_path / "short.jsonl", texts)
    run_cli("embed", plain, "--model", model_dir("tiny-bert"), "--pooling", "mean", "--precision", "fp32",
            "--output", tmp_path / "a.jsonl", "--quiet")
    run_cli("embed", short, "--model", model_dir("tiny-bert"), "--pooling", "mean", "--precision", "fp32",
            "--prefix", "query: ", "--output", tmp_path / "b.jsonl", "--quiet")
    a, b = jsonl_vectors(tmp_path / "a.jsonl"), jsonl_vectors(tmp_path / "b.jsonl")
    assert np.array_equal(a, b)
    assert [r["text"] for r in read_jsonl(tmp_path / "b.jsonl")] == texts  # the output keeps the text as read
    with infercost.Model(model_dir("tiny-bert"), pooling="mean", precision="fp32", prefix="query: ") as model:
        assert np.abs(model.embed(texts).vectors - a).max() <= TOL


def test_null_texts_give_null_vectors(tmp_path):
    texts = ["a", None, "b c", None]
    src = write_texts(tmp_path / "in.jsonl", texts)
    for out in [tmp_path / "v.jsonl", tmp_path / "v.parquet"]:
        run_cli("embed", src, "--model", model_dir("tiny-roberta"), "--pooling", "cls", "--output", out, "--quiet")
    rows = read_jsonl(tmp_path / "v.jsonl")
    assert [r["text"] for r in rows] == texts
    assert [r["embedding"] is None for r in rows] == [False, True, False, True]
    import duckdb
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "v.parquet")
    assert table.column("embedding").null_count == 2
    got = table.column("embedding").to_pylist()
    assert [v is None for v in got] == [False, True, False, True]
    assert np.array_equal(np.array(got[0], np.float32), np.array(rows[0]["embedding"], np.float32))
    # DuckDB reads the vector column as a float array, nulls as NULL.
    parquet = str(tmp_path / "v.parquet").replace("'", "''")
    duck = duckdb.sql(f"SELECT embedding FROM read_parquet('{parquet}')").fetchall()
    assert [r[0] is None for r in duck] == [False, True, False, True]
    assert np.array_equal(np.array(duck[2][0], np.float32), np.array(rows[2]["embedding"], np.float32))
    assert duckdb.sql(f"SELECT len(embedding) FROM read_parquet('{parquet}') LIMIT 1").fetchall()[0][0] == 32
    with infercost.Model(model_dir("tiny-roberta"), pooling="cls") as model:
        result = model.embed(texts)
    assert result.is_null.tolist() == [0, 1, 0, 1]
    assert not result.vectors[1].any()
    import pyarrow as pa

    arrow = pa.table(result)
    assert arrow.schema.field("embedding").type == pa.list_(pa.field("element", pa.float32(), False), 32)
    assert arrow.column("embedding").null_count == 2
    assert np.array_equal(np.stack([np.array(v, np.float32) for v in arrow.column("embedding").to_pylist()[::2]]),
                          result.vectors[::2])


def test_csv_output_is_refused_and_nothing_is_left(tmp_path):
    src = write_texts(tmp_path / "in.jsonl", ["a"])
    proc = run_cli("embed", src, "--model", model_dir("tiny-bert"), "--pooling", "mean", "--output",
                   tmp_path / "v.csv", check=False)
    assert proc.returncode == 2 and "CSV cannot hold a vector" in proc.stderr, proc.stderr
    # A CSV input to a folder output gets Parquet parts.
    csv = tmp_path / "in.csv"
    csv.write_text("full_text\nhello\n")
    run_cli("embed", csv, "--model", model_dir("tiny-bert"), "--pooling", "mean", "--output",
            str(tmp_path / "parts") + "/", "--quiet")
    assert sorted(p.name for p in (tmp_path / "parts").iterdir()) == [".infercost-job", "in.parquet"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "in.jsonl", "parts"]


def test_each_task_refuses_the_others_settings(tmp_path):
    src = write_texts(tmp_path / "in.jsonl", ["a"])
    out = tmp_path / "v.jsonl"
    proc = run_cli("embed", src, "--model", model_dir("tiny-bert"), "--pooling", "mean", "--threshold", "0.3",
                   "--output", out, check=False)
    assert proc.returncode == 2  # not a flag of embed
    proc = run_cli("run", src, "--model", model_dir("tiny-bert"), "--pooling", "mean", "--output", out,
                   check=False)
    assert proc.returncode == 2
    proc = run_cli("embed", src, "--model", model_dir("tiny-bert"), "--output", out, check=False)
    assert proc.returncode == 2 and "no modules.json" in proc.stderr and "--pooling mean" in proc.stderr
    proc = run_cli("embed", src, "--model", model_dir("tiny-bert"), "--pooling", "sum", "--output", out,
                   check=False)
    assert proc.returncode == 2 and "--pooling" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]
    with pytest.raises(infercost.InvalidArgumentError, match="threshold applies to classification only"):
        infercost.Model(model_dir("tiny-bert"), pooling="mean", threshold=0.3)
    with pytest.raises(infercost.InvalidArgumentError, match="pooling applies to embeddings only"):
        infercost.Model(model_dir("tiny-bert"), task="classify", pooling="mean")
    with infercost.Model(model_dir("tiny-bert")) as model:  # a classifier: classify()
        assert model.task == "classify"
        with pytest.raises(infercost.InvalidArgumentError, match="opened to classify"):
            model.embed(["a"])
    with infercost.Model(model_dir("tiny-bert"), task="embed", pooling="mean") as model:
        with pytest.raises(infercost.InvalidArgumentError, match="opened to embed"):
            model.classify(["a"])
        metrics = (model.embed(["a", "b"]), model.last_metrics)[1]
    assert metrics["task"] == "embed" and metrics["rows"] == 2 and metrics["embedding"]["pooling"] == "mean"


def test_an_interrupted_embedding_resumes_as_the_same_job_and_no_other(tmp_path):
    # The checkpoint's job identity holds the command and the embedding settings as resolved.
    src = write_texts(tmp_path / "in.jsonl", [f"text number {i} with some words" for i in range(200)])
    model = model_dir("tiny-bert")
    want = tmp_path / "want.jsonl"
    run_cli("embed", src, "--model", model, "--pooling", "mean", "--output", want, "--quiet")
    out = tmp_path / "v.jsonl"
    checkpoint = tmp_path / "v.jsonl.infercost-checkpoint"

    def embed(*flags, crash=None, command="embed"):
        env = dict(os.environ, INFERCOST_TEST_CRASH_AT=crash) if crash else None
        return run_cli(command, src, "--model", model, "--output", out, "--window-rows", "16",
                       "--checkpoint-seconds", "0", "--quiet", *flags, env=env, check=False)

    def refused(proc, words):
        assert proc.returncode == 2, proc.stderr
        assert words in proc.stderr, proc.stderr
        assert checkpoint.read_bytes() == saved and not out.exists()

    stopped = embed("--pooling", "mean", crash="checkpoint-saved:3")
    assert stopped.returncode == -9, stopped.stderr
    saved = checkpoint.read_bytes()
    refused(embed("--pooling", "cls", "--resume"), "--pooling: 'cls' now, the checkpoint's run used 'mean'")
    refused(embed("--pooling", "mean", "--normalize", "--resume"),
            "--normalize: 'true' now, the checkpoint's run used 'false'")
    refused(embed("--resume", command="run"), "the checkpoint is `infercost embed`'s, this is `infercost run`")
    # --no-normalize is what the plain encoder does anyway: the same job.
    done = embed("--pooling", "mean", "--no-normalize", "--resume")
    assert done.returncode == 0, done.stderr
    assert not checkpoint.exists()
    np.testing.assert_array_equal(jsonl_vectors(out), jsonl_vectors(want))

    out.unlink()
    stopped = embed(crash="checkpoint-saved:3", command="run")
    assert stopped.returncode == -9, stopped.stderr
    saved = checkpoint.read_bytes()
    refused(embed("--pooling", "mean", "--resume"), "the checkpoint is `infercost run`'s, this is `infercost embed`")
    embed("--force", "--pooling", "mean")
    assert not checkpoint.exists()
