"""The package's surface: stubs, version, docstrings, and run()'s flags named as the CLI's."""

import ast
import inspect
import pathlib
import re
import tomllib

import infercost
from infercost._settings import default
from conftest import run_cli

ROOT = pathlib.Path(__file__).resolve().parents[2]


def stub_names():
    tree = ast.parse((ROOT / "python" / "infercost" / "_native.pyi").read_text())
    names = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    names |= {node.target.id for node in tree.body if isinstance(node, ast.AnnAssign)}
    names |= {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    return names


def test_the_stub_declares_what_the_module_defines():
    module = {name for name in dir(infercost._native) if not name.startswith("__") or name == "__version__"}
    assert stub_names() == module


def test_the_package_is_the_one_built_here():
    # ctest points PYTHONPATH at the build's copy of python/infercost: the files must be the same.
    built = pathlib.Path(infercost.__file__).parent
    names = sorted(p.name for p in (ROOT / "python" / "infercost").iterdir() if p.is_file())
    assert {"__init__.py", "_native.pyi", "py.typed", "spark.py"} <= set(names)
    for name in names:  # every file, a new one included (src/python/CMakeLists.txt's package_files)
        assert (built / name).read_bytes() == (ROOT / "python" / "infercost" / name).read_bytes(), name


def test_versions_agree():
    cli = run_cli("--version").stdout.split()[-1]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert infercost.__version__ == cli == project


def test_public_functions_have_docstrings():
    for name in infercost.__all__:
        obj = getattr(infercost, name)
        if callable(obj):
            assert obj.__doc__ and len(obj.__doc__) > 100, name


# run() keyword arguments whose CLI flag has another name.
RENAMED = {"keep_text": "--no-text", "metrics": "--metrics", "on_error": "--on-error", "price_files": "--prices"}


def test_run_flags_are_the_clis():
    help_text = run_cli("run", "--help").stdout
    cli_flags = set(re.findall(r"(--[a-z][a-z-]*)", help_text))
    params = inspect.signature(infercost.run).parameters
    keywords = [p for p in params.values() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert len(keywords) >= 20
    for p in keywords:
        flag = RENAMED.get(p.name, "--" + p.name.replace("_", "-"))
        assert flag in cli_flags, p.name
        # The engine's default, from its settings table: never a second copy of it.
        assert p.default == (None if p.name == "metrics" else default(p.name)), p.name

