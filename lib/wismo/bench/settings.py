"""What the benchmarks repeat and how often, and what they call."""

from __future__ import annotations

from dataclasses import dataclass

PROBES = (("granular", "get_order"), ("focused", "get_order_support_context"))  # (design, tool) timed per call
PROBE_ORDER = "ORD-1004"  # the partial delivery: the largest context of the six cases
SDK_TRANSPORT_ENV = {"WISMO_STDIO_TRANSPORT": "sdk"}  # the SDK's own threaded stdio transport: the in-run "before"


@dataclass
class Settings:
    """Repetition counts; `quick()` is for the smoke test (proves every benchmark runs, measures nothing)."""

    rounds: int = 5  # separate server sessions per round-trip figure
    warmup: int = 50  # calls before timing, per session
    calls: int = 200  # timed calls per session
    http_rounds: int = 3
    starts: int = 10  # server starts per start figure
    importtime_runs: int = 3
    comparisons: int = 5  # fresh processes, each running the whole comparison
    later_passes: int = 3  # further passes in each, to show what the first pass pays once
    reports: int = 3  # `make report` equivalents
    report_notebooks: tuple[str, ...] = ()  # empty: every notebook, through `wismo report` (what `make report` runs)
    sdk_reference: bool = True  # also time the SDK's own (threaded) stdio transport, as the in-run "before"

    @classmethod
    def quick(cls) -> Settings:
        """Tiny counts: every benchmark runs once or twice."""
        return cls(
            rounds=1,
            warmup=2,
            calls=3,
            http_rounds=1,
            starts=1,
            importtime_runs=1,
            comparisons=1,
            later_passes=1,
            reports=1,
            sdk_reference=True,
        )
