"""infercost.run(): the CLI's job in process, same outputs and metrics as `infercost run`."""

import _thread
import json
import threading
import time

import pytest

import infercost
from conftest import MAX_LENGTH, ROWS, model_dir, run_cli, write_jsonl

# The figures of a run that depend on its input and options only (not on time or memory).
COUNTED = ["rows", "rows_null", "rows_skipped", "tokens", "padded_tokens", "computed_tokens", "rows_at_max_length",
           "batches", "input_files", "output_files", "batch_size", "max_batch_tokens", "window_rows", "max_length",
           "batching", "precision", "device", "devices", "workers", "head", "model", "length_histogram"]


def both(tmp_path, inputs, model, out_name, flags, cli_flags):
    """Runs the CLI and run() on the same job; returns (cli output, py output, cli metrics, py metrics)."""
    cli_out = tmp_path / "cli" / out_name
    py_out = tmp_path / "py" / out_name
    cli_out.parent.mkdir()
    py_out.parent.mkdir()
    if out_name.endswith("/"):
        cli_out.mkdir()
        py_out.mkdir()
    cli_metrics = tmp_path / "cli-metrics.json"
    if "max_length" not in flags:
        flags, cli_flags = {"max_length": MAX_LENGTH, **flags}, ["--max-length", str(MAX_LENGTH), *cli_flags]
    run_cli("run", *inputs, "--model", model, "--output", cli_out, "--metrics", cli_metrics, "--quiet",
            "--threads", "1", *cli_flags)
    metrics = infercost.run(inputs, model, output=py_out, threads=1, **flags)
    return cli_out, py_out, json.loads(cli_metrics.read_text()), metrics


def assert_same_metrics(cli, py):
    assert sorted(py) == sorted(cli)
    for key in COUNTED:
        assert py[key] == cli[key], key


@pytest.mark.parametrize("model", ["tiny-distilbert", "tiny-bert", "tiny-roberta", "tiny-xlm-roberta",
                                   "tiny-roberta-multilabel"])
def test_same_jsonl_output_and_metrics_as_the_cli(tmp_path, tweets, model):
    cli_out, py_out, cli_m, py_m = both(tmp_path, [tweets], model_dir(model), "pred.jsonl", {}, [])
    assert py_out.read_bytes() == cli_out.read_bytes()
    assert py_m["rows"] == len(ROWS) - 1 and py_m["rows_null"] == 1
    assert_same_metrics(cli_m, py_m)


@pytest.mark.parametrize("out_name", ["pred.csv", "pred.parquet"])
def test_same_csv_and_parquet_output(tmp_path, tweets, out_name):
    cli_out, py_out, cli_m, py_m = both(tmp_path, [tweets], model_dir("tiny-distilbert"), out_name, {}, [])
    assert py_out.read_bytes() == cli_out.read_bytes()
    assert_same_metrics(cli_m, py_m)


def test_folder_output_with_two_inputs(tmp_path, tweets):
    second = write_jsonl(tmp_path / "more.jsonl", ROWS[:5])
    cli_out, py_out, cli_m, py_m = both(tmp_path, [tweets, second], model_dir("tiny-roberta"), "parts/",
                                        {"output_format": "parquet", "compression": "zstd"},
                                        ["--output-format", "parquet", "--compression", "zstd"])
    names = sorted(p.name for p in cli_out.iterdir())
    assert names == sorted(p.name for p in py_out.iterdir()) and len(names) == 2
    for name in names:
        assert (py_out / name).read_bytes() == (cli_out / name).read_bytes(), name
    assert py_m["output_files"] == 2
    assert_same_metrics(cli_m, py_m)


# Each flag by its Python name, and the same flag to the CLI.
FLAGS = [
    ({"keep_text": False}, ["--no-text"]),
    ({"batching": "seed", "batch_size": 7}, ["--batching", "seed", "--batch-size", "7"]),
    ({"batch_size": "auto", "max_batch_tokens": "auto"}, ["--batch-size", "auto", "--max-batch-tokens", "auto"]),
    ({"max_batch_tokens": 64, "window_rows": 5}, ["--max-batch-tokens", "64", "--window-rows", "5"]),
    ({"max_length": 8}, ["--max-length", "8"]),
    ({"function": "sigmoid"}, ["--function", "sigmoid"]),
    ({"function": "none", "precision": "fp32"}, ["--function", "none", "--precision", "fp32"]),
    ({"column": "text", "tokenizer_threads": 2}, ["--column", "text", "--tokenizer-threads", "2"]),
    ({"input_format": "jsonl", "streams_per_device": 1}, ["--input-format", "jsonl", "--streams-per-device", "1"]),
]


@pytest.mark.parametrize("flags,cli_flags", FLAGS, ids=[" ".join(c) for _, c in FLAGS])
def test_flags_do_what_the_cli_flags_do(tmp_path, tweets, flags, cli_flags):
    cli_out, py_out, cli_m, py_m = both(tmp_path, [tweets], model_dir("tiny-distilbert"), "pred.jsonl", flags,
                                        cli_flags)
    assert py_out.read_bytes() == cli_out.read_bytes()
    assert_same_metrics(cli_m, py_m)


def test_flags_change_the_output(tmp_path, tweets):
    # The comparisons above would pass if run() ignored its flags and the CLI did too: check one does something.
    plain = infercost.run(tweets, model_dir("tiny-distilbert"), output=tmp_path / "a.jsonl", max_length=MAX_LENGTH)
    seed = infercost.run(tweets, model_dir("tiny-distilbert"), output=tmp_path / "b.jsonl", batching="seed",
                         batch_size=7, keep_text=False, max_length=MAX_LENGTH)
    assert (plain["batching"], seed["batching"]) == ("tokens", "seed")
    assert seed["batch_size"] == 7
    assert '"text"' in (tmp_path / "a.jsonl").read_text() and '"text"' not in (tmp_path / "b.jsonl").read_text()


def test_multilabel_threshold(tmp_path, tweets):
    cli_out, py_out, cli_m, py_m = both(tmp_path, [tweets], model_dir("tiny-roberta-multilabel"), "pred.csv",
                                        {"threshold": 0.3}, ["--threshold", "0.3"])
    assert py_out.read_bytes() == cli_out.read_bytes()
    assert py_m["head"] == {"function": "sigmoid", "labels_column": True, "threshold": 0.3}
    assert_same_metrics(cli_m, py_m)


def test_skip_bad_rows(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"full_text": "fine"}\n{"full_text": 3}\nnot json\n{"full_text": "also fine"}\n')
    cli_out, py_out, cli_m, py_m = both(tmp_path, [bad], model_dir("tiny-distilbert"), "pred.jsonl",
                                        {"on_error": "skip"}, ["--on-error", "skip"])
    assert py_out.read_bytes() == cli_out.read_bytes()
    assert py_m["rows_skipped"] == 2 and py_m["first_skip_reason"] == cli_m["first_skip_reason"]
    assert_same_metrics(cli_m, py_m)


def test_stdout_output(tmp_path, tweets, capfd):
    cli = run_cli("run", tweets, "--model", model_dir("tiny-distilbert"), "--quiet", "--max-length", MAX_LENGTH)
    capfd.readouterr()
    metrics = infercost.run([tweets], model_dir("tiny-distilbert"), max_length=MAX_LENGTH)  # output "-"
    out, _ = capfd.readouterr()
    assert out == cli.stdout and out.count("\n") == len(ROWS)
    assert "resume" not in metrics and metrics["rows"] == len(ROWS) - 1


def test_metrics_file_is_the_returned_dict(tmp_path, tweets):
    path = tmp_path / "m.json"
    metrics = infercost.run(tweets, model_dir("tiny-bert"), output=tmp_path / "p.jsonl", metrics=path,
                            max_length=MAX_LENGTH)
    assert json.loads(path.read_text()) == metrics


def test_resume_of_a_finished_job(tmp_path, tweets):
    out = tmp_path / "p.parquet"
    infercost.run(tweets, model_dir("tiny-distilbert"), output=out, max_length=MAX_LENGTH)
    again = infercost.run(tweets, model_dir("tiny-distilbert"), output=out, resume=True, max_length=MAX_LENGTH)
    assert again["resume"]["already_complete"] is True and again["rows"] == 0


BIG_ROWS = 6000  # about 3 s at one row per batch on one thread


@pytest.fixture
def big_input(tmp_path):
    """Enough rows that a run batched one row at a time on one thread lasts a few seconds."""
    path = tmp_path / "big.jsonl"
    run_cli("datagen", "--rows", str(BIG_ROWS), "--out", path, "--quiet")
    return path


SLOW = {"batching": "seed", "batch_size": 1, "threads": 1, "window_rows": 1000, "checkpoint_seconds": 0,
        "max_length": MAX_LENGTH}


def test_other_python_threads_run_while_it_runs(tmp_path, big_input):
    done = threading.Event()
    result = {}

    def job():
        start = time.monotonic()
        try:
            result["metrics"] = infercost.run(big_input, model_dir("tiny-distilbert"),
                                              output=tmp_path / "p.jsonl", **SLOW)
        finally:
            result["seconds"] = time.monotonic() - start
            done.set()

    worker = threading.Thread(target=job)
    worker.start()
    ticks = 0
    while not done.wait(0.001):
        ticks += 1  # needs the GIL: stays 0 if run() holds it
    worker.join()
    assert result["metrics"]["rows"] == BIG_ROWS
    assert result["seconds"] > 0.5, "the run was too short to tell"
    assert ticks > 100


def interrupt_after_first_checkpoint(out):
    """As Ctrl-C (SIGINT's Python handler, in the main thread) once the run has saved a checkpoint."""
    checkpoint = out.parent / (out.name + ".infercost-checkpoint")

    def watch():
        deadline = time.monotonic() + 60
        while not checkpoint.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        _thread.interrupt_main()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    return watcher


def test_ctrl_c_stops_at_a_checkpoint_and_resume_finishes(tmp_path, big_input):
    model = model_dir("tiny-distilbert")
    out = tmp_path / "p.jsonl"
    start = time.monotonic()
    watcher = interrupt_after_first_checkpoint(out)
    with pytest.raises(KeyboardInterrupt):
        infercost.run(big_input, model, output=out, **SLOW)
    watcher.join()
    assert time.monotonic() - start < 30
    assert not out.exists()  # a half-done output is never at the target path
    resumed = infercost.run(big_input, model, output=out, resume=True, **SLOW)
    assert resumed["resume"]["resumed"] is True and 0 < resumed["resume"]["resumed_rows"] < BIG_ROWS
    assert resumed["rows"] + resumed["resume"]["resumed_rows"] == BIG_ROWS
    full = tmp_path / "full.jsonl"
    run_cli("run", big_input, "--model", model, "--output", full, "--quiet", "--batching", "seed",
            "--batch-size", "1", "--threads", "1", "--max-length", MAX_LENGTH)
    assert out.read_bytes() == full.read_bytes()
