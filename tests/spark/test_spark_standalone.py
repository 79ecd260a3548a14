"""infercost.spark on a real standalone cluster on 127.0.0.1.

A Master and two Workers, each a separate JVM started with pyspark's
bin/spark-class (the pip wheel has no sbin scripts) in a process group of its
own; each Worker has 2 cores and one (fake) GPU, "0" and "1", found by a
discovery script, and the job asks spark.task.cpus=2 and
spark.task.resource.gpu.amount=1, so each executor runs one task at a time
with 2 CPUs and its own GPU address, as on a GPU cluster. Then:

- each task's device resolves to its own GPU (cuda:0 on one Worker, cuda:1
  on the other) and its engine threads to its 2 CPUs (spark.task.cpus);
- a job classifying rows into Parquet, during which one Worker (its JVM, its
  executor and their Python workers: the whole process group) is killed
  with SIGKILL: Spark reschedules the lost tasks on the other Worker, and the
  output has every row exactly once, equal to the model's own results.

Every process the suite starts is stopped by its process group in the
fixture's teardown, failed test or not, and checked gone; every file is under
pytest's tmp folder (logs, work dirs, local dirs, the JVMs' temp dirs).
"""

import pytest
from conftest import SKIP_REASON

# Before anything that needs pyspark or java.
if SKIP_REASON:
    pytest.skip(SKIP_REASON, allow_module_level=True)

import json
import os
import pathlib
import signal
import subprocess
import threading
import time
import urllib.request

import pyarrow.parquet as pq
import pyspark
from spark_test_tasks import slow_rows, task_placement
from conftest import MODEL, OPTS, direct, free_port, isolate_temp, jvm_options, loads, session_builder

import infercost
import infercost.spark

SPARK_HOME = pathlib.Path(pyspark.__file__).resolve().parent
SPARK_CLASS = SPARK_HOME / "bin" / "spark-class"


def _alive(pgid):
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def stop_group(proc, grace=10.0):
    """SIGTERM to the process group of `proc` (its JVM and what it forked),
    SIGKILL to what is left after `grace` seconds; True once none is left."""
    if _alive(proc.pid):
        os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while _alive(proc.pid) and time.monotonic() < deadline:
            proc.poll()
            time.sleep(0.1)
        if _alive(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    deadline = time.monotonic() + 10
    while _alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not _alive(proc.pid)


def master_state(ui_port):
    with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as r:
        return json.load(r)


def wait_for(what, check, timeout=90.0, procs=()):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for p in procs:
            if p.poll() is not None:
                raise AssertionError(f"{what}: a cluster process exited with {p.returncode}")
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


class Cluster:
    def __init__(self, root):
        self.root = root
        self.tmp = isolate_temp(root)
        self.procs = []  # Popen, each the leader of its own process group
        self.workers = []
        self.env = dict(
            os.environ,
            SPARK_HOME=str(SPARK_HOME),
            SPARK_LOCAL_IP="127.0.0.1",
            SPARK_LOG_DIR=str(root / "logs"),
            SPARK_PID_DIR=str(root / "pids"),
            SPARK_LOCAL_DIRS=str(self.tmp),
            SPARK_DAEMON_JAVA_OPTS=jvm_options(self.tmp),
            SPARK_NO_DAEMONIZE="1",
        )
        self.port, self.ui_port = free_port(), free_port()
        self.url = f"spark://127.0.0.1:{self.port}"

    def start(self, name, args):
        log = open(self.root / f"{name}.log", "wb")
        proc = subprocess.Popen(
            [str(SPARK_CLASS), *args], env=self.env, stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )
        log.close()
        self.procs.append(proc)
        return proc

    def start_all(self):
        self.start("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                              "--port", str(self.port), "--webui-port", str(self.ui_port)])
        wait_for("the Master", lambda: master_state(self.ui_port)["status"] == "ALIVE", procs=self.procs)
        for i in range(2):
            # One fake GPU per Worker, address "i".
            script = self.root / f"gpus-{i}.sh"
            script.write_text(f'#!/bin/sh\necho \'{{"name": "gpu", "addresses": ["{i}"]}}\'\n')
            script.chmod(0o755)
            props = self.root / f"worker-{i}.conf"
            props.write_text(
                "spark.worker.resource.gpu.amount 1\n"
                f"spark.worker.resource.gpu.discoveryScript {script}\n"
            )
            work = self.root / f"work-{i}"
            work.mkdir()
            self.workers.append(self.start(f"worker-{i}", [
                "org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1", "--cores", "2",
                "--memory", "1g", "--webui-port", str(free_port()), "--work-dir", str(work),
                "--properties-file", str(props),
            ]))
        wait_for("2 Workers", lambda: sum(w["state"] == "ALIVE" for w in master_state(self.ui_port)["workers"]) == 2,
                 procs=self.procs)

    def stop_all(self):
        left = [p.pid for p in reversed(self.procs) if not stop_group(p)]
        assert not left, f"processes left in the groups of {left}"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("standalone"))
    try:
        c.start_all()
        yield c
    finally:
        c.stop_all()


@pytest.fixture(scope="module")
def load_log(tmp_path_factory):
    return tmp_path_factory.mktemp("loads")


@pytest.fixture(scope="module")
def spark(cluster, load_log):
    conf = {
        "spark.executor.cores": 2,
        "spark.task.cpus": 2,
        "spark.executor.memory": "512m",
        "spark.cores.max": 4,
        "spark.executor.resource.gpu.amount": 1,
        "spark.task.resource.gpu.amount": 1,
        "spark.sql.execution.arrow.maxRecordsPerBatch": 50,
        # Lost executors are replaced nowhere (both Workers' cores are taken);
        # a lost task is retried on the other executor.
        "spark.task.maxFailures": 4,
    }
    session = session_builder(cluster.root, cluster.url, conf, load_log=load_log).getOrCreate()
    try:
        # Both executors registered before the jobs start.
        tracker = session.sparkContext.statusTracker()
        wait_for("2 executors", lambda: len(tracker.getExecutorInfos()) >= 3)  # the driver is one
        yield session
    finally:
        session.stop()


def test_each_task_gets_its_gpu_and_cpus(spark):
    df = spark.range(0, 400, numPartitions=8)
    out = df.mapInArrow(task_placement, "pid long, gpus string, rows long, device string, threads long").collect()
    assert sum(r.rows for r in out) == 400
    assert {r.gpus for r in out} == {"0", "1"}  # both Workers ran tasks
    for r in out:
        assert r.device == f"cuda:{r.gpus}" and r.threads == 2


def test_worker_killed_mid_job_every_row_once(spark, cluster, load_log, tmp_path):
    n, parts = 1200, 24
    progress = tmp_path / "progress"
    progress.mkdir()
    df = spark.range(0, n, numPartitions=parts).selectExpr("id", "concat('tweet number ', id, ' #', id % 7) AS full_text")
    df = df.mapInArrow(slow_rows(str(progress)), df.schema)
    out = infercost.spark.classify(df, model=str(MODEL), **OPTS, keep=["id", "full_text"])
    path = tmp_path / "out"

    killed = {}

    def kill_a_worker():
        # Once a few partitions are done: SIGKILL to the first Worker's whole
        # process group (its JVM, its executor, their Python workers), as a
        # machine lost.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(list(progress.iterdir())) < 4:
            time.sleep(0.05)
        worker = cluster.workers[0]
        killed["done_before"] = len(list(progress.iterdir()))
        os.killpg(worker.pid, signal.SIGKILL)
        killed["at"] = time.monotonic()
        worker.wait(timeout=30)  # reaped: no zombie left in the group

    killer = threading.Thread(target=kill_a_worker)
    killer.start()
    try:
        out.write.parquet(str(path))
    finally:
        killer.join()
    finished = time.monotonic()

    # The kill came while the job ran, with partitions left to do.
    assert "at" in killed and killed["at"] < finished
    assert 4 <= killed["done_before"] < parts, killed
    assert not _alive(cluster.workers[0].pid)
    # Some partitions ran more than once (the killed executor's), yet...
    attempts = [p.name.split("-") for p in progress.iterdir()]
    assert len({a[1] for a in attempts}) == parts

    # ...every row is in the output exactly once, with the model's results.
    table = pq.read_table(path).sort_by("id")
    ids = table.column("id").to_pylist()
    assert ids == list(range(n))
    want = direct(table.column("full_text").to_pylist())
    assert table.column("label").to_pylist() == want.column("label").to_pylist()
    for name in want.column_names:
        if name not in ("label", "labels"):
            got, ref = table.column(name).to_pylist(), want.column(name).to_pylist()
            assert max(abs(a - b) for a, b in zip(got, ref)) <= 1e-6, name
    # Each worker loaded the model once, whatever it ran, with the task's
    # 2 CPUs as its threads.
    records = loads(load_log)
    pids = [r["pid"] for r in records]
    assert records and len(pids) == len(set(pids)), records
    assert {r["threads"] for r in records} == {2}, records
