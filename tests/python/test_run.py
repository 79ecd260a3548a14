"""infercost.run(): the CLI's job in process, same outputs and metrics as `infercost run`."""

import _thread
import faulthandler
import json
import subprocess
import threading
import warnings

import pytest

import infercost
from conftest import CLI, MAX_LENGTH, ROWS, SAFETY_S, Hold, model_dir, run_cli, write_jsonl

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
    names = sorted(p.name for p in cli_out.iterdir() if p.name != ".infercost-job")  # beside: the job's record
    assert names == sorted(p.name for p in py_out.iterdir() if p.name != ".infercost-job") and len(names) == 2
    assert (cli_out / ".infercost-job").exists() and (py_out / ".infercost-job").exists()
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
    # Priced by the engine for both: the same price, pricing and projection (the timings differ).
    ({"instance": "c5.12xlarge", "price_list": "seed-2021", "spot_discount": 0.5, "machines": 2,
      "corpus_rows": 1000000},
     ["--instance", "c5.12xlarge", "--price-list", "seed-2021", "--spot-discount", "0.5", "--machines", "2",
      "--corpus-rows", "1000000"]),
]

# The cost fields that do not depend on the run's timing.
PRICED = ["instance", "price_list", "price_source", "price_date", "instance_usd_per_hour", "spot_discount",
          "platform_usd_per_hour", "machines", "usd_per_hour", "corpus_rows"]


@pytest.mark.parametrize("flags,cli_flags", FLAGS, ids=[" ".join(c) for _, c in FLAGS])
def test_flags_do_what_the_cli_flags_do(tmp_path, tweets, flags, cli_flags):
    cli_out, py_out, cli_m, py_m = both(tmp_path, [tweets], model_dir("tiny-distilbert"), "pred.jsonl", flags,
                                        cli_flags)
    assert py_out.read_bytes() == cli_out.read_bytes()
    assert_same_metrics(cli_m, py_m)
    if "instance" in flags:
        assert {key: py_m["cost"][key] for key in PRICED} == {key: cli_m["cost"][key] for key in PRICED}
        assert py_m["cost"]["corpus_rows"] == 1000000 and py_m["cost"]["cost_to_solution_usd"] > 0


# The emulated GPU of this build's tests (tests/backend), which the CLI and run() load as they load the CUDA module.
EMULATED_CUDA_MODULE = CLI.parent / "tests" / "backend" / "infercost_cuda_emu.so"


def test_cuda_run_samples_gpus_as_the_cli_does(tmp_path, tweets, monkeypatch):
    # The engine samples the GPUs of a CUDA run, whichever front door started it: where NVML is absent (here)
    # both name the same reason in gpu_monitor; on a GPU machine both sample the GPUs.
    if not EMULATED_CUDA_MODULE.exists():
        pytest.skip(f"this build has no CUDA module: no emulated GPU at {EMULATED_CUDA_MODULE}")
    monkeypatch.setenv("INFERCOST_CUDA_MODULE", str(EMULATED_CUDA_MODULE))
    # One stream: the emulator runs one thing at a time.
    cli_out, py_out, cli_m, py_m = both(
        tmp_path, [tweets], model_dir("tiny-distilbert"), "pred.jsonl",
        {"device": "cuda", "streams_per_device": 1, "precision": "fp32"},
        ["--device", "cuda", "--streams-per-device", "1", "--precision", "fp32"])
    assert py_out.read_bytes() == cli_out.read_bytes()
    assert_same_metrics(cli_m, py_m)
    assert "gpus" in py_m or py_m["gpu_monitor"], py_m
    assert ("gpus" in py_m) == ("gpus" in cli_m)
    assert py_m.get("gpu_monitor") == cli_m.get("gpu_monitor")
    assert "not sampled" not in py_m.get("gpu_monitor", "")


def test_model_classify_samples_gpus_as_a_run_does(tmp_path, tweets, monkeypatch):
    # Model.classify's metrics come from the same engine: a CUDA call samples the GPUs (or says why not) as
    # run() does; a CPU call samples nothing.
    if not EMULATED_CUDA_MODULE.exists():
        pytest.skip(f"this build has no CUDA module: no emulated GPU at {EMULATED_CUDA_MODULE}")
    monkeypatch.setenv("INFERCOST_CUDA_MODULE", str(EMULATED_CUDA_MODULE))
    flags = {"device": "cuda", "streams_per_device": 1, "precision": "fp32", "max_length": MAX_LENGTH}
    run_m = infercost.run(tweets, model_dir("tiny-distilbert"), output=tmp_path / "o.jsonl", threads=1, **flags)
    with infercost.Model(model_dir("tiny-distilbert"), threads=1, **flags) as model:
        model.classify(["good", "bad"])
        m = model.last_metrics
    assert "gpus" in m or m["gpu_monitor"], m
    assert ("gpus" in m) == ("gpus" in run_m)
    assert m.get("gpu_monitor") == run_m.get("gpu_monitor")
    with infercost.Model(model_dir("tiny-distilbert"), threads=1, max_length=MAX_LENGTH) as model:
        model.classify(["good"])
        assert "gpus" not in model.last_metrics and "gpu_monitor" not in model.last_metrics


def test_model_classify_is_priced_as_a_run_is(tmp_path, tweets):
    # The pricing settings are Model()'s too: each classify() call's metrics carry the cost of its rows,
    # priced by the engine as run() prices a run (same instance, price, pricing and projection).
    priced = {"instance": "c5.12xlarge", "price_list": "seed-2021", "spot_discount": 0.5, "machines": 2,
              "corpus_rows": 1000000}
    run_m = infercost.run(tweets, model_dir("tiny-distilbert"), output=tmp_path / "o.jsonl", threads=1,
                          max_length=MAX_LENGTH, **priced)
    with infercost.Model(model_dir("tiny-distilbert"), threads=1, max_length=MAX_LENGTH, **priced) as model:
        model.classify(["good", "bad", None])
        m = model.last_metrics
    assert {key: m["cost"][key] for key in PRICED} == {key: run_m["cost"][key] for key in PRICED}
    assert m["cost"]["cost_to_solution_usd"] > 0
    with infercost.Model(model_dir("tiny-distilbert"), threads=1, max_length=MAX_LENGTH) as model:
        model.classify(["good"])
        assert "cost" not in model.last_metrics
    # Checked when the Model is made, in the keyword's words.
    with pytest.raises(infercost.InvalidArgumentError, match="instance"):
        infercost.Model(model_dir("tiny-distilbert"), instance="no-such-machine")
    with pytest.raises(infercost.InvalidArgumentError, match="price_list, price_files and corpus_rows price a run"):
        infercost.Model(model_dir("tiny-distilbert"), corpus_rows=10)


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


def test_a_synthetic_model_is_noted_as_the_cli_notes_it(tmp_path, tweets):
    run_cli("model", "synth", "--preset", "tiny", "--seed", "7", "--out", tmp_path / "m")
    cli = subprocess.run([str(CLI), "run", str(tweets), "--model", str(tmp_path / "m"), "--output",
                          str(tmp_path / "cli.jsonl")], capture_output=True, text=True, check=True).stderr
    with pytest.warns(UserWarning) as caught:
        infercost.run(tweets, tmp_path / "m", output=tmp_path / "py.jsonl")
    notes = [str(w.message) for w in caught]
    assert len(notes) == 1 and "is a synthetic model (random weights)" in notes[0]
    assert "infercost: note: " + notes[0] in cli
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a real model: no warning
        infercost.run(tweets, model_dir("tiny-distilbert"), output=tmp_path / "real.jsonl", max_length=MAX_LENGTH)


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


BIG_ROWS = 6000  # six windows of 1,000 rows (SLOW's window_rows)


@pytest.fixture
def big_input(tmp_path):
    """Rows for a run of several windows, each checkpointed."""
    path = tmp_path / "big.jsonl"
    run_cli("datagen", "--rows", str(BIG_ROWS), "--out", path, "--quiet")
    return path


SLOW = {"batching": "seed", "batch_size": 1, "threads": 1, "window_rows": 1000, "checkpoint_seconds": 0,
        "max_length": MAX_LENGTH}


def test_other_python_threads_run_while_it_runs(tmp_path, tweets):
    # run() on another thread, its engine held after its first batch until this thread lets it go:
    # this thread runs Python (it gets the line, looks at the job thread, computes) while run() is
    # under way. Were the GIL held by run(), this thread could never return from the wait, and the run
    # could never end: a hang, which faulthandler turns into a failure with every thread's stack.
    result = {}

    def job():
        try:
            result["metrics"] = infercost.run(tweets, model_dir("tiny-distilbert"), output=tmp_path / "p.jsonl",
                                              **SLOW)
        except BaseException as e:  # noqa: BLE001 (reported below)
            result["error"] = e

    faulthandler.dump_traceback_later(SAFETY_S, exit=True)
    try:
        with Hold(tmp_path, "batch-done:1") as held:
            worker = threading.Thread(target=job)
            worker.start()
            try:
                assert held.wait() == "batch-done"
                # The run is under way (held), and this thread runs Python meanwhile.
                assert worker.is_alive() and not result
                assert sum(i * i for i in range(10_000)) == 333_283_335_000
            finally:
                held.release()
                worker.join()
    finally:
        faulthandler.cancel_dump_traceback_later()
    assert "error" not in result, result
    assert result["metrics"]["rows"] == len(ROWS) - 1


def test_ctrl_c_stops_at_a_checkpoint_and_resume_finishes(tmp_path, big_input):
    # The writer is held once its first checkpoint is saved (1,000 rows durable, 5,000 to go); the
    # main thread, waiting in run(), takes an interrupt as Ctrl-C; the run's signal watcher is held in
    # turn once it has seen the signal; then both are let go: the run stops at its next durable step,
    # long before its end, and a resumed run does the rest.
    model = model_dir("tiny-distilbert")
    out = tmp_path / "p.jsonl"
    got = {}
    with Hold(tmp_path, "checkpoint-saved:1,signal-seen") as held:

        def interrupt():
            try:
                got["saved"] = held.wait()
                _thread.interrupt_main()  # as Ctrl-C: SIGINT's Python handler, in the main thread
                got["seen"] = held.wait()
            except BaseException as e:  # noqa: BLE001 (reported below)
                got["error"] = e
            finally:
                held.release()

        watcher = threading.Thread(target=interrupt)
        watcher.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                infercost.run(big_input, model, output=out, **SLOW)
        finally:
            watcher.join()
    assert "error" not in got, got
    assert (got["saved"], got["seen"]) == ("checkpoint-saved", "signal-seen")
    assert not out.exists()  # a half-done output is never at the target path
    resumed = infercost.run(big_input, model, output=out, resume=True, **SLOW)
    assert resumed["resume"]["resumed"] is True and 0 < resumed["resume"]["resumed_rows"] < BIG_ROWS
    assert resumed["rows"] + resumed["resume"]["resumed_rows"] == BIG_ROWS
    full = tmp_path / "full.jsonl"
    run_cli("run", big_input, "--model", model, "--output", full, "--quiet", "--batching", "seed",
            "--batch-size", "1", "--threads", "1", "--max-length", MAX_LENGTH)
    assert out.read_bytes() == full.read_bytes()
