"""Streamable HTTP sessions from a raw client: open one, ask a normal question in it, and abandon them by the
thousand while the server's memory is sampled (the session bound of `wismo serve --http`)."""

from __future__ import annotations

import json

import psutil

from wismo.checks.fuzz import rss_mb
from wismo.checks.records import AbandonedSessions, CurvePoint
from wismo.checks.target import Normal
from wismo.core.revision import PINNED_REVISION
from wismo.mcp.client.raw import HttpConnection, RawHttp, initialize, line, status_of

HEADERS = {"MCP-Protocol-Version": PINNED_REVISION}
# What 3,000 abandoned sessions may add to a server at most: the session cap closes the idlest, so memory stays bounded.
MEMORY_BOUND_MB = 100.0


def open_session(conn: HttpConnection) -> str:
    """A new session on `conn` (initialize, notifications/initialized): its id, or an error saying what came back."""
    return conn.open_session()[0]


def answer_problem(status: int, body: bytes, request_id: int | str, normal: Normal) -> str | None:
    """None when `body` answers the normal call as its first answer did; else one sentence saying what is wrong."""
    if status != 200:
        return f"the normal call was answered with HTTP {status}: {body[:120]!r}"
    try:
        answer = json.loads(body)
    except ValueError:
        return f"the normal call's answer is not JSON: {body[:120]!r}"
    if not isinstance(answer, dict) or answer.get("id") != request_id:
        return f"the normal call's answer is not the answer to it: {body[:120]!r}"
    return normal.problem(answer)


def ask(conn: HttpConnection, normal: Normal, session: str, request_id: int | str = 7) -> tuple[int, str | None]:
    """The normal call in `session`: the HTTP status, and None or a sentence saying what is wrong with the answer."""
    status_line, _, body = conn.post(line(normal.call(request_id)).strip(), HEADERS | {"Mcp-Session-Id": session})
    status = status_of(status_line)
    return status, answer_problem(status, body, request_id, normal)


def new_client_problem(port: int, normal: Normal) -> str | None:
    """A well-behaved new client on its own connection: None when it is served correctly, else what went wrong."""
    try:
        conn = HttpConnection(port, timeout_s=10)
    except OSError as exc:
        return f"a new client could not connect: {exc}"
    try:
        return ask(conn, normal, open_session(conn))[1]
    except (OSError, RuntimeError, ValueError) as exc:
        return f"a new client was not served: {exc}"
    finally:
        conn.close()


def abandon(server: RawHttp, normal: Normal, sessions: int, every: int = 250) -> AbandonedSessions:
    """Open one session and use it, then open `sessions` more that are never used again, sampling the server's
    memory every `every`; then ask in the first session again and serve a new client. The figures of the bound."""
    first = open_session(server.conn)
    used = ask(server.conn, normal, first)[1]
    process = psutil.Process(server.proc.pid)
    started = rss_mb(process)
    curve: list[CurvePoint] = [{"sessions": 0, "rssAboveStartMb": 0.0}]
    refused = 0
    opening = line(initialize()).strip()
    for n in range(1, sessions + 1):
        status_line, _, _ = server.conn.post(opening, HEADERS)
        refused += status_of(status_line) != 200
        if n % every == 0 or n == sessions:
            curve.append({"sessions": n, "rssAboveStartMb": round(rss_mb(process) - started, 1)})
    first_again, _ = ask(server.conn, normal, first, 8)
    return {
        "abandoned": sessions,
        "startServerRssMb": round(started, 1),
        "curve": curve,
        "growthMb": max(point["rssAboveStartMb"] for point in curve),
        "boundMb": MEMORY_BOUND_MB,
        "openingsRefused": refused,
        "firstSessionBefore": used,
        "firstSessionAfterStatus": first_again,
        "newClientProblem": new_client_problem(server.port, normal),
    }
