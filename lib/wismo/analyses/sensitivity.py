"""How much the calibration against a study's published conversation depends on what is not published: the
framing of each tool result, and how the provider counts the model's function_call items.

Every cell of the table rebuilds the published conversation's tool turns under one result framing and one way of
counting the calls, and sets them beside the additions derived from the published request sizes (for the article's
ORD-1004 granular run, 287 and 714 tokens). The cell that fits best is a fit, not a confirmation: the framing and
the counting were chosen among plausible ones, and the spread over all of them is shown with it. A second design's
conversation of the same case tests each framing independently: what its published total leaves for the model's
outputs must hold at least a minimal answer.
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


def table(turns: list[list[dict[str, Any]]], requests: list[int], encoding: str) -> list[dict[str, Any]]:
    """Every framing crossed with every counting: the turn additions against those derived from published, and
    the rebuilt later requests (request 1 plus the turns, so their error is the turns' cumulative error)."""
    derived = [b - a for a, b in zip(requests, requests[1:])]
    turns = turns[: len(derived)]
    rows = []
    for how in FRAMINGS:
        for counting in COUNTINGS:
            adds = [turn_addition(t, i, how, counting, encoding) for i, t in enumerate(turns, start=1)]
            rebuilt = [requests[0]]
            for a in adds:
                rebuilt.append(rebuilt[-1] + a)
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
        "turnErrorPercent": [[min(e[i] for e in errors), max(e[i] for e in errors)] for i in range(len(errors[0]))],
    }


def answer_sizes(
    answer: str | None, fields: dict[str, Any] | None, entry_call: dict[str, Any], encoding: str
) -> dict[str, int] | None:
    """Sizes of a plausible output of the second conversation, in tokens: its published answer alone, and the least
    the model must have written (its tool call, then the answer: in the answer contract's fields with that summary
    as one JSON object where the study keeps the contract, else the answer's text); None without a published answer."""
    if answer is None:
        return None
    call = tokens.function_call(entry_call["name"], entry_call["arguments"], "call_1_0")
    written = (
        json.dumps({**fields, "customerSummary": answer}, separators=(",", ":"), ensure_ascii=False)
        if fields is not None
        else answer
    )
    return {
        "quotedSummary": tokens.count_text(answer, encoding),
        "minimalOutputs": tokens.count_text(call["name"], encoding)
        + tokens.count_text(call["arguments"], encoding)
        + tokens.count_text(written, encoding),
    }


def second_test(
    turns: list[list[dict[str, Any]]],
    first_request: int,
    conversation_total: int,
    calls: int,
    sizes: dict[str, int] | None,
    encoding: str,
) -> list[dict[str, Any]]:
    """Per framing: what the published total of the second conversation leaves for the model's outputs once its
    requests are rebuilt from the published first request, against the least a plausible answer takes (where an
    answer is published); below it, ruled out."""
    out = []
    turns = turns[: calls - 1]
    for how in FRAMINGS:
        remainders = []
        for counting in COUNTINGS:
            request, inputs = first_request, first_request
            for i, t in enumerate(turns, start=1):
                request += turn_addition(t, i, how, counting, encoding)
                inputs += request
            remainders.append(conversation_total - inputs)
        low, high = min(remainders), max(remainders)
        row: dict[str, Any] = {"framing": how.name, "outputRemainder": [low, high]}
        if sizes is not None:
            row |= {
                "minimalOutputs": sizes["minimalOutputs"],
                "verdict": "ruled out" if high < sizes["minimalOutputs"] else "possible",
            }
        out.append(row)
    return out


def build(
    recorded: dict[str, Any], pub: dict[str, Any], answer_fields: dict[str, Any] | None, encoding: str
) -> dict[str, Any]:
    """The sensitivity table, its best fit and spread, and the second conversation's test, each with its kind."""
    case, first, second = pub["case"], pub["designs"]["first"], pub["designs"]["second"]
    rows = table(recorded["turns"][first][case], pub["firstRequests"]["value"], encoding)
    out = {
        "kind": f"{TIKTOKEN} against {DERIVED}",
        "case": case,
        "designs": pub["designs"],
        "framings": [{"name": f.name, "source": f.source} for f in FRAMINGS],
        "rows": rows,
        "bestFit": {k: best_fit(rows)[k] for k in ("framing", "counting", "additions", "errorPercent")},
        "spread": spread(rows),
    }
    if second is not None:
        s_turns = recorded["turns"][second][case]
        sizes = answer_sizes(pub["secondAnswer"], answer_fields, s_turns[0][0], encoding)
        calls = pub["secondCalls"]["value"] or len(s_turns) + 1
        tested = second_test(
            s_turns, pub["secondFirstRequest"]["value"], pub["secondConversation"]["value"], calls, sizes, encoding
        )
        out["answerSizes"] = {"kind": TIKTOKEN, **sizes} if sizes else None
        out["secondTest"] = {
            "kind": f"{DERIVED} minus {TIKTOKEN}",
            "rows": tested,
            "ruledOut": sum(r.get("verdict") == "ruled out" for r in tested),
        }
    return out
