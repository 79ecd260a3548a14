"""Shared fixtures of the Python package's suites (ctest label python).

ctest runs them with PYTHONPATH at the build's python/ folder (the module of
the main build beside a copy of python/infercost), INFERCOST_BINARY at the
build's `infercost` and INFERCOST_TEST_DATA_DIR at tests/data_files
(tests/python/CMakeLists.txt). By hand:
    PYTHONPATH=build/python build/pyenv/bin/python -m pytest tests/python
Every file a test writes is under its tmp_path.
"""

import errno
import json
import os
import pathlib
import select
import subprocess
import time

import pytest

import infercost

HERE = pathlib.Path(__file__).resolve().parent
DATA = pathlib.Path(os.environ.get("INFERCOST_TEST_DATA_DIR", HERE.parent / "data_files"))
GOLDEN = DATA / "golden"
# The CLI of the same build: beside the package folder's parent by default
# (build/python/infercost/_native*.so -> build/infercost).
CLI = pathlib.Path(
    os.environ.get("INFERCOST_BINARY", pathlib.Path(infercost._native.__file__).resolve().parents[2] / "infercost")
)

# Below the tiny models' 160 positions (run's default max_length, the model's limit): faster runs.
MAX_LENGTH = 128

TINY_MODELS = ["tiny-distilbert", "tiny-bert", "tiny-roberta", "tiny-xlm-roberta", "tiny-roberta-multilabel",
               "tiny-camembert", "tiny-modernbert", "tiny-modernbert-mean", "tiny-deberta", "tiny-deberta-3"]

# Rows that exercise the reader and the tokenizers: plain, unicode, empty,
# null, long, and repeated so that batches hold several lengths.
ROWS = [
    {"full_text": "I love this movie! #best", "text": "a"},
    {"full_text": "worst day ever :(", "text": "b"},
    {"full_text": "Ünïcödé, 中文字符 and emoji 🙂🙃", "text": "c"},
    {"full_text": "", "text": "d"},
    {"full_text": None, "text": "e"},
    {"full_text": "long " * 300, "text": "f"},
] + [{"full_text": f"tweet number {i} about {'things ' * (i % 7)}", "text": str(i)} for i in range(40)]


def model_dir(name):
    return GOLDEN / name


def write_jsonl(path, rows=ROWS):
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def run_cli(*args, check=True):
    """`infercost ARGS...`; the CompletedProcess (stdout, stderr as text)."""
    if not CLI.exists():
        pytest.fail(f"the infercost CLI is not built at {CLI} (set INFERCOST_BINARY)")
    proc = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, timeout=120)
    if check and proc.returncode != 0:
        pytest.fail(f"infercost {' '.join(map(str, args))} exited {proc.returncode}: {proc.stderr}")
    return proc


@pytest.fixture
def tweets(tmp_path):
    return write_jsonl(tmp_path / "tweets.jsonl")


# How long a test waits for an event before it fails instead of hanging: a safety net only (generous,
# under ctest's 300 s per file); no test asserts how long anything took.
SAFETY_S = 120


class Hold:
    """Holds the engine threads that reach test points (src/core/test_point.h) until
    the test lets them go, so that a test acts at a moment chosen by an event, not by a time.

    `points` is INFERCOST_TEST_HOLD_AT's value: "NAME" or "NAME:N" (its N-th hit), or several,
    comma-separated. The FIFO is made and opened for reading at once (and for writing, so that it
    never reads as closed); the variables are set by arm() (on entry, unless armed=False) for the
    engine running in this process, which reads them at each hit and counts hits from 0 for a new
    value: set them while no engine thread can read them (before a call, or while the only thread
    that hits points is held). wait() blocks until an engine thread is held at a point (it writes
    the point's name and a newline into the FIFO, then waits reading a FIFO of that point's own,
    PATH.NAME); release() opens and closes each such FIFO of the points waited for, which lets
    their threads go on. On exit: released, the variables removed, the FIFOs deleted.
    """

    def __init__(self, folder, points, name="hold", armed=True):
        self.points = points
        self.armed = armed
        self.path = pathlib.Path(folder) / f"{name}.fifo"
        os.mkfifo(self.path)
        # Non-blocking: a FIFO's open for reading would wait for a writer.
        self.fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        self.keep = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
        self.pending = b""
        self.held = []  # the points waited for whose threads were not released yet

    def arm(self):
        os.environ["INFERCOST_TEST_HOLD_AT"] = self.points
        os.environ["INFERCOST_TEST_HOLD_FIFO"] = str(self.path)
        return self

    def wait(self, unless=None):
        """The name of the point where a thread is now held; None if the file descriptor `unless`
        becomes readable first (the test's way to stop waiting). Fails after SAFETY_S."""
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        if unless is not None:
            poller.register(unless, select.POLLIN)
        deadline = time.monotonic() + SAFETY_S
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no engine thread held at {self.points} in {SAFETY_S} s")
            for fd, events in poller.poll(left * 1000):
                if fd == unless:
                    return None
                if events & select.POLLIN:
                    self.pending += os.read(self.fd, 256)
        line, self.pending = self.pending.split(b"\n", 1)
        point = line.decode()
        self.held.append(point)
        return point

    def release(self):
        """Lets the threads held at the points waited for go on: each waits, reading PATH.NAME, for
        a writer to come and go (its reader may not be open yet: retried)."""
        deadline = time.monotonic() + SAFETY_S
        while self.held:
            go = f"{self.path}.{self.held[0]}"
            try:
                os.close(os.open(go, os.O_WRONLY | os.O_NONBLOCK))
                self.held.pop(0)
            except OSError as e:  # ENXIO: no reader yet
                if e.errno not in (errno.ENXIO, errno.ENOENT) or time.monotonic() > deadline:
                    raise
                time.sleep(0)

    def __enter__(self):
        return self.arm() if self.armed else self

    def __exit__(self, *exc):
        self.release()
        os.close(self.fd)
        os.close(self.keep)
        for name in ("INFERCOST_TEST_HOLD_AT", "INFERCOST_TEST_HOLD_FIFO"):
            os.environ.pop(name, None)
        for fifo in self.path.parent.glob(self.path.name + "*"):
            fifo.unlink(missing_ok=True)
