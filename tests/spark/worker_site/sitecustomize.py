"""Loaded by every Python process the Spark suites start (this folder is on
their PYTHONPATH; conftest.py puts it there): where INFERCOST_TEST_LOAD_LOG
names a folder, each model load and each classify() call that
infercost.spark logs on its logger ("infercost.spark", INFO, the record's
`infercost_load` or `infercost_metrics` details) is written there as one
JSON file (load-*.json, metrics-*.json), so a test counts loads per worker
process and reads each call's metrics without touching the code under test. Spark forks its Python workers from a daemon
that ran this, so the handler is in every worker; the PID is taken when the
record is written.
"""

import json
import logging
import os


class _LoadFiles(logging.Handler):
    def __init__(self, folder):
        super().__init__(logging.INFO)
        self.folder = folder
        self.count = 0

    def emit(self, record):
        for kind in ("load", "metrics"):
            details = getattr(record, "infercost_" + kind, None)
            if details is not None:
                break
        else:
            return
        self.count += 1
        name = f"{kind}-{os.getpid()}-{self.count}.json"
        with open(os.path.join(self.folder, name), "w", encoding="utf-8") as f:
            json.dump(details, f)


_folder = os.environ.get("INFERCOST_TEST_LOAD_LOG")
if _folder:
    _logger = logging.getLogger("infercost.spark")
    _logger.setLevel(logging.INFO)
    _logger.addHandler(_LoadFiles(_folder))
