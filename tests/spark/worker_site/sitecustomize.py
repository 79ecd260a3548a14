"""Loaded by every Python process the Spark suites start (this folder is on
their PYTHONPATH; conftest.py puts it there): where INFERCOST_TEST_LOAD_LOG
names a folder, each model load that infercost.spark logs on its logger
("infercost.spark", INFO, the record's `infercost_load` details) is written
there as one JSON file, so a test counts loads per worker process without
touching the code under test. Spark forks its Python workers from a daemon
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
        details = getattr(record, "infercost_load", None)
        if details is None:
            return
        self.count += 1
        name = f"load-{os.getpid()}-{self.count}.json"
        with open(os.path.join(self.folder, name), "w", encoding="utf-8") as f:
            json.dump(details, f)


_folder = os.environ.get("INFERCOST_TEST_LOAD_LOG")
if _folder:
    _logger = logging.getLogger("infercost.spark")
    _logger.setLevel(logging.INFO)
    _logger.addHandler(_LoadFiles(_folder))
