"""Determinism of the JSON outputs: two runs on the same inputs must agree byte for byte, timings apart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TIMING_KEYS = {"timings"}  # wall-clock figures live under these keys and only there


def without_timings(value: Any) -> Any:
    """The value with every timing key removed, at any depth."""
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """The JSON path of the first place where two values differ (timings ignored), or None."""
    a, b = without_timings(a), without_timings(b)
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            sub = f"{path}.{key}" if path else key
            if key not in a or key not in b:
                return sub
            found = first_difference(a[key], b[key], sub)
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path} (length {len(a)} vs {len(b)})"
        for i, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if (type(a) is type(b) and a == b) else (path or "<root>")


def compare_folders(first: Path, second: Path) -> dict[str, str | None]:
    """For every JSON output of the first folder: the first differing field in the second (None when equal)."""
    out = {}
    for path in sorted(Path(first).glob("*.json")):
        other = Path(second) / path.name
        if not other.exists():
            out[path.name] = "<missing in the second run>"
            continue
        out[path.name] = first_difference(json.loads(path.read_text()), json.loads(other.read_text()))
    return out
