"""infercost on Spark: classify (or embed) a DataFrame's text column on the executors.

Pure Python over the package (``infercost.Model``), using DataFrame APIs only
(``mapInArrow``, Arrow / pandas UDFs): no RDD, no SparkContext, no broadcast,
so the same code runs on classic Spark and on Spark Connect (tested: pyspark
3.5.9 and 4.3.0 on local[2], 4.3 on a standalone cluster and on a Connect
server; docs/spark.md says what is and is not tested).

    import infercost.spark
    out = infercost.spark.classify(df, "full_text", model="/dbfs/models/sst2")
    out.write.parquet("preds/")                     # df's columns + negative, positive, label

    pred = infercost.spark.classify_udf(model="/dbfs/models/sst2")
    df.withColumn("pred", pred("full_text"))        # a struct<negative, positive, label>

    vectors = infercost.spark.embed(df, "full_text", model="/dbfs/models/all-MiniLM-L6-v2")
    vectors.write.parquet("vectors/")               # df's columns + embedding: array<float>

Each Python worker loads a model once per model directory and settings
(``infercost.Model``'s: device, precision, max_length, threads, ...) and
keeps it for the tasks and jobs that follow (Spark reuses its Python
workers: ``spark.python.worker.reuse``, on by default). A task's engine threads are the CPUs Spark gave the task
(``spark.task.cpus``), and with ``device="cuda"`` its GPUs are the ``gpu``
resource addresses Spark assigned it (``spark.task.resource.gpu.amount``).
docs/spark.md has the settings and the install steps.

The output columns are the ones ``infercost run`` writes: one float column
per label (the model's ``id2label``, lowercased), then ``label`` (string),
and ``labels`` (the labels at or above the threshold, joined by ``,``) for a
multi-label model. ``embed`` adds one ``array<float>`` column (the vector,
as ``infercost embed`` writes it). A null text gives nulls.
"""

import logging
import os
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from ._native import InternalError, InvalidArgumentError
from ._settings import default, names, with_settings
from ._types import ModelFlags

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["classify", "classify_udf", "predict_fn", "embed", "result_schema", "output_columns"]

# Each model load and each classify() call is logged here on the worker
# (INFO, with the details in the record's `infercost_load` or
# `infercost_metrics` attribute): where the executor logs go, and what a
# handler can count (docs/spark.md).
_log = logging.getLogger("infercost.spark")

# ---------------------------------------------------------------------------
# Driver side: what the output looks like.
# ---------------------------------------------------------------------------


def output_columns(model: str) -> List[Tuple[str, str]]:
    """The output columns of ``model`` as (name, kind) pairs, kind ``"float"``
    or ``"string"``: one float column per label (lowercased, in id order),
    ``label``, and ``labels`` for a multi-label model. Read on the driver from
    the model directory (``infercost.model_info``); the same names as the
    ``infercost run`` output.
    """
    import infercost

    info = infercost.model_info(os.fspath(model))
    names = info["output_columns"]  # the engine's names: labels lowercased, label, labels
    if len(set(names)) != len(names):
        raise InvalidArgumentError(f"{model}: labels collide once lowercased: {info['labels']}")
    floats = len(info["labels"])
    return [(name, "float" if i < floats else "string") for i, name in enumerate(names)]


def result_schema(model: str):
    """The Spark ``StructType`` of ``model``'s output columns (FloatType per
    label, StringType for ``label`` and ``labels``): the struct
    ``classify_udf`` returns, and the ``return_type`` to give
    ``predict_batch_udf`` with ``predict_fn``.
    """
    from pyspark.sql.types import FloatType, StringType, StructField, StructType

    kinds = {"float": FloatType(), "string": StringType()}
    return StructType([StructField(name, kinds[kind], True) for name, kind in output_columns(model)])


def _kinds(schema) -> List[Tuple[str, str]]:
    """result_schema's fields back as (name, "float" | "string") pairs."""
    return [(f.name, "float" if f.dataType.typeName() == "float" else "string") for f in schema.fields]


# A Spark task's engine threads default to the CPUs Spark gave it, not every core.
_SPARK_DEFAULTS = {"threads": None}
_SPARK_DOC = """
    threads=None on Spark: the task's CPUs (``spark.task.cpus``); device="cuda": the task's GPUs.
"""


@with_settings("model", ModelFlags, _SPARK_DEFAULTS, _SPARK_DOC, task="classify")
def classify(
    df,
    column: str = default("column"),
    model: Optional[str] = None,
    *,
    keep: Optional[Sequence[str]] = None,
    **settings: "Unpack[ModelFlags]",
):
    """``df`` with the model's output columns added, computed on the executors.

    ``column`` names the text column (a string column; nulls give null
    outputs). ``model`` is a model directory every executor can read (a local
    path on each machine, ``/dbfs/...`` or ``/Volumes/...`` on Databricks).
    ``keep``: the input columns to keep, in order (default: all of them);
    ``keep=["id"]`` ships only the ids and the text to Python and back.

    The settings are ``infercost.Model``'s (listed below), except two:
    ``device="cuda"`` uses the GPUs Spark assigned the task (its ``gpu``
    resource addresses, as ``cuda:N``), or every GPU where Spark assigns
    none (``"cuda:N"``: that GPU whatever Spark says); ``threads``: the
    engine's threads per task, by default the task's CPUs
    (``spark.task.cpus``).

    Built on ``DataFrame.mapInArrow``: one Arrow batch of rows
    (``spark.sql.execution.arrow.maxRecordsPerBatch``, 10,000 by default) per
    ``Model.classify`` call, which sorts and packs the batch by token length.
    The rows keep their partition and order. An output column that clashes with
    a kept input column is an ``infercost.InvalidArgumentError``, a ValueError (rename or drop it
    first, or ``keep``).
    """
    if model is None:
        raise TypeError("classify(): model= (a model directory) is required")
    out = result_schema(model)
    df, shipped, schema = _shipped_frame("classify", df, column, model, keep, out)
    key = _load_key(model, settings, "classify")
    kept = len(schema.fields) - len(out.fields)
    fn = _batch_classifier(key, shipped.index(column), kept, [f.name for f in schema.fields], _kinds(out))
    return df.mapInArrow(fn, schema)


def _shipped_frame(fn: str, df, column: str, model: Optional[str], keep: Optional[Sequence[str]], out):
    """What classify and embed (`fn`) send to mapInArrow: `df`'s kept columns
    and the text column under plain aliases, the names shipped, and the output
    schema (the kept columns' fields, then `out`'s). Errors on the driver."""
    if model is None:
        raise TypeError(f"{fn}(): model= (a model directory) is required")
    from pyspark.sql.functions import col
    from pyspark.sql.types import StringType, StructType

    fields = {f.name: f for f in df.schema.fields}
    if column not in fields:
        raise InvalidArgumentError(f"{fn}(): no column '{column}' (columns: {', '.join(fields)})")
    if not isinstance(fields[column].dataType, StringType):
        raise TypeError(f"{fn}(): column '{column}' is {fields[column].dataType.simpleString()}, not string")
    kept = list(fields) if keep is None else list(keep)
    missing = [name for name in kept if name not in fields]
    if missing:
        raise InvalidArgumentError(f"{fn}(): keep= names columns that are not there: {', '.join(missing)}")
    clash = [f.name for f in out.fields if f.name in kept]
    if clash:
        raise InvalidArgumentError(
            f"{fn}(): output columns {clash} clash with input columns; drop or rename them, or pass keep="
        )
    # Only the kept columns and the text travel to Python, under plain
    # aliases: mapInArrow names its input columns, and a dotted name would be
    # taken for a struct field. The output schema has the real names.
    shipped = kept + ([column] if column not in kept else [])
    df = df.select(*[col("`" + name.replace("`", "``") + "`").alias(f"c{i}") for i, name in enumerate(shipped)])
    return df, shipped, StructType([fields[name] for name in kept] + out.fields)


@with_settings("model", ModelFlags, _SPARK_DEFAULTS, _SPARK_DOC, task="embed")
def embed(
    df,
    column: str = default("column"),
    model: Optional[str] = None,
    *,
    keep: Optional[Sequence[str]] = None,
    output: str = "embedding",
    **settings: "Unpack[ModelFlags]",
):
    """``df`` with a vector column added (``output``, ``array<float>``),
    computed on the executors by ``infercost.Model.embed``.

    ``model``: a sentence-transformers directory (its pooling, Normalize and
    max_seq_length are used), or a Hugging Face encoder directory with
    ``pooling=``; every executor must be able to read it. ``column``,
    ``keep`` and the device and threads settings as for :func:`classify`;
    the embedding settings (``pooling``, ``normalize``, ``prefix``) as
    ``infercost embed`` takes them. A null text gives a null vector. One
    Arrow batch of rows per ``Model.embed`` call (mapInArrow); the rows keep
    their partition and order.
    """
    from pyspark.sql.types import ArrayType, FloatType, StructField, StructType

    out = StructType([StructField(output, ArrayType(FloatType(), containsNull=False), True)])
    df, shipped, schema = _shipped_frame("embed", df, column, model, keep, out)
    key = _load_key(model, settings, "embed")
    kept = len(schema.fields) - len(out.fields)
    return df.mapInArrow(_batch_embedder(key, shipped.index(column), kept, [f.name for f in schema.fields]), schema)


@with_settings("model", ModelFlags, _SPARK_DEFAULTS, _SPARK_DOC, task="classify")
def classify_udf(model: str, **settings: "Unpack[ModelFlags]"):
    """A column function for ``df.withColumn`` / ``select``: ``udf(text_column)``
    gives a struct of the model's output columns (``result_schema(model)``).

        pred = infercost.spark.classify_udf(model=DIR)
        df.withColumn("pred", pred("full_text")).select("id", "pred.*")

    An ``arrow_udf`` where pyspark has it (4.1 and later: Arrow arrays in and
    out, no pandas), a pandas iterator UDF before. Arguments as ``classify``.
    """
    out = result_schema(model)
    key = _load_key(model, settings, "classify")
    columns = _kinds(out)
    if _has_arrow_udf():
        return _arrow_struct_udf(key, columns, out)
    return _pandas_struct_udf(key, columns, out)


@with_settings("model", ModelFlags, _SPARK_DEFAULTS, _SPARK_DOC, task="classify")
def predict_fn(model: str, **settings: "Unpack[ModelFlags]") -> Callable[[], Callable[[Any], Dict[str, Any]]]:
    """A ``make_predict_fn`` for ``pyspark.ml.functions.predict_batch_udf``:

        from pyspark.ml.functions import predict_batch_udf
        pred = predict_batch_udf(infercost.spark.predict_fn(DIR),
                                 return_type=infercost.spark.result_schema(DIR), batch_size=1024)
        df.withColumn("pred", pred("full_text"))

    The predict function takes a numpy array of texts and returns a dict of
    numpy arrays, one per output column (NaN / None for a null text). The
    model comes from the worker's cache, as with ``classify``. Arguments as
    ``classify``.
    """
    names = [f.name for f in result_schema(model).fields]
    return _MakePredict(_load_key(model, settings, "classify"), names)


# ---------------------------------------------------------------------------
# Worker side. The functions Spark ships are closures over plain values that
# call the module-level functions below, so cloudpickle sends them by
# reference and the cache is this module's own in each worker, not a copy
# per task.
# ---------------------------------------------------------------------------


class _LoadKey(NamedTuple):
    """What a model is loaded with, as the user gave it (the device and the
    threads are resolved per task): the directory, the Model's task
    ("classify" or "embed") and the settings given, as sorted (name, value) pairs."""

    model_dir: str
    task: str
    settings: Tuple[Tuple[str, Any], ...]


def _load_key(model: str, settings: Dict[str, Any], task: str) -> _LoadKey:
    """The key of `settings` (None values dropped: the default) for `model`.
    A setting Model() does not take for `task` is a TypeError here, on the driver."""
    unknown = sorted(set(settings) - set(names("model", task)))
    if unknown:
        raise TypeError(f"got an unexpected keyword argument '{unknown[0]}'")
    given = tuple(sorted((k, v) for k, v in settings.items() if v is not None))
    return _LoadKey(os.fspath(model), task, given)


# (model_dir, settings as resolved for the task) -> Model.
_MODELS: Dict[Tuple[Any, ...], Any] = {}
_MODELS_LOCK = threading.Lock()


def _task_threads(threads: Optional[int]) -> int:
    """The engine threads of this task: `threads`, else the CPUs Spark gave
    the task, else 0 (the engine's default) outside a task."""
    if threads is not None:
        return int(threads)
    from pyspark import TaskContext

    context = TaskContext.get()
    return int(context.cpus()) if context is not None else 0


def _task_device(device: str) -> str:
    """`device` for this task: plain "cuda" becomes the task's assigned GPUs
    (its `gpu` resource addresses) as "cuda:N[,M]"; anything else as given."""
    if device != "cuda":
        return device
    from pyspark import TaskContext

    context = TaskContext.get()
    gpu = context.resources().get("gpu") if context is not None else None
    if gpu is None or not gpu.addresses:
        return device  # no GPU scheduling: the engine takes every GPU it sees
    return "cuda:" + ",".join(gpu.addresses)


def _model_for(key: _LoadKey):
    """This worker's Model for `key` in the current task, loaded on first use."""
    given = dict(key.settings)
    settings = {
        name: given.get(name, _SPARK_DEFAULTS.get(name, default(name))) for name in names("model", key.task)
    }
    settings["device"] = _task_device(settings["device"])
    settings["threads"] = _task_threads(settings["threads"])
    resolved = (key.model_dir, key.task, tuple(sorted(settings.items())))
    with _MODELS_LOCK:
        model = _MODELS.get(resolved)
        if model is None:
            import infercost

            start = time.monotonic()
            model = infercost.Model(key.model_dir, task=key.task, **settings)
            seconds = time.monotonic() - start
            details = {"pid": os.getpid(), "model_dir": key.model_dir, **settings, "seconds": seconds}
            _log.info(
                "infercost: loaded %s on %s (%d threads) in %.2f s in worker %d",
                key.model_dir,
                settings["device"],
                settings["threads"],
                seconds,
                os.getpid(),
                extra={"infercost_load": details},
            )
            _MODELS[resolved] = model
    return model


def _classify(key: _LoadKey, texts):
    """`texts` (an Arrow string array) classified by this worker's Model for
    `key`, as a pyarrow Table; the call's metrics (the engine's, as
    ``Model.last_metrics``: rows, tokens, seconds, GPUs, cost) logged with the
    task's partition and attempt."""
    import pyarrow as pa

    model = _model_for(key)
    result = pa.table(model.classify(texts))
    _log_call(model, key, "classified")
    return result


def _log_call(model, key: _LoadKey, did: str) -> None:
    """Logs `model`'s last call (the engine's metrics, as ``Model.last_metrics``:
    rows, tokens, seconds, GPUs, cost) with the task's partition and attempt."""
    if not _log.isEnabledFor(logging.INFO):
        return
    from pyspark import TaskContext

    metrics = model.last_metrics
    context = TaskContext.get()
    task = {"pid": os.getpid(), "model_dir": key.model_dir}
    if context is not None:
        task.update(partition=context.partitionId(), attempt=context.attemptNumber(), stage=context.stageId())
    _log.info(
        "infercost: %s %d rows (and %d null, %d skipped), %d tokens, in %.3f s in worker %d",
        did,
        metrics["rows"],
        metrics["rows_null"],
        metrics["rows_skipped"],
        metrics["tokens"],
        metrics["wall_seconds"],
        os.getpid(),
        extra={"infercost_metrics": {**task, "metrics": metrics}},
    )


def _classify_arrays(key: _LoadKey, texts, columns: List[Tuple[str, str]], string_type):
    """The output arrays of `texts` (an Arrow string array), in `columns`
    order, cast to exactly the Arrow types Spark expects (float32, and
    `string_type` for strings), whatever the Model's result uses."""
    import pyarrow as pa

    types = {"float": pa.float32(), "string": string_type}
    if len(texts) == 0:
        return [pa.array([], type=types[kind]) for _, kind in columns]
    result = _classify(key, texts)
    arrays = []
    for name, kind in columns:
        if name not in result.column_names:
            raise InternalError(f"infercost.Model.classify gave no '{name}' column (got {result.column_names})")
        array = result.column(name).combine_chunks()
        if array.type != types[kind]:
            array = array.cast(types[kind])
        arrays.append(array)
    return arrays


def _string_type_of(array):
    """pa.large_string() where Spark sends large strings
    (spark.sql.execution.arrow.useLargeVarTypes), else pa.string(): Spark
    expects the string columns it gets back in the same width."""
    import pyarrow as pa

    return pa.large_string() if pa.types.is_large_string(array.type) else pa.string()


def _batch_classifier(key: _LoadKey, text: int, kept: int, names: List[str], columns: List[Tuple[str, str]]):
    """The mapInArrow function: record batches in (the kept columns, then the
    text column unless kept), the first `kept` columns plus the output
    columns out, row for row, named `names`. `text`: the text's position."""

    def classify_batches(batches):
        import pyarrow as pa

        for batch in batches:
            texts = batch.column(text)
            arrays = [batch.column(i) for i in range(kept)]
            arrays += _classify_arrays(key, texts, columns, _string_type_of(texts))
            yield pa.RecordBatch.from_arrays(arrays, names=names)

    return classify_batches


def _batch_embedder(key: _LoadKey, text: int, kept: int, names: List[str]):
    """embed's mapInArrow function: record batches in (the kept columns, then
    the text column unless kept), the first `kept` columns plus the vector
    column out (a list<float>: Spark's array<float>), named `names`."""

    def embed_batches(batches):
        import pyarrow as pa

        vector_type = pa.list_(pa.field("element", pa.float32(), nullable=False))
        for batch in batches:
            texts = batch.column(text)
            arrays = [batch.column(i) for i in range(kept)]
            if len(texts) == 0:
                arrays.append(pa.array([], type=vector_type))
            else:
                model = _model_for(key)
                vectors = pa.table(model.embed(texts)).column("embedding").combine_chunks()
                _log_call(model, key, "embedded")
                arrays.append(vectors.cast(vector_type))
            yield pa.RecordBatch.from_arrays(arrays, names=names)

    return embed_batches


def _has_arrow_udf() -> bool:
    """Whether this pyspark has arrow_udf (4.1 and later)."""
    try:
        from pyspark.sql.functions import arrow_udf  # noqa: F401
    except ImportError:
        return False
    return True


def _arrow_struct_udf(key: _LoadKey, columns: List[Tuple[str, str]], out):
    import pyarrow as pa
    from pyspark.sql.functions import arrow_udf

    names = [name for name, _ in columns]

    # The type hints pick the iterator form (Iterator[pa.Array] in and out).
    def classify_arrays(batches: Iterator[pa.Array]) -> Iterator[pa.Array]:
        for texts in batches:
            if isinstance(texts, pa.ChunkedArray):
                texts = texts.combine_chunks()
            arrays = _classify_arrays(key, texts, columns, _string_type_of(texts))
            yield pa.StructArray.from_arrays(arrays, names=names)

    return arrow_udf(classify_arrays, out)


def _pandas_struct_udf(key: _LoadKey, columns: List[Tuple[str, str]], out):
    import pandas as pd
    import pyarrow as pa
    from pyspark.sql.functions import pandas_udf

    def classify_series(batches: Iterator[pd.Series]) -> Iterator[pd.DataFrame]:
        for texts in batches:
            arrays = _classify_arrays(key, pa.array(texts, type=pa.string(), from_pandas=True), columns, pa.string())
            yield pd.DataFrame({name: array.to_pandas() for (name, _), array in zip(columns, arrays)})

    return pandas_udf(classify_series, out)


class _MakePredict:
    """predict_fn's result: picklable by reference (a module-level class),
    called once per task by predict_batch_udf."""

    def __init__(self, key: _LoadKey, names: List[str]):
        self.key = key
        self.names = names

    def __call__(self):
        key, names = self.key, self.names

        def predict(texts) -> Dict[str, Any]:
            import pyarrow as pa

            result = _classify(key, pa.array(list(texts), type=pa.string(), from_pandas=True))
            out = {}
            for name in names:
                column = result.column(name)
                if pa.types.is_floating(column.type):
                    out[name] = column.to_numpy().astype("float32")
                else:
                    out[name] = column.to_numpy(zero_copy_only=False)
            return out

        return predict
