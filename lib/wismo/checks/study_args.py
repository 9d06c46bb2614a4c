"""One design's hostile-input pass, whichever transport reaches it (qa/stdio_peer.py or qa/study_http.py): its tools
listed, its normal call asked once for the answer every later one must repeat, and hostile arguments sent to each
tool its investigation calls (the fixed cases of schema_args, then `count` generated ones), each followed by the
normal call; what the design's report says of its tools."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, Protocol, TypeVar, cast

from wismo.checks import schema_args
from wismo.checks.findings import Exchange, Record, answer_text, one_sentence, shortened, texts
from wismo.checks.framegen import PROBE
from wismo.checks.fuzz import run_examples
from wismo.checks.records import DesignReport, ListedTool
from wismo.checks.stdio_peer import PeerUnusable
from wismo.checks.target import Target
from wismo.mcp.client.raw import tools_call

CASE = "hostile-case-"  # the ids of the argument cases' calls (the normal calls' are framegen.PROBE + a number)
RSS_EVERY = 20  # cases between memory readings
OUTCOMES = ("results", "toolErrors", "protocolErrors")


class Peer(Protocol):
    """What a pass needs of a server: requests answered by id (or a crash or hang said), and memory read."""

    restarts: int

    def calls(self, messages: list[dict[str, object]], starting: bool = False) -> Exchange: ...

    def sample(self) -> None: ...


P = TypeVar("P", bound=Peer)  # the pass's own kind of peer, whose further methods its transport's cases use


class Pass(Generic[P]):
    """One design's pass: its server, its record, the tools it may call, and the real arguments to start from."""

    def __init__(self, target: Target, peer: P) -> None:
        self.target, self.peer = target, peer
        self.sent = self.withheld = 0
        self.tools = self._listing()
        self.forbidden = {t["name"] for t in self.tools} - set(target.tools)
        ident = PROBE + "0"
        baseline = peer.calls([target.normal_call(ident)], starting=True)
        first = baseline.answers.get(ident)
        if first is None:
            why = f"the normal call got no answer ({baseline.what or 'none'})"
            raise PeerUnusable(target.design, why, baseline.failure or "crash")
        reading = target.investigation.reading
        self.record = Record(target.design, answer_text(first, target.ignore, reading), target.ignore, reading)
        self.bases = target.bases(first)

    def _listing(self) -> list[ListedTool]:
        ident = PROBE + "tools"
        got = self.peer.calls([{"jsonrpc": "2.0", "id": ident, "method": "tools/list"}], starting=True)
        result = got.answers.get(ident, {}).get("result")
        tools = result.get("tools") if isinstance(result, dict) else None
        if not isinstance(tools, list):
            raise PeerUnusable(self.target.design, f"tools/list was not answered with tools ({got.what or 'none'})")
        # The server's JSON as parsed: tools with a string name are kept, the rest of each read as MCP declares it.
        return cast("list[ListedTool]", [t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)])

    def probe(self) -> tuple[str, dict[str, object]]:
        """The next normal call: its id and its message."""
        self.sent += 1
        if self.sent % RSS_EVERY == 0:
            self.peer.sample()
        ident = f"{PROBE}{self.sent}"
        return ident, self.target.normal_call(ident)

    def argument_case(self, tool: str, arguments: dict[str, object], stats: dict[str, int]) -> None:
        """One argument object at `tool`, then the normal call; every finding recorded, the outcome counted."""
        if self.record.stopped("arguments", tool):
            return
        stats["cases"] += 1
        probe, normal = self.probe()
        case = f"{CASE}{self.sent}"
        got = self.peer.calls([tools_call(tool, arguments, case), normal])
        answered = self.record.judge(got, "arguments", tool, arguments, probe, case)
        if answered is not None:
            stats[answered] += 1
        if answered == "toolErrors" and self.target.strict and not one_sentence(said := texts(got.answers[case])):
            self.record.add("unclear error", "arguments", tool, arguments, f"the tool error was {shortened(said)}")


def each(case: Callable[..., None]) -> Callable[[object], None]:
    """`case` as hypothesis takes it: a function of the drawn value alone (it refuses one with defaults, which bind
    the loop's current tool or kind)."""
    return lambda value: case(value)


def arguments(p: Pass[P], count: int, out: dict[str, dict[str, int]]) -> None:
    """Every tool the investigation calls: its fixed cases, then `count` generated argument objects (counted into
    `out` by tool as they go)."""
    offered = {t["name"]: t for t in p.tools}
    for name in p.target.tools:
        stats = {"cases": 0} | dict.fromkeys(OUTCOMES, 0)
        out[name] = stats
        tool = offered.get(name, {"name": name, "inputSchema": {}})
        base = p.bases.get(name, {})
        for case in schema_args.fixed(tool, base):
            p.argument_case(name, case, stats)
        hostile = schema_args.arguments(tool, base)
        run_examples(count, hostile, each(lambda a, n=name, s=stats: p.argument_case(n, a, s)), generate_only=True)


def design_report(target: Target, tools: list[ListedTool]) -> DesignReport:
    """What a design's report says before its cases: how it was reached, its normal call, the tools called (each
    with its listing's read-only mark, None when it gives none) and the tools offered but never called."""
    marks = {t["name"]: (t.get("annotations") or {}).get("readOnlyHint") for t in tools}
    return {
        "design": target.design,
        "transport": target.address.transport,
        "normalCall": {"tool": target.investigation.entry, "arguments": shortened(target.normal_arguments())},
        "toolsCalled": {name: {"readOnly": marks.get(name), "offered": name in marks} for name in target.tools},
        "toolsNeverCalled": sorted(set(marks) - set(target.tools)),
        "arguments": {},
        "frames": None,
        "http": None,
        "restarts": 0,
        "skippedCases": 0,
        "stoppedEarly": None,
    }


def finished(report: DesignReport, p: Pass[P]) -> DesignReport:
    """A design's report once its pass has ended: its findings, restarts and skipped cases."""
    return report | {"findings": p.record.findings, "restarts": p.peer.restarts, "skippedCases": p.record.skipped}


def unusable(target: Target, exc: PeerUnusable) -> DesignReport:
    """The report of a design whose server could not be used at all (no handshake, no tools, no normal answer)."""
    record = Record(target.design)
    record.add(exc.category, "start", "the handshake, tools/list and the normal call", "", exc.what)
    return design_report(target, []) | {"findings": record.findings, "stoppedEarly": f"{exc}; its pass did not run"}
