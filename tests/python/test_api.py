"""The public API a user finds: the exception classes on real failures, the typed dicts against
what the engine returns, and the one list of keyword arguments against the signatures, spark and
the engine."""

import ast
import inspect
import pathlib
import pickle
import shutil

import pytest

import infercost
import infercost.spark
from conftest import MAX_LENGTH, model_dir

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Each class, the engine's code name (status_code) and the built-in class it has always raised.
ERRORS = [
    (infercost.InvalidArgumentError, "Invalid argument", ValueError),
    (infercost.CorruptInputError, "Corrupt input", ValueError),
    (infercost.NotFoundError, "Not found", FileNotFoundError),
    (infercost.InputOutputError, "I/O error", OSError),
    (infercost.UnsupportedError, "Unsupported", RuntimeError),
    (infercost.ResourceExhaustedError, "Resource exhausted", RuntimeError),
    (infercost.UnavailableError, "Unavailable", RuntimeError),
    (infercost.InternalError, "Internal error", RuntimeError),
    (infercost.NonFiniteError, "Not a finite number", RuntimeError),
]


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("cls,code,builtin", ERRORS, ids=[c.__name__ for c, _, _ in ERRORS])
def test_each_error_is_an_error_and_its_builtin(cls, code, builtin):
    assert cls.__bases__ == (infercost.Error, builtin)
    assert cls.__module__ == "infercost" and getattr(infercost, cls.__name__) is cls
    assert cls.__name__ in infercost.__all__
    assert cls.status_code == code
    assert cls.__doc__
    # Raised from Python too (infercost.spark does), it pickles by name and keeps its code.
    exc = pickle.loads(pickle.dumps(cls("message")))
    assert type(exc) is cls and str(exc) == "message" and exc.status_code == code


def test_the_base_class():
    assert infercost.Error.__bases__ == (Exception,)
    assert "Error" in infercost.__all__ and infercost.Error.__doc__
    # Every class is listed here: a new one needs its code and built-in class in ERRORS.
    assert set(infercost.Error.__subclasses__()) == {cls for cls, _, _ in ERRORS}


def test_the_stub_declares_the_same_classes():
    tree = ast.parse((ROOT / "python" / "infercost" / "_native.pyi").read_text())
    declared = {node.name: [ast.unparse(b) for b in node.bases] for node in tree.body if isinstance(node, ast.ClassDef)}
    assert declared["Error"] == ["Exception"]
    for cls, _, builtin in ERRORS:
        assert declared[cls.__name__] == ["Error", builtin.__name__], cls.__name__


def raised(call):
    with pytest.raises(infercost.Error) as info:
        call()
    return info.value


def check(exc, cls):
    code, builtin = next((code, builtin) for c, code, builtin in ERRORS if c is cls)
    assert type(exc) is cls, (type(exc), str(exc))
    assert isinstance(exc, builtin) and isinstance(exc, infercost.Error)
    assert exc.status_code == code
    return exc


def test_a_missing_model_dir_is_not_found(tmp_path):
    absent = tmp_path / "absent-model"
    check(raised(lambda: infercost.model_info(absent)), infercost.NotFoundError)
    check(raised(lambda: infercost.Model(absent)), infercost.NotFoundError)
    exc = check(raised(lambda: infercost.run([], absent, output=tmp_path / "o.jsonl")), infercost.InvalidArgumentError)
    assert "no input files given" in str(exc)


def test_a_model_dir_with_a_broken_config_is_corrupt(tmp_path):
    garbage = tmp_path / "garbage"
    shutil.copytree(model_dir("tiny-distilbert"), garbage)
    (garbage / "config.json").write_text("{ not json")
    check(raised(lambda: infercost.model_info(garbage)), infercost.CorruptInputError)


def test_bad_arguments_are_invalid_arguments(tmp_path, tweets):
    m = model_dir("tiny-distilbert")
    check(raised(lambda: infercost.run(tweets, m, output=tmp_path / "o.jsonl", threads=-1)),
          infercost.InvalidArgumentError)
    check(raised(lambda: infercost.tokenize(["a"], m, max_length=-1)), infercost.InvalidArgumentError)
    check(raised(lambda: infercost.Model(m, on_error="ignore")), infercost.InvalidArgumentError)
    check(raised(lambda: infercost.tokenize(["fine", "\ud800"], m)), infercost.InvalidArgumentError)
    # A wrong type is Python's TypeError, not an engine failure.
    with pytest.raises(TypeError) as info:
        infercost.run(tweets, m, output=tmp_path / "o.jsonl", threads="4")
    assert not isinstance(info.value, infercost.Error)


def test_a_corrupt_input_file_is_corrupt_input(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"full_text": "fine"}\n{"full_text": "broken\n')
    exc = check(raised(lambda: infercost.run(bad, model_dir("tiny-distilbert"), output=tmp_path / "o.jsonl",
                                             max_length=MAX_LENGTH)), infercost.CorruptInputError)
    assert "bad.jsonl: line 2" in str(exc)
    absent = tmp_path / "absent.jsonl"
    check(raised(lambda: infercost.run(absent, model_dir("tiny-distilbert"), output=tmp_path / "o.jsonl",
                                       max_length=MAX_LENGTH)), infercost.NotFoundError)


def test_an_unwritable_output_is_an_input_output_error(tmp_path, tweets):
    # The output's folder is a file: the OS refuses to create anything in it.
    (tmp_path / "file").write_text("")
    exc = check(raised(lambda: infercost.run(tweets, model_dir("tiny-distilbert"), output=tmp_path / "file" / "o.jsonl",
                                             max_length=MAX_LENGTH)), infercost.InputOutputError)
    assert "Not a directory" in str(exc)


def test_outputs_that_are_not_finite_are_non_finite_errors(tmp_path):
    from test_errors import nan_model

    with infercost.Model(nan_model(tmp_path), threads=1, max_length=MAX_LENGTH, precision="fp32") as m:
        check(raised(lambda: m.classify(["good"])), infercost.NonFiniteError)


# ---------------------------------------------------------------------------
# Typed results
# ---------------------------------------------------------------------------


def keys(typed):
    return typed.__required_keys__, typed.__required_keys__ | typed.__optional_keys__


def assert_shape(value, typed, where):
    required, declared = keys(typed)
    assert required <= value.keys(), (where, sorted(required - value.keys()))
    assert value.keys() <= declared, (where, sorted(value.keys() - declared))


def test_model_info_is_a_model_info():
    for name in ["tiny-distilbert", "tiny-roberta-multilabel"]:
        info = infercost.model_info(model_dir(name))
        assert type(info) is dict
        assert_shape(info, infercost.ModelInfo, name)
        assert_shape(info["tokenizer"], infercost.TokenizerInfo, name + ".tokenizer")


def test_model_info_and_metrics_of_a_model_are_typed(tmp_path):
    from infercost import _types

    with infercost.Model(model_dir("tiny-distilbert"), threads=1, max_length=MAX_LENGTH) as m:
        assert_shape(m.info, infercost.LoadedModelInfo, "info")
        assert_shape(m._native.runtime(), infercost.ModelRuntime, "runtime")
        m.classify(["good", None])
        metrics = m.last_metrics
    assert_shape(metrics, infercost.RunMetrics, "last_metrics")
    assert_shape(metrics["head"], _types.MetricsHead, "head")
    assert_shape(metrics["model"], _types.MetricsModel, "model")
    assert_shape(metrics["length_histogram"], _types.LengthHistogram, "length_histogram")
    for d in metrics["per_device"]:
        assert_shape(d, _types.DeviceMetrics, "per_device")


def test_run_metrics_are_typed(tmp_path, tweets):
    from infercost import _types

    metrics = infercost.run(tweets, model_dir("tiny-roberta-multilabel"), output=tmp_path / "o.jsonl",
                            max_length=MAX_LENGTH, batch_size="auto", threads=1)
    assert type(metrics) is dict
    assert_shape(metrics, infercost.RunMetrics, "run")
    # The keys that come only with some runs: a checkpoint, an auto size, a threshold.
    assert_shape(metrics["resume"], _types.ResumeInfo, "resume")
    assert_shape(metrics["capacity"], _types.Capacity, "capacity")
    assert_shape(metrics["head"], _types.MetricsHead, "head")
    assert "threshold" in metrics["head"]


def test_the_stub_types_with_the_packages_dicts_and_numpy():
    stub = (ROOT / "python" / "infercost" / "_native.pyi").read_text()
    assert "Dict[" not in stub  # every dict has its TypedDict
    for typed in ["RunFlags", "ModelFlags", "ModelRuntime"]:
        assert f": {typed}" in stub or f"-> {typed}" in stub, typed
    assert "NDArray[numpy.float32]" in stub
    # model_info's native half gives the JSON text `model info --json` prints; the package types it.
    assert "def model_info_json(model_dir: str) -> str" in stub
    hints = inspect.signature(infercost.model_info).return_annotation
    assert hints in ("ModelInfo", infercost.ModelInfo)


# ---------------------------------------------------------------------------
# The keyword arguments: one list (ModelFlags, RunFlags)
# ---------------------------------------------------------------------------


def keyword_only(fn):
    return [p.name for p in inspect.signature(fn).parameters.values() if p.kind is inspect.Parameter.KEYWORD_ONLY]


def settings_of(scope, task=None):
    # run() classifies: it takes every setting but the embedding ones.
    task = "classify" if scope == "run" else task
    return [s["name"] for s in infercost._native.settings()
            if (scope == "run" or s["scope"] == "model") and (task is None or s["task"] in (None, task))]


def test_the_signatures_are_the_declared_flags():
    # run() and Model() take the engine's settings (run: all of classification's, Model: the model's of
    # both tasks), in its order, and the TypedDicts type exactly those.
    assert keyword_only(infercost.run) == settings_of("run") + ["metrics"]
    assert keyword_only(infercost.Model.__init__) == settings_of("model") + ["task"]
    assert keys(infercost.RunFlags)[1] == set(settings_of("run"))
    assert keys(infercost.ModelFlags)[1] == set(settings_of("model"))
    assert keys(infercost.ModelFlags)[1] - keys(infercost.RunFlags)[1] == {"pooling", "normalize", "prefix"}
    assert {s["name"] for s in infercost._native.settings() if s["task"] == "embed"} == {
        "pooling", "normalize", "prefix"}


def test_the_signatures_show_the_engines_defaults():
    engine = {s["name"]: s["default"] for s in infercost._native.settings()}
    for fn in [infercost.run, infercost.Model.__init__]:
        params = inspect.signature(fn).parameters
        for name in settings_of("run"):
            if name in params:
                assert params[name].default == engine[name], name
    assert engine["max_length"] == 0 and engine["column"] == "full_text" and engine["threshold"] is None
    assert "max_length=0: Truncate each text" in infercost.Model.__init__.__doc__


def test_the_cli_shows_the_same_defaults_and_help():
    # The command's flags are made from the same table: each flag, its default and its help.
    import subprocess

    from conftest import CLI

    def help_of(command):
        return " ".join(subprocess.run([str(CLI), command, "--help"], capture_output=True, text=True,
                                       check=True).stdout.split())

    helps = {"classify": help_of("run"), "embed": help_of("embed")}
    for s in infercost._native.settings():
        text = helps[s["task"] or "classify"]
        other = helps["embed" if s["task"] == "classify" else "classify"]
        flag = s["flag"]
        if s["task"] is not None:  # the other command has no such flag
            assert f"{flag} " not in other, flag
        assert flag == {"keep_text": "--no-text", "price_files": "--prices"}.get(s["name"], "--" + s["name"].replace("_", "-"))
        assert flag in text, flag
        if s["default"] not in (None, "", True, False, ()):
            shown = f"{s['default']:g}" if isinstance(s["default"], float) else s["default"]
            assert f"{flag} " in text and f"={shown}" in text, (flag, shown)
    assert "pack up to --max-batch-tokens;" in helps["classify"]  # another setting named as the CLI names it
    assert "--normalize" in helps["embed"] and "--no-normalize" in helps["embed"]


@pytest.mark.parametrize("fn,task", [(infercost.spark.classify, "classify"), (infercost.spark.classify_udf, "classify"),
                                     (infercost.spark.predict_fn, "classify"), (infercost.spark.embed, "embed")])
def test_spark_takes_model_flags(fn, task):
    # infercost.spark hands these to Model under the same names (threads: the task's CPUs by default), those
    # of the function's task.
    spark_flags = [name for name in keyword_only(fn) if name not in ("keep", "output")]
    assert spark_flags == settings_of("model", task)
    assert inspect.signature(fn).parameters["threads"].default is None
    assert inspect.signature(fn).parameters["device"].default == "cpu"


def test_the_engine_takes_every_declared_flag(tmp_path):
    # A flag the engine does not know is "an unexpected keyword argument"; one it knows checks its value's type.
    m = str(model_dir("tiny-distilbert"))
    for name in keys(infercost.RunFlags)[1]:
        with pytest.raises(TypeError, match=f"run\\(\\): {name} must be") as info:
            infercost._native.run(["absent.jsonl"], m, str(tmp_path / "o.jsonl"), {name: object()})
        assert "unexpected" not in str(info.value)
    for name in keys(infercost.ModelFlags)[1]:
        with pytest.raises(TypeError, match=f"Model\\(\\): {name} must be"):
            infercost._native.Model(m, {name: object()})
    with pytest.raises(TypeError, match="unexpected keyword argument 'column'"):
        infercost._native.Model(m, {"column": object()})


# ---------------------------------------------------------------------------
# pyproject.toml's dependencies
# ---------------------------------------------------------------------------


def test_importing_needs_none_of_the_extras():
    # pyproject.toml declares no dependency: the package must import without numpy, pyarrow or pandas.
    import subprocess
    import sys

    code = ("import sys, infercost, infercost.spark; "
            "print(sorted(m for m in ('numpy', 'pyarrow', 'pandas', 'pyspark') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"


def test_the_extras_start_at_the_oldest_pins():
    import re
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["dependencies"] == []
    oldest = {}
    for path in (ROOT / "scripts").glob("*requirements.txt"):
        for name, version in re.findall(r"^([A-Za-z0-9_.-]+)==([0-9.]+)$", path.read_text(), re.M):
            parsed = tuple(int(x) for x in version.split("."))
            if name.lower() not in oldest or parsed < oldest[name.lower()][0]:
                oldest[name.lower()] = (parsed, version)
    extras = project["optional-dependencies"]
    assert {"numpy", "arrow", "pandas", "spark"} <= extras.keys()
    for extra, requirements in extras.items():
        for requirement in requirements:
            name, version = requirement.split(">=")
            assert version == oldest[name.lower()][1], (extra, requirement)
