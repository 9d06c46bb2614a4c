"""The MCP client side: start a design's server, handshake, list tools, call them, and measure each interaction.

Two transports: stdio (the server is our child process) and Streamable HTTP on 127.0.0.1 (the server is our
child process listening on a free port, or any endpoint given by URL). Every failure becomes a HarnessError
naming the server, the transport and the cause, within a bounded time.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from dataclasses import asdict, dataclass, field
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client

from wismo.core.jsonfmt import utf8_len
from wismo.servers import designs
from wismo.servers.protocol import PINNED_REVISION

DEFAULT_TIMEOUT_S = 20.0
TRANSPORTS = ("stdio", "http")


class HarnessError(Exception):
    """A server could not be started, reached or used; the message names the server, the transport and the cause."""


@dataclass
class Interaction:
    """One MCP request and what came back: the text's UTF-8 bytes, the error flag and the wall time."""

    method: str
    tool: str | None
    arguments: dict[str, Any] | None
    is_error: bool
    text_bytes: int
    elapsed_ms: float


@dataclass
class ToolResult:
    """The single text block of a tools/call result, with its error flag."""

    text: str
    is_error: bool

    @property
    def bytes(self) -> int:
        """UTF-8 bytes of the JSON text inside the result (envelopes excluded, as in the article)."""
        return utf8_len(self.text)


def _cause(exc: BaseException) -> str:
    """The innermost exception of a group, as 'Type: message'."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@dataclass
class Connection:
    """A running server of one design and the SDK client session talking to it."""

    design: str
    transport: str
    session: ClientSession
    start_ms: float = 0.0
    call_timeout_s: float = DEFAULT_TIMEOUT_S
    interactions: list[Interaction] = field(default_factory=list)
    process: subprocess.Popen | None = None
    errlog: Any = None

    def _broken(self, what: str, exc: BaseException) -> HarnessError:
        """A HarnessError for a failed request: what failed, why, and whether the server process is gone."""
        detail = _cause(exc)
        if isinstance(exc, TimeoutError) or "timed out" in detail.lower():
            detail = f"no answer within {self.call_timeout_s:g} s ({detail})"
        if self.process is not None and self.process.poll() is not None:
            detail += f"; the server process exited with code {self.process.returncode}"
        tail = _tail(self.errlog)
        return HarnessError(
            f"{self.design} server over {self.transport}: {what} failed: {detail}"
            + (f"; its stderr ends with: {tail}" if tail else "")
        )

    async def list_tools(self) -> list[dict[str, Any]]:
        """The server's tools/list, as the wire JSON objects (camelCase, unset fields left out)."""
        started = time.perf_counter()
        try:
            with anyio.fail_after(self.call_timeout_s):
                listing = await self.session.list_tools()
        except Exception as exc:
            raise self._broken("tools/list", exc) from None
        elapsed = (time.perf_counter() - started) * 1000
        tools = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listing.tools]
        self.interactions.append(Interaction("tools/list", None, None, False, 0, elapsed))
        return tools

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolResult:
        """Call one tool and record the interaction; the result must be one text block."""
        started = time.perf_counter()
        try:
            # A deadline of our own as well as the session's, so a frozen server cannot hang the caller.
            with anyio.fail_after(self.call_timeout_s + 1):
                result = await self.session.call_tool(tool, arguments, read_timeout_seconds=self.call_timeout_s)
        except Exception as exc:
            raise self._broken(f"tools/call {tool}", exc) from None
        elapsed = (time.perf_counter() - started) * 1000
        texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
        if len(texts) != 1 or len(result.content) != 1:
            raise HarnessError(
                f"{self.design} server over {self.transport}: {tool} returned {len(result.content)} content blocks, expected one text block"
            )
        outcome = ToolResult(texts[0], bool(result.is_error))
        self.interactions.append(Interaction("tools/call", tool, arguments, outcome.is_error, outcome.bytes, elapsed))
        return outcome

    def tool_calls(self) -> list[Interaction]:
        """The tools/call interactions so far."""
        return [i for i in self.interactions if i.method == "tools/call"]


def server_command(design: str, http_port: int | None = None, http_fd: int | None = None) -> list[str]:
    """The command that serves `design` with this interpreter (works with a minimal environment): over stdio, on an
    HTTP port, or on a listening socket handed down by file descriptor."""
    command = [sys.executable, "-m", "wismo", "serve", design]
    if http_fd is not None:
        return command + ["--http-fd", str(http_fd)]
    return command + ["--http", str(http_port)] if http_port is not None else command


def listening_socket() -> socket.socket:
    """A socket bound to a free port on 127.0.0.1 and listening, to hand to a server process: unlike a port number
    chosen first and bound by the child later, no other process can take it in between."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


def _tail(errlog: Any, limit: int = 600) -> str:
    """The last characters a server wrote to stderr."""
    if errlog is None:
        return ""
    with suppress(Exception):
        errlog.flush()
        errlog.seek(0)
        return errlog.read()[-limit:].strip()
    return ""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _wait_listening(process: subprocess.Popen, port: int, deadline_s: float) -> None:
    """Wait until the server accepts TCP connections; fail early if it exits, or at the deadline."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if process.poll() is not None:
            raise RuntimeError(f"the server process exited with code {process.returncode} before listening")
        with suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        await anyio.sleep(0.02)
    raise TimeoutError(f"the server did not listen on 127.0.0.1:{port} within {deadline_s:g} s")


def _stop(process: subprocess.Popen) -> None:
    """Stop a server process: SIGTERM (and SIGCONT, should it be stopped), then SIGKILL after 5 s."""
    if process.poll() is None:
        with suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
            process.send_signal(signal.SIGCONT)
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


async def _open_session(
    stack: AsyncExitStack,
    design: str,
    transport: str,
    env: dict[str, str] | None,
    timeout_s: float,
    command: list[str] | None,
    url: str | None,
    errlog: Any,
) -> tuple[ClientSession, subprocess.Popen | None, str]:
    """Start (or reach) the server and open an SDK session on `stack`; returns the session, process and target."""
    # A server started here sees the same design registry as this process (designs registered by file).
    env = {**designs.env(), **(env or {})} or None
    if transport == "stdio":
        command = command or server_command(design)
        params = StdioServerParameters(command=command[0], args=command[1:], env=env)
        read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
        return (
            await stack.enter_async_context(ClientSession(read, write, read_timeout_seconds=timeout_s)),
            None,
            " ".join(command),
        )
    from mcp.client.streamable_http import streamable_http_client

    process = None
    if url is None:
        if command is None:
            # Our own server gets a socket already listening: no race for the port with any other process.
            with listening_socket() as sock:
                port = sock.getsockname()[1]
                process = subprocess.Popen(
                    server_command(design, http_fd=sock.fileno()),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=errlog,
                    pass_fds=(sock.fileno(),),
                    env=get_default_environment() | (env or {}),
                    start_new_session=True,
                )
        else:
            port = free_port()
            # The same minimal environment an MCP client gives a stdio server.
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=errlog,
                env=get_default_environment() | (env or {}),
                start_new_session=True,
            )
        stack.callback(_stop, process)
        url = f"http://127.0.0.1:{port}/mcp"
        await _wait_listening(process, port, timeout_s)
    import httpx2
    from mcp.shared._httpx_utils import create_mcp_http_client

    # Bounded HTTP timeouts (the SDK's default read timeout is 300 s, for long-lived streams we do not use).
    client = await stack.enter_async_context(create_mcp_http_client(timeout=httpx2.Timeout(timeout_s)))
    # Our own server process is stopped outright, so only an endpoint we do not own gets a session DELETE.
    read, write = await stack.enter_async_context(
        streamable_http_client(url, http_client=client, terminate_on_close=process is None)
    )
    return await stack.enter_async_context(ClientSession(read, write, read_timeout_seconds=timeout_s)), process, url


@asynccontextmanager
async def connect(
    design: str,
    transport: str = "stdio",
    env: dict[str, str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    command: list[str] | None = None,
    require_pinned: bool = True,
    url: str | None = None,
) -> AsyncIterator[Connection]:
    """Start `design`'s server over `transport` (or any `command`, or an HTTP `url`), complete the handshake,
    and stop the server on exit, also on error."""
    if transport not in TRANSPORTS:
        raise HarnessError(
            f"{design} server: transport {transport!r} is not available; use one of {', '.join(TRANSPORTS)}"
        )
    # The server's stderr goes to a file so a failure can quote it (notebook kernels have no stderr fd).
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as errlog:
        started = time.perf_counter()
        target = url or " ".join(command or server_command(design))
        process = None
        ready = False
        failure: BaseException | None = None
        body_error: Exception | None = None
        try:
            # Plain nesting: the transports' task groups must exit in the task and order they were entered.
            async with AsyncExitStack() as stack:
                session, process, target = await _open_session(
                    stack, design, transport, env, timeout_s, command, url, errlog
                )
                init = await session.initialize()  # bounded by the session's read timeout
                if require_pinned and init.protocol_version != PINNED_REVISION:
                    raise HarnessError(
                        f"{design} server over {transport}: answered revision {init.protocol_version}, expected {PINNED_REVISION}"
                    )
                ready = True
                try:
                    yield Connection(
                        design,
                        transport,
                        session,
                        start_ms=(time.perf_counter() - started) * 1000,
                        call_timeout_s=timeout_s,
                        process=process,
                        errlog=errlog,
                    )
                except Exception as exc:
                    body_error = exc  # the caller's own error, which the transports' task groups may wrap
                    raise
        except Exception as exc:
            if body_error is not None and body_error in _leaves(exc):
                body_error.__context__ = None
                failure = body_error
            else:
                failure = _as_failure(exc, ready, design, transport, target, process, errlog)
        if failure is not None:
            # Raised outside the except block, so it carries no context chain back into the transports' groups
            # (a chain that loops through an exception group breaks some traceback renderers, IPython's among them).
            raise failure


def _as_failure(
    exc: Exception, ready: bool, design: str, transport: str, target: str, process: subprocess.Popen | None, errlog: Any
) -> BaseException:
    """The error to raise for `exc`: our own HarnessError as is, the caller's own error untouched, else a
    HarnessError saying whether the server could not be reached or the connection broke mid-session."""
    inner = _single(exc)
    if isinstance(inner, HarnessError):
        inner.__context__ = None
        return inner
    if ready and not isinstance(exc, BaseExceptionGroup):
        return exc
    tail = _tail(errlog)
    tail = f"; its stderr ends with: {tail}" if tail else ""
    if ready:
        exited = (
            f"; the server process exited with code {process.returncode}"
            if process is not None and process.poll() is not None
            else ""
        )
        return HarnessError(
            f"{design} server over {transport} ({target}): the connection failed mid-session: {_cause(exc)}{exited}{tail}"
        )
    return HarnessError(f"{design} server over {transport} ({target}) could not be reached: {_cause(exc)}{tail}")


def _leaves(exc: BaseException) -> list[BaseException]:
    """Every exception inside (possibly nested) exception groups, or the exception itself."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def _single(exc: BaseException) -> BaseException:
    """The one exception inside (possibly nested) single-member exception groups, else `exc` itself."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def interactions_table(connection: Connection) -> list[dict[str, Any]]:
    """The recorded interactions as plain dicts, for tables."""
    return [asdict(i) for i in connection.interactions]
