"""Benchmark 9: `wismo traces` on a generated trace file (wismo.bench.trace_file), in time and peak memory, each run in
a fresh process (wismo.bench.traces_probe): the floor is reading the same file's lines without analysis; a file four
times larger shows whether memory grows with the file or only with the conversations open at once."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from wismo.accounting.cost import price_cache
from wismo.bench.child import probe
from wismo.bench.settings import Settings
from wismo.bench.stats import check_memory_ratio, check_ratio, figure, summary
from wismo.bench.trace_file import SOURCE, generate
from wismo.core.environ import temporary_env
from wismo.runs.traces.conversations import IDLE_NS

IDLE_S = IDLE_NS / 1e9

GROWTH = 4  # the larger file is this many times the smaller
SESSION_PART = 8  # the long session's file is this fraction of the trace file (its longer one GROWTH times it)
# The one-core ways, in the order each round takes them: the decode just before the command, as the target is the one
# against the other and a shared machine's speed drifts within a round (apart, eight runs of the bench's three rounds
# gave 3.27 to 4.09 times the decode; adjacent, 3.54 to 3.98, the median 3.78 either way). The command runs as a user's
# does after the first time (its price lookups kept: accounting.cost.price_cache), and as the first time too.
ONE_CORE = ("lines", "analysis", "json", "command", "command-first")


def _measure(path: Path | list[Path], mode: str, runs: int) -> list[dict[str, Any]]:
    paths = [str(p) for p in (path if isinstance(path, list) else [path])]
    return [probe("traces_probe", mode, *paths, timeout_s=3600) for _ in range(runs)]


def _rounds(runs: int, *ways: tuple[Path, str]) -> list[list[dict[str, Any]]]:
    """Each way's runs (a file and a mode), taken in rounds of one run of every way: a shared machine's speed drifts
    over a minute, and a ratio holds only between figures measured under the same drift."""
    found: list[list[dict[str, Any]]] = [[] for _ in ways]
    for _ in range(runs):
        for runs_of, (path, mode) in zip(found, ways):
            runs_of += _measure(path, mode, 1)
    return found


def bench_traces(s: Settings) -> dict[str, object]:
    """9. A generated trace file read as `wismo traces` reads it, beside reading its lines; then at four times it."""
    with (
        tempfile.TemporaryDirectory(prefix="wismo-bench-traces-") as folder,
        temporary_env(**{price_cache.CACHE_ENV: str(Path(folder) / "price-cache")}),  # never the user's
    ):
        small, large = Path(folder) / "small.json", Path(folder) / "large.json"
        generate(small, s.trace_mb * 1_000_000)
        generate(large, GROWTH * s.trace_mb * 1_000_000)
        sizes = {"small": small.stat().st_size, "large": large.stat().st_size}
        # Untimed: keeps the price lookups every probe here makes (each file is copies of SOURCE's conversations), as a
        # user's first run does; every probe after it reads them, none imports the price library.
        _measure(SOURCE, "analysis", 1)
        taken = dict(zip(ONE_CORE, _rounds(s.trace_runs, *((small, mode) for mode in ONE_CORE))))
        lines, decoded, analysed, commands, firsts = (
            taken[mode] for mode in ("lines", "json", "analysis", "command", "command-first")
        )
        larger = _measure(large, "analysis", 1)
        one_worker = _measure(small, "pipeline1", s.trace_runs)
        two_workers = _measure(small, "pipeline2", s.trace_runs)
        # One long session at two lengths: what closing a conversation and finding its links cost as it grows.
        session, longer_session = Path(folder) / "session.json", Path(folder) / "longer-session.json"
        generate(session, s.trace_mb * 1_000_000 // SESSION_PART, session=True)
        generate(longer_session, GROWTH * s.trace_mb * 1_000_000 // SESSION_PART, session=True)
        sessions, longer_sessions = _rounds(s.trace_runs, (session, "analysis"), (longer_session, "analysis"))
    floor, json_ms, time_ms, command_ms, first_ms = (
        summary([r["ms"] for r in runs]) for runs in (lines, decoded, analysed, commands, firsts)
    )
    one_ms, two_ms = (summary([r["ms"] for r in runs]) for runs in (one_worker, two_workers))
    larger_ms = summary([r["ms"] for r in larger])
    session_ms, longer_session_ms = (summary([r["ms"] for r in runs]) for runs in (sessions, longer_sessions))
    speed_up = one_ms["median"] / two_ms["median"]
    peak_lines = max(r["peakRssMb"] for r in lines)
    peak_small = max(r["peakRssMb"] for r in analysed)
    peak_large = larger[0]["peakRssMb"]
    peak_command = max(r["commandPeakRssMb"] for r in commands)
    base = max(r["baseRssMb"] for r in analysed)
    mb = sizes["small"] / 1e6
    rate = mb / (time_ms["median"] / 1000)
    per_worker = mb / (one_ms["median"] / 1000)

    def time_why() -> str:
        return (
            f"{rate:.1f} MB/s for the analysis alone (spans read from JSON parsed by orjson, conversations grouped, "
            f"chains and links found, in one process); the command adds the interpreter's start and its imports "
            f"(the price library's where its lookups were not kept: {first_ms['median']:.0f} ms the first time), a "
            f"fixed cost that weighs less the larger the files; json.loads alone takes {json_ms['median']:.0f} ms"
        )

    def session_why() -> str:
        return (
            f"a session of {longer_sessions[0]['conversations']:,} questions took {longer_session_ms['median']:.0f} ms "
            f"against {session_ms['median']:.0f} ms for {sessions[0]['conversations']:,}: some step compares each of "
            f"a session's calls with the others"
        )

    def memory_note() -> str:
        return (
            f"{peak_small - base:.0f} MB above the imports at 1x, {peak_large - base:.0f} MB at {GROWTH}x: the "
            f"conversations open at once (in the generated file, one a second: those within the {IDLE_S:.0f}-second "
            f"idle window of span time) bound it"
        )

    def memory_why() -> str:
        return (
            f"peak {peak_large:.0f} MB at {GROWTH}x the file against {peak_small:.0f} MB: something held grows with "
            f"the conversations read, not only with those open at once"
        )

    return {
        "title": f"9. wismo traces on a generated {mb:.0f} MB trace file (in process)",
        "figures": [
            figure(f"floor: read the {mb:.0f} MB file's lines", floor, None),
            figure("decode each line as JSON (reference)", json_ms, floor["median"]),
            figure("analysis in one pass: spans read, conversations, chains", time_ms, floor["median"]),
            figure(f"analysis in one pass, {GROWTH} times the file", larger_ms, floor["median"]),
            figure("the whole command: wismo traces FILE --no-report", command_ms, floor["median"]),
            figure("the whole command, its first run (no price lookups kept)", first_ms, floor["median"]),
            figure("partitioned pipeline, one local worker (cluster started)", one_ms, floor["median"]),
            figure("partitioned pipeline, two local workers (cluster started)", two_ms, floor["median"]),
            figure(f"one long session, {sessions[0]['conversations']:,} questions", session_ms, None),
            figure(f"one long session, {GROWTH} times as long", longer_session_ms, session_ms["median"]),
        ],
        # The partitioned pipeline (runs.traces.partitioned) on one worker against two, the same analysis: how it
        # scales, and the rate one worker reads at (what a cluster of N is estimated from).
        "speedUpOneToTwoWorkers": round(speed_up, 2),
        # How the time grows with the traces: the analysis of a file GROWTH times larger against the file's.
        "timeAtGrowthAgainstOnce": round(larger_ms["median"] / time_ms["median"], 2),
        # The same for one long session: its questions GROWTH times as many (linear work grows GROWTH times).
        "sessionTimeAtGrowthAgainstOnce": round(longer_session_ms["median"] / session_ms["median"], 2),
        "sessionQuestions": {"small": sessions[0]["conversations"], "large": longer_sessions[0]["conversations"]},
        "megabytesPerSecondPerWorker": round(per_worker, 2),
        # Whether an analysis here imported the price library: none should, its lookups kept by the warm-up.
        "priceLibraryImported": any(r["priceLibraryImported"] for r in [*analysed, *larger, *sessions]),
        "bytes": sizes,
        "conversations": {"small": analysed[0]["conversations"], "large": larger[0]["conversations"]},
        "megabytesPerSecond": round(rate, 2),
        "peakRssMb": {
            "readingLines": round(peak_lines, 1),
            "analysis": round(peak_small, 1),
            f"analysisAt{GROWTH}x": round(peak_large, 1),
            "afterImports": round(base, 1),  # the interpreter and the analysis' modules
            "command": round(peak_command, 1),  # the whole command's own process
        },
        # The ratios: the analysis against reading the same file's lines, in time and in peak memory.
        "againstReadingLines": {
            "time": round(time_ms["median"] / floor["median"], 1),
            "peakMemory": round(peak_small / peak_lines, 2),
            f"peakMemoryAt{GROWTH}x": round(peak_large / peak_lines, 2),
        },
        # Each way of reading against decoding each line as JSON: on one core (the analysis, the whole command, the
        # pipeline on one worker) and on all of this machine's (the pipeline on two workers).
        "againstDecoding": {
            "analysisOneCore": round(time_ms["median"] / json_ms["median"], 2),
            "commandOneCore": round(command_ms["median"] / json_ms["median"], 2),
            "commandFirstRunOneCore": round(first_ms["median"] / json_ms["median"], 2),
            "pipelineOneWorker": round(one_ms["median"] / json_ms["median"], 2),
            "pipelineTwoWorkers": round(two_ms["median"] / json_ms["median"], 2),
        },
        "timeWhy": time_why(),
        "memoryNote": memory_note(),
        "targets": [
            check_memory_ratio("traces: peak memory, 4x the file against 1x", peak_large, peak_small, memory_why),
            check_ratio(
                "traces: the whole command, times decoding each line as JSON",
                command_ms["median"],
                json_ms["median"],
                time_why,
            ),
            check_ratio(
                "traces: a session 4 times as long, times once",
                longer_session_ms["median"],
                session_ms["median"],
                session_why,
            ),
        ],
    }
