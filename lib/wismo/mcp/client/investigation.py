"""A design's investigation over MCP: the one walk (wismo.core.walk) driven with real tool calls, every call of a
turn at once, as the article's runner makes them."""

from __future__ import annotations

from typing import Any

import anyio

from wismo.core.investigation import Investigation
from wismo.core.walk import Call, Wanted, result, walk
from wismo.mcp.client.connection import Connection

__all__ = ["Call", "investigate"]

CONCURRENCY = 32  # linked lookups in flight at once


async def _call(conn: Connection, name: str, arguments: dict[str, object], follow: set[str]) -> Call:
    """One tool call as a turn records it: name, arguments, the server's text, its error flag and its
    structuredContent (None when it has none); the resource links of a tool in `follow` read in their places."""
    answer = await conn.call(name, arguments, follow_resources=name in follow)
    call = result(name, arguments, answer.text, answer.is_error, answer.structured)
    if answer.blocks:
        call["blocks"] = list(answer.blocks)
    if answer.binary:
        call["binary"] = answer.binary
    if answer.reads:
        call["reads"] = answer.reads
    return call


async def _concurrently(conn: Connection, wanted: Wanted, follow: set[str]) -> list[Call]:
    """Every call of one turn, run concurrently as the article's runner runs them; results keep the order asked."""
    out: list[Call | None] = [None] * len(wanted)
    limit = anyio.Semaphore(CONCURRENCY)

    async def one(i: int, name: str, arguments: dict[str, object]) -> None:
        async with limit:
            out[i] = await _call(conn, name, arguments, follow)

    async with anyio.create_task_group() as group:
        for i, (name, arguments) in enumerate(wanted):
            group.start_soon(one, i, name, arguments)
    return [c for c in out if c is not None]


async def investigate(conn: Connection, how: Investigation, values: dict[str, Any]) -> list[list[Call]]:
    """The tool turns of one case's investigation (its fields as `values`), as the design declares it."""
    turns: list[list[Call]] = []
    follow = how.following_resources()
    steps = walk(how, values)
    wanted = next(steps)
    while True:
        turns.append(
            await _concurrently(conn, wanted, follow) if len(wanted) > 1 else [await _call(conn, *wanted[0], follow)]
        )
        try:
            wanted = steps.send(turns[-1])
        except StopIteration:
            return turns
