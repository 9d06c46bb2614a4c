"""Model turns of a design's investigation, built from real MCP results, and the input items they add.

Granular: call 1 asks for get_order; call 2 asks for the payment, every reservation and every tracking record
at once; call 3 answers. Focused: call 1 asks for get_order_support_context; call 2 answers. Scoped: one call
per page. Each design's registry entry (wismo.designs) says which.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import anyio

from . import designs, framing, prompts, tokens
from .designs import Design
from .harness import Connection, connect

# A tool call the model made in one turn, and the text the server returned for it.
Call = dict[str, Any]
CONCURRENCY = 32  # linked lookups in flight at once


async def _call(conn: Connection, name: str, arguments: dict[str, Any]) -> Call:
    """One tool call as a turn records it: name, arguments, the server's text and its error flag."""
    result = await conn.call(name, arguments)
    return {"name": name, "arguments": arguments, "output": result.text, "isError": result.is_error}


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


def _decoded(call: Call) -> Any:
    """A call's output as JSON, or None for an error sentence."""
    if call["isError"]:
        return None
    try:
        return json.loads(call["output"])
    except ValueError:
        return None


async def investigate(conn: Connection, design: str | Design, order_id: Any) -> list[list[Call]]:
    """The tool turns of a design's investigation of one order, as its registry entry declares them: the entry
    call, then every linked call at once, or every further page by cursor (one page per turn)."""
    how = (designs.get(design) if isinstance(design, str) else design).investigation
    first = await _call(conn, how.entry, {"orderId": order_id})
    turns = [[first]]
    record = _decoded(first)
    if how.links and record is not None:
        wanted = how.linked_calls(record)
        if wanted:
            turns.append(await _concurrently(conn, wanted))
    while how.cursor and isinstance(record, dict) and isinstance(record.get("page"), dict) and record["page"].get("next"):
        arguments = {"orderId": order_id, "cursor": record["page"]["next"]}
        page = await _call(conn, how.entry, arguments)
        turns.append([page])
        record = _decoded(page)
    return turns


async def record(orders: list[str], transport: str = "stdio", design_names: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Run each design's investigation (default: the article's two) for every order over MCP; return each
    design's tools/list and tool turns."""
    out: dict[str, Any] = {"tools": {}, "turns": {}}
    for design in design_names or designs.article():
        async with connect(design, transport) as conn:
            out["tools"][design] = await conn.list_tools()
            out["turns"][design] = {order_id: await investigate(conn, design, order_id) for order_id in orders}
    return out


def turn_items(turn: list[Call], turn_index: int, profile: framing.Profile = framing.PYTHON) -> list[dict[str, Any]]:
    """The input items one tool turn appends: the model's function_call items, then their outputs as the client
    profile frames them (python: the text as the server returned it)."""
    ids = [f"call_{turn_index}_{i}" for i in range(len(turn))]
    calls = [tokens.function_call(c["name"], c["arguments"], call_id) for c, call_id in zip(turn, ids)]
    outputs = [tokens.function_call_output(call_id, profile.output(framing.text_result(c["output"], True if c.get("isError") else None)))
               for c, call_id in zip(turn, ids)]
    return calls + outputs


@dataclass(frozen=True)
class Conversation:
    """The input tokens of every model call of one investigation (tiktoken-estimated), by part."""

    base: int
    additions: tuple[int, ...]
    requests: tuple[int, ...]
    result_tokens: tuple[int, ...]


def conversation(order_id: str, tools: list[dict[str, Any]], turns: list[list[Call]], encoding_name: str = tokens.DEFAULT_ENCODING,
                 profile: framing.Profile = framing.PYTHON) -> Conversation:
    """Count every request of an investigation directly (definitions and results as the client profile sends them),
    and split it into a base and per-turn additions."""
    functions = [profile.function(t) for t in tools]
    items = [{"type": "message", "role": "user", "content": prompts.question(order_id)}]
    requests = [tokens.count_request(prompts.INSTRUCTIONS, functions, items, encoding_name).total]
    additions, results = [], []
    for index, turn in enumerate(turns, start=1):
        added = turn_items(turn, index, profile)
        items = items + added
        requests.append(tokens.count_request(prompts.INSTRUCTIONS, functions, items, encoding_name).total)
        additions.append(sum(tokens.count_item(i, encoding_name) for i in added))
        results.extend(tokens.count_item(i, encoding_name) for i in added if i["type"] == "function_call_output")
    return Conversation(requests[0], tuple(additions), tuple(requests), tuple(results))
