"""The records of a hostile pass, declared once: what a server's tools/list says of a tool as the pass reads it, each
design's report (its argument cases, frames, HTTP requests, the HTTP side of a design wismo serves, its timings), the
abandoned sessions of `make fuzz`, and the whole result (hostile.json, fuzz.json). They are plain dicts at run time,
written as they are built; the findings they carry are findings.Finding."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from wismo.checks.findings import Finding


class ToolAnnotations(TypedDict, total=False):
    """A listed tool's annotations, as MCP declares them (each optional): the read-only mark is the one read."""

    readOnlyHint: bool


class InputSchema(TypedDict, total=False):
    """A listed tool's input schema, as MCP declares it (each member optional): its properties and required ones."""

    type: str
    properties: dict[str, object]
    required: list[str]


class ListedTool(TypedDict):
    """One tool of a server's tools/list answer as the pass reads it: its name (tools without a string name are
    dropped), its input schema and annotations when given."""

    name: str
    inputSchema: NotRequired[InputSchema | None]
    annotations: NotRequired[ToolAnnotations | None]


class NormalCallShown(TypedDict):
    """A design's normal call as its report shows it: the entry tool and its arguments, shortened."""

    tool: str
    arguments: str


class ToolCalled(TypedDict):
    """A tool the pass calls, in a design's report: its listing's read-only mark (None when it gives none), and
    whether the server lists it at all."""

    readOnly: bool | None
    offered: bool


class FramesReport(TypedDict):
    """The frames over stdio in a design's report: whether the lines of 16 and 40 MB were sent, then (once the pass
    got to the frames) the frames sent by kind, those withheld, the exit code at the end of input, and (on wismo's own
    servers, in a long run) the partial frames sent to fresh servers."""

    bigLines: bool
    cases: NotRequired[dict[str, int]]
    withheld: NotRequired[int]
    exitCodeAtEndOfInput: NotRequired[int | None]
    partialFrames: NotRequired[int]


class RequestCounts(TypedDict):
    """Hostile HTTP requests counted: the requests sent by kind, and the statuses they got by kind (status as text →
    cases; -1 none in time, 0 closed)."""

    cases: dict[str, int]
    statuses: dict[str, dict[str, int]]


class HttpReport(RequestCounts):
    """The requests over Streamable HTTP in the report of a design at a URL: the counts, the frames withheld, the
    sessions opened, and why the raw requests were left out (None when they were sent)."""

    withheld: int
    sessionsOpened: int
    leftOut: str | None


class SlowClients(TypedDict):
    """Connections held half sent while a new client is served: how many, and what went wrong (None: nothing)."""

    held: int
    problem: str | None


class ParallelClients(TypedDict):
    """Clients asking at once, each in its own session: how many, the calls of each, the wrong answers, and the
    first of them (None: none)."""

    clients: int
    callsEach: int
    wrongAnswers: int
    problem: str | None


class ServedHttp(RequestCounts):
    """The HTTP side of a design wismo serves (http_abuse.abuse_design): the counts, the slow and parallel clients,
    how the server stopped on SIGTERM; its memory at start and at peak until the design's timings take them."""

    startServerRssMb: NotRequired[float]
    slowClients: SlowClients
    parallelClients: ParallelClients
    peakServerRssMb: NotRequired[float]
    exitCode: int
    stdoutBytes: int
    cleanExit: bool


class DesignTimings(TypedDict, total=False):
    """A design's time and memory in a pass: its seconds, the peak memory of a stdio server wismo started, and the
    memory of the HTTP side of a design wismo serves; empty for a design whose server could not be used."""

    seconds: float
    peakServerRssMb: float
    peakServedHttpRssMb: float
    startServedHttpRssMb: float


class DesignReport(TypedDict):
    """One design's report in a hostile pass: how it was reached, its normal call, the tools called and never called,
    the argument cases by tool (cases and outcomes counted), the frames or HTTP requests, the HTTP side of a design
    wismo serves, restarts, skipped cases and why it stopped early; its findings and timings until the result
    gathers them."""

    design: str
    transport: str
    normalCall: NormalCallShown
    toolsCalled: dict[str, ToolCalled]
    toolsNeverCalled: list[str]
    arguments: dict[str, dict[str, int]]
    frames: FramesReport | None
    http: HttpReport | None
    restarts: int
    skippedCases: int
    stoppedEarly: str | None
    servedHttp: NotRequired[ServedHttp]
    findings: NotRequired[list[Finding]]
    timings: NotRequired[DesignTimings]


class CurvePoint(TypedDict):
    """One reading of the abandoned sessions' memory curve: sessions so far, memory above the start."""

    sessions: int
    rssAboveStartMb: float


class AbandonedSessions(TypedDict):
    """The figures of sessions abandoned on one server (sessions.abandon): the memory curve and growth against the
    bound, the openings refused, and how the first session and a new client were served afterwards."""

    abandoned: int
    startServerRssMb: float
    curve: list[CurvePoint]
    growthMb: float
    boundMb: float
    openingsRefused: int
    firstSessionBefore: str | None
    firstSessionAfterStatus: int
    newClientProblem: str | None


class SessionBound(AbandonedSessions):
    """Abandoned sessions on a design wismo serves (http_abuse.abandoned): the figures, the design and the session
    limits it ran with."""

    design: str
    maxSessions: int
    idleTimeoutS: float


class JudgedBound(SessionBound):
    """Abandoned sessions on wismo's limits (http_abuse.sessions_bound): the figures, and what broke the bound (each
    as its category of finding and a sentence) until the result makes findings of it."""

    failures: NotRequired[list[tuple[str, str]]]


class SessionsResult(TypedDict):
    """The abandoned-sessions test of `make fuzz`: on wismo's limits, and on the SDK's defaults for comparison."""

    wismo: JudgedBound
    sdkDefaults: SessionBound


class StudyNamed(TypedDict):
    """The study a hostile result is for: its title and its file's name."""

    title: str
    file: str


class Totals(TypedDict):
    """A hostile result's totals: cases sent, findings, and cases that showed each category of finding."""

    cases: int
    findings: int
    byCategory: dict[str, int]


class PassTimings(TypedDict):
    """A hostile pass's timings: each design's (by name), and the whole pass's seconds."""

    designs: dict[str, DesignTimings]
    seconds: float


class HostileResult(TypedDict):
    """A hostile pass on a study's designs (hostile.json; fuzz.json, with `sessions`): the counts asked for, the
    categories judged by, each design's report, every finding once, the totals and the timings."""

    study: StudyNamed
    count: int
    perKind: int
    deadlineS: float
    categories: dict[str, str]
    notFindings: str
    designs: list[DesignReport]
    findings: list[Finding]
    totals: Totals
    timings: PassTimings
    sessions: NotRequired[SessionsResult]
