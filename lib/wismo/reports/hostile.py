"""What notebook 01 shows of a `make fuzz` run (fuzz.json): sentences and rows for hostile tool arguments, stdio
frames and HTTP requests, and the memory curve of the abandoned sessions; nothing but a pointer when there is none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from wismo.core.paths import OUTPUTS
from wismo.core.textgrid import LIST_SEPARATOR, plural
from wismo.servers.settings import SessionLimits

NO_RUN = (
    "No `make fuzz` run in this output folder: `make fuzz` writes outputs/fuzz.json beside the built-in reports, and "
    "its figures are shown here when that file is in the report's folder."
)


def load(out: str | Path | None) -> dict[str, Any] | None:
    """The fuzz result in `out` (default outputs/), or None when `make fuzz` has not written one there."""
    path = (Path(out) if out else OUTPUTS) / "fuzz.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def left_out(out: str | Path) -> str | None:
    """What a build's index says when `make fuzz` has not written its results into it, or None when it has."""
    if (Path(out) / "fuzz.json").exists():
        return None
    return "hostile input at scale on wismo's own servers (report 01): `make fuzz`, then `make report`"


def arguments_sentence(fuzzed: dict[str, Any] | None) -> str:
    """One sentence on the argument fuzzing: examples, crashes, hangs, unclear errors, peak memory (measured)."""
    if fuzzed is None:
        return NO_RUN
    t = fuzzed["totals"]
    return (
        f"{t['examples']:,} examples ({fuzzed['examplesPerTool']:,} per tool): "
        f"{plural(t['crashes'], 'crash', 'crashes')}, {plural(t['hangs'], 'hang')}, "
        f"{plural(t['unclearErrors'], 'unclear error')}; peak server memory {t['peakServerRssMb']} MB (measured)."
    )


def argument_rows(fuzzed: dict[str, Any] | None) -> list[dict[str, Any]]:
    """One row per tool: examples, valid results, tool errors and the errors by kind."""
    if fuzzed is None:
        return []
    return [
        {
            "design": design["design"],
            "tool": name,
            "examples": t["examples"],
            "valid results": t["results"],
            "tool errors": sum(t["errors"].values()),
            "errors by kind": LIST_SEPARATOR.join(f"{k} {v}" for k, v in sorted(t["errors"].items())),
        }
        for design in fuzzed["designs"]
        for name, t in design["tools"].items()
    ]


def _failures(part: dict[str, Any]) -> str:
    n = part["totals"]["failures"]
    return "no failures" if n == 0 else plural(n, "failure")


def frames_sentence(fuzzed: dict[str, Any] | None) -> str | None:
    """One sentence on the stdio frames: cases, failures, clean exits on EOF, peak memory; None without a run."""
    frames = (fuzzed or {}).get("frames")
    if frames is None:
        return None
    t = frames["totals"]
    eof = frames["eofCases"]
    clean = sum(d["cleanExit"] for d in frames["designs"])
    # A server can fail its exit in more than one way: count the frames, not the problems.
    unclean = len({(f["design"], f["frame"]) for f in eof["failures"]})
    return (
        f"{t['cases']:,} frames over stdio ({frames['examplesPerKind']:,} per kind and design, and the fixed cases): "
        f"{_failures(frames)}; {plural(eof['cases'], 'server')} given a partial frame and then end of input, "
        f"{unclean} not exiting cleanly; {clean} of {len(frames['designs'])} servers exited cleanly at "
        f"the end of their run; peak server memory {t['peakServerRssMb']} MB (measured)."
    )


def _by_kind(part: dict[str, Any], kind_header: str) -> list[dict[str, Any]]:
    """One row per kind of case: how many each design got, and the failures of that kind on all of them."""
    kinds = list(dict.fromkeys(kind for d in part["designs"] for kind in d["cases"]))
    return [
        {
            kind_header: kind,
            **{f"cases, {d['design']}": d["cases"].get(kind, 0) for d in part["designs"]},
            "failures": sum(f["kind"] == kind for d in part["designs"] for f in d["failures"]),
        }
        for kind in kinds
    ]


def frame_rows(fuzzed: dict[str, Any] | None) -> list[dict[str, Any]]:
    """One row per kind of frame: cases on each design, and failures."""
    frames = (fuzzed or {}).get("frames")
    return [] if frames is None else _by_kind(frames, "kind of frame")


def http_sentence(fuzzed: dict[str, Any] | None) -> str | None:
    """One sentence on the HTTP abuse: cases, failures, slow and parallel clients, clean stops; None without a run."""
    http = (fuzzed or {}).get("http")
    if http is None:
        return None
    t = http["totals"]
    clean = sum(d["cleanExit"] for d in http["designs"])
    slow = [d["slowClients"] for d in http["designs"]]
    parallel = [d["parallelClients"] for d in http["designs"]]
    starved = sum(c["problem"] is not None for c in slow)
    wrong = sum(c["wrongAnswers"] for c in parallel)
    served = "a new client was served" if not starved else f"a new client was not served on {starved} of them"
    return (
        f"{t['cases']:,} requests over Streamable HTTP ({http['examplesPerKind']:,} per kind and design): "
        f"{_failures(http)}. With {slow[0]['held']} connections holding half a request on each server, {served}; "
        f"{parallel[0]['clients']} clients at once on each, {parallel[0]['callsEach']} calls each, got "
        f"{plural(wrong, 'wrong answer')}; {clean} of {len(http['designs'])} servers stopped cleanly on SIGTERM; "
        f"peak server memory {t['peakServerRssMb']} MB (measured)."
    )


def http_rows(fuzzed: dict[str, Any] | None) -> list[dict[str, Any]]:
    """One row per kind of request: cases on each design, the HTTP statuses they got (all designs), failures."""
    http = (fuzzed or {}).get("http")
    if http is None:
        return []
    rows = _by_kind(http, "kind of request")
    for row in rows:
        statuses: dict[str, int] = {}
        for d in http["designs"]:
            for status, n in d["statuses"].get(row["kind of request"], {}).items():
                statuses[status] = statuses.get(status, 0) + n
        failures = row.pop("failures")  # last, as in the frames' table
        row["answered with (HTTP status × cases)"] = LIST_SEPARATOR.join(
            f"{status} × {n:,}" for status, n in sorted(statuses.items(), key=lambda item: int(item[0]))
        )
        row["failures"] = failures
    return rows


def sessions_sentence(fuzzed: dict[str, Any] | None) -> str | None:
    """One sentence on the abandoned sessions: how many, the growth against the bound, the oldest, a new client."""
    bound = ((fuzzed or {}).get("http") or {}).get("abandonedSessions")
    if fuzzed is None or bound is None:
        return None
    verdict = "within" if bound["growthMb"] <= bound["boundMb"] else "over"
    oldest = (
        "was closed to admit newer ones (HTTP 404, so its client starts a new session)"
        if bound["firstSessionAfterStatus"] == 404
        else f"was answered with HTTP {bound['firstSessionAfterStatus']}: it was kept"
    )
    client = "was served" if bound["newClientProblem"] is None else f"was not served ({bound['newClientProblem']})"
    wismo = SessionLimits()
    same = (bound["maxSessions"], bound["idleTimeoutS"]) == (wismo.max_sessions, wismo.idle_timeout_s)
    defaults = " (wismo's defaults)" if same else ""
    before = fuzzed["http"].get("abandonedSessionsOnSdkDefaults")
    compared = (
        ""
        if before is None
        else f" On the SDK's defaults ({before['maxSessions']:,} sessions, {before['idleTimeoutS']:,g} seconds) the "
        f"same clients added {before['growthMb']} MB (measured), and the first session was answered with HTTP "
        f"{before['firstSessionAfterStatus']}."
    )
    return (
        f"The server kept at most {bound['maxSessions']:,} sessions and closed one after {bound['idleTimeoutS']:,g} "
        f"seconds with no request in flight{defaults}. {bound['abandoned']:,} clients each opened a session on "
        f"the {bound['design']} server over Streamable HTTP and never came back: its memory grew by "
        f"{bound['growthMb']} MB (measured), {verdict} the bound of {bound['boundMb']:g} MB. The first session, used "
        f"before them, {oldest}; a new client afterwards {client}.{compared}"
    )


def session_runs(fuzzed: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The abandoned-sessions runs of a fuzz result: on wismo's limits, and on the SDK's defaults when measured."""
    http = fuzzed["http"]
    return http["abandonedSessions"], http.get("abandonedSessionsOnSdkDefaults")
