"""How a server's failure becomes a HarnessError: the closed set of causes, and the facts each error carries."""

from __future__ import annotations

import subprocess
from contextlib import suppress
from typing import TextIO, TypedDict

from wismo.core.errors import WismoError, described, first_leaf, single

# HarnessError.cause, a closed set: what went wrong, for callers to decide on (never the message's words).
CAUSES = {
    "bad-transport": "the transport asked for is not one of TRANSPORTS",
    "missing-command": "the server's command could not be run (not found, not executable)",
    "exited-at-start": "the server exited, or closed its end of the connection, before the handshake completed",
    "not-listening": "nothing accepts connections at the HTTP address",
    "timeout": "no answer within the deadline (listening, handshake or request)",
    "not-mcp": "the server answered the handshake, but with an error instead of MCP's answer",
    "unexpected-answer": "an MCP answer wismo cannot use: another protocol revision, or not one text block",
    "unreachable": "any other failure before the handshake completed",
    "died-mid-session": "the server process exited, or the connection broke, after the handshake",
    "request-failed": "a request failed while the server and the connection were still up",
}


class HarnessError(WismoError):
    """A server could not be started, reached or used; the message names the server, the transport and the cause.

    Attributes: `server` (the design's name, or whatever the caller calls the server), `transport`, `target` (the
    command line or URL, when known), `cause` (one of CAUSES), `error` (the underlying exception, if any),
    `stderr` (the end of what the server wrote to stderr, or "") and `exit_code` (our server process's exit code,
    when it has exited)."""

    def __init__(
        self,
        message: str,
        *,
        server: str,
        transport: str,
        cause: str,
        target: str | None = None,
        error: BaseException | None = None,
        stderr: str = "",
        exit_code: int | None = None,
    ) -> None:
        if cause not in CAUSES:
            raise ValueError(f"HarnessError cause {cause!r} is not one of {', '.join(CAUSES)}")
        super().__init__(message)
        self.server = server
        self.transport = transport
        self.cause = cause
        self.target = target
        self.error = error
        self.stderr = stderr
        self.exit_code = exit_code


class HarnessFacts(TypedDict):
    """The attributes of a HarnessError about one connection, as keyword arguments of HarnessError."""

    server: str
    transport: str
    target: str | None
    cause: str
    error: BaseException | None
    stderr: str
    exit_code: int | None


def stderr_said(tail: str) -> str:
    """The message's ending that quotes the server's stderr, if it wrote any."""
    return f"; its stderr ends with: {tail}" if tail else ""


def timed_out(exc: BaseException) -> bool:
    """Whether `exc` is a deadline passing: ours, the SDK's request timeout or the HTTP client's."""
    import httpx2
    from mcp.shared.exceptions import MCPError
    from mcp_types import REQUEST_TIMEOUT

    return isinstance(exc, (TimeoutError, httpx2.TimeoutException)) or (
        isinstance(exc, MCPError) and exc.code == REQUEST_TIMEOUT
    )


def connection_closed(exc: BaseException) -> bool:
    """Whether `exc` is the SDK's word that the connection closed under it."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED

    return isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED


def exit_code(process: subprocess.Popen[bytes] | None, wait_s: float = 0.0) -> int | None:
    """Our server process's exit code, waiting up to `wait_s` for it to finish exiting; None while it runs."""
    if process is None:
        return None
    with suppress(subprocess.TimeoutExpired):
        process.wait(wait_s)
    return process.poll()


def stderr_tail(errlog: TextIO | None, limit: int = 600) -> str:
    """The last characters a server wrote to stderr."""
    if errlog is None:
        return ""
    with suppress(Exception):
        errlog.flush()
        errlog.seek(0)
        return errlog.read()[-limit:].strip()
    return ""


def as_failure(
    exc: Exception,
    ready: bool,
    design: str,
    transport: str,
    target: str,
    process: subprocess.Popen[bytes] | None,
    errlog: TextIO | None,
) -> BaseException:
    """The error to raise for `exc`: our own HarnessError as is, the caller's own error untouched, else a
    HarnessError saying whether the server could not be reached or the connection broke mid-session."""
    inner = single(exc)
    if isinstance(inner, HarnessError):
        inner.__context__ = None
        return inner
    if ready and not isinstance(exc, BaseExceptionGroup):
        return exc
    tail = stderr_tail(errlog)
    leaf = first_leaf(exc)
    if ready:
        code = exit_code(process)
        exited = f"; the server process exited with code {code}" if code is not None else ""
        return HarnessError(
            f"{design} server over {transport} ({target}): the connection failed mid-session: "
            f"{described(exc)}{exited}{stderr_said(tail)}",
            server=design,
            transport=transport,
            cause="died-mid-session",
            target=target,
            error=leaf,
            stderr=tail,
            exit_code=code,
        )
    # A server of ours that broke the connection has exited or is about to: a moment tells which.
    code = None if timed_out(leaf) else exit_code(process, wait_s=1.0)
    return HarnessError(
        f"{design} server over {transport} ({target}) could not be reached: {described(exc)}{stderr_said(tail)}",
        server=design,
        transport=transport,
        cause=unreachable_cause(leaf, code),
        target=target,
        error=leaf,
        stderr=tail,
        exit_code=code,
    )


def unreachable_cause(leaf: BaseException, exit_code: int | None) -> str:
    """Which of CAUSES kept the handshake from completing, from the failure and our server's exit code."""
    import httpx2
    from mcp.shared.exceptions import MCPError

    if isinstance(leaf, (FileNotFoundError, PermissionError)):
        return "missing-command"
    if timed_out(leaf):
        return "timeout"
    if isinstance(leaf, httpx2.ConnectError):
        # A server of ours was listening before the handshake began: refused now, it has gone (a fast one gets
        # there before the first request, a slow one while it is read).
        return "exited-at-start" if exit_code is not None else "not-listening"
    if exit_code is not None or connection_closed(leaf):
        return "exited-at-start"
    if isinstance(leaf, MCPError):
        return "not-mcp"
    return "unreachable"
