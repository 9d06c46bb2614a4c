"""The MCP client side: start a design's server, handshake, list tools, call them, and measure each interaction."""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from dataclasses import asdict, dataclass, field
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from .jsonfmt import utf8_len
from .servers.protocol import PINNED_REVISION

DEFAULT_TIMEOUT_S = 20.0


class HarnessError(Exception):
    """A server could not be started or reached; the message names the design, the transport and the cause."""


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


@dataclass
class Connection:
    """A running server of one design and the SDK client session talking to it."""

    design: str
    transport: str
    session: ClientSession
    start_ms: float = 0.0
    interactions: list[Interaction] = field(default_factory=list)

    async def list_tools(self) -> list[dict[str, Any]]:
        """The server's tools/list, as the wire JSON objects (camelCase, unset fields left out)."""
        started = time.perf_counter()
        listing = await self.session.list_tools()
        elapsed = (time.perf_counter() - started) * 1000
        tools = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listing.tools]
        self.interactions.append(Interaction("tools/list", None, None, False, 0, elapsed))
        return tools

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolResult:
        """Call one tool and record the interaction; the result must be one text block."""
        started = time.perf_counter()
        result = await self.session.call_tool(tool, arguments)
        elapsed = (time.perf_counter() - started) * 1000
        texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
        if len(texts) != 1 or len(result.content) != 1:
            raise HarnessError(f"{self.design} over {self.transport}: {tool} returned {len(result.content)} content blocks, expected one text block")
        outcome = ToolResult(texts[0], bool(result.is_error))
        self.interactions.append(Interaction("tools/call", tool, arguments, outcome.is_error, outcome.bytes, elapsed))
        return outcome

    def tool_calls(self) -> list[Interaction]:
        """The tools/call interactions so far."""
        return [i for i in self.interactions if i.method == "tools/call"]


def server_command(design: str) -> list[str]:
    """The command that serves `design` over stdio with this interpreter (works with a minimal environment)."""
    return [sys.executable, "-m", "wismo", "serve", design]


@asynccontextmanager
async def connect(
    design: str,
    transport: str = "stdio",
    env: dict[str, str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    command: list[str] | None = None,
    require_pinned: bool = True,
) -> AsyncIterator[Connection]:
    """Start `design`'s server (or any stdio `command`, labelled `design`), complete the handshake, and stop the
    server on exit, also on error."""
    if transport != "stdio":
        raise HarnessError(f"{design}: transport {transport!r} is not available; use 'stdio'")
    command = command or server_command(design)
    # The server's stderr goes to a file so a failure can quote it (notebook kernels have no stderr fd).
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as errlog:
        stack = AsyncExitStack()
        started = time.perf_counter()
        try:
            params = StdioServerParameters(command=command[0], args=command[1:], env=env)
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            session = await stack.enter_async_context(ClientSession(read, write, read_timeout_seconds=timeout_s))
            init = await session.initialize()
        except Exception as exc:
            # Close first, then raise outside the transport's task group, so callers get one plain error.
            with suppress(BaseException):
                await stack.aclose()
            raise HarnessError(_failure(design, transport, command, exc, errlog)) from None
        try:
            if require_pinned and init.protocol_version != PINNED_REVISION:
                raise HarnessError(f"{design} over {transport}: server answered revision {init.protocol_version}, expected {PINNED_REVISION}")
            yield Connection(design, transport, session, start_ms=(time.perf_counter() - started) * 1000)
        finally:
            await stack.aclose()


def _failure(design: str, transport: str, command: list[str], exc: BaseException, errlog: Any) -> str:
    """One readable sentence on why a server could not be reached, with the tail of its stderr."""
    errlog.flush()
    errlog.seek(0)
    tail = errlog.read()[-600:].strip()
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    cause = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    message = f"{design} server over {transport} ({' '.join(command)}) could not be reached: {cause}"
    return message + (f"; its stderr ends with: {tail}" if tail else "")


def interactions_table(connection: Connection) -> list[dict[str, Any]]:
    """The recorded interactions as plain dicts, for tables."""
    return [asdict(i) for i in connection.interactions]
