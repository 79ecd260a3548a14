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


def slow_rows(progress_dir):
    """A pass-through before classify that takes 0.5 s per partition and
    leaves a file per finished partition, so that the test kills a Worker
    while the job is half done."""

    def slow(batches):
        import os
        import time

        from pyspark import TaskContext

        for batch in batches:
            yield batch
        time.sleep(0.5)
        context = TaskContext.get()
        name = f"done-{context.partitionId()}-{context.attemptNumber()}-{os.getpid()}"
        open(os.path.join(progress_dir, name), "w").close()

    return slow
