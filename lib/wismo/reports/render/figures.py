"""Key figures for the index: pointers into a notebook's JSON result, declared in its metadata, never typed.

A notebook lists its key figures in metadata["wismo"]["figures"], each
``{"label": ..., "file": ..., "value": ..., "kind": ...}``: `file` is the JSON result it writes into the output
folder, `value` a template whose fields are paths into that file with an optional format spec, and `kind` says
what the number is (measured, modelled, tiktoken-estimated, provider-reported); `kind` may use fields too.

Paths: ``summary.ordersEqual`` (keys), ``cases[0]`` (index), ``medians[measure=turns]`` (the first item whose
key equals the value), ``passK[*].pass^k`` (every item), and around a whole path ``len(...)``, ``count(...)``
(truthy items), ``sum``, ``min``, ``max``, ``median``. Example: ``"{count(passK[*].pass^k)}/{len(passK)}"``.
"""

from __future__ import annotations

import json
import re
import statistics
import string
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wismo.core.errors import InputError

_FUNCTIONS: dict[str, Callable[[list[object]], Any]] = {
    "len": len,
    "count": lambda xs: sum(bool(x) for x in xs),
    "sum": sum,
    "min": min,
    "max": max,
    "median": statistics.median,
}
_CALL = re.compile(r"^(\w+)\((.*)\)$")
_SEGMENT = re.compile(r"\[([^\]]*)\]|\.?([^.\[\]]+)")


class FigureError(InputError):
    """A key figure that cannot be read: the message names the notebook, the figure and what is wrong."""


@dataclass(frozen=True)
class Figure:
    """One key figure as the index shows it: the number, what it counts, and what kind of number it is."""

    value: str
    label: str
    kind: str
    file: str


def _segments(path: str) -> list[str]:
    """Split a path into keys and bracketed selectors; raise on anything left over."""
    parts, pos = [], 0
    for m in _SEGMENT.finditer(path):
        if m.start() != pos:
            break
        parts.append(f"[{m.group(1)}]" if m.group(1) is not None else m.group(2))
        pos = m.end()
    if pos != len(path) or not parts:
        raise KeyError(f"cannot parse path {path!r}")
    return parts


def _matches(value: object, wanted: str) -> bool:
    """A selector's value equals an item's value written as text or as JSON (true, null, 3)."""
    return str(value) == wanted or json.dumps(value) == wanted


def _step(node: object, segment: str) -> object:
    """Apply one path segment to one node."""
    if not segment.startswith("["):
        if not isinstance(node, dict) or segment not in node:
            raise KeyError(f"no key {segment!r}")
        return node[segment]
    inner = segment[1:-1]
    if not isinstance(node, list):
        raise KeyError(f"{segment} needs a list, found {type(node).__name__}")
    if re.fullmatch(r"-?\d+", inner):
        if not -len(node) <= int(inner) < len(node):
            raise KeyError(f"index {inner} out of range ({len(node)} items)")
        return node[int(inner)]
    key, sep, wanted = inner.partition("=")
    if not sep:
        raise KeyError(f"cannot parse selector {segment}")
    for item in node:
        if isinstance(item, dict) and key in item and _matches(item[key], wanted):
            return item
    raise KeyError(f"no item with {key} = {wanted}")


def resolve(data: object, path: str) -> object:
    """The value at `path` in `data` (see the module docstring for the syntax); KeyError says what is missing."""
    path = path.strip()
    call = _CALL.match(path)
    if call:
        name, inner = call.groups()
        if name not in _FUNCTIONS:
            raise KeyError(f"unknown function {name}()")
        values = resolve(data, inner)
        if not isinstance(values, list):
            raise KeyError(f"{name}() needs a list, found {type(values).__name__}")
        return _FUNCTIONS[name](values)
    nodes, spread = [data], False
    for segment in _segments(path):
        if segment == "[*]":
            if spread or not isinstance(nodes[0], list):
                raise KeyError("[*] needs a list")
            nodes, spread = list(nodes[0]), True
        else:
            nodes = [_step(n, segment) for n in nodes]
    return nodes if spread else nodes[0]


def format_value(value: object, spec: str = "", order: list[str] | None = None) -> str:
    """Text of one value: the spec if given, else integers with thousands separators and floats to 2 decimals; a
    table per design as "granular 30, focused 6" (its keys in `order` first, as the study lists its designs), a list
    as "280 / 753"."""
    if value is None:
        return "n/a"
    if isinstance(value, dict):
        rank = {k: i for i, k in enumerate(order or [])}
        keys = sorted(value, key=lambda k: (rank.get(k, len(rank)), list(value).index(k)))
        return ", ".join(f"{k} {format_value(value[k], spec, order)}" for k in keys)
    if isinstance(value, list):
        return " / ".join(format_value(v, spec, order) for v in value)
    if spec:
        return format(value, spec)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.0f}" if value.is_integer() else f"{value:,.2f}".rstrip("0")
    return str(value)


def design_order(data: object) -> list[str] | None:
    """The designs of the study a result belongs to, in the study's order (its reference first): JSON written with
    sorted keys loses a table's order, so it is read from the lists that keep it."""
    if not isinstance(data, dict):
        return None
    for block in ("summary", "study"):
        designs = data.get(block, {}).get("designs") if isinstance(data.get(block), dict) else None
        if isinstance(designs, list):
            return designs
    return None


def render(template: str, data: object) -> str:
    """Fill every {path:spec} field of `template` from `data`."""
    parts = []
    for literal, field, spec, conversion in string.Formatter().parse(template):
        parts.append(literal)
        if field is None:
            continue
        if conversion:
            raise KeyError(f"conversions (!{conversion}) are not supported")
        parts.append(format_value(resolve(data, field), spec or "", design_order(data)))
    return "".join(parts)


def declared(notebook: dict[str, Any]) -> list[dict[str, str]]:
    """The key-figure pointers a notebook declares in metadata wismo.figures (none is allowed)."""
    return list(notebook.get("metadata", {}).get("wismo", {}).get("figures", []))


def key_figures(notebook: dict[str, object], out: Path, name: str, study: Any) -> list[Figure]:
    """Read each declared figure from the JSON the notebook wrote into `out` (a figure declared with "needs" is read
    only where the study meets that need, as the notebook's cells are; one declared "optional" is left out where its
    JSON lacks a path it names); FigureError names what failed."""
    figures, cache = [], {}
    for spec in declared(notebook):
        if "needs" in spec and not study.meets(spec["needs"]):
            continue
        label = spec.get("label", "?")
        try:
            path = out / spec["file"]
            if path not in cache:
                cache[path] = json.loads(path.read_text(encoding="utf-8"))
            data = cache[path]
            figures.append(
                Figure(
                    render(spec["value"], data),
                    render(spec["label"], data),
                    render(spec.get("kind", ""), data),
                    spec["file"],
                )
            )
        except FileNotFoundError:
            raise FigureError(f"{name}: key figure {label!r}: {spec['file']} was not written into {out}") from None
        except (KeyError, ValueError, TypeError) as exc:
            if isinstance(exc, KeyError) and spec.get("optional"):
                continue
            detail = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
            raise FigureError(
                f"{name}: key figure {label!r} ({spec.get('file', 'no file')}: {spec.get('value', 'no value')}): "
                f"{detail}"
            ) from None
    return figures


def title(notebook: dict[str, Any], out: Path) -> str | None:
    """The title a notebook's results give it (metadata wismo.title: a file and a template, as a key figure's), or
    None where it declares none or its results lack it."""
    spec = notebook.get("metadata", {}).get("wismo", {}).get("title")
    if not spec:
        return None
    try:
        return render(spec["value"], json.loads((out / spec["file"]).read_text(encoding="utf-8")))
    except (OSError, KeyError, ValueError):
        return None
