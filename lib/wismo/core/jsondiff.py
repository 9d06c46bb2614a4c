"""The one JSON diff walker: every place where two decoded JSON values differ, and the same with timings left out."""

from __future__ import annotations

from typing import Any

from wismo.core.jsonfmt import canonical

TIMING_KEYS = {"timings"}  # wall-clock figures live under these keys and only there
ABSENT = "<absent>"


def differences(a: Any, b: Any, names: tuple[str, str] = ("a", "b"), path: str = "") -> list[dict[str, Any]]:
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


def missing_from(a: Any, b: Any, names: tuple[str, str] = ("a", "b"), path: str = "") -> list[dict[str, Any]]:
    """Every part of `a` that `b` does not hold, as {path, names[0]: value, names[1]: value}; empty when b contains a.

    b contains a when they are equal; when both are objects and b has every key of a, each value containing a's;
    when both are lists and every element of a is equal to some element of b (in any order: one call's results may
    come back in another order, or among more). This is the study file's match = "contains".
    """
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
        held = {canonical(x) for x in b}
        return [{"path": f"{path}[{i}]", first: x, second: ABSENT} for i, x in enumerate(a) if canonical(x) not in held]
    return differences(a, b, names, path)


def without_timings(value: Any) -> Any:
    """The value with every timing key removed, at any depth: the part that must be byte-identical between runs."""
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def first_difference(a: Any, b: Any) -> str | None:
    """The path of the first place where two values differ, timings ignored (with both lengths for lists), or None."""
    found = differences(without_timings(a), without_timings(b))
    if not found:
        return None
    d = found[0]
    if isinstance(d["a"], list) and isinstance(d["b"], list):
        return f"{d['path']} (length {len(d['a'])} vs {len(d['b'])})"
    return d["path"]
