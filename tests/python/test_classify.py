"""infercost.Model: classify() in memory against `infercost run` on the same rows, every input kind,
the Arrow export, nulls, errors, threads and metrics."""

import _thread
import gc
import json
import os
import resource
import signal
import threading

import numpy as np
import pyarrow as pa
import pytest

import infercost
from conftest import MAX_LENGTH, ROWS, SAFETY_S, TINY_MODELS, Hold, model_dir, run_cli, write_jsonl

TEXTS = [row["full_text"] for row in ROWS]


def cli_rows(tmp_path, model, rows=ROWS, *flags):
    """`infercost run` on `rows` (JSON lines out): one dict per row."""
    src = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "cli.jsonl"
    run_cli("run", src, "--model", model, "--output", out, "--quiet", "--threads", "1", "--no-text",
            "--max-length", MAX_LENGTH, *flags)
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("name", TINY_MODELS)
def test_classify_gives_the_clis_outputs(tmp_path, name):
    model = model_dir(name)
    want = cli_rows(tmp_path, model)
    with infercost.Model(model, threads=1, max_length=MAX_LENGTH) as m:
        table = pa.table(m.classify(TEXTS))
    assert table.column_names == list(want[0].keys())
    got = table.to_pylist()
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        for key, value in w.items():
            if isinstance(value, float):
                assert g[key] == pytest.approx(value, abs=1e-6), (i, key)
            else:
                assert g[key] == value, (i, key)


def test_the_columns_and_types_are_the_clis():
    with infercost.Model(model_dir("tiny-roberta-multilabel"), threads=1, max_length=MAX_LENGTH) as m:
        result = m.classify(["a", None, "b"])
    table = pa.table(result)
    labels = [n.lower() for n in infercost.model_info(model_dir("tiny-roberta-multilabel"))["labels"]]
    assert table.column_names == labels + ["label", "labels"]
    assert all(table.schema.field(n).type == pa.float32() for n in labels)
    assert table.schema.field("label").type == pa.string()
    assert table.schema.field("labels").type == pa.string()
    assert table.column("label").null_count == 1 and table.column("label")[1].as_py() is None
    assert [table.column(n)[1].as_py() for n in labels] == [None] * len(labels)
    assert result.column_names == table.column_names
    assert result.label_names == labels
    assert infercost.model_info(model_dir("tiny-roberta-multilabel"))["output_columns"] == table.column_names


def test_spark_schema_names_are_the_engines_for_non_ascii_labels(tmp_path):
    # The engine lowercases ASCII letters only; infercost.spark's schema must name the columns the
    # Model yields (Python's str.lower() would give "négatif", a column the result does not have).
    import shutil

    import infercost.spark

    src = model_dir("tiny-distilbert")
    model = tmp_path / "accented"
    shutil.copytree(src, model)
    config = json.loads((model / "config.json").read_text(encoding="utf-8"))
    config["id2label"] = {"0": "NÉGATIF", "1": "Positive"}
    config["label2id"] = {"NÉGATIF": 0, "Positive": 1}
    (model / "config.json").write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
    with infercost.Model(model, threads=1, max_length=MAX_LENGTH) as m:
        names = pa.table(m.classify(TEXTS[:3])).column_names
    assert names == ["nÉgatif", "positive", "label"]
    assert [name for name, _ in infercost.spark.output_columns(model)] == names
    assert [kind for _, kind in infercost.spark.output_columns(model)] == ["float", "float", "string"]


INPUT_KINDS = {
    "list": lambda t: list(t),
    "tuple": lambda t: tuple(t),
    "numpy": lambda t: np.array(t, dtype=object),
    "pandas": lambda t: __import__("pandas").Series(t, dtype=object),
    "arrow string": lambda t: pa.array(t, type=pa.string()),
    "arrow large_string": lambda t: pa.array(t, type=pa.large_string()),
    "arrow chunked": lambda t: pa.chunked_array([pa.array(t[:5]), pa.array(t[5:20]), pa.array(t[20:])]),
    "arrow sliced": lambda t: pa.array(["x"] * 7 + list(t) + ["y"] * 3).slice(7, len(t)),
}


@pytest.mark.parametrize("kind", sorted(INPUT_KINDS))
def test_every_input_kind_gives_the_same_result(kind):
    with infercost.Model(model_dir("tiny-distilbert"), threads=1, max_length=MAX_LENGTH) as m:
        want = pa.table(m.classify(TEXTS))
        got = pa.table(m.classify(INPUT_KINDS[kind](TEXTS)))
    assert got.equals(want)


def test_numpy_views_and_pandas():
    with infercost.Model(model_dir("tiny-distilbert"), threads=1, max_length=MAX_LENGTH) as m:
        result = m.classify(["good", None, "", "bad"])
    assert len(result) == 4
    probs = result.probabilities
    assert probs.shape == (4, 2) and probs.dtype == np.float32
    assert list(result.is_null) == [0, 1, 0, 0]
    assert result.label_index[1] == -1
    assert np.allclose(probs[[0, 2, 3]].sum(axis=1), 1.0, atol=1e-6)
    frame = result.to_pandas()
    assert list(frame.columns) == result.column_names
    assert frame["label"].isna().tolist() == [False, True, False, False]
    table = result.to_arrow()
    assert table.column(0).to_pylist()[0] == pytest.approx(float(probs[0, 0]))
    del result
    gc.collect()
    assert float(probs[0].sum()) == pytest.approx(1.0, abs=1e-6)  # the view keeps its data alive


def test_scores_are_the_head_functions_outputs():
    # scores: probabilities under softmax (probabilities is the same array), the logits under "none".
    with infercost.Model(model_dir("tiny-distilbert"), threads=1, max_length=MAX_LENGTH) as m:
        soft = m.classify(["good", "bad"])
    with infercost.Model(model_dir("tiny-distilbert"), threads=1, max_length=MAX_LENGTH, function="none") as m:
        raw = m.classify(["good", "bad"])
    assert np.array_equal(soft.scores, soft.probabilities)
    assert np.allclose(soft.scores.sum(axis=1), 1.0, atol=1e-6)
    logits = raw.scores.astype(np.float64)
    softmax = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    assert not np.allclose(logits.sum(axis=1), 1.0)
    assert np.allclose(softmax, soft.scores, atol=1e-5)


def test_the_arrow_export_outlives_the_result_and_the_model():
    m = infercost.Model(model_dir("tiny-distilbert"), threads=1, max_length=MAX_LENGTH)
    result = m.classify(["good", "bad"])
    capsule = result.__arrow_c_stream__()
    want = pa.table(result)
    del result
    m.close()
    gc.collect()
    reader = pa.RecordBatchReader._import_from_c_capsule(capsule)
    assert pa.Table.from_batches(list(reader)).equals(pa.Table.from_batches(want.to_batches()))


def test_record_batch_through_arrow_c_array():
    with infercost.Model(model_dir("tiny-distilbert"), threads=1, max_length=MAX_LENGTH) as m:
        result = m.classify(["a", "b", None])
    batch = pa.record_batch(result)
    assert batch.num_rows == 3 and batch.column_names == result.column_names
    assert pa.Table.from_batches([batch]).equals(pa.table(result))


def test_empty_and_unicode_and_long_texts():
    with infercost.Model(model_dir("tiny-xlm-roberta"), threads=1, max_length=MAX_LENGTH) as m:
        empty = m.classify([])
        assert len(empty) == 0 and pa.table(empty).num_rows == 0
        texts = ["", "🙂" * 50, "x" * 100_000, "Ünïcödé 中文 العربية", None, "tweet " * 300]
        got = pa.table(m.classify(texts)).to_pylist()
        assert got[4]["label"] is None and all(row["label"] is not None for i, row in enumerate(got) if i != 4)
        assert m.last_metrics["rows_at_max_length"] >= 1  # the 300 words were truncated


def test_errors_are_python_exceptions():
    with pytest.raises(FileNotFoundError):
        infercost.Model("/nonexistent/model")
    with pytest.raises(ValueError, match="max-length|max_length"):
        infercost.Model(model_dir("tiny-distilbert"), max_length=100_000)
    with pytest.raises(ValueError):
        infercost.Model(model_dir("tiny-distilbert"), max_length=MAX_LENGTH, precision="fp64")
    with pytest.raises(TypeError):
        infercost.Model(model_dir("tiny-distilbert"), threads="four")
    m = infercost.Model(model_dir("tiny-distilbert"), threads=1, max_length=MAX_LENGTH)
    with pytest.raises(TypeError):
        m.classify("a bare str")
    with pytest.raises(TypeError):
        m.classify(pa.array([1, 2, 3]))
    m.close()
    assert m.closed
    with pytest.raises(ValueError, match="closed"):
        m.classify(["a"])


def test_a_row_the_tokenizer_refuses(tmp_path):
    # Invalid UTF-8 reaches the tokenizer through Arrow (binary data viewed as a string array).
    bad = pa.Array.from_buffers(pa.string(), 2, [None, pa.py_buffer(np.array([0, 1, 3], dtype=np.int32)),
                                                  pa.py_buffer(b"a\xff\xfe")])
    with infercost.Model(model_dir("tiny-distilbert"), threads=1, max_length=MAX_LENGTH) as m:
        with pytest.raises(ValueError, match="row 1"):
            m.classify(bad)
    with infercost.Model(model_dir("tiny-distilbert"), threads=1, max_length=MAX_LENGTH, on_error="skip") as m:
        table = pa.table(m.classify(bad))
        assert table.column("label").to_pylist()[1] is None
        assert table.column("label").to_pylist()[0] is not None
        assert m.last_metrics["rows_skipped"] == 1


def test_several_threads_at_once():
    with infercost.Model(model_dir("tiny-distilbert"), threads=1, max_length=MAX_LENGTH) as m:
        want = pa.table(m.classify(TEXTS))
        results, errors = [], []

        def work(k):
            try:
                texts = TEXTS[k:] + TEXTS[:k]
                results.append((k, pa.table(m.classify(texts))))
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append(e)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors
    for k, table in results:
        rotated = pa.concat_tables([want.slice(k), want.slice(0, k)])
        assert table.equals(rotated), k


def test_ctrl_c_stops_a_call_under_way(tmp_path):
    # 200,000 rows in batches of one row on one engine thread: minutes of work. The engine is held
    # after its first batch while the main thread, waiting in the call, takes an interrupt as Ctrl-C
    # (SIGINT's Python handler); then it is let go, and the call must stop: the test knows it did
    # because the engine never reaches a second hold, armed meanwhile at the 1,000th batch after
    # (if it did, the call had not stopped: the test lets it go on, and fails). No step depends on
    # time.
    texts = pa.chunked_array([pa.array(TEXTS[:20])] * 10_000)
    taken = threading.Event()

    def on_sigint(signum, frame):
        taken.set()
        raise KeyboardInterrupt

    got = {}
    returned_r, returned_w = os.pipe()
    with infercost.Model(model_dir("tiny-distilbert"), threads=1, max_length=MAX_LENGTH, batching="seed",
                         batch_size=1) as m:
        with Hold(tmp_path, "batch-done:1", "first") as first, \
                Hold(tmp_path, "batch-done:1000", "later", armed=False) as later:

            def interrupt():
                try:
                    got["first"] = first.wait()
                    later.arm()  # the call's one engine thread is held: nothing reads the variables now
                    _thread.interrupt_main()  # as Ctrl-C: SIGINT's Python handler, in the main thread
                    got["taken"] = taken.wait(SAFETY_S)
                except BaseException as e:  # noqa: BLE001 (reported below)
                    got["error"] = e
                finally:
                    first.release()
                try:
                    got["later"] = later.wait(unless=returned_r)  # None: the call returned first
                except BaseException as e:  # noqa: BLE001
                    got.setdefault("error", e)
                finally:
                    later.release()

            previous = signal.signal(signal.SIGINT, on_sigint)
            watcher = threading.Thread(target=interrupt)
            watcher.start()
            try:
                with pytest.raises(KeyboardInterrupt):
                    m.classify(texts)
            finally:
                os.write(returned_w, b"returned")
                watcher.join()
                signal.signal(signal.SIGINT, previous)
                os.close(returned_r)
                os.close(returned_w)
        assert "error" not in got, got
        assert got["first"] == "batch-done" and got["taken"]
        assert got["later"] is None, "the call went on to its 1,000th batch after Ctrl-C"
        # The Model is still usable, and its next call is whole.
        assert pa.table(m.classify(TEXTS)).num_rows == len(TEXTS)


def test_metrics_and_info():
    with infercost.Model(model_dir("tiny-bert"), threads=1, max_length=MAX_LENGTH) as m:
        assert m.last_metrics is None
        m.classify(TEXTS)
        metrics = m.last_metrics
        info = m.info
    assert metrics["rows"] == sum(t is not None for t in TEXTS)
    assert metrics["rows_null"] == 1
    assert metrics["tokens"] > 0 and metrics["batches"] >= 1
    assert set(metrics["stages"]) >= {"tokenize", "batch", "infer"}
    assert metrics["threads"] == 1 and metrics["max_length"] == MAX_LENGTH
    assert info["labels"] == infercost.model_info(model_dir("tiny-bert"))["labels"]
    assert info["threads"] == 1 and info["device"] == "cpu" and info["precision"] == metrics["precision"]


def test_a_million_rows_in_bounded_memory():
    # 1M rows of Arrow data (one 1,000-row chunk repeated: the input itself costs nothing, so the peak
    # RSS before the call is not the input's and the call's own memory shows). Measured on 2 vCPUs:
    # 64 MiB (views 16 B, outputs ~28 B per row, one chunk of token ids); the ids of the whole call at
    # once (~56 MiB more) would pass 100. (Its first version compared with the peak after building a
    # 1M-str list, which the call never reached: it grew 0.7 MiB and could not fail.)
    small = pa.array([f"tweet {i}" for i in range(1000)])
    texts = pa.chunked_array([small] * 1000)
    with infercost.Model(model_dir("tiny-distilbert"), threads=2, max_length=16) as m:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        result = m.classify(texts)
        grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert len(result) == 1_000_000
    assert result.label_index.min() >= 0
    assert grown_mib < 100, grown_mib
