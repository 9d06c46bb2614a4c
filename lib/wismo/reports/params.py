"""The reports' parameters, each declared once with its default and its type, and checked before anything runs.

Papermill hands a notebook what `-p` gives as a number, a boolean or a string, and what `-y` gives as YAML. A list
or table given with `-p` arrives as a string: parsed when it is JSON, else refused in one sentence that says to use
`-y`. Every refusal is one ParameterError sentence naming the parameter, the value and what is allowed; in a
notebook it shows as that sentence alone, not a traceback.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from wismo.core import paths
from wismo.core.errors import InputError

# Kinds of parameter: what each accepts, in the words of the refusal.
KINDS = {
    "texts": "a list of strings",
    "counts": "a list of whole numbers of at least 1",
    "count": "a whole number of at least 1",
    "whole": "a whole number of at least 0",
    "flag": "true or false",
    "text": "a string",
    "table": "a table (a mapping)",
    "date": "an ISO date such as 2026-10-08",
}
LISTS = ("texts", "counts")


EARLIER = "The cells below this one still show an earlier run's results: this run stopped here."


class ParameterError(InputError):
    """A parameter a report cannot take: `report`, `name`, `value` and `allowed` (what it may be)."""

    def __init__(self, report: str, name: str, value: object, allowed: str) -> None:
        shown = json.dumps(value, ensure_ascii=False, default=str)
        shown = shown if len(shown) <= 80 else shown[:79] + "…"
        super().__init__(f"{report}: parameter {name} = {shown} is not allowed; {allowed}.")
        self.report, self.name, self.value, self.allowed = report, name, value, allowed

    def _render_traceback_(self) -> list[str]:
        # IPython shows this instead of a traceback: the reader sees the sentence, and that what the cells below still
        # show is an earlier run's, since a notebook keeps its outputs until a cell runs again.
        return [f"{type(self).__name__}: {self}", EARLIER]


@dataclass(frozen=True)
class Param:
    """One parameter: its default, its kind (KINDS), whether None is allowed (meaning the report's own default), and
    the values allowed when they are a closed set (a callable, so registries are read when checked)."""

    default: object
    kind: str
    optional: bool = False
    choices: Callable[[], tuple[str, ...]] | None = None
    subset: bool = False  # a list whose every element must be one of choices
    empty: bool = False  # an empty list is allowed (it turns a section off)


def defaults(spec: Mapping[str, Param]) -> dict[str, object]:
    """The parameters' defaults, by name."""
    return {name: p.default for name, p in spec.items()}


def _allowed(name: str, p: Param) -> str:
    """What a parameter may be, in words, with how to give it."""
    text = f"it must be {KINDS[p.kind]}"
    if p.choices is not None:
        text += f" from {', '.join(p.choices())}" if p.subset else f", one of {', '.join(p.choices())}"
    if p.optional:
        text += ", or None for the report's default"
    if p.kind in LISTS or p.kind == "table":
        example = '["ORD-1004", "ORD-1005"]' if p.kind == "texts" else "[1, 10]" if p.kind == "counts" else "{}"
        text += f" (give lists and tables with papermill's -y, for example -y '{name}: {example}')"
    return text


def _whole(value: object, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def _fits(value: Any, p: Param) -> bool:
    """Whether a value is of the parameter's kind (and among its choices)."""
    k = p.kind
    if k == "texts":
        ok = isinstance(value, list) and all(isinstance(x, str) for x in value)
    elif k == "counts":
        ok = isinstance(value, list) and (bool(value) or p.empty) and all(_whole(x, 1) for x in value)
    elif k == "count":
        ok = _whole(value, 1)
    elif k == "whole":
        ok = _whole(value, 0)
    elif k == "flag":
        ok = isinstance(value, bool)
    elif k == "text":
        ok = isinstance(value, str)
    elif k == "table":
        ok = isinstance(value, dict)
    elif k == "date":
        try:
            ok = isinstance(value, str) and bool(datetime.date.fromisoformat(value))
        except ValueError:
            ok = False
    else:
        raise KeyError(f"unknown parameter kind {k!r}")
    if ok and p.choices is not None:
        allowed = set(p.choices())
        ok = all(x in allowed for x in value) if p.subset else value in allowed
    return ok


def _coerced(value: object, p: Param) -> object:
    """A list or table that arrived as a JSON string (papermill's -p), parsed; anything else as it is."""
    if isinstance(value, str) and (p.kind in LISTS or p.kind == "table"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def checked(params: Mapping[str, object] | None, spec: Mapping[str, Param], report: str) -> dict[str, Any]:
    """The report's parameters, the defaults laid under the given ones, each checked against its declaration;
    ParameterError names the first that does not fit (an unknown name too)."""
    given = dict(params or {})
    for name in given:
        if name not in spec:
            raise ParameterError(
                report, name, given[name], f"{report} takes no such parameter; it takes {', '.join(spec)}"
            )
    out = defaults(spec)
    for name, value in given.items():
        p = spec[name]
        value = _coerced(value, p)
        if not (value is None and p.optional) and not _fits(value, p):
            raise ParameterError(report, name, given[name], _allowed(name, p))
        out[name] = value
    if "output_dir" in spec and out.get("output_dir") in (None, "") and paths.in_build() is None:
        # Run by hand: a folder of this run's own, so it never overwrites another run's results or the build's.
        out["output_dir"] = str(paths.by_hand(report, {k: v for k, v in out.items() if k != "output_dir"}))
    return out
