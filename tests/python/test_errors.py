"""Engine errors become Python exceptions with the engine's message, never a crash."""

import re
import shutil

import pytest

import infercost
from conftest import MAX_LENGTH, model_dir, run_cli, write_jsonl

# The engine's code (status_code_name, as `infercost` prints it) -> the built-in class of the exception run()
# raises, and the exception's own class: infercost.Error's subclass for the code (tests/python/test_api.py).
EXPECTED_TYPE = {
    "Invalid argument": ValueError,
    "Corrupt input": ValueError,
    "Not found": FileNotFoundError,
    "I/O error": OSError,
    "Unsupported": RuntimeError,
    "Unavailable": RuntimeError,
    "Resource exhausted": RuntimeError,
    "Internal error": RuntimeError,
}
EXPECTED_CLASS = {
    "Invalid argument": infercost.InvalidArgumentError,
    "Corrupt input": infercost.CorruptInputError,
    "Not found": infercost.NotFoundError,
    "I/O error": infercost.InputOutputError,
    "Unsupported": infercost.UnsupportedError,
    "Unavailable": infercost.UnavailableError,
    "Resource exhausted": infercost.ResourceExhaustedError,
    "Internal error": infercost.InternalError,
}


def builtin_class(exc):
    """The built-in exception class `exc` is one of: the first of its class's bases that Python defines."""
    return next(cls for cls in type(exc).__mro__ if cls.__module__ == "builtins")
CLI_ERROR = re.compile(r"^infercost: error: ([^:]+): (.*)\Z", re.M | re.S)  # to the end: some span lines
LOOKED_AT = re.compile(r"looked at [^)]*")


def cli_error(args):
    proc = run_cli(*args, check=False)
    assert proc.returncode != 0, proc.stdout
    m = CLI_ERROR.search(proc.stderr)
    assert m, proc.stderr
    return proc.returncode, m.group(1), m.group(2).rstrip("\n")


def cases(tmp_path):
    """(name, run() arguments, the same job's CLI arguments); each fails."""
    tweets = write_jsonl(tmp_path / "tweets.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"full_text": "fine"}\n{"full_text": "broken\n')
    pickled = tmp_path / "pickled"
    shutil.copytree(model_dir("tiny-distilbert"), pickled)
    (pickled / "model.safetensors").unlink()
    (pickled / "pytorch_model.bin").write_bytes(b"\x80\x02")
    garbage = tmp_path / "garbage"
    shutil.copytree(model_dir("tiny-distilbert"), garbage)
    (garbage / "config.json").write_text("{ not json")
    m = model_dir("tiny-distilbert")
    out = []
    for name, (i, md, o, f), c in _cases(tweets, bad, pickled, garbage, m, tmp_path):
        if "max_length" not in f:  # shorter than the tiny models' 160 positions (the default): a faster run
            f, c = {"max_length": MAX_LENGTH, **f}, ["--max-length", str(MAX_LENGTH), *c]
        out.append((name, (i, md, o, f), c))
    return out


def _cases(tweets, bad, pickled, garbage, m, tmp_path):
    return [
        ("no model", ([tweets], tmp_path / "absent-model", tmp_path / "o.jsonl", {}), []),
        ("no input", ([tmp_path / "absent.jsonl"], m, tmp_path / "o.jsonl", {}), []),
        ("bad row", ([bad], m, tmp_path / "o.jsonl", {}), []),
        # To stdout: an output file's job would first look for model.safetensors to identify the job.
        ("pickle", ([tweets], pickled, "-", {}), []),
        ("bad config", ([tweets], garbage, tmp_path / "o.jsonl", {}), []),
        ("no column", ([tweets], m, tmp_path / "o.jsonl", {"column": "absent"}), ["--column", "absent"]),
        ("output folder missing", ([tweets], m, tmp_path / "no" / "such" / "o.jsonl", {}), []),
        ("gpu", ([tweets], m, tmp_path / "o.jsonl", {"device": "cuda:7"}), ["--device", "cuda:7"]),
        ("threshold", ([tweets], m, tmp_path / "o.jsonl", {"threshold": 0.5}), ["--threshold", "0.5"]),
        ("max length", ([tweets], m, tmp_path / "o.jsonl", {"max_length": 512}), ["--max-length", "512"]),
        ("resume to stdout", ([tweets], m, "-", {"resume": True}), ["--resume"]),
    ]


CASE_NAMES = ["no model", "no input", "bad row", "pickle", "bad config", "no column", "output folder missing",
              "gpu", "threshold", "max length", "resume to stdout"]


@pytest.mark.parametrize("name", CASE_NAMES)
def test_errors_are_the_clis(tmp_path, name):
    (inputs, model, output, flags), cli_flags = next((a, c) for n, a, c in cases(tmp_path) if n == name)
    _, code, message = cli_error(["run", *inputs, "--model", model, "--output", output, "--quiet", *cli_flags])
    if name == "gpu" and code not in ("Unavailable", "Unsupported", "Invalid argument"):
        pytest.skip(f"this machine has a cuda:7 ({code}: {message})")
    with pytest.raises(Exception) as info:
        infercost.run(inputs, model, output=output, **flags)
    exc = info.value
    assert builtin_class(exc) is EXPECTED_TYPE[code], (type(exc), code, message)
    assert type(exc) is EXPECTED_CLASS[code] and isinstance(exc, infercost.Error), (type(exc), code, message)
    assert exc.status_code == code
    if name == "gpu":
        # Where the CUDA module was looked for: beside the executable, which is python here
        # (issue 14: the Classifier work finds it beside the package too).
        message = LOOKED_AT.sub("looked at ...", message)
        assert LOOKED_AT.sub("looked at ...", str(exc)) == message
    else:
        # The same message, each setting named as the caller names it: the flag for the CLI, the keyword here.
        python_words = message
        for cli, python in PYTHON_WORDS:
            python_words = python_words.replace(cli, python)
        assert str(exc) == python_words
        assert "--" not in str(exc) or "--" not in python_words
    assert not (tmp_path / "o.jsonl").exists()


# How the CLI's errors name settings, and how Python's do.
PYTHON_WORDS = [("--function sigmoid", "function='sigmoid'"), ("--threshold", "threshold"),
                ("--max-length", "max_length"), ("--resume", "resume"), ("--output", "output")]


def test_each_kind_of_exception_is_raised(tmp_path):
    # The mapping above would pass if every error were one type: the cases cover several.
    kinds = set()
    classes = set()
    for name, (inputs, model, output, flags), _ in cases(tmp_path):
        try:
            infercost.run(inputs, model, output=output, **flags)
        except Exception as exc:  # noqa: BLE001 - collecting the types
            kinds.add(builtin_class(exc))
            classes.add(type(exc))
    assert {ValueError, FileNotFoundError, RuntimeError} <= kinds
    assert {infercost.InvalidArgumentError, infercost.CorruptInputError, infercost.NotFoundError} <= classes


def test_messages_name_the_file_and_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"full_text": "fine"}\n{"full_text": "broken\n')
    with pytest.raises(ValueError, match=r"bad\.jsonl: line 2"):
        infercost.run(bad, model_dir("tiny-distilbert"), output=tmp_path / "o.jsonl", max_length=MAX_LENGTH)


@pytest.mark.parametrize("flags,match", [
    ({"batching": "sorted"}, "batching"),
    ({"on_error": "ignore"}, "on_error must be 'fail' or 'skip'"),
    ({"batch_size": "big"}, "batch_size must be a whole number or 'auto'"),
    ({"threads": -1}, r"^threads -1: must be 1 to 1024 \(or 0 for all cores\)"),
    ({"threads": 65536}, r"^threads 65536: must be 1 to 1024"),
    ({"tokenizer_threads": 100000}, r"^tokenizer_threads 100000: must be 1 to 1024"),
    ({"batch_size": -3}, "batch"),
    ({"function": "relu"}, "^function 'relu'"),
    ({"device": "tpu"}, "tpu"),
])
def test_bad_flag_values_are_value_errors(tmp_path, tweets, flags, match):
    with pytest.raises(ValueError, match=match):
        infercost.run(tweets, model_dir("tiny-distilbert"), output=tmp_path / "o.jsonl", max_length=MAX_LENGTH,
                      **flags)
    assert not (tmp_path / "o.jsonl").exists()


@pytest.mark.parametrize("flags", [{"threads": "4"}, {"keep_text": "no"}, {"threshold": "high"}, {"column": 3}])
def test_wrong_flag_types_are_type_errors(tmp_path, tweets, flags):
    with pytest.raises(TypeError, match=next(iter(flags))):
        infercost.run(tweets, model_dir("tiny-distilbert"), output=tmp_path / "o.jsonl", **flags)


def test_unknown_flags_are_type_errors(tmp_path, tweets):
    with pytest.raises(TypeError, match="batch_rows"):
        infercost.run(tweets, model_dir("tiny-distilbert"), output=tmp_path / "o.jsonl", batch_rows=3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'batch_rows'"):
        infercost._native.run([str(tweets)], str(model_dir("tiny-distilbert")), "-", {"batch_rows": 3})


def test_no_inputs(tmp_path):
    with pytest.raises(ValueError, match="no input files given"):
        infercost.run([], model_dir("tiny-distilbert"), output=tmp_path / "o.jsonl")


def nan_model(tmp_path):
    """tiny-distilbert with a NaN in its classifier's bias: every output is NaN."""
    import json
    import struct

    model = tmp_path / "nan"
    shutil.copytree(model_dir("tiny-distilbert"), model)
    weights = model / "model.safetensors"
    data = bytearray(weights.read_bytes())
    (size,) = struct.unpack("<Q", data[:8])
    begin = 8 + size + json.loads(data[8 : 8 + size])["classifier.bias"]["data_offsets"][0]
    data[begin : begin + 4] = struct.pack("<f", float("nan"))
    weights.write_bytes(bytes(data))
    return model


def test_outputs_that_are_not_finite_are_an_error_or_skipped(tmp_path):
    model = nan_model(tmp_path)
    with infercost.Model(model, threads=1, max_length=MAX_LENGTH, precision="fp32") as m:
        with pytest.raises(RuntimeError, match=r"rows 0, 1, 2: the model's outputs are not finite numbers "
                                               r"\(NaN or infinity\) in fp32 on cpu"):
            m.classify(["good", "bad", "ugly"])
    with infercost.Model(model, threads=1, max_length=MAX_LENGTH, precision="fp32", on_error="skip") as m:
        result = m.classify(["good", None, "ugly"])
        assert list(result.is_null) == [True, True, True]
        assert m.last_metrics["rows_skipped"] == 2
