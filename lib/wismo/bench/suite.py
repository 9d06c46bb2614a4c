"""The registry of benchmarks and one run of them: each result beside what it was measured on."""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

from wismo.bench.audit import bench_tokens
from wismo.bench.comparison import bench_comparison
from wismo.bench.large_order import bench_large_order
from wismo.bench.parallel import bench_parallel_load
from wismo.bench.report_build import bench_report
from wismo.bench.roundtrip import bench_http_round_trip, bench_stdio_round_trip
from wismo.bench.settings import Settings
from wismo.bench.start import bench_server_start
from wismo.bench.traces import bench_traces

# Each benchmark returns {"title", "figures": [stats.figure(...), ...], "targets": [stats.check...(...), ...]} plus
# whatever details explain it; exactly the figures marked floor are floors. To add one, list it here.
BENCHMARKS: dict[str, Callable[[Settings], dict[str, Any]]] = {
    "stdioRoundTrip": bench_stdio_round_trip,
    "httpRoundTrip": bench_http_round_trip,
    "serverStart": bench_server_start,
    "comparison": bench_comparison,
    "report": bench_report,
    "largeOrder": bench_large_order,
    "tokens": bench_tokens,
    "parallelLoad": bench_parallel_load,
    "traces": bench_traces,
}


def environment() -> dict[str, object]:
    """What the figures were measured on."""
    from importlib.metadata import version

    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "mcp": version("mcp"),
        "pydantic": version("pydantic"),
        "anyio": version("anyio"),
    }


def load_average() -> list[float] | None:
    """1, 5 and 15 minute load averages: other work on the machine shows up in every figure."""
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None


def run(
    names: Sequence[str] | None = None, settings: Settings | None = None, progress: bool = True
) -> dict[str, object]:
    """Run the named benchmarks (default all) and return the whole result."""
    settings = settings or Settings()
    results = {}
    load_before = load_average()
    started = time.perf_counter()
    for name in names or list(BENCHMARKS):
        if progress:
            print(f"bench: {name} ...", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        results[name] = BENCHMARKS[name](settings)
        results[name]["seconds"] = round(time.perf_counter() - t0, 1)
    targets = [t for r in results.values() for t in r.get("targets", [])]
    return {
        "about": "wismo benchmarks: every figure is a median and a p95 over repeated runs, measured in this run, "
        "beside its floor (a separate process that only moves the bytes) measured in the same run.",
        "environment": environment(),
        "loadAverage": {"atStart": load_before, "atEnd": load_average()},
        "settings": {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(settings).items()},
        "benchmarks": results,
        "targets": targets,
        "allTargetsMet": all(t["met"] for t in targets),
        "seconds": round(time.perf_counter() - started, 1),
    }
