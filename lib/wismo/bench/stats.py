"""Statistics of repeated timings, and the verdicts of the targets they are held to."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

# The targets of the performance issue (medians, 2-core machine). A benchmark reports them; tests do not time.
TARGETS_MS = {
    "stdio round trip": 0.5,
    "comparison, all cases, both designs": 500.0,
    "10,000-line order, focused result and comparison": 1000.0,
}
TARGETS_MB = {"10,000-line order, peak memory": 300.0}
# Held as a ratio to a floor measured in the same run, so a slower or busier machine moves both sides.
TARGETS_X_FLOOR = {
    # Against a stock SDK server of the same tools (the SDK's MCPServer over its own stdio transport, the same dataset),
    # started in the same run: wismo's own transport and command line may not make a server start later than that.
    "wismo serve start to handshake, times a stock SDK server's": 1.0,
    # A notebook's kernel, imports and rendering are the floor, so 6x is about two notebooks' own work on top of the
    # notebooks' fixed cost.
    "make report, times one empty notebook": 6.0,
    "wismo tokens, 100-tool server, times its own start": 2.0,
    # N clients' median call against N calls of one client alone, one after another: pure queuing. One HTTP server is
    # one process, busy for about 90% of a call's time alone, so its calls can at best queue (0.77-1.01 measured on
    # 2026-12-01, 2 cores, N=8); a quarter above queuing is the machine's noise, beyond it the load itself costs.
    "HTTP, N clients: median, times N calls alone": 1.25,
    # N stdio servers could overlap on 2 cores, but the N clients share one interpreter and those cores, and a server's
    # CPU per call rises by half or more among eight (0.45 to 0.73 ms, measured): 0.9 measured with a core free, 1.6-1.7
    # with other work on the other one. The same quarter above queuing: load may not cost more than waiting one's turn.
    "stdio, N servers: median, times N calls alone": 1.25,
    # `wismo traces FILE --no-report` (its process's start, the spans, conversations, chains and traces.json) against
    # a loop that only decodes each line as JSON: reading a Collector's output must stay near the cost of parsing it.
    "traces: the whole command, times decoding each line as JSON": 4.0,
    # One long session (every question under one conversation id, as an agent's long-lived thread) of four times the
    # questions against once: work that grows with the calls is 4x, anything comparing each call with every other
    # 16x; half as much again as 4x is the room for the machine's noise and a larger open session's memory.
    "traces: a session 4 times as long, times once": 6.0,
}
# Peak memory as a ratio to the same work's peak on a smaller input (memory grows with the conversations open at once,
# not with the file): a file four times larger may cost a quarter more (the interpreter's own arenas
# and the chains' histograms), not four times.
TARGETS_MEMORY_X = {"traces: peak memory, 4x the file against 1x": 1.25}
# Counts that must be exactly met: a wrong answer under load is a failure, however fast.
TARGETS_COUNT = {"parallel load: wrong or missing answers": 0}


def quantile(samples: Sequence[float], q: float) -> float:
    """The q-quantile (0..1) by linear interpolation between closest ranks (numpy's default, 'inclusive')."""
    if not samples:
        raise ValueError("no samples")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile {q} is outside 0..1")
    ordered = sorted(samples)
    position = (len(ordered) - 1) * q
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def median(samples: Sequence[float]) -> float:
    """The median (the mean of the two middle values for an even count)."""
    return quantile(samples, 0.5)


def p95(samples: Sequence[float]) -> float:
    """The 95th percentile, interpolated."""
    return quantile(samples, 0.95)


def summary(samples: Sequence[float], unit: str = "ms", digits: int = 4) -> dict[str, Any]:
    """n, median, p95, min and max of the samples, rounded; what every figure in bench.json is."""
    return {
        "unit": unit,
        "n": len(samples),
        "median": round(median(samples), digits),
        "p95": round(p95(samples), digits),
        "min": round(min(samples), digits),
        "max": round(max(samples), digits),
    }


def ratio(value: float, floor: float) -> float | None:
    """value / floor, or None when the floor is zero."""
    return round(value / floor, 2) if floor else None


def figure(name: str, stats: dict[str, Any], floor_median: float | None, **detail: object) -> dict[str, Any]:
    """One row of a benchmark: its summary and how many times its floor it is (a floor itself without one)."""
    vs = 1.0 if floor_median is None else ratio(stats["median"], floor_median)
    return {"name": name, "floor": floor_median is None, "stats": stats, "vsFloor": vs, **detail}


def _verdict(
    name: str, unit: str, limit: float, field: str, measured: float, digits: int, why: Callable[[], str]
) -> dict[str, object]:
    """Whether `measured` is within `limit`; if not, by how much and why (asked only then)."""
    # Judged on the figure as reported, so a miss is never shown as "missed by 0.0%".
    shown = round(measured, digits)
    met = shown <= limit
    verdict: dict[str, object] = {"target": name, f"target{unit}": limit, field: shown, "met": met}
    if not met:
        percent = 100 * (shown - limit) / limit
        verdict[f"missedBy{unit}"] = round(shown - limit, digits)
        verdict["missedByPercent"] = round(percent, 1) if percent >= 0.05 else float(f"{percent:.1g}")
        verdict["why"] = why()
    return verdict


def check(name: str, measured_ms: float, why: Callable[[], str]) -> dict[str, object]:
    """A time target's verdict: the target, the measured median, whether it is met, and if not by how much and why."""
    return _verdict(name, "Ms", TARGETS_MS[name], "medianMs", measured_ms, 4, why)


def check_memory_ratio(name: str, peak_mb: float, smaller_mb: float, why: Callable[[], str]) -> dict[str, object]:
    """A memory target stated as a ratio of two peaks measured in the same run; both peaks are kept beside it."""
    verdict = _verdict(name, "X", TARGETS_MEMORY_X[name], "xSmaller", peak_mb / smaller_mb, 2, why)
    return verdict | {"peakMb": round(peak_mb, 1), "smallerPeakMb": round(smaller_mb, 1)}


def check_memory(name: str, peak_mb: float, why: Callable[[], str]) -> dict[str, object]:
    """A memory target's verdict, on the peak resident set size in MB."""
    return _verdict(name, "Mb", TARGETS_MB[name], "peakMb", peak_mb, 1, why)


def check_ratio(name: str, measured_ms: float, floor_ms: float, why: Callable[[], str]) -> dict[str, object]:
    """A target stated as a ratio to a floor measured in the same run; both medians are kept beside it."""
    if floor_ms <= 0:
        raise ValueError(f"the floor of '{name}' is {floor_ms} ms: a ratio to it means nothing")
    verdict = _verdict(name, "XFloor", TARGETS_X_FLOOR[name], "xFloor", measured_ms / floor_ms, 2, why)
    return verdict | {"medianMs": round(measured_ms, 4), "floorMs": round(floor_ms, 4)}


def check_count(name: str, count: int, of: int, why: Callable[[], str]) -> dict[str, object]:
    """A count's verdict (wrong answers): met at or below the limit; missed by how many, as a percent of `of`."""
    limit = TARGETS_COUNT[name]
    verdict: dict[str, object] = {"target": name, "targetCount": limit, "count": count, "of": of, "met": count <= limit}
    if count > limit:
        verdict["missedByCount"] = count - limit
        verdict["missedByPercent"] = round(100 * (count - limit) / max(of, 1), 1)
        verdict["why"] = why()
    return verdict
