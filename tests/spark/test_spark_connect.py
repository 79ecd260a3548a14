"""infercost.spark on Spark Connect: a Spark Connect server (pyspark's own
jars: spark-connect_2.13, in pyspark 4's wheel) that this suite starts on
127.0.0.1 with local[2], and a remote session to it (sc://127.0.0.1:PORT),
as a Databricks notebook on standard or serverless compute has: `classify`
(mapInArrow) and `classify_udf` (an arrow_udf) give the rows the model gives,
with the output schema's exact types; the server's Python workers load the
model once each, at the task's 1 CPU.

The server is one JVM in a process group of its own, started with pyspark's
bin/spark-submit (its class SparkConnectServer, as sbin/start-connect-server.sh
runs it), found ready when its port takes connections, and stopped by its
process group in the fixture's teardown, checked gone. Its files (logs, local
dir, warehouse, the JVM's temp dir) are under pytest's tmp folder.
pyspark 3.5's jars have no Connect server (it comes from Maven): this suite
runs on pyspark 4.3 only (tests/spark/CMakeLists.txt).
"""

import pytest
from conftest import SKIP_REASON

# Before anything that needs pyspark or java.
if SKIP_REASON:
    pytest.skip(SKIP_REASON, allow_module_level=True)

import os  # noqa: E402 (after the skip)
import pathlib
import socket
import subprocess
import sys

import pyspark
from conftest import (MODEL, OPTS, TOL, alive, direct, free_port, isolate_temp, jvm_options, loads, sample_texts,
                      stop_group, texts_frame, wait_for)

import infercost.spark

SPARK_HOME = pathlib.Path(pyspark.__file__).resolve().parent
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"

TEXTS = sample_texts(60)


def _port_open(port):
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        return True


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("spark-connect")


@pytest.fixture(scope="module")
def server(workdir, load_log):
    """The Spark Connect server's port, the server running until the suite ends."""
    jars = sorted(p.name for p in (SPARK_HOME / "jars").glob("spark-connect_*.jar"))
    assert jars, f"pyspark {pyspark.__version__} at {SPARK_HOME} has no Spark Connect server jar"
    tmp = isolate_temp(workdir)
    port = free_port()
    env = dict(
        os.environ,
        SPARK_HOME=str(SPARK_HOME),
        SPARK_CONNECT_MODE="0",  # the server itself runs classic Spark (as start-connect-server.sh sets)
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_LOG_DIR=str(workdir / "logs"),
        # The server's Python workers: this Python, the package and worker_site on their path, and
        # the folder worker_site logs model loads into (they inherit the server's environment).
        PYSPARK_PYTHON=sys.executable,
        INFERCOST_TEST_LOAD_LOG=str(load_log),
    )
    conf = {
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": port,
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.local.dir": tmp,
        "spark.jars.ivy": tmp / "ivy",
        "spark.sql.warehouse.dir": tmp / "warehouse",
        "spark.sql.shuffle.partitions": 4,
        "spark.sql.execution.arrow.maxRecordsPerBatch": 16,
        "spark.task.cpus": 1,
        "spark.pyspark.python": sys.executable,
    }
    args = [str(SPARK_HOME / "bin" / "spark-submit"), "--class", SERVER_CLASS, "--name", "infercost-connect-tests",
            "--master", "local[2]", "--driver-java-options", jvm_options(tmp)]
    for key, value in conf.items():
        args += ["--conf", f"{key}={value}"]
    log = open(workdir / "server.log", "wb")
    proc = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    log.close()
    try:
        wait_for(f"the Spark Connect server on 127.0.0.1:{port} (log: {workdir / 'server.log'})",
                 lambda: _port_open(port), timeout=180, procs=[proc])
        yield port
    finally:
        assert stop_group(proc), f"processes left in the group of {proc.pid}"
        assert not alive(proc.pid)


@pytest.fixture(scope="module")
def spark(server):
    from pyspark.sql import SparkSession

    session = SparkSession.builder.remote(f"sc://127.0.0.1:{server}").getOrCreate()
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture(scope="module")
def texts_df(spark):
    return texts_frame(spark, TEXTS, 4)


def labels_and_want():
    names = [name for name, _ in infercost.spark.output_columns(str(MODEL))]
    want = direct(TEXTS).to_pydict()
    return names, want


def assert_rows(table, names, want):
    got = table.sort_by("id").to_pydict()
    assert got["id"] == list(range(len(TEXTS)))
    for name in names:
        if name in ("label", "labels"):
            assert got[name] == want[name], name
        else:
            for i, (a, b) in enumerate(zip(got[name], want[name])):
                assert (a is None) == (b is None), (name, i)
                if a is not None:
                    assert abs(a - b) <= TOL, (name, i, a, b)


def test_it_is_a_connect_session(spark):
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    assert isinstance(spark, ConnectSession)


def test_classify_on_connect(spark, texts_df):
    out = infercost.spark.classify(texts_df, "full_text", model=str(MODEL), **OPTS, keep=["id"])
    names, want = labels_and_want()
    assert out.columns == ["id"] + names
    types = {f.name: f.dataType.simpleString() for f in out.schema.fields}
    assert types == {"id": "bigint", **{n: "float" if n != "label" else "string" for n in names}}
    assert_rows(out.toArrow(), names, want)


def test_classify_udf_on_connect(spark, texts_df):
    udf = infercost.spark.classify_udf(model=str(MODEL), **OPTS)
    out = texts_df.withColumn("pred", udf("full_text")).select("id", "pred.*")
    names, want = labels_and_want()
    assert out.columns == ["id"] + names
    assert_rows(out.toArrow(), names, want)


def test_the_servers_workers_load_the_model_once(spark, texts_df, load_log):
    # After the jobs above (and one more): each Python worker of the server loaded the model once,
    # with the task's 1 CPU as its threads.
    assert infercost.spark.classify(texts_df, model=str(MODEL), **OPTS, keep=["id"]).count() == len(TEXTS)
    records = [r for r in loads(load_log) if r["model_dir"] == str(MODEL)]
    assert records, "no model load was logged by the server's workers"
    pids = [r["pid"] for r in records]
    assert len(pids) == len(set(pids)), records
    assert {r["threads"] for r in records} == {1}, records
