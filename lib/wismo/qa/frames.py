"""Frame-level abuse of the stdio servers (hypothesis): what a broken or hostile client can put on the wire.

Each design's server, one process after a handshake, is sent frames of named kinds (KINDS): bytes that are not
UTF-8, lines that are not JSON, JSON that is not JSON-RPC, JSON-RPC messages with hostile values in every field,
batches, lines of megabytes, nesting 100,000 deep, and valid but odd messages. After every frame a normal tools/call
(a string id used once) must be answered correctly; every line on stdout must be a JSON-RPC message; the frame must
get what JSON-RPC asks (`expect`); the server's memory must stay under MEMORY_LIMIT_MB; on EOF it must exit 0 with
no traceback, also after a partial frame (fresh processes, `eofCases`). `examples` is the number of generated frames
per kind and design; the fixed cases (framegen's: a 16 MB line, 100,000-deep nesting, ids of every wrong type)
run once per design besides, counted in their kinds.
"""

from __future__ import annotations

import functools
import json
import subprocess
import tempfile
import time
from collections.abc import Callable
from typing import Any

import psutil
from hypothesis import strategies as st

from wismo.client.raw import RawServer, read_line, rest
from wismo.core.processes import piped
from wismo.qa.framegen import KINDS, PROBE, frames_for
from wismo.qa.fuzz import MEMORY_LIMIT_MB, rss_mb, run_examples
from wismo.qa.normal import normal_call, order_id_of
from wismo.servers import designs

EOF_KIND = "partial frame then EOF"
ORDERS = ("ORD-1001", "ORD-1002", "ORD-1003", "ORD-1004")  # the normal call asks for each in turn
ANSWER_DEADLINE_S = 20.0  # for the answers to one frame and its normal call (a 16 MB line included)
GRACE_S = 2.0  # for a frame's answer once the normal call sent after it has been answered
EXIT_DEADLINE_S = 10.0
EOF_AT_ONCE = 2  # fresh servers started together for the EOF cases (their start, mostly imports, dominates)
RSS_EVERY = 20  # cases between memory checks


def valid_id(value: Any) -> bool:
    """A JSON-RPC id a request may carry here: a string or an integer (not a boolean)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def expect(line: bytes) -> tuple[str, Any]:
    """What JSON-RPC asks for one line: ("request", its id or None when invalid): exactly one answer, with that id
    or an error with id null; ("error", None): exactly one error with id null; ("quiet", None): a notification or a
    response, answered with nothing (or at most one error with id null)."""
    try:
        value = json.loads(line.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return "error", None
    if not isinstance(value, dict):
        return "error", None
    if "method" in value and "id" in value:
        return "request", value["id"] if valid_id(value["id"]) else None
    if "method" in value or "result" in value or "error" in value:
        return "quiet", None
    return "error", None


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b  # 1, 1.0 and true are different ids


def stdout_problem(line: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """A line from the server's stdout parsed, or the sentence saying it is not a JSON-RPC message."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        message = None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None, f"stdout carried a line that is not a JSON-RPC message: {line[:80]!r}."
    return message, None


class Judge:
    """The lines read after one frame and its normal call, checked one by one (see `expect`)."""

    def __init__(self, frame: bytes, probe_id: str, order_id: str) -> None:
        self.want, self.frame_id = expect(frame)
        self.probe_id, self.order_id = probe_id, order_id
        self.probe_answered = False
        self.nulls = self.answers = 0
        self.problems: list[str] = []

    def take(self, line: bytes) -> None:
        """Check one line from stdout."""
        message, problem = stdout_problem(line)
        if message is None:
            self.problems.append(problem or "")  # never "": a line that is no message always comes with its problem
            return
        if "method" in message:
            return  # a notification from the server (a log line, say): JSON-RPC, no answer to anything
        ident = message.get("id")
        if ("result" in message) == ("error" in message) or "id" not in message:
            self.problems.append(f"an answer without an id or without exactly one of result and error: {line[:80]!r}.")
        elif _same(ident, self.probe_id):
            self._check_probe(message)
        elif ident is None:
            self.nulls += 1
            if "error" not in message:
                self.problems.append("a result with id null.")
        elif self.frame_id is not None and _same(ident, self.frame_id):
            self.answers += 1
        else:
            self.problems.append(f"an answer with an id nobody asked for (or answered twice): {str(ident)[:40]!r}.")

    def _check_probe(self, message: dict[str, Any]) -> None:
        if self.probe_answered:
            self.problems.append("the normal call was answered twice.")
        self.probe_answered = True
        try:
            record = json.loads(message["result"]["content"][0]["text"])
        except (KeyError, IndexError, TypeError, ValueError):
            record = None
        if message.get("result", {}).get("isError") or order_id_of(record) != self.order_id:
            self.problems.append(f"the normal call for {self.order_id} was answered wrongly: {str(message)[:120]}.")

    def done(self) -> bool:
        """Whether everything awaited has come: the normal call's answer, and the frame's when it needs one."""
        return self.probe_answered and (self.want == "quiet" or self.nulls + self.answers >= 1)

    def verdict(self) -> list[str]:
        """Every problem seen, and what was missing or too much once reading stopped."""
        problems = list(self.problems)
        if not self.probe_answered:
            problems.append("the normal call got no answer.")
        got = self.nulls + self.answers
        if self.want == "request" and got != 1:
            problems.append(f"the request got {got} answers, not one.")
        if self.want == "error" and self.nulls != 1:
            problems.append(f"the line got {self.nulls} errors with id null, not one.")
        if self.want == "quiet" and got > 1:
            problems.append(f"a notification or response got {got} answers.")
        return problems


@functools.cache
def _probe(design: str, n: int) -> tuple[str, str, dict[str, Any]]:
    """The n-th normal call: its id, the order it asks for, the message."""
    ident, order = f"{PROBE}{n}", ORDERS[n % len(ORDERS)]
    return ident, order, normal_call(design, ident, order)


def _exit_problems(server: RawServer, stderr: Any) -> list[str]:
    """Close the server's stdin: it must exit 0 in time, write only JSON-RPC meanwhile, and no traceback on stderr."""
    piped(server.proc.stdin).close()
    try:
        code = server.proc.wait(EXIT_DEADLINE_S)
    except subprocess.TimeoutExpired:
        code = None
        server.proc.kill()  # so that reading the rest of stdout ends
    problems = [] if code == 0 else [f"on EOF the server exited with {code} (None: not within the deadline)."]
    for got in rest(piped(server.proc.stdout)).splitlines():
        problem = stdout_problem(got)[1] if got.strip() else None
        problems += [problem] if problem else []
    server.close()
    stderr.seek(0)
    if b"Traceback" in stderr.read():
        problems.append("the server wrote a traceback on stderr.")
    return problems


class Session:
    """One design's server under abuse: frames in, every answer checked, a fresh server after a fatal case."""

    def __init__(self, design: str, command: list[str] | None = None) -> None:
        self.design, self.command = design, command
        self.cases = dict.fromkeys(KINDS, 0)
        self.failures: list[dict[str, Any]] = []
        self.sent = 0
        self.start_rss = self.peak_rss = 0.0
        self._start()
        self.start_rss = self.peak_rss

    def _start(self) -> None:
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the server; closed with it
        self.server = RawServer(self.design, command=self.command, stderr_file=self.stderr)
        self.server.checked_handshake()
        self.process = psutil.Process(self.server.proc.pid)
        self._sample()

    def _sample(self) -> float:
        rss = round(rss_mb(self.process), 1)
        self.peak_rss = max(self.peak_rss, rss)
        return rss

    def _fail(self, kind: str, frame: bytes, problem: str) -> None:
        self.failures.append({"kind": kind, "frame": repr(frame[:200])[:200], "problem": problem})

    def case(self, kind: str, frame: bytes, check_memory: bool = False) -> None:
        """Send one frame (a line) and a normal call, and check everything read until both are answered."""
        self.cases[kind] += 1
        self.sent += 1
        ident, order, message = _probe(self.design, self.sent)
        judge = Judge(frame, ident, order)
        deadline, graced = time.monotonic() + ANSWER_DEADLINE_S, False
        try:
            self.server.send_bytes(frame + b"\n" + json.dumps(message).encode() + b"\n", ANSWER_DEADLINE_S)
            while not judge.done():
                if judge.probe_answered and not graced:  # the frame came first: its answer is due by now
                    deadline, graced = min(deadline, time.monotonic() + GRACE_S), True
                judge.take(read_line(piped(self.server.proc.stdout), max(0.0, deadline - time.monotonic())))
        except (TimeoutError, EOFError, OSError) as exc:
            if not (graced and isinstance(exc, TimeoutError)):  # else it answers, only not that frame (the verdict)
                judge.problems.append(f"the server stopped answering ({type(exc).__name__}); a fresh one takes over.")
                self._replace()
        for problem in judge.verdict():
            self._fail(kind, frame, problem)
        if check_memory or self.sent % RSS_EVERY == 0:
            rss = self._sample()
            if rss > MEMORY_LIMIT_MB:
                self._fail(kind, frame, f"the server uses {rss:.0f} MB, over the {MEMORY_LIMIT_MB} MB limit.")

    def _replace(self) -> None:
        self.server.close()
        self.stderr.close()
        self._start()

    def finish(self) -> bool:
        """Close stdin: True when the server exited cleanly (failures recorded otherwise)."""
        self._sample()
        problems = _exit_problems(self.server, self.stderr)
        self.stderr.close()
        for problem in problems:
            self._fail("EOF", b"", problem)
        return not problems


def _sender(session: Session, kind: str) -> Callable[[bytes], None]:
    return lambda value: session.case(kind, value)


def frame_design(design: str, examples: int) -> dict[str, Any]:
    """Every kind of frame at one design's server (one process unless one dies); the design's report."""
    session = Session(design)
    made_by = frames_for(normal_call(design))
    for kind in KINDS:
        for make in made_by.fixed.get(kind, ()):
            session.case(kind, make(), check_memory=True)
        run_examples(examples, made_by.strategies[kind], _sender(session, kind), generate_only=True)
    clean = session.finish()
    return {
        "design": design,
        "cases": session.cases,
        "failures": session.failures,
        "startServerRssMb": session.start_rss,
        "peakServerRssMb": session.peak_rss,
        "cleanExit": clean,
    }


def eof_case(server: RawServer, stderr: Any, frame: bytes) -> list[str]:
    """A fresh server: the handshake, a partial frame, EOF; the problems with its exit (none when clean)."""
    try:
        server.checked_handshake()
        server.send_bytes(frame, ANSWER_DEADLINE_S)
    except (TimeoutError, EOFError, OSError, RuntimeError) as exc:
        server.close()
        return [f"the server failed before EOF ({type(exc).__name__})."]
    return _exit_problems(server, stderr)


def eof_cases(design_names: tuple[str, ...], examples: int) -> dict[str, Any]:
    """The fixed partial frames and some generated ones cut short, each at a fresh server (designs in turn)."""
    made_by = frames_for(normal_call(design_names[0]))
    frames = list(made_by.eof)
    everything = st.one_of(*made_by.strategies.values())
    cut = st.builds(lambda frame, at: frame[: at % (len(frame) + 1)], everything, st.integers(0, 10**6))
    if examples >= 20:  # each case is a server start (about a second): a few, not `examples`
        run_examples(min(examples // 20, 12), cut, frames.append, generate_only=True)
    failures = []
    cases = [(design_names[n % len(design_names)], frame) for n, frame in enumerate(frames)]
    for first in range(0, len(cases), EOF_AT_ONCE):
        batch = cases[first : first + EOF_AT_ONCE]
        stderrs = [tempfile.TemporaryFile() for _ in batch]  # noqa: SIM115 - closed below, after the exits
        servers = [RawServer(design, stderr_file=err) for (design, _), err in zip(batch, stderrs, strict=True)]
        for (design, frame), server, stderr in zip(batch, servers, stderrs, strict=True):
            for problem in eof_case(server, stderr, frame):
                failures.append(
                    {"kind": EOF_KIND, "design": design, "frame": repr(frame[:200])[:200], "problem": problem}
                )
            stderr.close()
    return {"cases": len(frames), "failures": failures}


def fuzz_frames(examples: int, design_names: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Frame-level abuse of every design's stdio server: cases per kind, failures, memory, clean exits."""
    started = time.perf_counter()
    names = tuple(design_names or designs.names())
    reports = [frame_design(d, examples) for d in names]
    eof = eof_cases(names, examples)
    return {
        "transport": "stdio",
        "examplesPerKind": examples,
        "designs": reports,
        "eofCases": eof,
        "totals": {
            "cases": sum(sum(r["cases"].values()) for r in reports) + eof["cases"],
            "failures": sum(len(r["failures"]) for r in reports) + len(eof["failures"]),
            "peakServerRssMb": max(r["peakServerRssMb"] for r in reports),
        },
        "timings": {"seconds": round(time.perf_counter() - started, 1)},
    }
