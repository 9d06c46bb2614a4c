"""A design's server object, the SDK's own Server as `wismo serve` builds it, reached by the SDK's Client in this
process: no process and no transport, for the tests of what a tool answers. The transport, parity and reliability
tests keep real server processes."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from mcp import Client
from mcp.client.session import ClientSession
from mcp_types import TextContent

from wismo.client.connection import ToolResult
from wismo.servers import design_tools
from wismo.servers.app import build_server
from wismo.servers.settings import server_dataset


@dataclass
class InMemory:
    """The calls a test makes of a connection (wismo.client.connection.Connection), in process."""

    design: str
    client: Client

    @property
    def session(self) -> ClientSession:
        """The SDK's session, for calls a test makes below the connection's API."""
        return self.client.session

    async def list_tools(self) -> list[dict[str, Any]]:
        """tools/list as the wire JSON objects, as a connection gives them."""
        listing = await self.client.list_tools()
        return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listing.tools]

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolResult:
        """One tools/call; the result must be one text block, as a connection requires."""
        result = await self.client.call_tool(tool, arguments)
        (block,) = result.content
        assert isinstance(block, TextContent), block
        return ToolResult(block.text, bool(result.is_error), result.structured_content)


@asynccontextmanager
async def served(design: str) -> AsyncIterator[InMemory]:
    """The design's server, built as `wismo serve` builds it, with a client connected to it in process."""
    # legacy: the initialize handshake over the SDK's in-memory streams, the era wismo's servers are pinned to.
    async with Client(build_server(design, design_tools(design), server_dataset()), mode="legacy") as client:
        yield InMemory(design, client)
