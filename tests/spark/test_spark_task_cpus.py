"""infercost.spark's engine threads and GPU choice per task.

A local[2] session with spark.task.cpus=2 (its own suite: the setting is
fixed when the session starts): the model is loaded with 2 threads. And,
without Spark, how a task's device is resolved from its assigned resources.
"""

import pytest
from conftest import MODEL, OPTS, loads, session_builder

import infercost
import infercost.spark


@pytest.fixture(scope="module")
def load_log(tmp_path_factory):
    return tmp_path_factory.mktemp("loads")


@pytest.fixture(scope="module")
def spark(tmp_path_factory, load_log):
    root = tmp_path_factory.mktemp("spark-cpus")
    session = session_builder(root, "local[2]", {"spark.task.cpus": 2}, load_log=load_log).getOrCreate()
    try:
        yield session
    finally:
        session.stop()


def test_task_cpus_are_the_engine_threads(spark, load_log):
    df = spark.createDataFrame([(i, f"text {i}") for i in range(40)], "id long, full_text string").repartition(4)
    assert infercost.spark.classify(df, model=str(MODEL), **OPTS, keep=["id"]).count() == 40
    records = loads(load_log)
    assert records and {r["threads"] for r in records} == {2}, records
    # An explicit threads= wins over spark.task.cpus.
    infercost.spark.classify(df, model=str(MODEL), **OPTS, threads=1, keep=["id"]).collect()
    assert {r["threads"] for r in loads(load_log)} == {1, 2}


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
