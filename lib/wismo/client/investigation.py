"""A design's investigation over MCP, turn by turn: the entry call, then its links at once or its pages by cursor.

Granular: call 1 asks for get_order; call 2 asks for the payment, every reservation and every tracking record
at once; call 3 answers. Focused: call 1 asks for get_order_support_context; call 2 answers. Scoped: one call
per page. Each design's registry entry (wismo.servers.designs) says which.
"""

from __future__ import annotations

from typing import Any

import anyio

from wismo.client.connection import Connection, connect
from wismo.servers import designs
from wismo.servers.designs import Design, Investigation

# A tool call the model made in one turn, and the text the server returned for it.
Call = dict[str, Any]
CONCURRENCY = 32  # linked lookups in flight at once


async def _call(conn: Connection, name: str, arguments: dict[str, Any]) -> Call:
    """One tool call as a turn records it: name, arguments, the server's text, its error flag and its
    structuredContent (None when it has none)."""
    result = await conn.call(name, arguments)
    return {
        "name": name,
        "arguments": arguments,
        "output": result.text,
        "isError": result.is_error,
        "structured": result.structured,
    }


async def _concurrently(conn: Connection, wanted: list[tuple[str, dict[str, Any]]]) -> list[Call]:
    """Every call of one turn, run concurrently as the article's runner runs them; results keep the order asked."""
    out: list[Call | None] = [None] * len(wanted)
    limit = anyio.Semaphore(CONCURRENCY)

    async def one(i: int, name: str, arguments: dict[str, Any]) -> None:
        async with limit:
            out[i] = await _call(conn, name, arguments)

    async with anyio.create_task_group() as group:
        for i, (name, arguments) in enumerate(wanted):
            group.start_soon(one, i, name, arguments)
    return [c for c in out if c is not None]


async def investigate(conn: Connection, design: str | Design | Investigation, case: Any) -> list[list[Call]]:
    """The tool turns of a design's investigation of one case, as its declaration says: the entry call, then every
    linked call at once, or every further page by cursor (one page per turn). `case` is the case's fields (a dict),
    or an order ID for the built-in designs."""
    how = _investigation(design)
    values = case if isinstance(case, dict) else {"orderId": case}
    first = await _call(conn, how.entry, how.entry_arguments(values))
    turns = [[first]]
    value = how.value_of(first)
    if how.links and not first["isError"]:
        wanted = how.linked_calls(value, values)
        if wanted:
            turns.append(await _concurrently(conn, wanted))
    while (arguments := how.next_page(value, values)) is not None:
        page = await _call(conn, how.entry, arguments)
        turns.append([page])
        value = how.value_of(page)
    return turns


def _investigation(design: str | Design | Investigation) -> Investigation:
    """The investigation a design name, a design or an investigation stands for."""
    if isinstance(design, Investigation):
        return design
    return (designs.get(design) if isinstance(design, str) else design).investigation


async def record(
    orders: list[str], transport: str = "stdio", design_names: tuple[str, ...] | None = None
) -> dict[str, Any]:
    """Run each design's investigation (default: the article's two) for every order over MCP; return each
    design's tools/list and tool turns."""
    out: dict[str, Any] = {"tools": {}, "turns": {}}
    for design in design_names or designs.article():
        async with connect(design, transport) as conn:
            out["tools"][design] = await conn.list_tools()
            out["turns"][design] = {order_id: await investigate(conn, design, order_id) for order_id in orders}
    return out
