"""Where a process's start goes, from the interpreter's own `-X importtime` report: by package and by module."""

from __future__ import annotations

import re
import sys
from typing import Any

from wismo.bench.stats import median
from wismo.mcp.client.raw import initialize, spawn_and_ask

Row = tuple[str, int, float, float]  # module, depth, self ms, cumulative ms


def parse_importtime(stderr: str) -> list[Row]:
    """`-X importtime` lines as (module, depth, self ms, cumulative ms), in the order printed."""
    rows = []
    for match in re.finditer(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)\s*$", stderr, re.M):
        self_us, cumulative_us, indent, name = match.groups()
        rows.append((name, (len(indent) - 1) // 2, int(self_us) / 1000, int(cumulative_us) / 1000))
    return rows


def import_profile(rows: list[Row], top: int = 8) -> dict[str, object]:
    """Total import time, self time grouped by top-level package, and the heaviest modules by self time."""
    by_package: dict[str, float] = {}
    for name, _, self_ms, _ in rows:
        package = name.split(".")[0]
        by_package[package] = by_package.get(package, 0.0) + self_ms
    heaviest = sorted(rows, key=lambda r: -r[2])[:top]
    return {
        "totalMs": round(sum(r[3] for r in rows if r[1] == 0), 1),
        "modules": len(rows),
        "selfMsByPackage": {k: round(v, 1) for k, v in sorted(by_package.items(), key=lambda kv: -kv[1])[:top]},
        "heaviestModulesSelfMs": {r[0]: round(r[2], 1) for r in heaviest},
        "wismoSelfMs": round(by_package.get("wismo", 0.0), 1),
    }


def median_profile(profiles: list[dict[str, Any]]) -> dict[str, Any]:
    """Per key, the median over several import profiles (keys missing from a run count as 0)."""

    def med(dicts: list[dict[str, float]]) -> dict[str, float]:
        keys = {k for d in dicts for k in d}
        merged = {k: round(median([d.get(k, 0.0) for d in dicts]), 1) for k in keys}
        return dict(sorted(merged.items(), key=lambda kv: -kv[1]))

    return {
        "runs": len(profiles),
        "totalMs": round(median([p["totalMs"] for p in profiles]), 1),
        "modules": int(median([p["modules"] for p in profiles])),
        "selfMsByPackage": med([p["selfMsByPackage"] for p in profiles]),
        "heaviestModulesSelfMs": med([p["heaviestModulesSelfMs"] for p in profiles]),
        "wismoSelfMs": round(median([p["wismoSelfMs"] for p in profiles]), 1),
    }


def profile_start(arguments: list[str], runs: int) -> dict[str, object]:
    """Start this interpreter with `arguments` `runs` times under -X importtime, up to its handshake answer: always
    the real interpreter, whatever the servers run on (the suite's forks import nothing)."""
    profiles = []
    for _ in range(runs):
        _, _, err = spawn_and_ask([sys.executable, "-X", "importtime", *arguments], initialize())
        profiles.append(import_profile(parse_importtime(err)))
    return median_profile(profiles)
