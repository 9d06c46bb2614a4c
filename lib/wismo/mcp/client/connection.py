"""The MCP client side: start a design's server, handshake, list tools, call them, and measure each interaction.

Two transports: stdio (the server is our child process) and Streamable HTTP on 127.0.0.1 (the server is our
child process listening on a free port, or any endpoint given by URL). Every failure becomes a HarnessError
naming the server, the transport and the cause, within a bounded time, and carrying them as attributes.
"""

from __future__ import annotations

import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager, suppress
from dataclasses import asdict, dataclass, field
from typing import Any, TextIO

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from wismo.core import processes
from wismo.core.errors import described, first_leaf, leaves
from wismo.core.jsonfmt import utf8_len
from wismo.core.revision import PINNED_REVISION
from wismo.mcp.client import failures
from wismo.mcp.client.failures import HarnessError
from wismo.mcp.client.process import (
    DEVNULL,
    client_env,
    free_port,
    listening_socket,
    server_command,
    server_env,
    start,
    stop,
)
from wismo.mcp.client.results import Interaction, ResourceUnread, ToolResult, blocks, followed, ms_since

DEFAULT_TIMEOUT_S = 20.0
TRANSPORTS = ("stdio", "http")


@dataclass
class Connection:
    """A running server of one design and the SDK client session talking to it."""

    design: str
    transport: str
    session: ClientSession
    start_ms: float = 0.0
    call_timeout_s: float = DEFAULT_TIMEOUT_S
    interactions: list[Interaction] = field(default_factory=list)
    process: subprocess.Popen[bytes] | None = None
    errlog: TextIO | None = None
    target: str | None = None

    def _broken(self, what: str, exc: BaseException) -> HarnessError:
        """A HarnessError for a failed request: what failed, why, and whether the server process is gone."""
        leaf, detail = first_leaf(exc), described(exc)
        timed_out = failures.timed_out(leaf)
        if timed_out:
            detail = f"no answer within {self.call_timeout_s:g} s ({detail})"
        code = failures.exit_code(self.process)
        if code is not None:
            detail += f"; the server process exited with code {code}"
        if timed_out:
            cause = "timeout"
        elif code is not None or failures.connection_closed(leaf):
            cause = "died-mid-session"
        else:
            cause = "request-failed"
        tail = failures.stderr_tail(self.errlog)
        return HarnessError(
            f"{self.design} server over {self.transport}: {what} failed: {detail}" + failures.stderr_said(tail),
            **self._facts(cause, leaf, tail, code),
        )

    def _facts(self, cause: str, error: BaseException | None, tail: str, code: int | None) -> failures.HarnessFacts:
        """The attributes of a HarnessError about this connection."""
        return {
            "server": self.design,
            "transport": self.transport,
            "target": self.target,
            "cause": cause,
            "error": error,
            "stderr": tail,
            "exit_code": code,
        }

    async def list_tools(self) -> list[dict[str, object]]:
        """The server's tools/list, as the wire JSON objects (camelCase, unset fields left out)."""
        started = time.perf_counter()
        try:
            with anyio.fail_after(self.call_timeout_s):
                listing = await self.session.list_tools()
        except Exception as exc:
            raise self._broken("tools/list", exc) from None
        self.interactions.append(Interaction("tools/list", None, None, False, 0, ms_since(started)))
        return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listing.tools]

    async def call(self, tool: str, arguments: dict[str, Any], follow_resources: bool = False) -> ToolResult:
        """Call one tool and record the interaction; a result of any blocks, as the server gives it (ToolResult),
        each resource link followed with resources/read in its place when `follow_resources`."""
        started = time.perf_counter()
        try:
            # A deadline of our own as well as the session's, so a frozen server cannot hang the caller.
            with anyio.fail_after(self.call_timeout_s + 1):
                result = await self.session.call_tool(tool, arguments, read_timeout_seconds=self.call_timeout_s)
        except Exception as exc:
            raise self._broken(f"tools/call {tool}", exc) from None
        found = blocks(list(result.content))
        text_bytes = utf8_len("\n".join(found.texts)) + found.binary
        self.interactions.append(
            Interaction("tools/call", tool, arguments, bool(result.is_error), text_bytes, ms_since(started))
        )
        reads = len(found.links) if follow_resources else 0
        if reads:
            try:
                found = await followed(found, self.read_resource)
            except ResourceUnread as exc:  # the server refused one: the step's result is that error, said
                return ToolResult(str(exc), True, None, (), found.binary, reads)
        texts = tuple(found.texts)
        several = len(result.content) > 1 or len(texts) > 1
        return ToolResult(
            "\n".join(texts), bool(result.is_error), result.structured_content, texts * several, found.binary, reads
        )

    async def read_resource(self, uri: str) -> list[object]:
        """Read one resource and record the interaction: its contents, as the server gives them."""
        started = time.perf_counter()
        try:
            with anyio.fail_after(self.call_timeout_s + 1):
                result = await self.session.read_resource(uri)
        except MCPError as exc:  # the server answered with a JSON-RPC error: it is up, the resource is not
            self.interactions.append(Interaction("resources/read", uri, None, True, 0, ms_since(started)))
            raise ResourceUnread(uri, exc.error.message) from None
        except Exception as exc:
            raise self._broken(f"resources/read {uri}", exc) from None
        contents, read = list(getattr(result, "contents", [])), blocks([])
        read.count(contents)
        size = utf8_len("\n".join(read.texts)) + read.binary
        self.interactions.append(Interaction("resources/read", uri, None, False, size, ms_since(started)))
        return contents

    def tool_calls(self) -> list[Interaction]:
        """The tools/call interactions so far."""
        return [i for i in self.interactions if i.method == "tools/call"]


async def _wait_listening(process: subprocess.Popen[bytes], port: int, deadline_s: float) -> None:
    """Wait until the server accepts TCP connections; fail early if it exits, or at the deadline."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if process.poll() is not None:
            raise RuntimeError(f"the server process exited with code {process.returncode} before listening")
        with suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        await anyio.sleep(0.02)
    raise TimeoutError(f"the server did not listen on 127.0.0.1:{port} within {deadline_s:g} s")


async def _open_session(
    stack: AsyncExitStack,
    design: str,
    transport: str,
    env: dict[str, str] | None,
    timeout_s: float,
    command: list[str] | None,
    url: str | None,
    errlog: TextIO,
    cwd: str | None = None,
) -> tuple[ClientSession, subprocess.Popen[bytes] | None, str]:
    """Start (or reach) the server and open an SDK session on `stack`; returns the session, process and target."""
    # A server started here sees the same design registry as this process (designs registered by file).
    env = server_env(env)
    if transport == "stdio":
        command = command or server_command(design)
        params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=cwd)
        read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
        return (
            await stack.enter_async_context(ClientSession(read, write, read_timeout_seconds=timeout_s)),
            None,
            " ".join(command),
        )
    from mcp.client.streamable_http import streamable_http_client

    process = None
    if url is None:
        # Its own session keeps signals sent to our process group off it, so without this only stop would end it:
        # it also ends with the thread that started it (this event loop's), when this process is killed and never
        # gets to stop it (a kernel killed with its build, a notebook's own kernel dying).
        dies_with_us = processes.ends_with_parent()
        if command is None:
            # Our own server gets a socket already listening: no race for the port with any other process.
            with listening_socket() as sock:
                port = sock.getsockname()[1]
                process = start(
                    server_command(design, http_fd=sock.fileno()),
                    client_env() | (env or {}),
                    stdin=DEVNULL,
                    stdout=DEVNULL,
                    stderr=errlog,
                    handed=sock,
                    detached=True,
                    preexec=dies_with_us,
                )
        else:
            port = free_port()
            # The same minimal environment an MCP client gives a stdio server.
            process = start(
                command,
                client_env() | (env or {}),
                cwd,
                stdin=DEVNULL,
                stdout=DEVNULL,
                stderr=errlog,
                detached=True,
                preexec=dies_with_us,
            )
        stack.callback(stop, process)
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


@contextmanager
def _stderr_file() -> Iterator[TextIO]:
    """Where the server's stderr goes, so a failure can quote it (notebook kernels have no stderr fd)."""
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as errlog:
        yield errlog


@asynccontextmanager
async def connect(
    design: str,
    transport: str = "stdio",
    env: dict[str, str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    command: list[str] | None = None,
    require_pinned: bool = True,
    url: str | None = None,
    cwd: str | None = None,
) -> AsyncIterator[Connection]:
    """Start `design`'s server over `transport` (or any `command`, run in `cwd`, or an HTTP `url`), complete the
    handshake, and stop the server on exit, also on error."""
    if transport not in TRANSPORTS:
        raise HarnessError(
            f"{design} server: transport {transport!r} is not available; use one of {', '.join(TRANSPORTS)}",
            server=design,
            transport=transport,
            cause="bad-transport",
        )
    with _stderr_file() as errlog:
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
                    stack, design, transport, env, timeout_s, command, url, errlog, cwd
                )
                init = await session.initialize()  # bounded by the session's read timeout
                if require_pinned and init.protocol_version != PINNED_REVISION:
                    raise HarnessError(
                        f"{design} server over {transport}: answered revision {init.protocol_version}, "
                        f"expected {PINNED_REVISION}",
                        server=design,
                        transport=transport,
                        cause="unexpected-answer",
                        target=target,
                    )
                ready = True
                try:
                    yield Connection(
                        design,
                        transport,
                        session,
                        start_ms=ms_since(started),
                        call_timeout_s=timeout_s,
                        process=process,
                        errlog=errlog,
                        target=target,
                    )
                except Exception as exc:
                    body_error = exc  # the caller's own error, which the transports' task groups may wrap
                    raise
        except Exception as exc:
            if body_error is not None and body_error in leaves(exc):
                body_error.__context__ = None
                failure = body_error
            else:
                failure = failures.as_failure(exc, ready, design, transport, target, process, errlog)
        if failure is not None:
            # Raised outside the except block, so it carries no context chain back into the transports' groups
            # (a chain that loops through an exception group breaks some traceback renderers, IPython's among them).
            raise failure


def interactions_table(connection: Connection) -> list[dict[str, object]]:
    """The recorded interactions as plain dicts, for tables."""
    return [asdict(i) for i in connection.interactions]
