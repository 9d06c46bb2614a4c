"""Benchmark 6: a large order, in time and peak memory, each run in a fresh process (wismo.bench.large_order_probe):
building the focused result, and comparing it with the granular records. The floor is parsing the same JSON
text once, the least any reader of the evidence pays."""

from __future__ import annotations

from wismo.bench.child import probe
from wismo.bench.settings import Settings
from wismo.bench.stats import check, check_memory, figure, summary

LINES = 10_000  # the size the targets name


def bench_large_order(s: Settings, lines: int = LINES) -> dict[str, object]:
    """6. A 10,000-line order: the focused result and the comparison, beside parsing the result once."""
    runs = [probe("large_order_probe", str(lines), timeout_s=300) for _ in range(max(1, s.comparisons))]
    focused = summary([r["focusedMs"] for r in runs])
    comparison = summary([r["comparisonMs"] for r in runs])
    both = summary([r["focusedMs"] + r["comparisonMs"] for r in runs])
    floor = summary([r["floorMs"] for r in runs])
    peak = max(r["peakRssMb"] for r in runs)
    base = runs[0]["baseRssMb"]
    size_mb = runs[0]["bytes"] / 1e6

    def time_why() -> str:
        return (
            f"focused result {focused['median']:.0f} ms and comparison {comparison['median']:.0f} ms, against "
            f"{floor['median']:.0f} ms to parse the {size_mb:.1f} MB result once"
        )

    def memory_why() -> str:
        return (
            f"peak {peak:.0f} MB, {base:.0f} MB of it before the dataset was loaded; the whole dataset, the "
            f"focused context and its {size_mb:.1f} MB of JSON text, and the granular records are held at once"
        )

    figures = [
        figure("floor: parse the focused JSON text once", floor, None),
        figure("focused result built and serialized", focused, floor["median"]),
        figure("comparison with the granular records", comparison, floor["median"]),
        figure("both together", both, floor["median"]),
    ]
    return {
        "title": f"6. a {lines:,}-line order (in process)",
        "figures": figures,
        "lines": lines,
        "resultBytes": runs[0]["bytes"],
        "differences": runs[0]["differences"],
        "peakRssMb": round(peak, 1),
        "baseRssMb": round(base, 1),
        "targets": [
            check("10,000-line order, focused result and comparison", both["median"], time_why),
            check_memory("10,000-line order, peak memory", peak, memory_why),
        ],
    }
