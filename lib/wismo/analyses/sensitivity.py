"""How much the calibration against the article's ORD-1004 conversation depends on what is not published: the
framing of each tool result, and how the Responses API counts the model's function_call items.

Every cell of the table rebuilds the two granular tool turns under one result framing and one way of counting the
calls, and sets them beside the additions derived from the published request sizes (287 and 714 tokens). The cell
that fits best is a fit, not a confirmation: the framing and the counting were chosen among plausible ones, and the
spread over all of them is shown with it. The focused conversation tests each framing independently: what the
published total leaves for the model's two outputs must hold at least a minimal answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from wismo import tokens
from wismo.core.kinds import DERIVED, TIKTOKEN
from wismo.tokens import conversation, framing


@dataclass(frozen=True)
class Framing:
    """One way a client hands a CallToolResult to the model, and which source says a client does so."""

    name: str
    output: Callable[[dict[str, Any]], str]
    source: str


FRAMINGS = (
    Framing(
        "bare text",
        framing.PYTHON.output,
        "MCP C# SDK >= 0.4.1-preview.1 McpClientTool (a lone text block as TextContent), "
        "Microsoft.Extensions.AI.OpenAI "
        ">= 10.0.0 Responses; wismo's own loop",
    ),
    Framing(
        "compact, default escaping",
        framing.element_raw_text,
        "the raw text of ToChatMessage's JsonElement (MCP C# SDK 2.2.0); no released Microsoft.Extensions.AI.OpenAI "
        "found to send it unchanged",
    ),
    Framing(
        "indented, default escaping",
        framing.indented_default_output,
        "ToChatMessage's JsonElement re-serialized by Microsoft.Extensions.AI.OpenAI 9.0.0 to 9.2.x",
    ),
    Framing(
        "indented, relaxed escaping",
        framing.csharp_output,
        "ToChatMessage's JsonElement re-serialized by Microsoft.Extensions.AI.OpenAI 9.3.0 to 10.9.0 (the pinned "
        "source)",
    ),
)
COUNTINGS = ("name + arguments", "with call_id", "parallel-call wrapper", "isError: false kept")
TOLERANCE_PERCENT = 5.0


def _call_tokens(calls: list[dict[str, Any]], counting: str, encoding: str) -> int:
    """The model's function_call items of one turn, counted the way `counting` assumes."""
    if counting == "with call_id":
        return sum(tokens.count_item(c, encoding) + tokens.count_text(c["call_id"], encoding) for c in calls)
    if counting == "parallel-call wrapper" and len(calls) > 1:
        uses = [{"recipient_name": f"functions.{c['name']}", "parameters": json.loads(c["arguments"])} for c in calls]
        wrapped = json.dumps({"tool_uses": uses}, separators=(",", ":"))
        return (
            tokens.COOKBOOK_GPT4O.per_message
            + tokens.count_text("multi_tool_use.parallel", encoding)
            + tokens.count_text(wrapped, encoding)
        )
    return sum(tokens.count_item(c, encoding) for c in calls)


def _profile(how: Framing, keep_is_error: bool) -> framing.Profile:
    """A framing as a client profile for conversation.turn_items (optionally keeping `isError: false`)."""
    output = how.output
    if keep_is_error:

        def output(result: dict[str, Any]) -> str:
            return how.output({**result, "isError": result.get("isError", False)})

    return framing.Profile(how.name, how.source, how.source, framing.PYTHON.function, output)


def turn_addition(turn: list[dict[str, Any]], index: int, how: Framing, counting: str, encoding: str) -> int:
    """What one tool turn adds to the next request under a framing and a way of counting the calls: the turn's
    items as conversation.turn_items builds them, the calls counted as `counting` assumes."""
    items = conversation.turn_items(turn, index, _profile(how, counting == "isError: false kept"))
    calls = [i for i in items if i["type"] == "function_call"]
    outputs = [i for i in items if i["type"] == "function_call_output"]
    return _call_tokens(calls, counting, encoding) + sum(tokens.count_item(o, encoding) for o in outputs)


def _percent(ours: int, theirs: int) -> float:
    return round((ours - theirs) / theirs * 100, 1)


def table(g_turns: list[list[dict[str, Any]]], requests: list[int], encoding: str) -> list[dict[str, Any]]:
    """Every framing crossed with every counting: the two turn additions against those derived from published, and
    the rebuilt requests 2 and 3 (request 1 plus the turns, so their error is the turns' cumulative error)."""
    derived = [b - a for a, b in zip(requests, requests[1:])]
    rows = []
    for how in FRAMINGS:
        for counting in COUNTINGS:
            adds = [turn_addition(t, i, how, counting, encoding) for i, t in enumerate(g_turns, start=1)]
            rebuilt = [requests[0], requests[0] + adds[0], requests[0] + adds[0] + adds[1]]
            errors = [_percent(a, d) for a, d in zip(adds, derived)]
            rows.append(
                {
                    "framing": how.name,
                    "counting": counting,
                    "additions": adds,
                    "derived": derived,
                    "errorPercent": errors,
                    "maxAbsErrorPercent": max(abs(e) for e in errors),
                    "rebuiltRequests": rebuilt,
                    "cumulativeErrorPercent": [_percent(r, q) for r, q in zip(rebuilt[1:], requests[1:])],
                }
            )
    return rows


def best_fit(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The cell whose larger turn error is smallest (the first such in table order)."""
    return min(rows, key=lambda r: r["maxAbsErrorPercent"])


def spread(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """How far the plausible cells spread: each turn's error range over every cell, and how many cells fit."""
    errors = [r["errorPercent"] for r in rows]
    return {
        "cells": len(rows),
        "cellsWithinTolerance": sum(r["maxAbsErrorPercent"] <= TOLERANCE_PERCENT for r in rows),
        "tolerancePercent": TOLERANCE_PERCENT,
        "turn2ErrorPercent": [min(e[0] for e in errors), max(e[0] for e in errors)],
        "turn3ErrorPercent": [min(e[1] for e in errors), max(e[1] for e in errors)],
    }


def answer_sizes(summary: str, answer: dict[str, Any], entry_call: dict[str, Any], encoding: str) -> dict[str, int]:
    """Sizes of a plausible focused output, in tokens: the article's quoted summary alone, and the least the model
    must have written (its tool call, then the five fields with that summary as one JSON object)."""
    call = tokens.function_call(entry_call["name"], entry_call["arguments"], "call_1_0")
    minimal = json.dumps({**answer, "customerSummary": summary}, separators=(",", ":"), ensure_ascii=False)
    return {
        "quotedSummary": tokens.count_text(summary, encoding),
        "minimalOutputs": tokens.count_text(call["name"], encoding)
        + tokens.count_text(call["arguments"], encoding)
        + tokens.count_text(minimal, encoding),
    }


def focused_test(
    f_turns: list[list[dict[str, Any]]], first_request: int, conversation: int, sizes: dict[str, int], encoding: str
) -> list[dict[str, Any]]:
    """Per framing: what the published focused total leaves for the model's two outputs once its two requests are
    rebuilt from the published first request, against the least a plausible answer takes; below it, ruled out."""
    out = []
    for how in FRAMINGS:
        remainders = []
        for counting in COUNTINGS:
            added = sum(turn_addition(t, i, how, counting, encoding) for i, t in enumerate(f_turns, start=1))
            remainders.append(conversation - first_request - (first_request + added))
        low, high = min(remainders), max(remainders)
        out.append(
            {
                "framing": how.name,
                "outputRemainder": [low, high],
                "minimalOutputs": sizes["minimalOutputs"],
                "verdict": "ruled out" if high < sizes["minimalOutputs"] else "possible",
            }
        )
    return out


def build(
    recorded: dict[str, Any],
    published: dict[str, Any],
    article: dict[str, Any],
    answer: dict[str, Any],
    order_id: str,
    encoding: str,
) -> dict[str, Any]:
    """The sensitivity table, its best fit and spread, and the focused test, each with its kind."""
    g_turns, f_turns = recorded["turns"]["granular"][order_id], recorded["turns"]["focused"][order_id]
    rows = table(g_turns, published["granularRequests"]["value"], encoding)
    published_first, published_total = (
        published["focusedFirstRequest"]["value"],
        published["focusedConversation"]["value"],
    )
    sizes = answer_sizes(article[order_id]["focused"]["customerSummary"], answer, f_turns[0][0], encoding)
    tested = focused_test(f_turns, published_first, published_total, sizes, encoding)
    return {
        "kind": f"{TIKTOKEN} against {DERIVED}",
        "framings": [{"name": f.name, "source": f.source} for f in FRAMINGS],
        "rows": rows,
        "bestFit": {k: best_fit(rows)[k] for k in ("framing", "counting", "additions", "errorPercent")},
        "spread": spread(rows),
        "answerSizes": {"kind": TIKTOKEN, **sizes},
        "focusedTest": {
            "kind": f"{DERIVED} minus {TIKTOKEN}",
            "rows": tested,
            "ruledOut": sum(r["verdict"] == "ruled out" for r in tested),
        },
    }
