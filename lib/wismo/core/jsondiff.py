"""The one JSON diff walker: every place where two decoded JSON values differ, and the same with timings left out."""

from __future__ import annotations

import json
from typing import cast

TIMING_KEYS = {"timings"}  # wall-clock figures live under these keys and only there
ABSENT = "<absent>"
NOT_FOUND = "<in no text>"


def differences(a: object, b: object, names: tuple[str, str] = ("a", "b"), path: str = "") -> list[dict[str, object]]:
    """Every place where two JSON values differ, as {path, names[0]: value, names[1]: value}; empty when equal.

    Keys are visited in sorted order, so the list is deterministic. Type matters: 1 and 1.0, or True and 1, are
    different values on the wire. Lists of different lengths differ as a whole at their path.
    """
    first, second = names
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in sorted(set(a) | set(b)):
            sub = f"{path}.{key}" if path else key
            if key not in a or key not in b:
                found.append({"path": sub, first: a.get(key, ABSENT), second: b.get(key, ABSENT)})
            else:
                found += differences(a[key], b[key], names, sub)
        return found
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, names, f"{path}[{i}]")]
    if type(a) is not type(b) or a != b:
        return [{"path": path or "<root>", first: a, second: b}]
    return []


def holds(b: object, a: object) -> bool:
    """Whether `b` holds `a`: an object holds another when it holds each of the other's keys' values; a list holds
    another when each of the other's elements is held by some element of it, in any order; strings, numbers,
    booleans and null are equal or not (1 and 1.0, True and 1 differ, as on the wire)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and all(k in b and holds(b[k], v) for k, v in a.items())
    if isinstance(a, list):
        return isinstance(b, list) and all(any(holds(y, x) for y in b) for x in a)
    return type(a) is type(b) and a == b


def missing_from(a: object, b: object, names: tuple[str, str] = ("a", "b"), path: str = "") -> list[dict[str, object]]:
    """Every part of `a` that `b` does not hold (see `holds`), as {path, names[0]: value, names[1]: value}; empty
    when b holds a. This is the study file's match = "contains". An element of a list that no element of the other
    holds is named by its index, as absent from the other."""
    first, second = names
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in sorted(a):
            sub = f"{path}.{key}" if path else key
            if key not in b:
                found.append({"path": sub, first: a[key], second: ABSENT})
            else:
                found += missing_from(a[key], b[key], names, sub)
        return found
    if isinstance(a, list) and isinstance(b, list):
        return [
            {"path": f"{path}[{i}]", first: x, second: ABSENT}
            for i, x in enumerate(a)
            if not any(holds(y, x) for y in b)
        ]
    if holds(b, a):
        return []
    return [{"path": path or "<root>", first: a, second: b}]


def text_leaves(value: object, path: str = "") -> list[tuple[str, str]]:
    """Every string leaf of a JSON value with its path, in the value's own order, numbers as their JSON text; object
    keys, booleans and null are not leaves (what match = "text" looks for)."""
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in text_leaves(v, f"{path}.{k}" if path else k)]
    if isinstance(value, list):
        return [leaf for i, x in enumerate(value) for leaf in text_leaves(x, f"{path}[{i}]")]
    if isinstance(value, str):
        return [(path or "<root>", value)]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [(path or "<root>", json.dumps(value))]
    return []


def text_missing(a: object, b: object, names: tuple[str, str] = ("a", "b")) -> list[dict[str, object]]:
    """The first string leaf of `a` (numbers as their JSON text) that occurs within no leaf of `b`, as one
    {path, names[0]: leaf, names[1]: NOT_FOUND}; empty when every leaf of a occurs in b. This is the study file's
    match = "text", for designs that answer the same evidence in different forms (text and JSON)."""
    texts = [text for _, text in text_leaves(b)]
    joined = "\x00".join(texts)  # one search rules most leaves in (a leaf in none of the texts is in no part)
    for path, leaf in text_leaves(a):
        if leaf in joined and any(leaf in text for text in texts):
            continue
        return [{"path": path, names[0]: leaf, names[1]: NOT_FOUND}]
    return []


def without_timings(value: object) -> object:
    """The value with every timing key removed, at any depth: the part that must be byte-identical between runs."""
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def first_difference(a: object, b: object) -> str | None:
    """The path of the first place where two values differ, timings ignored (with both lengths for lists), or None."""
    found = differences(without_timings(a), without_timings(b))
    if not found:
        return None
    d = found[0]
    if isinstance(d["a"], list) and isinstance(d["b"], list):
        return f"{d['path']} (length {len(d['a'])} vs {len(d['b'])})"
    return cast("str | None", d["path"])
