"""A design's server object, the SDK's own Server as `wismo serve` builds it, reached by the SDK's Client in this
process: no process and no transport, for the tests of what a tool answers. The transport, parity and reliability
tests keep real server processes."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp import Client

from wismo.mcp.client.connection import Connection
from wismo.mcp.servers import design_tools
from wismo.mcp.servers.app import build_server
from wismo.mcp.servers.settings import server_dataset


@asynccontextmanager
async def served(design: str) -> AsyncIterator[Connection]:
    """The design's server, built as `wismo serve` builds it, and wismo's connection over an in-process client."""
    # legacy: the initialize handshake over the SDK's in-memory streams, the era wismo's servers are pinned to.
    async with Client(build_server(design, design_tools(design), server_dataset()), mode="legacy") as client:
        yield Connection(design, "in-memory", client.session)
