"""The printed form of a run: one block per benchmark (median, p95, n, times the floor), then the targets."""

from __future__ import annotations

from typing import Any

from wismo.core.textgrid import grid


def number(value: float, unit: str) -> str:
    """A figure with its unit: three decimals below 10, one above."""
    return f"{value:.3f} {unit}" if value < 10 else f"{value:.1f} {unit}"


def _benchmark(r: dict[str, Any]) -> list[str]:
    """The lines of one benchmark's block."""
    rows = [
        [
            f["name"],
            number(f["stats"]["median"], f["stats"]["unit"]),
            number(f["stats"]["p95"], f["stats"]["unit"]),
            str(f["stats"]["n"]),
            "" if f["vsFloor"] is None else f"{f['vsFloor']:.2f}",
        ]
        for f in r["figures"]
    ]
    header = ["", "median", "p95", "n", "x floor"]
    lines = [r["title"], *grid(header, rows, minimum=(0, 11, 11, 5, 8), indent="  ", trim=False)]
    if "breakdown" in r:
        lines.append("  " + ", ".join(f"{k}: {v}" for k, v in r["breakdown"].items()))
    return lines + [""]


def _time(ms: float, in_seconds: bool) -> str:
    """A time in seconds or in ms."""
    return number(ms / 1000, "s") if in_seconds else number(ms, "ms")


def _target(t: dict[str, Any]) -> str:
    """One target's line: measured, target, and the verdict."""
    detail = ""
    if "targetCount" in t:
        measured, target, missed = f"{t['count']} of {t['of']}", str(t["targetCount"]), str(t.get("missedByCount"))
    elif "targetMb" in t:
        measured, target, missed = f"{t['peakMb']} MB", f"{t['targetMb']} MB", f"{t.get('missedByMb')} MB"
    elif "targetX" in t:
        measured, target, missed = f"{t['xSmaller']:.2f}x", f"{t['targetX']:.2f}x", f"{t.get('missedByX')}x"
        detail = f" ({t['peakMb']} MB against {t['smallerPeakMb']} MB)"
    elif "targetXFloor" in t:
        measured, target, missed = f"{t['xFloor']:.2f}x", f"{t['targetXFloor']:.2f}x", f"{t.get('missedByXFloor')}x"
        seconds = max(t["medianMs"], t["floorMs"]) >= 1000
        detail = f" ({_time(t['medianMs'], seconds)} against the floor's {_time(t['floorMs'], seconds)})"
    else:
        seconds = t["targetMs"] >= 10_000  # a target of ten seconds or more reads better in seconds
        measured, target = _time(t["medianMs"], seconds), _time(t["targetMs"], seconds)
        missed = _time(t.get("missedByMs", 0.0), seconds)
    state = "met" if t["met"] else f"MISSED by {missed} ({t['missedByPercent']}%)"
    return f"  {t['target']:<48} {measured:>11}  target {target:>9}  {state}{detail}"


def table(result: dict[str, Any]) -> str:
    """The whole run as text."""
    lines = [line for r in result["benchmarks"].values() for line in _benchmark(r)]
    lines.append(
        f"targets (medians; load average at start {result['loadAverage']['atStart']}, "
        f"at end {result['loadAverage']['atEnd']})"
    )
    for t in result["targets"]:
        lines.append(_target(t))
        if not t["met"]:
            lines.append(f"    why: {t['why']}")
    return "\n".join(lines)
