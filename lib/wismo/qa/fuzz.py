"""Property-based fuzzing of every tool of every design over a real stdio server (hypothesis).

Every call must come back as a valid result (JSON text) or as a tool error whose text is one sentence; the
server must still answer after every batch, and its memory must stay bounded. `make fuzz` (`wismo fuzz 2000`) runs
the long pass and writes outputs/fuzz.json; the test suite runs a short one.
"""

from __future__ import annotations

import json
import re
import string
import time
from collections.abc import Callable
from typing import Any

import psutil
from anyio.from_thread import start_blocking_portal
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from wismo.client.connection import Connection, HarnessError, connect
from wismo.core.errors import ClaimFailed
from wismo.servers import designs

REAL_IDS = {"orderId": "ORD-1004", "paymentId": "PAY-1004", "reservationId": "RSV-1004-B", "trackingId": "TRK-1004-A"}
BATCH = 100  # examples between liveness and memory checks
MEMORY_LIMIT_MB = 400  # a server above this (resident) has a leak or an unbounded buffer
# The kinds of the server's tool errors, told by their sentences: those reach the client over MCP as text (a tool
# error's one sentence is its whole content), so the text is all there is to classify here.
ERROR_KINDS = (
    ("missing", r" is required"),
    ("wrong type", r" must be a string| must be the string| must be one of|takes an object"),
    ("empty", r" is empty"),
    ("too long", r" characters long"),
    ("malformed", r" is not an? \w+ ID"),
    ("not found", r" was not found"),
    ("bad cursor", r"cursor is not one"),
)


def error_kind(text: str) -> str:
    """The kind of a tool error, from its sentence."""
    return next((kind for kind, pattern in ERROR_KINDS if re.search(pattern, text)), "other")


def one_sentence(text: str) -> bool:
    """A clear error: one line, ends with a full stop, no traceback, not absurdly long."""
    return "\n" not in text and text.endswith(".") and "Traceback" not in text and len(text) <= 400


def one_off(ident: str) -> st.SearchStrategy[str]:
    """Identifiers one character away from a real one: replaced, inserted or deleted."""
    positions = st.integers(0, len(ident) - 1)
    chars = st.characters(min_codepoint=32, max_codepoint=0x2FF)
    return st.one_of(
        st.builds(lambda i, c: ident[:i] + c + ident[i + 1 :], positions, chars),
        st.builds(lambda i, c: ident[:i] + c + ident[i:], positions, chars),
        st.builds(lambda i: ident[:i] + ident[i + 1 :], positions),
    )


def hostile_text(real: str) -> st.SearchStrategy[str]:
    """Hostile strings for an argument whose real value is `real`: one character off it, unicode and control
    characters, very long, path-like and JSON-like text."""
    json_like = st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=6,
    ).map(json.dumps)
    return st.one_of(
        one_off(real) if real else st.just(real),
        st.text(max_size=40),  # unicode, controls, surrogates excluded by JSON
        st.text(alphabet=st.characters(max_codepoint=0x1F), max_size=20),  # control characters only
        st.builds(
            lambda c, n: c * n, st.sampled_from(["9", "é", "\u202e", "A"]), st.integers(65, 1_000_000)
        ),  # very long
        st.sampled_from(
            ["", " ", "../../etc/passwd", "/dev/zero", "C:\\Windows\\system32", "~/.ssh/id_rsa", "%00", real + "\n"]
        ),
        json_like,
    )


def values(key: str, real: str | None = None) -> st.SearchStrategy[Any]:
    """Hostile values for one identifier argument (`real` its real value, default an ID of its kind)."""
    real = REAL_IDS.get(key, "ORD-1004") if real is None else real
    return st.one_of(
        st.just(real),
        hostile_text(real),
        st.integers() | st.floats(allow_nan=False) | st.booleans() | st.none(),
        st.lists(st.just(real), max_size=3),
        st.dictionaries(st.just(key), st.just(real), max_size=1),
    )


def arguments(
    tool: dict[str, Any], values_for: Callable[[str], st.SearchStrategy[Any]] = values
) -> st.SearchStrategy[dict[str, Any]]:
    """Argument objects for a tool: its own keys with hostile values (`values_for` each key), some missing, some
    extra."""
    keys = list(tool["inputSchema"].get("properties", {}))
    required = tool["inputSchema"].get("required", [])
    base = st.fixed_dictionaries(
        {k: values_for(k) for k in required}, optional={k: values_for(k) for k in keys if k not in required}
    )
    extra = st.dictionaries(st.text(string.ascii_letters, min_size=1, max_size=10), st.text(max_size=10), max_size=3)
    return st.one_of(base, st.builds(lambda a, b: {**b, **a}, base, extra), st.just({}), extra)


def _server_process(conn: Connection) -> psutil.Process | None:
    """The server's process (the harness's child running `wismo serve`)."""
    if conn.process is not None:
        return psutil.Process(conn.process.pid)
    for child in psutil.Process().children(recursive=True):
        try:
            if "serve" in child.cmdline():
                return child
        except psutil.Error:
            continue
    return None


def fuzz_design(design: str, examples: int) -> dict[str, Any]:
    """Fuzz every tool of one design on one server process; return counts, errors by kind, failures, memory."""
    report: dict[str, Any] = {
        "design": design,
        "tools": {},
        "crashes": [],
        "hangs": [],
        "unclear": [],
        "peakServerRssMb": 0.0,
    }
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(connect(design, timeout_s=10)) as conn:
        tools = portal.call(conn.list_tools)
        process = _server_process(conn)
        started_rss = rss_mb(process) if process else 0.0
        for tool in tools:
            stats: dict[str, Any] = {"examples": 0, "results": 0, "errors": {}}
            report["tools"][tool["name"]] = stats
            _fuzz_tool(portal, conn, tool, stats, report, process, examples, design)
        portal.call(conn.list_tools)
        if process is not None:
            report["peakServerRssMb"] = max(report["peakServerRssMb"], round(rss_mb(process), 1))
            report["startServerRssMb"] = round(started_rss, 1)
    return report


def _fuzz_tool(
    portal: Any,
    conn: Connection,
    tool: dict[str, Any],
    stats: dict[str, Any],
    report: dict[str, Any],
    process: psutil.Process | None,
    examples: int,
    design: str,
) -> None:
    """Run hypothesis over one tool's arguments, checking every answer and, per batch, liveness and memory."""

    def check(args: dict[str, Any]) -> None:
        stats["examples"] += 1
        try:
            result = portal.call(conn.call, tool["name"], args)
        except HarnessError as exc:
            bucket = "hangs" if exc.cause == "timeout" else "crashes"
            report[bucket].append({"tool": tool["name"], "error": str(exc)[:300]})
            raise
        if result.is_error:
            kind = error_kind(result.text)
            stats["errors"][kind] = stats["errors"].get(kind, 0) + 1
            if not one_sentence(result.text):
                report["unclear"].append({"tool": tool["name"], "text": result.text[:300]})
        else:
            json.loads(result.text)
            stats["results"] += 1
        if stats["examples"] % BATCH == 0:
            portal.call(conn.list_tools)  # still alive and answering
            if process is not None:
                rss = rss_mb(process)
                report["peakServerRssMb"] = max(report["peakServerRssMb"], round(rss, 1))
                if rss > MEMORY_LIMIT_MB:
                    raise ClaimFailed(
                        f"the {design} server stays under {MEMORY_LIMIT_MB} MB",
                        f"it uses {rss:.0f} MB",
                        f"{design} server uses {rss:.0f} MB, over {MEMORY_LIMIT_MB} MB",
                    )

    run_examples(examples, arguments(tool), check)


def run_examples(
    examples: int, strategy: st.SearchStrategy[Any], check: Callable[[Any], None], generate_only: bool = False
) -> None:
    """Hypothesis over `strategy`: `examples` values, the same every run (derandomized, no database, no deadline);
    `generate_only` skips shrinking, for a check that records what it finds instead of raising it."""
    phases: dict[str, Any] = {"phases": (Phase.generate,)} if generate_only else {}
    run = settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
        **phases,
    )(given(strategy)(check))
    run()


def rss_mb(process: psutil.Process) -> float:
    """A process's resident memory in MB."""
    return process.memory_info().rss / 2**20


def fuzz_all(examples: int, design_names: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Fuzz every design; the summary says examples per tool, errors by kind, crashes, hangs and peak memory."""
    started = time.perf_counter()
    reports = [fuzz_design(d, examples) for d in design_names or designs.names()]
    return {
        "examplesPerTool": examples,
        "designs": reports,
        "totals": {
            "examples": sum(t["examples"] for r in reports for t in r["tools"].values()),
            "crashes": sum(len(r["crashes"]) for r in reports),
            "hangs": sum(len(r["hangs"]) for r in reports),
            "unclearErrors": sum(len(r["unclear"]) for r in reports),
            "peakServerRssMb": max(r["peakServerRssMb"] for r in reports),
        },
        "timings": {"seconds": round(time.perf_counter() - started, 1)},
    }
