"""Hostile input on a study's own servers, whoever wrote them: for each design, hostile arguments built from the input
schema of each tool its investigation calls, and never any other tool (qa/study_args.py); hostile frames over stdio
for a design reached over stdio (here); hostile requests over Streamable HTTP for a design reached at a URL
(qa/study_http.py). After every case the design's normal call (its entry call for the study's first case) must be
answered with the same text as the first time; a crash or a hang is a finding (qa/findings.py), a server wismo
started is restarted, and the pass goes on.

`count` is the number of generated argument objects per tool; frames and HTTP cases per kind are a tenth of it
(qa/hostile.per_kind), as in `make fuzz`; the fixed cases of each (schema_args.fixed, framegen's) run besides,
the lines of 16 and 40 MB only from BIG_FROM on.
"""

from __future__ import annotations

import time
from typing import Any

from wismo.client.raw import line
from wismo.qa import study_args
from wismo.qa.findings import CATEGORIES, NOT_FINDINGS, by_category
from wismo.qa.framegen import KINDS, PROBE, Frames, frames_for
from wismo.qa.fuzz import run_examples
from wismo.qa.hostile import STUDY_COUNT, per_kind
from wismo.qa.stdio_peer import DEADLINE_S, PeerUnusable, StdioPeer
from wismo.qa.study_args import Pass, each
from wismo.qa.target import Target, of_study, withheld

BIG_FRAME = 2**20  # fixed frames longer than this (the lines of 16 and 40 MB) run from BIG_FROM on
BIG_FROM = 100  # a count this large is a long run, which can afford them


def frame_case(p: Pass[StdioPeer], kind: str, frame: bytes, cases: dict[str, int]) -> None:
    """One frame, then the normal call; every finding recorded (a frame calling a tool the pass may not call is
    withheld, and counted)."""
    if withheld(frame, p.forbidden):
        p.withheld += 1
        return
    if p.record.stopped("frames", kind):
        return
    cases[kind] += 1
    probe, normal = p.probe()
    got = p.peer.exchange(frame + b"\n" + line(normal), [probe])
    p.record.judge(got, "frames", kind, frame, probe)


def fixed_frames(made_by: Frames, kind: str, big: bool) -> list[bytes]:
    """The fixed frames of a kind; those over a megabyte only when `big`."""
    made = [make() for make in made_by.fixed.get(kind, ())]
    return [f for f in made if big or len(f) <= BIG_FRAME]


def frames(p: Pass[StdioPeer], count: int, big: bool, out: dict[str, Any]) -> None:
    """Every kind of frame (framegen.KINDS), made from the design's own normal call: its fixed frames, then `count`
    generated ones (counted into `out` as they go); then half a frame and the end of input, after which the server
    should exit."""
    made_by = frames_for(p.target.normal_call(PROBE))
    cases = out["cases"] = dict.fromkeys(KINDS, 0)
    for kind in KINDS:
        for frame in fixed_frames(made_by, kind, big):
            frame_case(p, kind, frame, cases)
        strategy = made_by.strategies[kind]
        run_examples(count, strategy, each(lambda f, k=kind: frame_case(p, k, f, cases)), generate_only=True)
    out["withheld"] = p.withheld
    last = made_by.eof[1]  # half a tools/call, then the end of input: the last thing a stdio server is sent
    code, got = p.peer.finish(last)
    p.record.judge(got, "end of input", "half a frame, then the end of input", last, "")
    out["exitCodeAtEndOfInput"] = code


def stdio_design(target: Target, count: int, deadline_s: float) -> dict[str, Any]:
    """The whole pass on one stdio design: its report, with its memory and time under `timings`."""
    started = time.perf_counter()
    peer = StdioPeer(target, deadline_s)
    p = Pass(target, peer)
    report = study_args.design_report(target, p.tools)
    report["frames"] = {"bigLines": count >= BIG_FROM}
    try:
        study_args.arguments(p, count, report["arguments"])
        frames(p, per_kind(count), count >= BIG_FROM, report["frames"])
    except PeerUnusable as exc:  # a fresh server after a crash or hang that cannot be used: the pass ends there
        p.record.add(exc.category, "restart", "a fresh server", "", exc.what)
        report["stoppedEarly"] = f"{exc}; the pass stopped there"
    peer.sample()
    seconds = round(time.perf_counter() - started, 1)
    return study_args.finished(report, p) | {"timings": {"seconds": seconds, "peakServerRssMb": peer.peak_rss_mb}}


def run(study: Any, count: int = STUDY_COUNT, deadline_s: float = DEADLINE_S) -> dict[str, Any]:
    """Hostile input on every design of a study (`count` argument objects per tool; 0 skips the pass): the content
    of hostile.json, every finding listed once with its design."""
    from wismo.qa import study_http

    started = time.perf_counter()
    reports = []
    for target in of_study(study) if count else []:
        try:
            if target.transport == "http":
                reports.append(study_http.http_design(target, count, deadline_s))
            else:
                reports.append(stdio_design(target, count, deadline_s))
        except PeerUnusable as exc:
            reports.append(study_args.unusable(target, exc))
    findings = [f for r in reports for f in r.pop("findings")]
    timings: dict[str, Any] = {"designs": {r["design"]: r.pop("timings", {}) for r in reports}}
    timings["seconds"] = round(time.perf_counter() - started, 1)
    return {
        "study": {"title": study.title, "file": study.path.name},
        "count": count,
        "perKind": per_kind(count) if count else 0,
        "deadlineS": deadline_s,
        "categories": CATEGORIES,
        "notFindings": NOT_FINDINGS,
        "designs": reports,
        "findings": findings,
        "totals": {
            "cases": sum(cases(r) for r in reports),
            "findings": len(findings),
            "byCategory": by_category(findings),
        },
        "timings": timings,
    }


def cases(report: dict[str, Any]) -> int:
    """Every case sent to one design: argument objects, frames and HTTP requests (withheld frames not counted)."""
    arguments = sum(t["cases"] for t in report["arguments"].values())
    frames_sent = sum(((report.get("frames") or {}).get("cases") or {}).values())
    http = sum(((report.get("http") or {}).get("cases") or {}).values())
    return arguments + frames_sent + http
