"""Shared pieces of the GPU check's Python tools (tools/gpu/*.py, run by scripts/gpu-check.sh).

Nothing here imports torch: reading inputs and predictions, the model FLOP formula,
and an optional NVML sampler (nvidia-ml-py) work on any machine, so they are
tested here by `--self-test` on CPU-only machines too.
"""

import json
import math
import os
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# A DistilBERT classifier saved by transformers' save_pretrained, committed for tests.
TINY_MODEL = os.path.join(REPO, "tests", "data_files", "golden", "tiny-distilbert")


def model_shape(model_dir):
    """(layers, hidden, intermediate, labels) from a DistilBERT or BERT config.json."""
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        c = json.load(f)
    if c.get("model_type") == "distilbert":
        shape = (c["n_layers"], c["dim"], c["hidden_dim"])
    else:
        shape = (c["num_hidden_layers"], c["hidden_size"], c["intermediate_size"])
    id2label = c.get("id2label") or {"0": "NEGATIVE", "1": "POSITIVE"}
    labels = [id2label[str(i)] for i in range(len(id2label))]
    return shape + (labels,)


def encoder_row_flops(layers, hidden, intermediate, length):
    """FLOPs of one row of `length` tokens: layers x (2L(4h^2 + 2hf) + 4L^2 h), as
    pipeline::encoder_row_flops and cuda_encoder_bench count them."""
    h, f, n = float(hidden), float(intermediate), float(length)
    return layers * (2.0 * n * (4.0 * h * h + 2.0 * h * f) + 4.0 * n * n * h)


def read_texts(path, column="full_text", rows=0):
    """The text column of a JSON lines or Parquet file, in order (first `rows` if > 0).
    Nulls become "" and their indices are returned too: (texts, null_indices)."""
    texts, nulls = [], []
    lower = path.lower()
    if lower.endswith(".parquet"):
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(path)
        for batch in pf.iter_batches(columns=[column], batch_size=65536):
            values = batch.column(0).to_pylist()
            for v in values:
                if rows and len(texts) >= rows:
                    break
                if not isinstance(v, str):
                    nulls.append(len(texts))
                    v = ""
                texts.append(v)
            if rows and len(texts) >= rows:
                break
    elif lower.endswith(".jsonl") or lower.endswith(".ndjson"):
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if rows and len(texts) >= rows:
                    break
                if not line.strip():
                    continue
                try:
                    v = json.loads(line).get(column)
                except (ValueError, AttributeError) as e:
                    raise ValueError("%s: line %d: %s" % (path, n, e))
                if not isinstance(v, str):
                    nulls.append(len(texts))
                    v = ""
                texts.append(v)
    else:
        raise ValueError("%s: not a .jsonl or .parquet file" % path)
    return texts, nulls


def write_predictions(path, probs, labels, nulls=()):
    """JSON lines with one lowercased probability key per label plus "label", as
    `infercost run -o x.jsonl --no-text` writes them; null rows get nulls."""
    null_set = set(nulls)
    keys = [name.lower() for name in labels]
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for i, row in enumerate(probs):
            if i in null_set:
                rec = {k: None for k in keys}
                rec["label"] = None
            else:
                values = [float(x) for x in row]
                rec = dict(zip(keys, values))
                rec["label"] = labels[max(range(len(values)), key=values.__getitem__)]
            f.write(json.dumps(rec) + "\n")
    os.replace(tmp, path)


def read_predictions(path):
    """(columns, rows) of a predictions file (JSON lines or Parquet): columns are the
    probability columns (numeric, not "id"), rows a list of lists of float, None for a
    null row. Raises ValueError naming the file and line for anything malformed."""
    records = []
    lower = path.lower()
    if lower.endswith(".parquet"):
        import pyarrow.parquet as pq

        records = pq.read_table(path).to_pylist()
    else:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except ValueError as e:
                    raise ValueError("%s: line %d: %s" % (path, n, e))
                if not isinstance(rec, dict):
                    raise ValueError("%s: line %d: not a JSON object" % (path, n))
                records.append(rec)
    columns = None
    for rec in records:
        numeric = [k for k, v in rec.items() if k not in ("id", "text", "label", "logits")
                   and isinstance(v, (int, float)) and not isinstance(v, bool)]
        if numeric:
            columns = numeric
            break
    if columns is None:
        if records:
            raise ValueError("%s: no probability columns (numeric fields other than id)" % path)
        columns = []
    rows = []
    for n, rec in enumerate(records, 1):
        values = [rec.get(k) for k in columns]
        if all(v is None for v in values):
            rows.append(None)
            continue
        if any(not isinstance(v, (int, float)) or isinstance(v, bool) for v in values):
            raise ValueError("%s: row %d: missing or non-numeric %s" % (path, n, columns))
        rows.append([float(v) for v in values])
    return columns, rows


def forward_inputs(model, enc):
    """The encodings the model's forward takes (a BertTokenizer on a DistilBERT directory
    also returns token_type_ids, which DistilBERT's forward refuses)."""
    import inspect

    accepted = inspect.signature(model.forward).parameters
    return {k: v for k, v in enc.items() if k in accepted}


def load_tokenizer(model_dir):
    """transformers' AutoTokenizer of a local model directory (`infercost model synth` writes
    vocab.txt and tokenizer_config.json; HF directories may hold tokenizer.json)."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_dir, local_files_only=True)


def load_classifier(model_dir, **kwargs):
    """AutoModelForSequenceClassification of a local directory in fp32, in eval mode.
    transformers 5 loads in the dtype the config names ("auto") unless told: fp32 is
    asked for explicitly (`dtype`; before transformers 4.56 `torch_dtype`)."""
    import torch
    from transformers import AutoModelForSequenceClassification

    try:
        model = AutoModelForSequenceClassification.from_pretrained(
            model_dir, dtype=torch.float32, local_files_only=True, **kwargs)
    except TypeError:
        model = AutoModelForSequenceClassification.from_pretrained(
            model_dir, torch_dtype=torch.float32, local_files_only=True, **kwargs)
    return model.eval()


def tiny_tokenizer():
    """The committed tiny model's tokenizer, or None (saying so) where transformers is not
    importable: self-tests then skip what needs it."""
    import importlib.util

    if importlib.util.find_spec("transformers") is None:
        print("skip: transformers not importable, tokenizer batching not checked")
        return None
    return load_tokenizer(TINY_MODEL)


class Checks:
    """A self-test's checks: check(cond, what) prints what failed and counts it."""

    def __init__(self):
        self.failed = []

    def __call__(self, cond, what):
        if not cond:
            self.failed.append(what)
            print("FAIL:", what)
        return bool(cond)

    def count(self):
        return len(self.failed)


def self_test_exit(name, *tests):
    """Runs self-test functions (each returns its number of failures), prints the verdict
    and returns the exit status."""
    n = sum(test() for test in tests)
    print("%s self-test:" % name, "ok" if n == 0 else "%d failed" % n)
    return 1 if n else 0


def ieee_fp32(torch):
    """fp32 matmuls and convolutions in IEEE fp32, not TF32 (torch's default for matmuls,
    set explicitly; newer torch has fp32_precision, older only allow_tf32)."""
    try:
        torch.backends.cuda.matmul.fp32_precision = "ieee"
        torch.backends.cudnn.conv.fp32_precision = "ieee"
    except (AttributeError, RuntimeError, TypeError):
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False


class NvmlSampler:
    """Samples GPU utilization and memory used through NVML (nvidia-ml-py) on a thread.
    Unavailable (no pynvml, no driver) leaves `error` set and the figures empty."""

    def __init__(self, interval_s=0.2):
        self.interval_s = interval_s
        self.error = ""
        self.samples = []  # [(util per gpu 0..1, used bytes per gpu)]
        self.totals = []
        self._stop = threading.Event()
        self._thread = None
        try:
            import pynvml

            pynvml.nvmlInit()
            self._nvml = pynvml
            count = pynvml.nvmlDeviceGetCount()
            self._handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
            self.totals = [int(pynvml.nvmlDeviceGetMemoryInfo(h).total) for h in self._handles]
        except Exception as e:  # ImportError, NVMLError: sampling is optional
            self.error = "NVML not available: %s" % e
            self._handles = []

    def _run(self):
        while not self._stop.is_set():
            try:
                util = [self._nvml.nvmlDeviceGetUtilizationRates(h).gpu / 100.0 for h in self._handles]
                used = [int(self._nvml.nvmlDeviceGetMemoryInfo(h).used) for h in self._handles]
                self.samples.append((util, used))
            except Exception as e:
                self.error = "NVML sampling failed: %s" % e
                return
            self._stop.wait(self.interval_s)

    def start(self):
        if self._handles:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join()
        return self.summary()

    def summary(self):
        """Per GPU: memory_total_bytes, memory_used_peak/mean_bytes, utilization_mean/peak."""
        out = []
        for i, total in enumerate(self.totals):
            util = [s[0][i] for s in self.samples]
            used = [s[1][i] for s in self.samples]
            out.append({"index": i, "memory_total_bytes": total,
                        "memory_used_peak_bytes": max(used) if used else None,
                        "memory_used_mean_bytes": sum(used) / len(used) if used else None,
                        "utilization_mean": sum(util) / len(util) if util else None,
                        "utilization_peak": max(util) if util else None,
                        "samples": len(util)})
        return out


class Stopwatch:
    """Named stage seconds: with sw.time("infer"): ..."""

    def __init__(self):
        self.seconds = {}

    def time(self, name):
        sw = self

        class _Scope:
            def __enter__(self):
                self.t0 = time.perf_counter()

            def __exit__(self, *exc):
                sw.seconds[name] = sw.seconds.get(name, 0.0) + time.perf_counter() - self.t0
                return False

        return _Scope()


def self_test():
    """Checks of the pieces above; returns the number of failed checks."""
    import tempfile

    check = Checks()

    # FLOPs: one DistilBERT-base row of 128 tokens, computed by hand.
    flops = encoder_row_flops(6, 768, 3072, 128)
    check(flops == 6 * (2 * 128 * (4 * 768 ** 2 + 2 * 768 * 3072) + 4 * 128 ** 2 * 768), "encoder_row_flops")
    check(math.isclose(flops, 1.1179e10, rel_tol=1e-3), "encoder_row_flops magnitude (%g)" % flops)

    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "in.jsonl")
        with open(src, "w", encoding="utf-8") as f:
            f.write('{"id": 0, "full_text": "a"}\n{"id": 1, "full_text": null}\n\n{"id": 2, "full_text": "c"}\n')
        texts, nulls = read_texts(src)
        check(texts == ["a", "", "c"] and nulls == [1], "read_texts jsonl: %r %r" % (texts, nulls))
        check(read_texts(src, rows=2)[0] == ["a", ""], "read_texts rows limit")
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.table({"full_text": ["x", None, "z", "w"]}), os.path.join(d, "in.parquet"))
            texts, nulls = read_texts(os.path.join(d, "in.parquet"), rows=3)
            check(texts == ["x", "", "z"] and nulls == [1], "read_texts parquet: %r %r" % (texts, nulls))
        except ImportError:
            print("skip: pyarrow not importable, Parquet reading not checked")

        out = os.path.join(d, "p.jsonl")
        write_predictions(out, [[0.25, 0.75], [0.5, 0.5], [0.9, 0.1]], ["NEGATIVE", "POSITIVE"], nulls=[1])
        cols, rows = read_predictions(out)
        check(cols == ["negative", "positive"], "read_predictions columns %r" % cols)
        check(rows == [[0.25, 0.75], None, [0.9, 0.1]], "read_predictions rows %r" % rows)
        with open(out, encoding="utf-8") as f:
            check(json.loads(f.readline())["label"] == "POSITIVE", "write_predictions label")
        bad = os.path.join(d, "bad.jsonl")
        with open(bad, "w", encoding="utf-8") as f:
            f.write('{"negative": 0.5, "positive": 0.5}\n{"negative": "x", "positive": 0.5}\n')
        try:
            read_predictions(bad)
            check(False, "read_predictions accepts a non-numeric probability")
        except ValueError as e:
            check("row 2" in str(e), "read_predictions error names the row: %s" % e)

    sampler = NvmlSampler()
    check(isinstance(sampler.summary(), list), "NvmlSampler summary")
    sw = Stopwatch()
    with sw.time("a"):
        pass
    with sw.time("a"):
        pass
    check(set(sw.seconds) == {"a"} and sw.seconds["a"] >= 0, "Stopwatch")

    class Fake:
        def forward(self, input_ids=None, attention_mask=None, labels=None):
            pass

    got = forward_inputs(Fake(), {"input_ids": 1, "attention_mask": 2, "token_type_ids": 3})
    check(sorted(got) == ["attention_mask", "input_ids"], "forward_inputs drops token_type_ids: %r" % got)
    check(model_shape(TINY_MODEL)[3] == ["NEGATIVE", "POSITIVE"], "labels of the tiny model")
    return check.count()


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test_exit("gpu_common", self_test))
    sys.exit("usage: gpu_common.py --self-test")
