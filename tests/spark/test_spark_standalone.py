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
  with SIGKILL while a task of it is under way (held at its start until the
  kill: every task attempt leaves files when it starts and when it is done):
  the lost task runs again, a later attempt, on the other Worker, and the
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
import urllib.request

import pyarrow.parquet as pq
import pyspark
from spark_test_tasks import task_placement, tracked_rows
from conftest import (MODEL, OPTS, alive, direct, free_port, isolate_temp, jvm_options, loads, session_builder,
                      stop_group, wait_for)

import infercost
import infercost.spark

SPARK_HOME = pathlib.Path(pyspark.__file__).resolve().parent
SPARK_CLASS = SPARK_HOME / "bin" / "spark-class"


def master_state(ui_port):
    with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as r:
        return json.load(r)


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


def progress_files(folder, kind):
    """The start- or done- files of tracked_rows: (partition, attempt, gpu) for each."""
    out = []
    for p in folder.iterdir():
        what, partition, attempt, gpu, _pid = p.name.split("-")
        if what == kind:
            out.append((int(partition), int(attempt), gpu))
    return out


def test_worker_killed_mid_job_every_row_once(spark, cluster, load_log, tmp_path):
    n, parts = 1200, 24
    progress = tmp_path / "progress"
    progress.mkdir()
    release = tmp_path / "release"  # created only if the test fails before its kill (lets the job end)
    df = spark.range(0, n, numPartitions=parts).selectExpr("id", "concat('tweet number ', id, ' #', id % 7) AS full_text")
    # Worker 0's executor (GPU "0") holds each task it starts: the kill lands on a running task.
    df = df.mapInArrow(tracked_rows(str(progress), "0", str(release)), df.schema)
    out = infercost.spark.classify(df, model=str(MODEL), **OPTS, keep=["id", "full_text"])
    path = tmp_path / "out"

    killed = {}

    def kill_a_worker():
        # Once Worker 0 has a task under way (held) and the other Worker has done 4 partitions:
        # SIGKILL to Worker 0's whole process group (its JVM, its executor, their Python workers), as
        # a machine lost.
        try:
            wait_for("a task under way on Worker 0 and 4 partitions done",
                     lambda: any(gpu == "0" for _, _, gpu in progress_files(progress, "start"))
                     and len(progress_files(progress, "done")) >= 4, timeout=300)
            killed["running"] = [(p, a) for p, a, gpu in progress_files(progress, "start") if gpu == "0"]
            killed["done_before"] = len(progress_files(progress, "done"))
            worker = cluster.workers[0]
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(timeout=30)  # reaped: no zombie left in the group
            killed["yes"] = True
        except BaseException as e:  # noqa: BLE001 (reported below)
            killed["error"] = e
            release.touch()  # the held task goes on, and the job ends

    killer = threading.Thread(target=kill_a_worker)
    killer.start()
    try:
        out.write.parquet(str(path))
    finally:
        killer.join()

    assert "error" not in killed, killed
    # The kill came while Worker 0 ran a task (held at its start, never done there), with partitions
    # left to do.
    assert killed.get("yes") and len(killed["running"]) == 1, killed
    assert killed["done_before"] < parts, killed
    assert not alive(cluster.workers[0].pid)
    lost_partition, lost_attempt = killed["running"][0]
    starts, dones = progress_files(progress, "start"), progress_files(progress, "done")
    assert not any(gpu == "0" for _, _, gpu in dones), dones
    # The lost task ran again, on the other Worker, as a later attempt; every partition was done.
    again = [(a, gpu) for p, a, gpu in dones if p == lost_partition]
    assert again and all(a > lost_attempt and gpu == "1" for a, gpu in again), (lost_partition, starts, dones)
    assert len([1 for p, _, _ in starts if p == lost_partition]) >= 2
    assert {p for p, _, _ in dones} == set(range(parts))

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
