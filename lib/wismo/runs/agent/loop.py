"""The article's agent loop: send everything, run every requested tool concurrently over MCP, repeat until text."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypedDict

import anyio

from wismo.accounting import tokens
from wismo.accounting.tokens.conversation import Prompt
from wismo.core.jsonfmt import utf8_len
from wismo.mcp.client.connection import Connection
from wismo.runs.agent.base import Backend
from wismo.runs.agent.checks import answer_problem, parse_answer, refused_call
from wismo.runs.agent.counters import totals
from wismo.runs.agent.mcp_tools import CachingTool, McpTool, TimedTool, Tool
from wismo.runs.agent.outcomes import (  # noqa: F401  (the outcomes live in a leaf module; the loop is where readers look for them)
    ANSWERED,
    BAD_ARGUMENTS,
    BAD_CALL_ID,
    CALL_BUDGET,
    CONNECTION_FAILED,
    NO_USAGE,
    SERVER_ERROR,
    TIMEOUT,
    TOKEN_BUDGET,
    TURN_BUDGET,
    UNEXPECTED_ANSWER,
    UNKNOWN_TOOL,
    ConversationEnded,
)
from wismo.runs.records import Item, RequestRecord, ToolCallRecord, Totals


class Trace(TypedDict):
    """One conversation as run_case returns it; a recorded trace adds its schema, design and repetition in front
    (runs/recording.py), and runs/schemas/trace.schema.json says each field."""

    orderId: str
    question: str
    requests: list[RequestRecord]
    toolCalls: list[ToolCallRecord]
    outcome: str
    reason: str | None
    answerText: str | None
    answer: dict[str, object] | None
    unsentItems: list[Item]
    totals: Totals


@dataclass(frozen=True)
class Budgets:
    """Limits per conversation (the case study's orchestrator rules): turns, tool calls (12), the input tokens
    the whole session may process, and how many tool definitions are sent (None: no limit)."""

    max_turns: int = 8
    max_tool_calls: int = 12
    max_input_tokens: int | None = None
    max_tools: int | None = None


def budget_stop_note(
    reason: str, read_calls: Sequence[Mapping[str, object]], missing_calls: Sequence[Mapping[str, object]]
) -> str:
    """What the user sees when a budget stops the session: why, what was read, and what is missing."""

    def listed(calls: Sequence[Mapping[str, object]]) -> str:
        shown = ", ".join(f"{c['name']}({c['arguments']})" for c in calls[:20])
        return shown + (f" and {len(calls) - 20:,} more" if len(calls) > 20 else "")

    return (
        f"Stopped: {reason}. Read: {listed(read_calls) or 'nothing'}. Not read or not answered: "
        f"{listed(missing_calls) or 'the model' + chr(39) + 's answer'}. Narrow the question (one item, one shipment) "
        "and ask again."
    )


@dataclass(frozen=True)
class LatencyModel:
    """A modelled model-request time: a fixed overhead plus per-token rates (parameters, not measurements)."""

    overhead_ms: float
    per_input_token_ms: float
    per_output_token_ms: float

    def elapsed_ms(self, input_tokens: int, output_tokens: int) -> float:
        """Modelled milliseconds of one request."""
        return round(
            self.overhead_ms + input_tokens * self.per_input_token_ms + output_tokens * self.per_output_token_ms, 3
        )

    def as_dict(self) -> dict[str, float]:
        """The parameters, for a run's manifest."""
        return asdict(self)


async def _run_tool(tools: dict[str, TimedTool], call: Mapping[str, str]) -> tuple[str, bool, float, bool]:
    """One requested call through MCP (checked before: a known tool, object arguments); returns text, error flag,
    ms, cache hit."""
    tool = tools[call["name"]]
    result = await tool.call(json.loads(call["arguments"] or "{}"))
    cached = isinstance(tool.inner, CachingTool) and tool.inner.last_was_hit
    return result.text, result.is_error, tool.last_ms, cached


def client_tools(
    conn: Connection, definitions: list[dict[str, object]], cache_repeats: bool = False
) -> dict[str, TimedTool]:
    """The loop's tools by wire name: each server tool, timed, and answered from cache when repeated if asked."""
    out = {}
    for definition in definitions:
        tool: Tool = McpTool(conn, definition)
        out[str(definition["name"])] = TimedTool(CachingTool(tool) if cache_repeats else tool)
    return out


async def run_case(
    backend: Backend,
    conn: Connection,
    tools: list[dict[str, object]],
    case_key: str,
    prompt: Prompt,
    budgets: Budgets = Budgets(),
    latency: LatencyModel | None = None,
    cache_repeats: bool = False,
    contract: bool = True,
) -> Trace:
    """One fresh conversation about one case (`case_key`: the case's key, kept in the trace as orderId), opened with
    the prompt's instructions and question; returns its trace (transcript, per-request and per-call records). Without
    `contract`, any text reply is an answer (a study whose instructions ask for no JSON object)."""
    # The loop allows exactly the names the server reported, and offers the model their definitions unchanged.
    offered = tools[: budgets.max_tools] if budgets.max_tools is not None else tools
    wrapped = client_tools(conn, offered, cache_repeats)
    functions = [tokens.mcp_tool_to_function(t.definition) for t in wrapped.values()]
    question, instructions = prompt.question, prompt.instructions
    items: list[dict[str, Any]] = [{"type": "message", "role": "user", "content": question}]
    sent = 0  # items already sent in an earlier request
    requests: list[RequestRecord] = []
    tool_calls: list[ToolCallRecord] = []
    outcome, answer_text = TURN_BUDGET, None
    wall_start = time.perf_counter()
    spent = 0
    reason = None
    while True:
        stop = _budget_stop(budgets, requests, tool_calls, functions, items, sent, spent, instructions)
        if stop:
            outcome, reason, answer_text = stop
            break
        started = time.perf_counter()
        try:
            reply = await backend.respond(instructions, functions, items)
        except ConversationEnded as ended:
            outcome, reason = ended.outcome, f"Request {len(requests) + 1}: {ended.reason}."
            break
        elapsed = (time.perf_counter() - started) * 1000
        record: RequestRecord = {
            "index": len(requests) + 1,
            "newItems": items[sent:],
            "output": reply.output,
            "usage": {
                "inputTokens": reply.usage.input_tokens,
                "outputTokens": reply.usage.output_tokens,
                "cachedInputTokens": reply.usage.cached_input_tokens,
            },
            "elapsedMs": round(elapsed, 3),
        }
        if latency:
            record["modelledElapsedMs"] = latency.elapsed_ms(reply.usage.input_tokens, reply.usage.output_tokens)
        requests.append(record)
        spent += reply.usage.input_tokens
        sent = len(items)
        items = items + reply.output
        calls = [o for o in reply.output if o.get("type") == "function_call"]
        if not calls:
            answer_text = "\n".join(o["content"] for o in reply.output if o.get("type") == "message")
            problem = answer_problem(answer_text) if contract else None
            outcome, reason = (
                (ANSWERED, None) if problem is None else (UNEXPECTED_ANSWER, f"Request {record['index']}: {problem}.")
            )
            break
        refused = refused_call(calls, (c["call_id"] for c in items[:sent] if c.get("type") == "function_call"), wrapped)
        if refused:
            outcome, reason = refused[0], f"Request {record['index']}: {refused[1]}."
            break
        if len(tool_calls) + len(calls) > budgets.max_tool_calls:
            outcome = CALL_BUDGET
            why = (
                f"the model asked for {len(calls):,} more tool calls, over the session's limit of "
                f"{budgets.max_tool_calls} ({len(tool_calls)} made)"
            )
            asked = [{"name": c["name"], "arguments": c["arguments"]} for c in calls]
            answer_text, reason = budget_stop_note(why, tool_calls, asked), _sentence(why)
            break
        results: list[tuple[str, bool, float, bool] | None] = [None] * len(calls)

        # The task group below ends within this turn, so each task writes into this turn's list (bound, not late).
        async def run(
            i: int, call: Mapping[str, str], out: list[tuple[str, bool, float, bool] | None] = results
        ) -> None:
            out[i] = await _run_tool(wrapped, call)

        # Every call the model asked for in this turn runs concurrently, as in the article's runner.
        async with anyio.create_task_group() as group:
            for i, call in enumerate(calls):
                group.start_soon(run, i, call)
        finished = [r for r in results if r is not None]  # all of them: the group waited for every task
        for call, (text, is_error, call_ms, cached) in zip(calls, finished):
            items.append(tokens.function_call_output(call["call_id"], text))
            entry: ToolCallRecord = {
                "request": record["index"],
                "callId": call["call_id"],
                "name": call["name"],
                "arguments": call["arguments"],
                "resultBytes": utf8_len(text),
                "isError": is_error,
                "elapsedMs": round(call_ms, 3),
            }
            if cached:
                entry["cached"] = True
            tool_calls.append(entry)
    wall_ms = (time.perf_counter() - wall_start) * 1000
    return {
        "orderId": case_key,
        "question": question,
        "requests": requests,
        "toolCalls": tool_calls,
        "outcome": outcome,
        "reason": reason,
        "answerText": answer_text,
        # The parsed object whenever there is one (an answer missing contract keys is still scored field by field).
        "answer": parse_answer(answer_text) if contract and outcome in (ANSWERED, UNEXPECTED_ANSWER) else None,
        # What was ready to send when the conversation ended: results of the last calls run, or the question itself.
        "unsentItems": items[sent + len(requests[-1]["output"]) if requests else 0 :],
        "totals": totals(requests, tool_calls, wall_ms),
    }


def _sentence(phrase: str) -> str:
    """A reason phrase as a sentence."""
    return phrase[:1].upper() + phrase[1:] + "."


def _budget_stop(
    budgets: Budgets,
    requests: list[RequestRecord],
    tool_calls: list[ToolCallRecord],
    functions: list[dict[str, object]],
    items: list[dict[str, object]],
    sent: int,
    spent: int,
    instructions: str,
) -> tuple[str, str, str] | None:
    """Before a request: the outcome, reason and user-facing note if the turn or token budget stops the session."""
    pending = [c for c in tool_calls if c["request"] == len(requests)]
    done = tool_calls[: len(tool_calls) - len(pending)]
    if len(requests) == budgets.max_turns:
        why = f"the session's limit of {budgets.max_turns} model requests is reached"
        return TURN_BUDGET, _sentence(why), budget_stop_note(why, done, pending)
    if budgets.max_input_tokens is None:
        return None
    # Estimated before sending: the last request's input and output, plus what was appended since.
    if requests:
        last = requests[-1]["usage"]
        estimate = (
            last["inputTokens"]
            + last["outputTokens"]
            + sum(tokens.count_item(i) for i in items[sent + len(requests[-1]["output"]) :])
        )
    else:
        estimate = tokens.count_request(instructions, functions, items).total
    if spent + estimate <= budgets.max_input_tokens:
        return None
    why = (
        f"the session's input-token budget of {budgets.max_input_tokens:,} would be exceeded ({spent:,} tokens "
        f"processed, the next request would carry about {estimate:,} more)"
    )
    return TOKEN_BUDGET, _sentence(why), budget_stop_note(why, done, pending)
