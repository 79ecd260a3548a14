"""infercost.spark on Spark local[2]: one SparkSession for the suite; ctest
runs it on pyspark 4.3 (spark_test_spark_local) and 3.5 (spark35_test_spark_local).

classify on DataFrames read from the study's three shapes (datagen json-3,
parquet, parquet-10) equal to `infercost run` row by row (joined on id);
one model load per Python worker, kept across jobs; the engine's threads
from spark.task.cpus (1 here; the standalone suite's tasks have 2); the UDF paths
(arrow_udf, the pandas iterator UDF of older pyspark, predict_batch_udf);
nulls; the output schema's exact types; writing Parquet and reading it back;
errors on the driver; how a task's device and threads are resolved.
"""

import json

import numpy as np
import pytest
from conftest import SKIP_REASON

# Before anything that needs pyspark or java.
if SKIP_REASON:
    pytest.skip(SKIP_REASON, allow_module_level=True)

import pyarrow as pa  # noqa: E402 (after the skip)
import pyarrow.parquet as pq
import pyspark
from conftest import (MODEL, MULTILABEL_MODEL, OPTS, TOL, classify_calls, direct, loads, run_cli,
                      sample_texts, session_builder, texts_frame)

try:
    from pyspark.util import PythonEvalType  # pyspark 4
except ImportError:
    from pyspark.rdd import PythonEvalType  # pyspark 3.5

import infercost
import infercost.spark

TEXTS = sample_texts(90)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("spark-local")


@pytest.fixture(scope="module")
def spark(workdir, load_log):
    # 16 rows per Arrow batch: several batches per task.
    conf = {"spark.sql.execution.arrow.maxRecordsPerBatch": 16}
    session = session_builder(workdir, "local[2]", conf, load_log=load_log).getOrCreate()
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture(scope="module")
def texts_df(spark):
    return texts_frame(spark, TEXTS, 6)


def arrow_of(df) -> pa.Table:
    """The rows of `df` as an Arrow table: DataFrame.toArrow (pyspark 4), or the
    Arrow batches toPandas collects (pyspark 3.5 has no toArrow)."""
    if hasattr(df, "toArrow"):
        return df.toArrow()
    return pa.Table.from_batches(df._collect_as_arrow())


def by_id(table: pa.Table):
    return table.sort_by("id").to_pydict()


def expected(ids_texts, model=MODEL):
    """The direct Model result for (id, text) pairs, as a dict of columns by id order."""
    ids_texts = sorted(ids_texts, key=lambda r: r[0])
    result = direct([t for _, t in ids_texts], model).to_pydict()
    result["id"] = [i for i, _ in ids_texts]
    return result


def assert_same(got: dict, want: dict, columns, tol=TOL):
    """Equal ids and labels; probabilities within `tol` (the real engine's
    batches differ between Spark's Arrow batches and one direct call)."""
    assert got["id"] == want["id"]
    for name in columns:
        if name not in ("label", "labels"):
            for i, (a, b) in enumerate(zip(got[name], want[name])):
                assert (a is None) == (b is None), (name, i)
                if a is not None:
                    assert abs(a - b) <= tol, (name, got["id"][i], a, b)
        else:
            assert got[name] == want[name], name


def test_classify_keeps_rows_and_types(spark, texts_df):
    out = infercost.spark.classify(texts_df, "full_text", model=str(MODEL), **OPTS)
    labels = [name for name, kind in infercost.spark.output_columns(str(MODEL)) if kind == "float"]
    assert [f.name for f in out.schema.fields] == ["id", "full_text"] + labels + ["label"]
    types = {f.name: f.dataType.simpleString() for f in out.schema.fields}
    assert types == {"id": "bigint", "full_text": "string", **{l: "float" for l in labels}, "label": "string"}
    table = arrow_of(out)
    assert table.num_rows == len(TEXTS)
    got = by_id(table)
    want = expected(list(enumerate(TEXTS)))
    assert got["full_text"] == [TEXTS[i] for i in got["id"]]
    assert_same(got, want, labels + ["label"])
    # A null text gives nulls; an empty one a prediction.
    null_row = got["id"].index(TEXTS.index(None))
    assert got["label"][null_row] is None and all(got[l][null_row] is None for l in labels)
    assert got["label"][got["id"].index(3)] is not None


def test_keep_ships_only_those_columns(spark, texts_df):
    # A dotted name is a column of its own, not a struct field.
    df = texts_df.withColumn("a.n", texts_df.id.cast("int"))
    out = infercost.spark.classify(df, model=str(MODEL), **OPTS, keep=["a.n"])
    labels = [name for name, _ in infercost.spark.output_columns(str(MODEL))]
    assert out.columns == ["a.n"] + labels
    assert out.schema["a.n"].dataType.simpleString() == "int"  # int32 passes through as int32
    rows = arrow_of(out).sort_by("a.n").to_pydict()
    assert rows["a.n"] == list(range(len(TEXTS)))
    want = expected(list(enumerate(TEXTS)))
    assert rows["label"] == want["label"]


def test_each_call_logs_the_engines_metrics(spark, texts_df, load_log):
    # Every Model.classify call on the workers logs the engine's metrics of the call (as Model.last_metrics,
    # priced here with instance=): together they count every row of the job once.
    priced = {"instance": "c5.12xlarge", "price_list": "seed-2021", "corpus_rows": 4242}
    out = infercost.spark.classify(texts_df, "full_text", model=str(MODEL), **OPTS, **priced)
    assert arrow_of(out).num_rows == len(TEXTS)
    calls = [c for c in classify_calls(load_log) if c["metrics"].get("cost", {}).get("corpus_rows") == 4242]
    assert calls, "no classify() call was logged by the workers"
    rows = sum(c["metrics"]["rows"] + c["metrics"]["rows_null"] for c in calls)
    assert rows == len(TEXTS)
    assert sum(c["metrics"]["rows_null"] for c in calls) == TEXTS.count(None)
    for call in calls:
        assert call["model_dir"] == str(MODEL) and call["partition"] >= 0
        assert call["metrics"]["cost"]["instance"] == "c5.12xlarge"
        assert call["metrics"]["tokens"] > 0 or call["metrics"]["rows"] == 0
    # Each call is one Arrow batch (16 rows at most here), not the whole partition.
    assert max(c["metrics"]["rows"] + c["metrics"]["rows_null"] for c in calls) <= 16


def test_model_loads_once_per_python_worker(spark, texts_df, load_log):
    many = texts_df.repartition(12)  # 12 tasks on 2 cores

    def model_loads():  # OPTS' models (a priced one is another: test_each_call_logs_the_engines_metrics)
        return [r for r in loads(load_log) if r["model_dir"] == str(MODEL) and not r.get("instance")]

    # Two jobs: the loaded model is kept across them.
    assert infercost.spark.classify(many, model=str(MODEL), **OPTS, keep=["id"]).count() == len(TEXTS)
    after_first = model_loads()
    assert len(infercost.spark.classify(many, model=str(MODEL), **OPTS, keep=["id"]).collect()) == len(TEXTS)
    records = model_loads()
    assert records, "no model load was logged by the workers"
    # The second job loaded nothing: the workers that ran the first one kept their model (the first
    # job itself loaded only in workers that had not run an earlier test's job, as below).
    assert records == after_first, records[len(after_first):]
    pids = [r["pid"] for r in records]
    # One load per (worker process, model, device, precision): never two in
    # one worker, and no more workers than local[2] runs at once.
    assert len(pids) == len(set(pids)), records
    assert 1 <= len(set(pids)) <= 2, records
    # spark.task.cpus is 1 here: one engine thread per task.
    assert {r["threads"] for r in records} == {1}
    assert {r["device"] for r in records} == {"cpu"}


def test_explicit_threads_and_precision_are_another_model(spark, texts_df, load_log):
    infercost.spark.classify(texts_df, model=str(MODEL), threads=3, max_length=64, precision="fp32", keep=["id"]).collect()
    records = [r for r in loads(load_log) if r["threads"] == 3]
    assert records and {(r["precision"], r["max_length"]) for r in records} == {("fp32", 64)}
    assert len({r["pid"] for r in records}) == len(records)


def test_multilabel_model_has_labels_column(spark, texts_df):
    out = infercost.spark.classify(texts_df, model=str(MULTILABEL_MODEL), **OPTS, keep=["id"])
    names = [name for name, _ in infercost.spark.output_columns(str(MULTILABEL_MODEL))]
    assert names[-2:] == ["label", "labels"]
    assert out.columns == ["id"] + names
    got = by_id(arrow_of(out))
    assert_same(got, expected(list(enumerate(TEXTS)), MULTILABEL_MODEL), names)


def test_deberta_model_gives_what_the_engine_gives(spark, texts_df):
    # DeBERTa-v3 (disentangled attention, its Unigram tokenizer, three labels) through Spark: the
    # engine's own rows.
    model = MODEL.parent / "tiny-deberta-3"
    out = infercost.spark.classify(texts_df, model=str(model), **OPTS, keep=["id"])
    names = [name for name, _ in infercost.spark.output_columns(str(model))]
    assert out.columns == ["id"] + names
    assert_same(by_id(arrow_of(out)), expected(list(enumerate(TEXTS)), model), names)


def test_classify_udf(spark, texts_df):
    # An arrow_udf on pyspark 4.1 and later, the pandas iterator UDF before (3.5).
    udf = infercost.spark.classify_udf(model=str(MODEL), **OPTS)
    if tuple(int(v) for v in pyspark.__version__.split(".")[:2]) >= (4, 1):
        assert udf.evalType == PythonEvalType.SQL_SCALAR_ARROW_ITER_UDF
    else:
        assert udf.evalType == PythonEvalType.SQL_SCALAR_PANDAS_ITER_UDF
    out = texts_df.withColumn("pred", udf("full_text")).select("id", "pred.*")
    names = [name for name, _ in infercost.spark.output_columns(str(MODEL))]
    assert out.columns == ["id"] + names
    assert_same(by_id(arrow_of(out)), expected(list(enumerate(TEXTS))), names)


def test_classify_udf_pandas_before_spark_41(spark, texts_df, monkeypatch):
    # pyspark before 4.1 has no arrow_udf: the pandas iterator UDF, exercised
    # here on any pyspark by hiding arrow_udf from classify_udf.
    monkeypatch.setattr(infercost.spark, "_has_arrow_udf", lambda: False)
    udf = infercost.spark.classify_udf(model=str(MODEL), **OPTS)
    assert udf.evalType == PythonEvalType.SQL_SCALAR_PANDAS_ITER_UDF
    out = texts_df.withColumn("pred", udf("full_text")).select("id", "pred.*")
    names = [name for name, _ in infercost.spark.output_columns(str(MODEL))]
    assert_same(by_id(arrow_of(out)), expected(list(enumerate(TEXTS))), names)


def test_predict_batch_udf(spark, texts_df):
    from pyspark.ml.functions import predict_batch_udf

    pred = predict_batch_udf(
        infercost.spark.predict_fn(str(MODEL), **OPTS),
        return_type=infercost.spark.result_schema(str(MODEL)),
        batch_size=32,
    )
    df = texts_df.where("full_text is not null")
    out = df.withColumn("pred", pred("full_text")).select("id", "pred.*")
    names = [name for name, _ in infercost.spark.output_columns(str(MODEL))]
    want = expected([(i, t) for i, t in enumerate(TEXTS) if t is not None])
    assert_same(by_id(arrow_of(out)), want, names)


def test_parquet_round_trip(spark, texts_df, workdir):
    path = workdir / "out.parquet"
    out = infercost.spark.classify(texts_df, model=str(MODEL), **OPTS, keep=["id"])
    out.write.parquet(str(path))
    back = spark.read.parquet(str(path))
    assert back.schema == out.schema
    got = by_id(arrow_of(back))
    assert got == by_id(arrow_of(out))
    # And pyarrow reads the float columns as float32.
    table = pq.read_table(path)
    assert pa.types.is_float32(table.schema.field(out.columns[1]).type)


def test_driver_side_errors(spark, texts_df):
    with pytest.raises(ValueError, match="no column 'nope'"):
        infercost.spark.classify(texts_df, "nope", model=str(MODEL), **OPTS)
    with pytest.raises(TypeError, match="not string"):
        infercost.spark.classify(texts_df, "id", model=str(MODEL), **OPTS)
    with pytest.raises(ValueError, match="keep= names"):
        infercost.spark.classify(texts_df, model=str(MODEL), **OPTS, keep=["missing"])
    clash = texts_df.withColumnRenamed("id", "label")
    with pytest.raises(ValueError, match="clash"):
        infercost.spark.classify(clash, model=str(MODEL), **OPTS)
    with pytest.raises(TypeError, match="model="):
        infercost.spark.classify(texts_df)


# A sentence-transformers directory (tiny, random weights; tools/gen_embedding_golden.py).
EMBED_MODEL = MODEL.parent / "tiny-st-roberta"


def test_embed_adds_a_vector_column(spark, texts_df, workdir):
    out = infercost.spark.embed(texts_df, "full_text", model=str(EMBED_MODEL), precision="fp32", keep=["id"])
    assert out.columns == ["id", "embedding"]
    assert out.schema["embedding"].dataType.simpleString() == "array<float>"
    got = by_id(arrow_of(out))
    assert got["id"] == list(range(len(TEXTS)))
    with infercost.Model(EMBED_MODEL, precision="fp32") as model:
        want = model.embed(TEXTS)
    for i, vector in zip(got["id"], got["embedding"]):
        if TEXTS[i] is None:
            assert vector is None and want.is_null[i]
            continue
        assert len(vector) == want.dimensions
        assert max(abs(a - b) for a, b in zip(vector, want.vectors[i])) <= TOL, i
    # Written by Spark, read back by Spark and by pyarrow as a list of float32.
    path = workdir / "vectors.parquet"
    out.write.parquet(str(path))
    back = spark.read.parquet(str(path))
    assert back.schema.simpleString() == out.schema.simpleString()  # Parquet keeps no containsNull=False
    assert by_id(arrow_of(back)) == got
    assert pa.types.is_float32(pq.read_table(path).schema.field("embedding").type.value_type)
    # The classification settings are not embed's, nor embed's classify's.
    with pytest.raises(TypeError, match="unexpected keyword argument 'threshold'"):
        infercost.spark.embed(texts_df, model=str(EMBED_MODEL), threshold=0.3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'pooling'"):
        infercost.spark.classify(texts_df, model=str(MODEL), pooling="mean")
    with pytest.raises(TypeError, match="embed\\(\\): model="):
        infercost.spark.embed(texts_df)


def test_spark_reads_infercost_embed_parquet(spark, workdir):
    # The vector column `infercost embed` writes (a fixed-size list of float32) is Spark's array<float>.
    texts = workdir / "embed-in.jsonl"
    texts.write_text("\n".join(['{"full_text": "hello world"}', '{"full_text": null}', '{"full_text": "x"}']) + "\n")
    out = workdir / "embed-out.parquet"
    run_cli("embed", texts, "--model", EMBED_MODEL, "--output", out, "--quiet")
    df = spark.read.parquet(str(out))
    assert df.schema["embedding"].dataType.simpleString() == "array<float>"
    rows = df.collect()
    assert [r["text"] for r in rows] == ["hello world", None, "x"]
    assert rows[1]["embedding"] is None and len(rows[0]["embedding"]) == 32
    # The same vectors as the JSON lines output (pyarrow before 2026 cannot read a fixed-size list holding
    # nulls from Parquet, apache/arrow#35692: the Spark 3.5 suite's pyarrow 14 among them).
    lines = workdir / "embed-out.jsonl"
    run_cli("embed", texts, "--model", EMBED_MODEL, "--output", lines, "--quiet")
    want = [json.loads(line)["embedding"] for line in lines.read_text().splitlines()]
    assert want[1] is None
    for i in (0, 2):  # each JSON number reads back as the float32 the Parquet file holds
        assert np.array_equal(np.array(rows[i]["embedding"], np.float32), np.array(want[i], np.float32)), i


# The study's three shapes, classified by Spark and by `infercost run`, equal
# row by row (joined on datagen's id column).
@pytest.mark.parametrize(
    "shape,reader",
    [("json-3", "json"), ("parquet", "parquet"), ("parquet-10", "parquet")],
)
def test_equal_to_infercost_run(spark, workdir, shape, reader):
    data = workdir / f"data-{shape}"
    data.mkdir()
    # json-3 and parquet-10 are folders of parts, parquet one file.
    run_cli("datagen", "-q", "--rows", 600, "--shape", shape, "--out", data / "tweets.parquet" if shape == "parquet" else f"{data}/")
    files = sorted(p for p in data.iterdir() if p.is_file())
    cli_out = workdir / f"cli-{shape}.parquet"
    run_cli("run", *files, "--model", MODEL, "--output", cli_out, "--precision", OPTS["precision"],
            "--max-length", OPTS["max_length"])
    cli = pq.read_table(cli_out).to_pydict()
    cli["id"] = list(range(len(cli["label"])))  # input order: datagen's ids

    df = getattr(spark.read, reader)(str(data))
    out = infercost.spark.classify(df, model=str(MODEL), **OPTS, keep=["id", "full_text"])
    got = by_id(arrow_of(out))
    assert got["id"] == cli["id"]
    assert got["full_text"] == cli["text"]
    labels = [name for name, kind in infercost.spark.output_columns(str(MODEL)) if kind == "float"]
    assert_same(got, cli, labels + ["label"])


# How a task's device and threads are resolved, without Spark: a fake
# TaskContext (the standalone suite checks the same on a cluster's tasks).
class _Resource:
    def __init__(self, addresses):
        self.addresses = addresses


class _Context:
    def __init__(self, cpus, gpus):
        self._cpus, self._gpus = cpus, gpus

    def cpus(self):
        return self._cpus

    def resources(self):
        return {} if self._gpus is None else {"gpu": _Resource(self._gpus)}


@pytest.mark.parametrize(
    "device,gpus,want",
    [
        ("cuda", ["1"], "cuda:1"),          # one task per GPU: its address
        ("cuda", ["0", "3"], "cuda:0,3"),   # a task given two GPUs uses both
        ("cuda", None, "cuda"),             # no GPU scheduling: every GPU the engine sees
        ("cuda:2", ["1"], "cuda:2"),        # an explicit GPU is kept
        ("cpu", ["1"], "cpu"),
    ],
)
def test_task_device(monkeypatch, device, gpus, want):
    from pyspark import TaskContext

    monkeypatch.setattr(TaskContext, "get", classmethod(lambda cls: _Context(4, gpus)))
    assert infercost.spark._task_device(device) == want
    assert infercost.spark._task_threads(None) == 4
    assert infercost.spark._task_threads(3) == 3


def test_outside_a_task(monkeypatch):
    from pyspark import TaskContext

    monkeypatch.setattr(TaskContext, "get", classmethod(lambda cls: None))
    assert infercost.spark._task_device("cuda") == "cuda"
    assert infercost.spark._task_threads(None) == 0
