"""Abuse of the Streamable HTTP server of a design wismo serves, from raw sockets (hypothesis): hostile bodies,
headers, methods, paths, unknown sessions and broken framing; then slow clients holding connections, clients in
parallel and sessions abandoned by the thousand. After every case a normal client must be answered as at first; the
server must stay under its memory limit, answer nothing with a 5xx, write nothing on stdout and stop cleanly when
told to. Each fault is a finding of its category (qa/findings.py); the cases and statuses are counted."""

from __future__ import annotations

import socket
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import psutil
from hypothesis import strategies as st

from wismo.checks import framegen, frames
from wismo.checks.findings import Record
from wismo.checks.framegen import PROBE
from wismo.checks.frames import RSS_EVERY
from wismo.checks.fuzz import MEMORY_LIMIT_MB, rss_mb, run_examples
from wismo.checks.records import JudgedBound, ParallelClients, ServedHttp, SessionBound, SessionsResult, SlowClients
from wismo.checks.sessions import HEADERS, ask, new_client_problem, open_session
from wismo.checks.sessions import abandon as abandon_sessions
from wismo.checks.target import Normal, Target
from wismo.mcp.client.raw import HttpConnection, RawHttp, initialize, line, status_of
from wismo.mcp.servers.settings import SessionLimits

ANSWER_DEADLINE_S = 10.0
SLOW_CLIENTS = 32  # connections holding a request half sent while a normal client is served
PARALLEL_CLIENTS = 16  # clients each opening a session and asking in it at the same time
PARALLEL_CALLS = 10
OVERSIZED_BODY = 5 * 2**20  # over the SDK's 4 MiB limit on a request body
SERVED = "served http"  # the part of a pass its findings name
MCP_HEADERS = ("Content-Type", "Accept", "Mcp-Session-Id", "MCP-Protocol-Version", "Host", "Origin")
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD", "TRACE", "FOO", "get", "P\x00ST")


def paths_of(path: str) -> tuple[str, ...]:
    """Odd spellings of an endpoint's path, and paths beside it: "/mcp" gives "/mcp/", "/", "/MCP", "//mcp", ..."""
    head, _, last = path.rstrip("/").rpartition("/")
    encoded = f"{head}/%{ord(last[0]):02X}{last[1:]}" if last else "/%2F"
    return (
        path,
        path + "/",
        "/",
        path.upper(),
        path + "?x=1",
        f"{path}/../{last}",
        "/" + path,
        encoded,
        path + "#frag",
        "*",
    )


PATHS = paths_of("/mcp")


def request(
    port: int,
    method: str = "POST",
    path: str = "/mcp",
    headers: dict[str, str] | None = None,
    body: bytes = b"",
    host: str = "127.0.0.1",
) -> bytes:
    """One HTTP/1.1 request as bytes: the usual headers of an MCP client, `headers` over them, a right length."""
    fields = {
        "Host": f"{host}:{port}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    fields |= headers or {}
    fields |= {"Content-Length": str(len(body)), "Connection": "close"}
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields.items()) + "\r\n"
    return head.encode("latin-1", errors="replace") + body


def exchange(port: int, data: bytes, timeout_s: float = ANSWER_DEADLINE_S, host: str = "127.0.0.1") -> int:
    """Send raw bytes on a new connection; the status code of the answer (0: closed without one, -1: none in time)."""
    with socket.create_connection((host, port), timeout=timeout_s) as sock:
        try:
            sock.sendall(data)
        except OSError:  # the server may close a connection whose request it refused before reading all of it
            pass
        try:
            first = sock.recv(64)
        except TimeoutError:
            return -1
        except OSError:
            return 0
    return status_of(first.split(b"\r\n", 1)[0])


PRINTABLE = st.characters(min_codepoint=33, max_codepoint=126)
HEADER_VALUES = st.one_of(
    st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=40),
    st.text(st.characters(min_codepoint=0, max_codepoint=255), max_size=20),  # controls, latin-1
    st.sampled_from(["", "text/plain", "application/json", "*/*", "evil.example", "http://evil.example", "2025-11-25"]),
    st.builds(lambda c, n: c * n, st.sampled_from(["a", "9", ";"]), st.integers(100, 20_000)),
)


def _canary(port: int, normal: Normal) -> Callable[[], str | None]:
    """A normal client kept between cases: asks in its session, starting a new one when told it is gone (404)."""
    conn: list[HttpConnection] = []
    session: list[str] = []

    def once() -> tuple[int, str | None]:
        if not conn:
            conn.append(HttpConnection(port, ANSWER_DEADLINE_S))
        if not session:
            session.append(open_session(conn[0]))
        status, wrong = ask(conn[0], normal, session[0])
        if status == 404:  # a DELETE case ended it: a well-behaved client starts a new session
            session[0] = open_session(conn[0])
            status, wrong = ask(conn[0], normal, session[0])
        return status, wrong

    def problem() -> str | None:
        # A server may close an idle kept-alive connection, as HTTP allows; it shows as an empty answer or as an
        # error on the connection, and a client then connects again, once.
        for again in (False, True):
            try:
                status, wrong = once()
                if status != 0 or again:
                    return wrong
            except (OSError, RuntimeError, ValueError) as exc:
                if again:
                    conn.clear()
                    session.clear()
                    return f"the normal client was not served: {exc}"
            if conn:
                conn.pop().close()
        raise AssertionError("unreachable: the second attempt always returns")

    return problem


def case_strategies(
    call: dict[str, object], port: int, session: Callable[[], str], host: str = "127.0.0.1", path: str = "/mcp"
) -> dict[str, st.SearchStrategy[bytes]]:
    """The generated cases, by kind: each a whole request (or what a client sends as one) in bytes, to the endpoint
    at `host`, `port` and `path`, its frames made from the server's normal call `call`."""

    def at(method: str = "POST", to: str = path, headers: dict[str, str] | None = None, body: bytes = b"") -> bytes:
        return request(port, method, to, headers, body, host)

    any_frame = st.one_of(*framegen.frames_for(call).strategies.values()).map(bytes.strip)
    in_session = st.builds(lambda body: at(headers=HEADERS | {"Mcp-Session-Id": session()}, body=body), any_frame)
    valid = line(initialize()).strip()
    return {
        "body without a session": any_frame.map(lambda body: at(body=body)),
        "body in a session": in_session,
        "headers": st.builds(
            lambda picks, body: at(headers=dict(picks), body=body),
            st.lists(st.tuples(st.sampled_from(MCP_HEADERS), HEADER_VALUES), min_size=1, max_size=4),
            st.sampled_from([valid, b"{}", b""]),
        ),
        "method and path": st.builds(
            lambda method, to, with_session: at(
                method, to, HEADERS | ({"Mcp-Session-Id": session()} if with_session else {}), valid
            ),
            st.sampled_from(METHODS),
            st.sampled_from(paths_of(path)),
            st.booleans(),
        ),
        "unknown session": st.builds(
            lambda sid, method: at(method, headers=HEADERS | {"Mcp-Session-Id": sid}, body=valid),
            st.one_of(
                st.uuids().map(lambda u: u.hex),
                st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=80),
            ),
            st.sampled_from(["POST", "GET", "DELETE"]),
        ),
        "broken framing": st.one_of(
            st.binary(max_size=200).map(lambda b: b + b"\r\n\r\n"),  # not a request line at all
            st.builds(  # a length that is not a number, or says less than was sent
                lambda length, body: at(body=body).replace(
                    f"Content-Length: {len(body)}".encode(), f"Content-Length: {length}".encode()
                ),
                st.sampled_from(["-1", "abc", "1e3", "0x10", "0", " 5", "99999999999999999999"]),
                st.just(valid),
            ),
            st.sampled_from([b"zz", b"-1", b"ffffffffffffffffffff", b"5;" + b"x" * 100]).map(  # bad chunk sizes
                lambda size: (
                    at(body=valid).replace(b"Content-Length", b"Transfer-Encoding: chunked\r\nX")
                    + b"\r\n"
                    + size
                    + b"\r\n"
                    + valid
                    + b"\r\n0\r\n\r\n"
                )
            ),
        ),
    }


def case_problems(
    status: int, normal_call: str | None, exit_code: int | None, rss: float | None, owed: bool = False
) -> list[tuple[str, str]]:
    """What is wrong after one case, each as (its category of finding, a sentence): a 5xx or no answer, a request
    (`owed` an answer) accepted as a notification, the normal call's problem, an exit, memory over its limit."""
    problems = []
    if status >= 500:
        problems.append(("server error", f"the case was answered with HTTP {status}"))
    if status == -1:
        problems.append(("hang", "the case got no answer in time"))
    if owed and status == 202:
        problems.append(("protocol", "a request was accepted as a notification (HTTP 202): its client would wait"))
    if normal_call is not None:
        problems.append(("changed answer", normal_call))
    if exit_code is not None:
        problems.append(("crash", f"the server exited with code {exit_code}"))
    if rss is not None and rss > MEMORY_LIMIT_MB:
        problems.append(("over memory", f"the server uses {rss:.0f} MB, over {MEMORY_LIMIT_MB} MB"))
    return problems


def abuse_design(target: Target, examples: int, record: Record) -> ServedHttp:
    """Every generated kind of case, `examples` each, then the fixed ones, on one HTTP server of the design wismo
    serves for `target`; its faults go to `record` (part "served http"), the counts into the report returned."""
    design = target.address.serve or target.design
    cases: dict[str, int] = {}
    statuses: dict[str, dict[str, int]] = {}
    normal = Normal(target)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        with RawHttp(design, stdout=out, stderr=err) as server:
            process = psutil.Process(server.proc.pid)
            canary = _canary(server.port, normal)
            if (wrong := canary()) is not None:
                raise RuntimeError(f"the {design} server over HTTP did not serve a normal client: {wrong}")
            started = rss_mb(process)  # once it serves: before, the process may still be importing
            peak = [started]

            opened: list[str] = []

            def session() -> str:
                # One session for the cases that need one; a DELETE among them ends it, and later cases then see 404.
                if not opened:
                    opened.append(open_session(server.conn))
                return opened[0]

            def case(kind: str, status: int, what: bytes) -> None:
                cases[kind] = cases.get(kind, 0) + 1
                counts = statuses.setdefault(kind, {})
                counts[str(status)] = counts.get(str(status), 0) + 1
                rss = None
                if cases[kind] % RSS_EVERY == 0 and server.proc.poll() is None:
                    rss = rss_mb(process)
                    peak.append(rss)
                owed = frames.expect(what.partition(b"\r\n\r\n")[2])[0] == "request"
                for category, problem in case_problems(status, canary(), server.proc.poll(), rss, owed):
                    record.add(category, SERVED, kind, what, problem)

            def sender(kind: str) -> Callable[[bytes], None]:
                return lambda data: case(kind, exchange(server.port, data), data)

            for kind, strategy in case_strategies(normal.call(PROBE), server.port, session).items():
                run_examples(examples, strategy, sender(kind), generate_only=True)
            oversized = request(server.port, body=b"[" * OVERSIZED_BODY)
            case("oversized body", exchange(server.port, oversized), oversized[:200])
            slow = hold_slow_clients(server.port, normal, SLOW_CLIENTS)
            parallel = parallel_clients(server.port, normal, PARALLEL_CLIENTS, PARALLEL_CALLS)
            for part, clients in (("slowClients", slow), ("parallelClients", parallel)):
                if clients["problem"] is not None:
                    record.add("changed answer", SERVED, part, "", clients["problem"])
            peak.append(rss_mb(process))
        code = server.proc.returncode
        out.seek(0)
        err.seek(0)
        stdout_bytes = len(out.read())
        problems = exit_problems(code, stdout_bytes, err.read().decode(errors="replace"))
    report: ServedHttp = {
        "cases": cases,
        "statuses": statuses,
        "startServerRssMb": round(started, 1),
        "slowClients": slow,
        "parallelClients": parallel,
        "peakServerRssMb": round(max(peak), 1),
        "exitCode": code,
        "stdoutBytes": stdout_bytes,
        "cleanExit": not problems,
    }
    for problem in problems:
        record.add("unclean exit", SERVED, "SIGTERM", "", problem)
    return report


def exit_problems(code: int, stdout_bytes: int, stderr: str) -> list[str]:
    """What was wrong with how an HTTP server stopped on SIGTERM: its exit code, stdout, a traceback on stderr."""
    problems = [] if code == 0 else [f"the server exited with code {code} on SIGTERM"]
    if stdout_bytes:
        problems.append(f"the server wrote {stdout_bytes} bytes on stdout")
    if "Traceback" in stderr:
        last = stderr.strip().splitlines()[-1]
        problems.append(f"the server wrote a traceback on stderr, ending {last[:200]!r}")
    return problems


def hold_slow_clients(port: int, normal: Normal, count: int) -> SlowClients:
    """Open `count` connections that each send half a request and wait; a normal client must be served meanwhile."""
    held = []
    whole = request(port, body=line(initialize()).strip())
    try:
        for n in range(count):
            sock = socket.create_connection(("127.0.0.1", port), timeout=ANSWER_DEADLINE_S)
            cut = whole.index(b"\r\n\r\n") if n % 2 else len(whole) - 10  # half the headers, or all but the body's end
            sock.sendall(whole[:cut])
            held.append(sock)
        time.sleep(0.2)
        problem = new_client_problem(port, normal)
    finally:
        for sock in held:
            sock.close()
    return {"held": count, "problem": problem}


def parallel_clients(port: int, normal: Normal, clients: int, calls: int) -> ParallelClients:
    """`clients` clients at once, each with its own connection and session, asking `calls` times; every answer
    checked."""

    def one(n: int) -> list[str]:
        conn = HttpConnection(port, ANSWER_DEADLINE_S)
        try:
            sid = open_session(conn)
            return [p for i in range(calls) if (p := ask(conn, normal, sid, f"parallel-{n}-{i}")[1]) is not None]
        finally:
            conn.close()

    with ThreadPoolExecutor(clients) as pool:
        wrong = [p for problems in pool.map(one, range(clients)) for p in problems]
    return {"clients": clients, "callsEach": calls, "wrongAnswers": len(wrong), "problem": wrong[0] if wrong else None}


def abandoned(target: Target, sessions: int, every: int, limits: SessionLimits | None = None) -> SessionBound:
    """The session bound on a fresh server of the design wismo serves for `target` (wismo's default limits unless
    others are given): the memory curve, the first session, a new client."""
    limits = limits or SessionLimits()
    options = ("--max-sessions", str(limits.max_sessions), "--session-idle-timeout", f"{limits.idle_timeout_s:g}")
    with RawHttp(target.address.serve or target.design, options=options) as server:
        result = abandon_sessions(server, Normal(target), sessions, every)
    return {
        **result,
        "design": target.design,
        "maxSessions": limits.max_sessions,
        "idleTimeoutS": limits.idle_timeout_s,
    }


def bound_problems(bound: SessionBound) -> list[tuple[str, str]]:
    """What breaks the session bound in an abandoned-sessions result, each as (its category of finding, a
    sentence)."""
    problems = []
    if bound["growthMb"] > bound["boundMb"]:
        problems.append(("over memory", f"{bound['abandoned']:,} abandoned sessions added {bound['growthMb']} MB"))
    if bound["abandoned"] > bound["maxSessions"] and bound["firstSessionAfterStatus"] != 404:
        status = bound["firstSessionAfterStatus"]
        problems.append(("over memory", f"the first session was kept past the cap (HTTP {status})"))
    if bound["openingsRefused"]:
        problems.append(("changed answer", f"{bound['openingsRefused']} new sessions were refused"))
    if bound["newClientProblem"] is not None:
        problems.append(("changed answer", bound["newClientProblem"]))
    return problems


def sessions_bound(target: Target, sessions: int, every: int = 250) -> SessionsResult:
    """The abandoned-sessions test on wismo's limits and, for comparison, on the SDK's defaults, on one design wismo
    serves; what the bound breaks, said."""
    from mcp.server.streamable_http_manager import DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT

    measured = abandoned(target, sessions, every)
    bound: JudgedBound = {**measured, "failures": bound_problems(measured)}
    sdk = SessionLimits(DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT)
    return {"wismo": bound, "sdkDefaults": abandoned(target, sessions, every, sdk)}
