"""What the benchmarks repeat and how often, and what they call."""

from __future__ import annotations

from dataclasses import dataclass

from wismo.mcp.servers import designs

# (design, tool) timed per call: each of the article's designs by its entry tool.
PROBES = tuple((d, designs.get(d).investigation.entry) for d in designs.article())
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
    parallel_clients: int = 8  # N: clients in parallel on one HTTP server, and stdio servers with a client each
    parallel_calls: int = 100  # M: timed calls per client under load (and for the one client alone)
    parallel_warmup: int = 20  # calls per client before timing, answers checked too
    parallel_rounds: int = 3  # one client alone then N at once, interleaved, per design and transport
    parallel_designs: tuple[str, ...] = designs.article()  # which of PROBES go under load
    trace_mb: int = 96  # the generated trace file (and four times it) for the traces benchmark
    trace_runs: int = 3  # fresh processes per way of reading it (one-core ways in rounds of one run each)

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
            parallel_clients=2,
            parallel_calls=3,
            parallel_warmup=1,
            parallel_rounds=1,
            trace_mb=1,
            trace_runs=1,
            parallel_designs=(
                designs.ONE_CALL,
            ),  # each design under load starts 2 + N servers: seconds of a smoke test
        )
