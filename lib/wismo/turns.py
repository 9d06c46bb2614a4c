"""Model turns of the article's scripted investigation, built from real MCP results, and their input items.

Granular: call 1 asks for get_order; call 2 asks for the payment, every reservation and every tracking record
at once; call 3 answers. Focused: call 1 asks for get_order_support_context; call 2 answers.
"""

from __future__ import annotations

import json

import anyio
from dataclasses import dataclass
from typing import Any

from . import prompts, tokens
from .harness import Connection, connect

# A tool call the model made in one turn, and the text the server returned for it.
Call = dict[str, Any]
CONCURRENCY = 32  # linked lookups in flight at once


async def granular_turns(conn: Connection, order_id: str) -> list[list[Call]]:
    """The two tool turns of the granular investigation, with every result as the server returned it."""
    first = await conn.call("get_order", {"orderId": order_id})
    turns = [[{"name": "get_order", "arguments": {"orderId": order_id}, "output": first.text, "isError": first.is_error}]]
    if first.is_error:
        return turns
    order = json.loads(first.text)
    wanted = [("get_payment", {"paymentId": order["paymentId"]})]
    wanted += [("get_reservation", {"reservationId": r}) for r in order["reservationIds"]]
    wanted += [("get_tracking", {"trackingId": t}) for t in order["trackingIds"]]
    second: list[Call | None] = [None] * len(wanted)
    limit = anyio.Semaphore(CONCURRENCY)

    async def one(i: int, name: str, arguments: dict[str, Any]) -> None:
        async with limit:
            result = await conn.call(name, arguments)
        second[i] = {"name": name, "arguments": arguments, "output": result.text, "isError": result.is_error}

    # One turn's calls run concurrently, as the article's runner runs them; results keep the order asked.
    async with anyio.create_task_group() as group:
        for i, (name, arguments) in enumerate(wanted):
            group.start_soon(one, i, name, arguments)
    return turns + [second]


async def focused_turns(conn: Connection, order_id: str) -> list[list[Call]]:
    """The one tool turn of the focused investigation."""
    result = await conn.call("get_order_support_context", {"orderId": order_id})
    return [[{"name": "get_order_support_context", "arguments": {"orderId": order_id}, "output": result.text, "isError": result.is_error}]]


GATHER = {"granular": granular_turns, "focused": focused_turns}


async def record(orders: list[str], transport: str = "stdio") -> dict[str, Any]:
    """Run both investigations for every order over MCP; return each design's tools/list and tool turns."""
    out: dict[str, Any] = {"tools": {}, "turns": {}}
    for design, gather in GATHER.items():
        async with connect(design, transport) as conn:
            out["tools"][design] = await conn.list_tools()
            out["turns"][design] = {order_id: await gather(conn, order_id) for order_id in orders}
    return out


def turn_items(turn: list[Call], turn_index: int) -> list[dict[str, Any]]:
    """The input items one tool turn appends: the model's function_call items, then their outputs."""
    ids = [f"call_{turn_index}_{i}" for i in range(len(turn))]
    calls = [tokens.function_call(c["name"], c["arguments"], call_id) for c, call_id in zip(turn, ids)]
    outputs = [tokens.function_call_output(call_id, c["output"]) for c, call_id in zip(turn, ids)]
    return calls + outputs


@dataclass(frozen=True)
class Conversation:
    """The input tokens of every model call of one investigation (tiktoken-estimated), by part."""

    base: int
    additions: tuple[int, ...]
    requests: tuple[int, ...]
    result_tokens: tuple[int, ...]


def conversation(order_id: str, tools: list[dict[str, Any]], turns: list[list[Call]], encoding_name: str = tokens.DEFAULT_ENCODING) -> Conversation:
    """Count every request of an investigation directly, and split it into a base and per-turn additions."""
    functions = [tokens.mcp_tool_to_function(t) for t in tools]
    items = [{"type": "message", "role": "user", "content": prompts.question(order_id)}]
    requests = [tokens.count_request(prompts.INSTRUCTIONS, functions, items, encoding_name).total]
    additions, results = [], []
    for index, turn in enumerate(turns, start=1):
        added = turn_items(turn, index)
        items = items + added
        requests.append(tokens.count_request(prompts.INSTRUCTIONS, functions, items, encoding_name).total)
        additions.append(sum(tokens.count_item(i, encoding_name) for i in added))
        results.extend(tokens.count_item(i, encoding_name) for i in added if i["type"] == "function_call_output")
    return Conversation(requests[0], tuple(additions), tuple(requests), tuple(results))
