"""The keyword arguments of run(), Model() and infercost.spark, made from the
engine's one description of a run's settings (src/engine/settings.cc, the
table the ``infercost run`` flags are made from too).

The functions take ``**settings``; :func:`with_settings` gives each a
signature with the engine's defaults and a docstring section with the
engine's help texts, so that ``help(infercost.Model)`` and an editor's
signature help show them. The engine checks the names, types and values.
"""

from __future__ import annotations

import inspect
import typing
from typing import Any, Callable, Dict, List, Optional, TypeVar

from . import _native
from ._types import Setting

# name, scope ("model": Model() and run(); "run": run() only), task
# ("classify", "embed" or None for both), default (None where the engine
# decides), help, changes_output; in the CLI's order.
SETTINGS: List[Setting] = _native.settings()

F = TypeVar("F", bound=Callable[..., Any])


def default(name: str) -> Any:
    """The engine's default of setting ``name``."""
    for s in SETTINGS:
        if s["name"] == name:
            return s["default"]
    raise KeyError(name)


def names(scope: str, task: Optional[str] = None) -> List[str]:
    """The settings ``scope`` takes: "model" (Model, spark) or "run" (run():
    all but the embedding ones, as it classifies); of ``task`` ("classify",
    "embed") only when given."""
    if scope == "run":
        task = "classify"
    return [
        s["name"]
        for s in SETTINGS
        if (scope == "run" or s["scope"] == "model") and (task is None or s["task"] in (None, task))
    ]


def with_settings(
    scope: str,
    declared: type,
    overrides: Optional[Dict[str, Any]] = None,
    doc: Optional[str] = None,
    task: Optional[str] = None,
) -> Callable[[F], F]:
    """Decorates a function that takes ``**settings``: its signature gets one
    keyword-only parameter per setting of ``scope`` and ``task`` (names(); typed from ``declared``,
    ModelFlags or RunFlags; default the engine's, or ``overrides``' where the
    function decides otherwise), before its other keyword-only parameters;
    its docstring gets the settings' help (``doc`` replaces a help line)."""
    overrides = overrides or {}

    def decorate(fn: F) -> F:
        hints = typing.get_type_hints(declared)
        sig = inspect.signature(fn)
        params = [p for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        first_kw = next(
            (i for i, p in enumerate(params) if p.kind is inspect.Parameter.KEYWORD_ONLY), len(params)
        )
        wanted = names(scope, task)
        made = [
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=overrides.get(name, default(name)),
                annotation=hints.get(name, inspect.Parameter.empty),
            )
            for name in wanted
        ]
        fn.__signature__ = sig.replace(parameters=params[:first_kw] + made + params[first_kw:])  # type: ignore[attr-defined]
        lines = ["", "    Settings (the engine's; ``infercost run --help`` lists the same as flags):", ""]
        for s in SETTINGS:
            if s["name"] in wanted:
                shown = overrides.get(s["name"], s["default"])
                lines.append(f"        {s['name']}={shown!r}: {s['help']}")
        fn.__doc__ = (fn.__doc__ or "").rstrip() + "\n" + "\n".join(lines) + "\n" + (doc or "")
        return fn

    return decorate
