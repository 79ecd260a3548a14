"""STAND-IN for the infercost package, used ONLY by tests/spark while the
real ``infercost.Model`` is not built (conftest.py picks it then, and only
then). It is not the engine: it classifies by a hash of each text's bytes,
deterministically, with the real API's shape, so that the Spark machinery
(mapInArrow, schemas, the worker-side model cache, threads, GPUs, cluster
handling) is tested now. The tests that compare with ``infercost run`` skip
while it is in use.

What it has of the package's API (python/infercost/__init__.py and the
Model of issue 14): ``model_info(dir)`` (``labels``, ``problem_type``,
``labels_column``, read from config.json as the engine reads them) and
``Model(dir, device, precision, threads, max_length)`` with ``classify``
(texts as a list, numpy array, pandas Series or Arrow array; a pyarrow Table
with one float32 column per lowercased label, ``label``, and ``labels`` for a
multi-label model; nulls for null texts), ``info``, ``last_metrics``,
``close()`` and the context manager.
"""

import json
import math
import os
import zlib

import pyarrow as pa

# infercost.spark (and any other pure-Python module) is the real one from
# the source tree's python/infercost: only the package's top level is stood in.
_SOURCE_PACKAGE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "python", "infercost")
__path__.append(os.path.normpath(_SOURCE_PACKAGE))  # noqa: F821 (a package's __path__)

STANDIN = True
__version__ = "0+standin"


def model_info(model_dir):
    """The keys of the real model_info that infercost.spark reads."""
    with open(os.path.join(os.fspath(model_dir), "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    id2label = config.get("id2label")
    if id2label:
        labels = [id2label[str(i)] for i in range(len(id2label))]
    else:
        labels = [f"LABEL_{i}" for i in range(int(config.get("num_labels", 2)))]
    multi = config.get("problem_type") == "multi_label_classification" or len(labels) == 1
    return {
        "dir": os.fspath(model_dir),
        "labels": labels,
        "problem_type": config.get("problem_type"),
        "head_function": "sigmoid" if multi else "softmax",
        "labels_column": multi,
        "synthetic": True,
    }


def _texts_list(texts):
    if hasattr(texts, "__arrow_c_stream__") or hasattr(texts, "__arrow_c_array__"):
        return pa.chunked_array(texts).to_pylist() if hasattr(texts, "__arrow_c_stream__") else pa.array(texts).to_pylist()
    if hasattr(texts, "tolist"):
        texts = texts.tolist()
    if isinstance(texts, str):
        raise TypeError("classify(): a bare str (pass [text])")
    return [None if t is None or (isinstance(t, float) and math.isnan(t)) else t for t in texts]


class Model:
    """Hash-based stand-in classifier with the real Model's constructor."""

    def __init__(self, model_dir, device="cpu", precision="auto", threads=0, max_length=512):
        self._info = model_info(model_dir)
        self._info.update(device=device, precision=precision, threads=threads, max_length=max_length)
        self.last_metrics = None
        self._closed = False

    @property
    def info(self):
        return dict(self._info)

    def classify(self, texts):
        if self._closed:
            raise ValueError("Model is closed")
        labels = self._info["labels"]
        multi = self._info["labels_column"]
        rows = _texts_list(texts)
        probs = [[] for _ in labels]
        label, label_set = [], []
        for text in rows:
            if text is None:
                for p in probs:
                    p.append(None)
                label.append(None)
                label_set.append(None)
                continue
            h = zlib.crc32(text.encode("utf-8"))
            logits = [((h >> (5 * i)) & 1023) / 256.0 for i in range(len(labels))]
            if multi:
                values = [1.0 / (1.0 + math.exp(-x + 2.0)) for x in logits]
            else:
                top = max(logits)
                e = [math.exp(x - top) for x in logits]
                values = [x / sum(e) for x in e]
            for p, v in zip(probs, values):
                p.append(v)
            best = max(range(len(labels)), key=lambda i: values[i])
            label.append(labels[best])
            label_set.append(",".join(l for l, v in zip(labels, values) if v >= 0.5))
        columns = {l.lower(): pa.array(p, type=pa.float32()) for l, p in zip(labels, probs)}
        columns["label"] = pa.array(label, type=pa.string())
        if multi:
            columns["labels"] = pa.array(label_set, type=pa.string())
        self.last_metrics = {"rows": len(rows), "threads": self._info["threads"]}
        return pa.table(columns)

    def close(self):
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
