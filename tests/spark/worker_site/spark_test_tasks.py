"""Test-side functions the standalone suite runs in Spark's Python workers:
a module on the workers' PYTHONPATH (this folder), since cloudpickle sends
functions of an importable module by reference, and pytest's test modules
are not importable there.
"""

import infercost.spark


def task_placement(batches):
    """Test-side mapInArrow: per partition, the task's PID, GPU addresses and
    what infercost.spark resolves its device and threads to."""
    import os

    import pyarrow as pa
    from pyspark import TaskContext

    rows = 0
    for batch in batches:
        rows += batch.num_rows
    context = TaskContext.get()
    gpus = ",".join(context.resources()["gpu"].addresses)
    yield pa.RecordBatch.from_pydict({
        "pid": [os.getpid()], "gpus": [gpus], "rows": [rows],
        "device": [infercost.spark._task_device("cuda")], "threads": [infercost.spark._task_threads(None)],
    })


def tracked_rows(progress_dir, hold_gpu, release_file):
    """A pass-through before classify that leaves a file when each task attempt starts and when it
    is done (start-/done-PARTITION-ATTEMPT-GPU-PID), and holds every task of the executor with GPU
    `hold_gpu` at its start until `release_file` exists: the test kills that executor's Worker
    while one of its tasks is surely under way (it never creates the file unless it fails first)."""

    def tracked(batches):
        import os
        import time

        from pyspark import TaskContext

        context = TaskContext.get()
        gpu = ",".join(context.resources()["gpu"].addresses)
        name = f"{context.partitionId()}-{context.attemptNumber()}-{gpu}-{os.getpid()}"
        open(os.path.join(progress_dir, "start-" + name), "w").close()
        # Waits for an event (the file), not for a time; a safety net ends the wait after 10 minutes.
        deadline = time.monotonic() + 600
        while gpu == hold_gpu and not os.path.exists(release_file) and time.monotonic() < deadline:
            time.sleep(0.05)
        for batch in batches:
            yield batch
        open(os.path.join(progress_dir, "done-" + name), "w").close()

    return tracked
