"""Shared set-up of the infercost.spark suites (ctest label spark).

ctest runs them with the Spark venvs' Python (build/pyenv-spark: pyspark 4.3,
build/pyenv-spark35: pyspark 3.5; each with pyarrow, pandas, pytest),
PYTHONPATH at the build's python/ folder (the package with its native
module, where it is built), INFERCOST_BINARY at the build's CLI and
INFERCOST_TEST_DATA_DIR at tests/data_files (tests/spark/CMakeLists.txt).
By hand, from the repository root:

    PYTHONPATH=build/python build/pyenv-spark/bin/python -m pytest tests/spark \
        --basetemp=build/spark-tmp

The package under test is the build's (its native module in build/python):
where it cannot be imported, or has no ``infercost.Model``, every test
skips, saying why.

Worker processes see the same package: this file puts ``worker_site`` on
PYTHONPATH for them and for this process (its sitecustomize counts model
loads per worker process through infercost.spark's logger).

Every file a test writes is under pytest's tmp folders: Spark's local and
worker dirs, logs, the JVM's temp dir and Python's are pointed there.
"""

import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
DATA = pathlib.Path(os.environ.get("INFERCOST_TEST_DATA_DIR", REPO / "tests" / "data_files"))
CLI = pathlib.Path(os.environ.get("INFERCOST_BINARY", REPO / "build" / "infercost"))
MODEL = DATA / "golden" / "tiny-distilbert"
MULTILABEL_MODEL = DATA / "golden" / "tiny-roberta-multilabel"
# The tiny models have 130-160 positions, and fp32 is the precision whose
# results do not depend on how rows are batched (bf16, auto's choice on CPUs
# that have it, rounds per batch shape): the options of every test's model.
OPTS = {"max_length": 128, "precision": "fp32"}
# Probabilities of the same rows batched differently (Spark's Arrow batches,
# one direct call, the CLI's windows) agree to this; labels exactly.
TOL = 1e-6



def _skip_reason():
    """Why these suites cannot run here, or None. Each test module skips
    itself with it (a conftest cannot skip a module)."""
    import importlib.util

    for module, what in (("pyspark", "pyspark"), ("pyarrow", "pyarrow")):
        if importlib.util.find_spec(module) is None:
            return f"{what} is not installed in {sys.executable} (make pyenv installs it)"
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "no java on PATH and no JAVA_HOME (scripts/install-deps.sh installs openjdk-17-jre-headless)"
    try:
        import infercost
    except ImportError as e:
        return f"the infercost package cannot be imported ({e}): build its native module (make test)"
    if not hasattr(infercost, "Model"):
        return f"{infercost.__file__} has no infercost.Model: build the native module (make test)"
    return None


SKIP_REASON = _skip_reason()

sys.path.insert(0, str(HERE / "worker_site"))
# Absolute: Spark's Python workers may run in another directory.
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(HERE / "worker_site")] + [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])

if SKIP_REASON is None:
    import importlib.util  # noqa: E402

    import infercost  # noqa: E402

    if importlib.util.find_spec("infercost.spark") is None:
        raise RuntimeError(
            f"{os.path.dirname(infercost.__file__)} has no spark.py: the build copies python/infercost's "
            "files beside the native module (package_files in src/python/CMakeLists.txt); add spark.py there"
        )
    import infercost.spark  # noqa: E402,F401


def pytest_configure(config):
    # pyspark 3.5 compares versions with distutils' LooseVersion, which Python
    # 3.11 deprecates (pyspark 4 no longer does): its own warning, at each
    # Arrow conversion, not one about the libraries the suites pin.
    config.addinivalue_line(
        "filterwarnings", "ignore:distutils Version classes are deprecated:DeprecationWarning:pyspark")


def pytest_report_header(config):
    if SKIP_REASON:
        return f"infercost.spark suites: skipped: {SKIP_REASON}"
    return f"infercost.spark suites: infercost from {infercost.__file__}"


def pytest_sessionfinish(session, exitstatus):
    # Everything skipped (no pyspark, no java: the modules skip themselves,
    # which pytest counts as "no tests collected", 5): exit 77, which ctest
    # reports as skipped (SKIP_RETURN_CODE) instead of passed or failed.
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or exitstatus not in (0, 5):
        return
    stats = reporter.stats
    if stats.get("skipped") and not stats.get("passed") and not stats.get("failed"):
        session.exitstatus = 77


def sample_texts(ordinary):
    """Rows that test the hard cases (emoji and accents, CJK, an empty text, a
    null, a row far past the models' length) followed by `ordinary` tweets of
    varied lengths: the suites' input, in this order."""
    hard = ["I love this movie! #best", "worst day ever :(", "Ünïcödé, 中文字符 and emoji 🙂🙃", "", None, "long " * 300]
    return hard + [f"tweet number {i} about {'things ' * (i % 7)}" for i in range(ordinary)]


def texts_frame(spark, texts, partitions):
    """A DataFrame (id long, full_text string) of `texts`, id = the index, in
    `partitions` partitions."""
    rows = [(i, t) for i, t in enumerate(texts)]
    return spark.createDataFrame(rows, "id long, full_text string").repartition(partitions)


@pytest.fixture(scope="module")
def load_log(workdir):
    """The folder worker_site logs each model load of the suite's Python
    workers into (loads() counts them), under the suite's `workdir` fixture."""
    folder = workdir / "loads"
    folder.mkdir()
    return folder


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def isolate_temp(root: pathlib.Path):
    """Points this process's and its children's temp files under `root`."""
    tmp = root / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    os.environ["TMPDIR"] = str(tmp)
    tempfile.tempdir = str(tmp)
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    # spark-class's launcher JVM (it builds the real command line) too.
    os.environ["SPARK_LAUNCHER_OPTS"] = "-XX:-UsePerfData -XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    return tmp


def jvm_options(tmp: pathlib.Path) -> str:
    # No /tmp/hsperfdata_*, temp files and Derby under the test's folder.
    # The client compiler only and the serial collector: these JVMs live for
    # seconds on small data, where C2 and parallel GC threads only compete
    # for CI's 2 cores (startup is most of each suite's time).
    return (f"-XX:-UsePerfData -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Djava.io.tmpdir={tmp} "
            f"-Dderby.system.home={tmp}/derby")


def session_builder(root: pathlib.Path, master: str, conf=None, load_log=None):
    """A SparkSession builder bound to 127.0.0.1, UI off, files under `root`;
    the workers log model loads into `load_log` (a folder). Through
    spark.executorEnv, not this process's environment: one pytest process
    keeps one JVM for all its sessions, with the environment it started with."""
    from pyspark.sql import SparkSession

    tmp = isolate_temp(root)
    builder = (
        SparkSession.builder.master(master)
        .appName("infercost-spark-tests")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.local.dir", str(tmp))
        .config("spark.jars.ivy", str(tmp / "ivy"))
        .config("spark.sql.warehouse.dir", str(tmp / "warehouse"))
        .config("spark.driver.extraJavaOptions", jvm_options(tmp))
        .config("spark.executor.extraJavaOptions", jvm_options(tmp))
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.pyspark.python", sys.executable)
        .config("spark.executorEnv.PYTHONPATH", os.environ["PYTHONPATH"])
    )
    if load_log is not None:
        builder = builder.config("spark.executorEnv.INFERCOST_TEST_LOAD_LOG", str(load_log))
    # Every setting a suite changes is set by every suite: one pytest process
    # keeps one JVM, and a session's settings stay in its system properties
    # for the next session (pytest tests/spark runs the suites in one process).
    for key, value in {"spark.task.cpus": 1, **(conf or {})}.items():
        builder = builder.config(key, str(value))
    return builder


def loads(folder: pathlib.Path):
    """The model loads the workers logged into `folder` (worker_site), as dicts."""
    return [json.loads(p.read_text()) for p in sorted(folder.glob("load-*.json"))]


def classify_calls(folder: pathlib.Path):
    """The classify() calls the workers logged into `folder` (worker_site):
    dicts of the task (pid, partition, ...) and the call's `metrics`."""
    return [json.loads(p.read_text()) for p in sorted(folder.glob("metrics-*.json"))]


def run_cli(*args):
    if not CLI.exists():
        pytest.fail(f"the infercost CLI is not built at {CLI} (set INFERCOST_BINARY)")
    proc = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        pytest.fail(f"infercost {' '.join(map(str, args))} exited {proc.returncode}: {proc.stderr}")
    return proc


def direct(texts, model=MODEL):
    """What infercost.Model gives for `texts` in this process: the reference
    the Spark outputs are compared with (a pyarrow Table)."""
    import pyarrow as pa

    with infercost.Model(str(model), **OPTS) as m:
        return pa.table(m.classify(list(texts)))


def alive(pgid):
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def stop_group(proc, grace=10.0):
    """SIGTERM to the process group of `proc` (its JVM and what it forked),
    SIGKILL to what is left after `grace` seconds; True once none is left."""
    if alive(proc.pid):
        os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while alive(proc.pid) and time.monotonic() < deadline:
            proc.poll()
            time.sleep(0.1)
        if alive(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    deadline = time.monotonic() + 10
    while alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not alive(proc.pid)


def wait_for(what, check, timeout=90.0, procs=()):
    """Polls `check` until it is true: waits for an event (a port open, a file
    there), failing after `timeout` seconds (a safety net, not a measure) or
    when one of `procs` has exited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for p in procs:
            if p.poll() is not None:
                raise AssertionError(f"{what}: a process it needs exited with {p.returncode}")
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")
