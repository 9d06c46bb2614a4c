"""Determinism of the JSON outputs: two runs on the same inputs must agree byte for byte, timings apart."""

from __future__ import annotations

import json
from pathlib import Path

from wismo.core.jsondiff import first_difference, without_timings

__all__ = ["compare_folders", "first_difference", "without_timings"]


def compare_folders(first: Path, second: Path) -> dict[str, str | None]:
    """For every JSON output of the first folder: the first differing field in the second (None when equal)."""
    out: dict[str, str | None] = {}
    for path in sorted(Path(first).glob("*.json")):
        other = Path(second) / path.name
        if not other.exists():
            out[path.name] = "<missing in the second run>"
            continue
        out[path.name] = first_difference(json.loads(path.read_text()), json.loads(other.read_text()))
    return out
