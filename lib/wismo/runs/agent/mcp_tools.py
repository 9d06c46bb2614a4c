"""Client-side tools of the loop: an MCP tool, and wrappers (timing, caching of repeated calls) that keep the
wrapped tool's definition exactly, so the model sees the server's name, description and input schema."""

from __future__ import annotations

import json
import time
from typing import Protocol

from wismo.mcp.client.connection import Connection
from wismo.mcp.client.results import ToolResult


class Tool(Protocol):
    """A tool the loop can offer and call: its tools/list definition, and a call."""

    @property
    def definition(self) -> dict[str, object]:
        """The server's tools/list entry, unchanged."""
        ...

    async def call(self, arguments: dict[str, object]) -> ToolResult:
        """Run the tool on the server."""
        ...


class McpTool:
    """One tool of a connected MCP server."""

    def __init__(self, conn: Connection, definition: dict[str, object]) -> None:
        self.conn = conn
        self._definition = definition

    @property
    def definition(self) -> dict[str, object]:
        """The server's own definition."""
        return self._definition

    async def call(self, arguments: dict[str, object]) -> ToolResult:
        """A tools/call over the connection."""
        return await self.conn.call(str(self._definition["name"]), arguments)


class DelegatingTool:
    """Base of the wrappers: everything about the tool is the inner tool's; only the call is wrapped."""

    def __init__(self, inner: Tool) -> None:
        self.inner = inner

    @property
    def definition(self) -> dict[str, object]:
        """The inner tool's definition, the very same object (no copy that could drift)."""
        return self.inner.definition

    async def call(self, arguments: dict[str, object]) -> ToolResult:
        """Call the inner tool."""
        return await self.inner.call(arguments)


class TimedTool(DelegatingTool):
    """Measures the wall time of every call; `last_ms` is the latest."""

    def __init__(self, inner: Tool) -> None:
        super().__init__(inner)
        self.last_ms = 0.0

    async def call(self, arguments: dict[str, object]) -> ToolResult:
        """Call and time."""
        started = time.perf_counter()
        try:
            return await self.inner.call(arguments)
        finally:
            self.last_ms = (time.perf_counter() - started) * 1000


class CachingTool(DelegatingTool):
    """Answers a repeated call (same arguments) from the earlier result, and counts how often it did."""

    def __init__(self, inner: Tool) -> None:
        super().__init__(inner)
        self.results: dict[str, ToolResult] = {}
        self.hits = 0
        self.last_was_hit = False

    async def call(self, arguments: dict[str, object]) -> ToolResult:
        """The earlier result for these arguments, or a real call."""
        key = json.dumps(arguments, sort_keys=True, separators=(",", ":"))
        self.last_was_hit = key in self.results
        if self.last_was_hit:
            self.hits += 1
            return self.results[key]
        result = await self.inner.call(arguments)
        self.results[key] = result
        return result
