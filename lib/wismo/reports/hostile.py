"""What notebook 01 shows of a `make fuzz` run (fuzz.json) besides what every hostile pass shows
(reports/study_hostile.py): what it sent, and the memory curve of the abandoned sessions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, cast

from wismo.core.paths import OUTPUTS
from wismo.mcp.servers.settings import SessionLimits

if TYPE_CHECKING:
    from wismo.checks.records import HostileResult, JudgedBound, SessionBound
    from wismo.studies.declaration import Study


def load(out: str | Path | None, study: Study | None = None) -> HostileResult | None:
    """The fuzz result in `out` (default outputs/), or None when `make fuzz` has not written one there, or wrote it
    for another study than `study` (by its file's name; any study when None)."""
    path = (Path(out) if out else OUTPUTS) / "fuzz.json"
    if not path.exists():
        return None
    fuzzed = json.loads(path.read_text(encoding="utf-8"))
    if study is not None and (fuzzed.get("study") or {}).get("file") != study.path.name:
        return None
    return cast("HostileResult | None", fuzzed)  # fuzz.json as written (study_hostile.at_scale), just parsed


def left_out(out: str | Path) -> str | None:
    """What a build's index says when `make fuzz` has not written its results into it, or None when it has."""
    if (Path(out) / "fuzz.json").exists():
        return None
    return "hostile input at scale on the study's servers (report 01): `make fuzz`, then `make report`"


def intro(fuzzed: HostileResult) -> str:
    """What `make fuzz` sent, in words, every count from its result."""
    served = [d["design"] for d in fuzzed["designs"] if d.get("servedHttp")]
    http = (
        f" On {', '.join(f'**{d}**' for d in served)}, designs wismo serves, it also attacked their HTTP side and "
        "abandoned sessions by the thousand."
        if served
        else ""
    )
    big = any(frames.get("bigLines") for d in fuzzed["designs"] if (frames := d.get("frames")))
    lines = ", lines of 16 and 40 MB and partial frames at fresh servers" if big else ""
    return (
        f"`make fuzz` runs the pass of the section above at scale on this study's servers, each a real process: "
        f"{fuzzed['count']:,} generated argument objects per tool, {fuzzed['perKind']:,} per kind of frame{lines}; "
        f"its figures are shown here because its `fuzz.json` is in this report's output folder (all measured).{http}"
    )


SESSIONS = """### Sessions abandoned by the thousand

A Streamable HTTP server keeps a session for every client that initializes, until the client ends it or it
times out. wismo's server keeps a bounded number at once and closes a session that has had no request in flight
for a while (`wismo serve --http` options `--max-sessions` and `--session-idle-timeout`); at the cap the session
idle longest is closed, so that a new client is still served. Here thousands of clients initialize and never
come back, while the server's memory is sampled. The same is measured on the SDK's own defaults, for comparison."""


def sessions_sentence(fuzzed: HostileResult | None) -> str | None:
    """One sentence on the abandoned sessions: how many, the growth against the bound, the oldest, a new client."""
    bound = sessions.get("wismo") if fuzzed is not None and (sessions := fuzzed.get("sessions")) else None
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
    before = fuzzed["sessions"].get("sdkDefaults")
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


def session_runs(fuzzed: HostileResult) -> tuple[JudgedBound, SessionBound | None]:
    """The abandoned-sessions runs of a fuzz result: on wismo's limits, and on the SDK's defaults when measured."""
    sessions = fuzzed["sessions"]
    return sessions["wismo"], sessions.get("sdkDefaults")


def at_scale(out: str | Path | None, study: Study) -> list[object]:
    """What notebook 01 shows of a `make fuzz` run on this study, in order: its heading and sentences, its tables, and
    the abandoned sessions' memory chart; nothing when no fuzz.json for the study is in `out`."""
    from IPython.display import Markdown

    from wismo.reports import study_hostile
    from wismo.reports.render import charts, tables
    from wismo.reports.render.display import Shown

    fuzzed = load(out, study)
    if not fuzzed:
        return []
    shown: list[object] = [
        Markdown("## Hostile input at scale (`make fuzz`)\n\n" + intro(fuzzed)),
        Markdown(study_hostile.summary_sentence(fuzzed)),
        Markdown(study_hostile.findings_sentence(fuzzed)),
    ]
    if fuzzed["findings"]:
        shown.append(tables.show(study_hostile.finding_rows(fuzzed)))
    shown.append(tables.show(study_hostile.argument_rows(fuzzed)))
    for part, rows in study_hostile.parts(fuzzed):
        shown += [Markdown(part), tables.show(rows)]
    if said := sessions_sentence(fuzzed):
        bound, before = session_runs(fuzzed)
        # The chart takes the runs as plain dicts: copies of the records, which it only reads.
        chart = charts.session_memory(dict(bound), None if before is None else dict(before))
        shown += [Markdown(SESSIONS), Markdown(said), Shown(chart, said)]
    return shown
