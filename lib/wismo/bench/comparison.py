"""Benchmark 4: the whole equivalence comparison (every case, both designs) once the servers are up, in a fresh
process each time: the first pass, which would carry any one-time cost, and later passes on the same servers."""

from __future__ import annotations

from typing import Any

from wismo.bench.child import probe
from wismo.bench.floors import echo_name
from wismo.bench.settings import Settings
from wismo.bench.stats import check, figure, summary


def _median_of(figures: list[dict[str, Any]], transport: str, which: str) -> float:
    """The median of the first or later passes over a transport, with wismo's own stdio transport."""
    medians = (
        f["stats"]["median"]
        for f in figures
        if f.get("transport") == transport and f.get("pass") == which and f.get("serverTransport") == "wismo"
    )
    return float(next(medians))


def bench_comparison(s: Settings) -> dict[str, object]:
    """4. The whole comparison in fresh processes, beside as many round trips through an echo of its transport."""
    series = [("stdio", "wismo"), ("http", "wismo")] + ([("stdio", "sdk")] if s.sdk_reference else [])
    runs = {
        key: [probe("comparison_probe", key[0], str(s.later_passes), key[1]) for _ in range(s.comparisons)]
        for key in series
    }
    figures: list[dict[str, object]] = []
    floors: dict[str, float] = {}
    for (transport, server_transport), results in runs.items():
        if not all(r["allEqual"] for r in results):
            raise RuntimeError(f"the comparison over {transport} found differences; run `wismo compare`")
        label = transport + (", SDK threaded stdio transport" if server_transport == "sdk" else "")
        if server_transport == "wismo":
            floor = summary([r["floorMs"] for r in results], digits=2)
            floors[transport] = floor["median"]
            figures.append(
                figure(
                    f"{transport} floor: {results[0]['requests']} round trips, {echo_name(transport)}",
                    floor,
                    None,
                    transport=transport,
                )
            )
        first = summary([r["passesMs"][0] for r in results], digits=2)
        figures.append(
            figure(
                f"{label}: first pass in a fresh process",
                first,
                floors[transport],
                transport=transport,
                serverTransport=server_transport,
                **{"pass": "first"},
            )
        )
        if s.later_passes:
            later = summary([p for r in results for p in r["passesMs"][1:]], digits=2)
            figures.append(
                figure(
                    f"{label}: later passes, same servers",
                    later,
                    floors[transport],
                    transport=transport,
                    serverTransport=server_transport,
                    **{"pass": "later"},
                )
            )
    stdio_first = _median_of(figures, "stdio", "first")
    requests = runs[("stdio", "wismo")][0]["requests"]

    def why() -> str:
        later = f"; later passes {_median_of(figures, 'stdio', 'later'):.1f} ms" if s.later_passes else ""
        return (
            f"first pass {stdio_first:.1f} ms{later}, for {requests} sequential MCP requests "
            f"({stdio_first / requests:.3f} ms each; see benchmark 1 for one round trip), against "
            f"{floors['stdio']:.1f} ms for as many round trips through the pipe echo"
        )

    return {
        "title": "4. equivalence comparison, every case on both designs, servers up",
        "figures": figures,
        "processes": s.comparisons,
        "laterPassesPerProcess": s.later_passes,
        "cases": runs[("stdio", "wismo")][0]["cases"],
        "requestsPerPass": requests,
        "firstPassExtraMs": round(stdio_first - _median_of(figures, "stdio", "later"), 2) if s.later_passes else None,
        "targets": [check("comparison, all cases, both designs", stdio_first, why)],
    }
