"""Hostile input on a study's own servers, whoever wrote them, the article's as any other's: for each design, hostile
arguments built from the input schema of each tool its investigation calls, and never any other tool
(qa/study_args.py); hostile frames over stdio, made from the design's own normal call, for a design reached over
stdio (here); hostile requests over Streamable HTTP for a design reached at a URL (qa/study_http.py). After every
case the design's normal call (its entry call for the study's first case) must be answered as the first time; a
crash or a hang is a finding (qa/findings.py), a server wismo started is restarted, and the pass goes on.

A design wismo serves is also judged by what wismo's own servers promise (findings.STRICT): every frame answered as
JSON-RPC asks, tool errors of one sentence, memory under its limit, a clean exit. `make fuzz` (at_scale) adds,
on those designs, hostile requests to their HTTP side, partial frames at fresh servers and sessions abandoned by the
thousand (qa/http_abuse.py).

`count` is the number of generated argument objects per tool; frames and HTTP cases per kind are a tenth of it
(qa/hostile.per_kind); the fixed cases of each (schema_args.fixed, framegen's) run besides, the lines of 16 and 40 MB
and the partial frames at fresh servers only from BIG_FROM on.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from wismo.checks import study_args
from wismo.checks.findings import NOT_FINDINGS, Exchange, by_category, categories, finding
from wismo.checks.framegen import KINDS, PROBE, Frames, frames_for
from wismo.checks.frames import Owed
from wismo.checks.fuzz import MEMORY_LIMIT_MB, run_examples
from wismo.checks.hostile import SESSIONS, STUDY_COUNT, per_kind
from wismo.checks.records import DesignReport, DesignTimings, FramesReport, HostileResult, PassTimings
from wismo.checks.stdio_peer import DEADLINE_S, PeerUnusable, StdioPeer
from wismo.checks.study_args import Pass, each
from wismo.checks.target import Target, of_study, withheld
from wismo.mcp.client.raw import line

if TYPE_CHECKING:
    from wismo.studies.declaration import Study

BIG_FRAME = 2**20  # fixed frames longer than this (the lines of 16 and 40 MB) run from BIG_FROM on
BIG_FROM = 100  # a count this large is a long run, which can afford them
END = "end of input"  # the part of the pass that ends a server's input


def frame_case(p: Pass[StdioPeer], kind: str, frame: bytes, cases: dict[str, int]) -> None:
    """One frame, then the normal call; every finding recorded (a frame calling a tool the pass may not call is
    withheld, and counted); on wismo's own servers, what JSON-RPC owes the frame too."""
    if withheld(frame, p.forbidden):
        p.withheld += 1
        return
    if p.record.stopped("frames", kind):
        return
    cases[kind] += 1
    probe, normal = p.probe()
    owed = Owed(frame, probe) if p.target.strict else None
    got = p.peer.exchange(frame + b"\n" + line(normal), [probe], owed=owed)
    p.record.judge(got, "frames", kind, frame, probe)
    if owed is not None and not got.failure and (problems := owed.verdict()):
        p.record.add("protocol", "frames", kind, frame, " ".join(problems))


def fixed_frames(made_by: Frames, kind: str, big: bool) -> list[bytes]:
    """The fixed frames of a kind; those over a megabyte only when `big`."""
    made = [make() for make in made_by.fixed.get(kind, ())]
    return [f for f in made if big or len(f) <= BIG_FRAME]


def frames(p: Pass[StdioPeer], count: int, big: bool, out: FramesReport) -> None:
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
    p.record.judge(got, END, "half a frame, then the end of input", last, "")
    out["exitCodeAtEndOfInput"] = code
    if p.target.strict:
        exited(p, "half a frame, then the end of input", last, code, got)
    if p.target.strict and big:
        out["partialFrames"] = partial_frames(p, made_by)


def exited(p: Pass[StdioPeer], where: str, frame: bytes, code: int | None, got: Exchange) -> None:
    """On wismo's own servers: an exit at the end of input other than code 0 is a finding."""
    if code != 0:
        said = f"code {code}" if code is not None else "no exit within the deadline (it was stopped)"
        p.record.add("unclean exit", END, where, frame, f"the server's input ended and it gave {said}")


def partial_frames(p: Pass[StdioPeer], made_by: Frames) -> int:
    """Each partial frame a client can leave behind, at a fresh server: the handshake, the frame, the end of its
    input; every finding recorded. How many were sent."""
    for frame in made_by.eof:
        try:
            peer = StdioPeer(p.target, p.peer.deadline_s)
        except PeerUnusable as exc:
            p.record.add(exc.category, END, "a fresh server", "", exc.what)
            continue
        code, got = peer.finish(frame)
        p.record.judge(got, END, "a partial frame at a fresh server", frame, "")
        exited(p, "a partial frame at a fresh server", frame, code, got)
    return len(made_by.eof)


def stdio_design(target: Target, count: int, deadline_s: float, served_http: bool = False) -> DesignReport:
    """The whole pass on one stdio design: its report, with its memory and time under `timings` (and, with
    `served_http`, hostile requests to the HTTP side of a design wismo serves)."""
    from wismo.checks import http_abuse

    started = time.perf_counter()
    peer = StdioPeer(target, deadline_s)
    p = Pass(target, peer)
    report = study_args.design_report(target, p.tools)
    sent: FramesReport = {"bigLines": count >= BIG_FROM}
    report["frames"] = sent
    try:
        study_args.arguments(p, count, report["arguments"])
        frames(p, per_kind(count), count >= BIG_FROM, sent)
    except PeerUnusable as exc:  # a fresh server after a crash or hang that cannot be used: the pass ends there
        p.record.add(exc.category, "restart", "a fresh server", "", exc.what)
        report["stoppedEarly"] = f"{exc}; the pass stopped there"
    peer.sample()
    if target.strict and peer.peak_rss_mb > MEMORY_LIMIT_MB:
        said = f"the server used {peer.peak_rss_mb:.0f} MB, over its {MEMORY_LIMIT_MB} MB limit"
        p.record.add("over memory", "arguments", "the whole pass", "", said)
    timings: DesignTimings = {"seconds": 0.0, "peakServerRssMb": peer.peak_rss_mb}
    if served_http and target.address.serve:
        served = http_abuse.abuse_design(target, per_kind(count), p.record)
        timings["peakServedHttpRssMb"] = served.pop("peakServerRssMb")
        timings["startServedHttpRssMb"] = served.pop("startServerRssMb")
        report["servedHttp"] = served
    timings["seconds"] = round(time.perf_counter() - started, 1)
    return study_args.finished(report, p) | {"timings": timings}


def run(
    study: Study, count: int = STUDY_COUNT, deadline_s: float = DEADLINE_S, served_http: bool = False
) -> HostileResult:
    """Hostile input on every design of a study (`count` argument objects per tool; 0 skips the pass): the content
    of hostile.json, every finding listed once with its design. With `served_http` (make fuzz), the designs wismo
    serves get hostile requests to their HTTP side too."""
    from wismo.checks import study_http

    started = time.perf_counter()
    targets = of_study(study) if count else []
    reports: list[DesignReport] = []
    for target in targets:
        try:
            if target.address.transport == "http":
                reports.append(study_http.http_design(target, count, deadline_s))
            else:
                reports.append(stdio_design(target, count, deadline_s, served_http))
        except PeerUnusable as exc:
            reports.append(study_args.unusable(target, exc))
    findings = [f for r in reports for f in r.pop("findings")]
    designs: dict[str, DesignTimings] = {r["design"]: r.pop("timings", {}) for r in reports}
    timings: PassTimings = {"designs": designs, "seconds": round(time.perf_counter() - started, 1)}
    strict = any(t.strict for t in targets)
    return {
        "study": {"title": study.title, "file": study.path.name},
        "count": count,
        "perKind": per_kind(count) if count else 0,
        "deadlineS": deadline_s,
        "categories": categories(strict),
        "notFindings": NOT_FINDINGS,
        "designs": reports,
        "findings": findings,
        "totals": {
            "cases": sum(cases(r) for r in reports),
            "findings": len(findings),
            "byCategory": by_category(findings, strict),
        },
        "timings": timings,
    }


def cases(report: DesignReport) -> int:
    """Every case sent to one design: argument objects, frames and HTTP requests (withheld frames not counted)."""
    arguments = sum(t["cases"] for t in report["arguments"].values())
    sent = report.get("frames")
    frames_sent = sum((sent.get("cases") or {}).values()) + sent.get("partialFrames", 0) if sent else 0
    http = sum((h.get("cases") or {}).values()) if (h := report.get("http")) else 0
    http += sum((s.get("cases") or {}).values()) if (s := report.get("servedHttp")) else 0
    return arguments + frames_sent + http


def at_scale(study: Study, examples: int, sessions: int = SESSIONS) -> HostileResult:
    """`make fuzz`: the pass on every design of `study` (`examples` argument objects per tool, a tenth per kind of
    frame and HTTP request), the HTTP side of each design wismo serves, and `sessions` abandoned on the last of
    those: fuzz.json."""
    from wismo.checks import http_abuse

    result = run(study, examples, served_http=True)
    served = [t for t in of_study(study) if t.address.serve]
    if served and sessions:
        bound = http_abuse.sessions_bound(served[-1], sessions)
        result["sessions"] = bound
        extra = [
            finding(category, served[-1].design, "served http", "abandoned sessions", "", problem)
            for category, problem in bound["wismo"].pop("failures")
        ]
        result["findings"] += extra
        result["totals"]["findings"] += len(extra)
        for f in extra:
            result["totals"]["byCategory"][f["category"]] += 1
    return result


def failures(result: HostileResult) -> int:
    """Every finding of a pass, counted by the cases that showed it."""
    return sum(result["totals"]["byCategory"].values())
