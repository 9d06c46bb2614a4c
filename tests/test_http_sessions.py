"""Bounded Streamable HTTP sessions (`wismo serve --http`): a cap with the session idle longest closed for a new
client, an idle timeout, and memory within its bound after thousands of abandoned sessions. Server processes and
raw HTTP/1.1 clients: the sessions' behaviour on the suite's forked servers (`wismo serve --http` runs the same code
once forked; only a stdio server defers imports as it starts), their memory on a real one."""

import socket
import subprocess
import time

import pytest

from commands import wismo_argv
from hostile_targets import normal
from wismo.checks import sessions
from wismo.checks.sessions import ask, open_session
from wismo.mcp.client.raw import HttpConnection, RawHttp
from wismo.mcp.servers.protocol import PINNED_REVISION
from wismo.mcp.servers.settings import DEFAULT_MAX_SESSIONS, SessionLimitInvalid, SessionLimits

GRANULAR, FOCUSED = normal("granular"), normal("focused")  # each answer must be the same as its first


@pytest.mark.slow
@pytest.mark.usefixtures("real_servers")  # reads the server's own memory from its pid: not a launcher's
def test_abandoned_sessions_stay_within_the_bound_and_a_new_client_is_served():
    # On the SDK's defaults (10,000 sessions for 30 minutes) these 3,000 sessions add some 108 MB and the first
    # session is still kept; bounded, the first is closed when the cap is reached and memory levels off.
    with RawHttp("focused") as server:
        result = sessions.abandon(server, normal("focused"), 3000, every=500)
    assert result["firstSessionBefore"] is None and result["openingsRefused"] == 0, result
    assert result["growthMb"] <= sessions.MEMORY_BOUND_MB, result["curve"]
    assert result["firstSessionAfterStatus"] == 404, "the oldest idle session was kept past the cap"
    assert result["newClientProblem"] is None, result["newClientProblem"]
    assert [p["sessions"] for p in result["curve"]] == list(range(0, 3001, 500))


def test_at_the_cap_the_session_idle_longest_is_closed_and_the_others_kept():
    with RawHttp("granular", options=("--max-sessions", "3")) as server:
        conn = server.conn
        granular = normal("granular")
        a, b, c = (open_session(conn) for _ in range(3))
        assert ask(conn, granular, a) == (200, None)  # a is used again, so b is now idle longest
        d = open_session(conn)  # the cap is reached: b is closed to admit d
        assert ask(conn, granular, b)[0] == 404
        assert [ask(conn, granular, s) for s in (a, c, d)] == [(200, None)] * 3
        e = open_session(conn)  # next idle longest: a (asked before c and d)
        assert ask(conn, granular, a)[0] == 404 and ask(conn, granular, e) == (200, None)


def test_at_the_cap_a_request_that_opens_no_session_closes_none():
    # Only an established session takes a place: junk without a session id, a refused origin, a GET or a request
    # other than initialize must not cost a client its session (before, each closed the idlest one).
    from wismo.checks.http_abuse import exchange, request

    with RawHttp("granular", options=("--max-sessions", "2")) as server:
        a, b = open_session(server.conn), open_session(server.conn)
        port = server.port
        junk = [
            request(port, body=b"this is not json"),
            request(port, headers={"Origin": "http://evil.example"}, body=b'{"jsonrpc":"2.0","id":1,"method":"x"}'),
            request(port, "GET"),
            request(port, body=b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'),
        ]
        assert [exchange(port, data) for data in junk] == [400, 403, 400, 400]
        assert [ask(server.conn, GRANULAR, s) for s in (a, b)] == [(200, None)] * 2
        c = open_session(server.conn)  # a real newcomer: now a (idle longest) makes room
        assert ask(server.conn, GRANULAR, a)[0] == 404
        assert [ask(server.conn, GRANULAR, s) for s in (b, c)] == [(200, None)] * 2


def _open_stream(port: int, session: str) -> socket.socket:
    """A GET stream held open on `session`: a request in flight for as long as the socket stays open."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(
        f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n"
        f"Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: {PINNED_REVISION}\r\n\r\n".encode()
    )
    assert sock.recv(200).startswith(b"HTTP/1.1 200")
    return sock


def test_a_session_with_a_request_in_flight_is_never_closed_for_a_newcomer():
    with RawHttp("focused", options=("--max-sessions", "1")) as server:
        busy = open_session(server.conn)
        stream = _open_stream(server.port, busy)
        with pytest.raises(RuntimeError, match="503"):
            open_session(HttpConnection(server.port))
        assert ask(server.conn, FOCUSED, busy) == (200, None)
        stream.close()
        deadline = time.monotonic() + 15
        while True:  # once the server sees the stream closed, the session is idle and may be closed for a newcomer
            try:
                newcomer = open_session(HttpConnection(server.port))
                break
            except RuntimeError:
                assert time.monotonic() < deadline, "the session stayed busy after its stream closed"
                time.sleep(0.1)
        assert ask(server.conn, FOCUSED, busy)[0] == 404 and ask(server.conn, FOCUSED, newcomer) == (200, None)


def test_a_session_idle_past_its_timeout_is_closed():
    with RawHttp("focused", options=("--session-idle-timeout", "0.5")) as server:
        session = open_session(server.conn)
        assert ask(server.conn, FOCUSED, session) == (200, None)
        time.sleep(2.0)  # four timeouts with no request in flight
        assert ask(server.conn, FOCUSED, session)[0] == 404
        assert sessions.new_client_problem(server.port, normal("focused")) is None


@pytest.mark.parametrize(
    "options, named",
    [
        (["--http", "0", "--max-sessions", "0"], "--max-sessions N must be a whole number of sessions, 1 or more"),
        (["--http", "0", "--max-sessions", "-3"], "--max-sessions N"),
        (["--http", "0", "--session-idle-timeout", "0"], "--session-idle-timeout SECONDS must be a positive"),
        (["--http", "0", "--session-idle-timeout", "inf"], "--session-idle-timeout SECONDS"),
        (["--max-sessions", "5"], "--max-sessions applies to Streamable HTTP only"),
        (["--session-idle-timeout", "5"], "--session-idle-timeout applies to Streamable HTTP only"),
    ],
)
def test_bad_session_options_are_one_sentence_and_exit_2(options, named):
    done = subprocess.run(wismo_argv("serve", "focused", *options), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and named in done.stderr, done.stderr


def test_session_limits_default_to_a_local_servers_and_refuse_nonsense():
    for field, value in [("max_sessions", 0), ("max_sessions", True), ("max_sessions", 2.5), ("idle_timeout_s", -1)]:
        with pytest.raises(SessionLimitInvalid) as caught:
            SessionLimits(**{field: value})
        assert caught.value.name == field and caught.value.value == value


def test_the_docs_state_the_limits_the_server_has():
    from pathlib import Path

    from wismo.mcp.servers.settings import DEFAULT_IDLE_TIMEOUT_S

    docs = Path(__file__).resolve().parents[1] / "docs"
    readme = " ".join(
        " ".join((docs / page).read_text(encoding="utf-8") for page in ("reliability.md", "servers.md")).split()
    )
    assert f"keeps at most {DEFAULT_MAX_SESSIONS} sessions (`--max-sessions N`)" in readme
    assert f"session after {DEFAULT_IDLE_TIMEOUT_S:g} seconds with no request in flight" in readme
    assert (
        f"at most {DEFAULT_MAX_SESSIONS} sessions and closes one after {DEFAULT_IDLE_TIMEOUT_S / 60:g} minutes"
        in readme
    )
    assert f"may add at most {sessions.MEMORY_BOUND_MB:g} MB" in readme
