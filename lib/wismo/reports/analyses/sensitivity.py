"""How much the calibration against a study's published conversation depends on what is not published: the
framing of each tool result, and how the provider counts the model's function_call items.

Every cell of the table rebuilds the published conversation's tool turns under one result framing and one way of
counting the calls, and sets them beside the additions derived from the published request sizes (for the article's
ORD-1004 granular run, 287 and 714 tokens). The cell that fits best is a fit, not a confirmation: the framing and
the counting were chosen among plausible ones, and the spread over all of them is shown with it. A second design's
conversation of the same case tests each framing independently: what its published total leaves for the model's
outputs must lie between the least a plausible answer takes and the first conversation's own output with its calls
swapped for the second's; each verdict carries its margin beside the tolerance the fits are judged by.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

from wismo.accounting import tokens
from wismo.accounting.tokens import conversation, framing, stjson
from wismo.core.kinds import DERIVED, TIKTOKEN
from wismo.core.walk import Call
from wismo.reports.analyses import calibration
from wismo.reports.analyses.calibration import Designs, Figure, PublishedFigures
from wismo.studies import investigations
from wismo.studies.declaration import Study
from wismo.studies.investigations import Recorded


@dataclass(frozen=True)
class Framing:
    """One way a client hands a CallToolResult to the model, and which source says a client does so."""

    name: str
    output: Callable[[dict[str, object]], str]
    source: str
    profile: str | None = None  # the client profile (tokens.framing) that frames results this way, where one does


FRAMINGS = (
    Framing(
        "bare text",
        framing.PYTHON.output,
        "MCP C# SDK >= 0.4.1-preview.1 McpClientTool (a lone text block as TextContent), "
        "Microsoft.Extensions.AI.OpenAI >= 10.0.0 Responses; wismo's own loop",
        framing.PYTHON.name,
    ),
    Framing(
        "compact, default escaping",
        framing.element_raw_text,
        "the raw text of ToChatMessage's JsonElement (MCP C# SDK 2.2.0); no released Microsoft.Extensions.AI.OpenAI "
        "found to send it unchanged",
        framing.CSHARP_RAW_ELEMENT.name,
    ),
    Framing(
        "indented, default escaping",
        framing.indented_default_output,
        "ToChatMessage's JsonElement as Microsoft.Extensions.AI.OpenAI packages 9.0.0-preview.9.24507.7 to "
        "9.1.0-preview.1.25064.3 would re-serialize it; none of them has a Responses client",
    ),
    Framing(
        "indented, relaxed escaping",
        framing.csharp_output,
        "ToChatMessage's JsonElement re-serialized by Microsoft.Extensions.AI.OpenAI's Responses client, every release "
        "from 9.4.0-preview.1.25207.5 (read at tags v9.4.0 to v10.9.0; v10.8.3 is what csharp-sdk v2.2.0 builds "
        "against)",
        framing.CSHARP_RELAXED.name,
    ),
)
# The ways a provider may count the model's function_call items (how the Responses API does is not published),
# each with the sentence the reports define it by.
COUNTINGS = {
    "name + arguments": "each call is its name and its arguments' JSON text, plus the cookbook's per-item overhead",
    "with call_id": "the same, plus each call's call_id (at the size of the id the study publishes, where it does)",
    "parallel-call wrapper": "a turn of several calls counted as one multi_tool_use.parallel call listing them all, "
    "a form OpenAI's models are reported to write parallel calls in internally (OpenAI documents none)",
    "isError: false kept": "calls as name + arguments, and every result's envelope keeping isError: false (a client "
    "that writes the flag even when it is false)",
}
TOLERANCE_PERCENT = 5.0


class Row(TypedDict):
    """One cell of the sensitivity table: a framing crossed with a way of counting calls (table)."""

    framing: str
    counting: str
    additions: list[int]
    derived: list[int]
    errorPercent: list[float]
    maxAbsErrorPercent: float
    rebuiltRequests: list[int]
    cumulativeErrorPercent: list[float]


class BestFit(TypedDict):
    """The best-fitting cell of the table, with the client profile that frames results its way (None: none does)."""

    framing: str
    counting: str
    additions: list[int]
    errorPercent: list[float]
    profile: str | None


class Spread(TypedDict):
    """How far the plausible cells spread (spread)."""

    cells: int
    cellsWithinTolerance: int
    tolerancePercent: float
    turnErrorPercent: list[list[float]]


class CallIds(TypedDict):
    """How the "with call_id" counting prices a call's id (call_ids)."""

    source: str
    id: str | None
    characters: int
    tokensEach: list[int]
    kind: str


class Bounds(TypedDict):
    """The plausible range of the second conversation's outputs, with its derivation (output_bounds)."""

    lower: int | None
    upper: int | None
    firstOutput: int | None
    firstCallsWritten: int
    secondCallsWritten: int
    kind: str


class Verdict(TypedDict):
    """One framing's verdict against the output bounds, with its margin (verdict)."""

    verdict: str
    marginTokens: int
    marginPercent: float
    withinTolerance: bool


class TestRow(TypedDict):
    """One framing's row of the second conversation's test (second_test); the verdict where a bound is known."""

    framing: str
    outputRemainder: list[int]
    verdict: NotRequired[str]
    marginTokens: NotRequired[int]
    marginPercent: NotRequired[float]
    withinTolerance: NotRequired[bool]


class AnswerSizes(TypedDict):
    """Sizes of a plausible output of the second conversation, in tokens (answer_sizes)."""

    quotedSummary: int
    minimalOutputs: int


class KindedAnswerSizes(AnswerSizes):
    """The answer sizes as the sensitivity block carries them, with their kind."""

    kind: str


class SecondTest(TypedDict):
    """The second conversation's test of every framing (build's secondTest)."""

    kind: str
    bounds: Bounds
    tolerancePercent: float
    rows: list[TestRow]
    fitting: int
    judged: int


class DefaultEscapes(TypedDict):
    """The characters of the study's results the default encoder escapes (default_escapes), with the encoder."""

    encoder: str
    found: list[dict[str, object]]


class Sensitivity(TypedDict):
    """The sensitivity block of context-cost.json (build): the table, its best fit and spread, and the second test."""

    kind: str
    case: str
    designs: Designs
    framings: list[dict[str, str]]
    countings: list[dict[str, str]]
    callIds: CallIds
    defaultEscapes: DefaultEscapes
    rows: list[Row]
    bestFit: BestFit
    spread: Spread
    answerSizes: NotRequired[KindedAnswerSizes | None]
    secondTest: NotRequired[SecondTest]


def _call_tokens(calls: list[dict[str, Any]], counting: str, encoding: str, id_tokens: int | None = None) -> int:
    """The model's function_call items of one turn, counted the way `counting` assumes; under "with call_id" each
    call's id costs `id_tokens` (the published id's size) where given, else its own id's tokens."""
    if counting == "with call_id":
        return sum(
            tokens.count_item(c, encoding)
            + (id_tokens if id_tokens is not None else tokens.count_text(c["call_id"], encoding))
            for c in calls
        )
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

        def output(result: dict[str, object]) -> str:
            return how.output({**result, "isError": result.get("isError", False)})

    return framing.Profile(how.name, how.source, how.source, framing.PYTHON.function, output)


def turn_addition(
    turn: list[Call], index: int, how: Framing, counting: str, encoding: str, id_tokens: int | None = None
) -> int:
    """What one tool turn adds to the next request under a framing and a way of counting the calls: the turn's
    items as conversation.turn_items builds them, the calls counted as `counting` assumes."""
    items = conversation.turn_items(turn, index, _profile(how, counting == "isError: false kept"))
    calls = [i for i in items if i["type"] == "function_call"]
    outputs = [i for i in items if i["type"] == "function_call_output"]
    return _call_tokens(calls, counting, encoding, id_tokens) + sum(tokens.count_item(o, encoding) for o in outputs)


def _percent(ours: int, theirs: int) -> float:
    return round((ours - theirs) / theirs * 100, 1)


def table(turns: list[list[Call]], requests: list[int], encoding: str, id_tokens: int | None = None) -> list[Row]:
    """Every framing crossed with every counting: the turn additions against those derived from published, and
    the rebuilt later requests (request 1 plus the turns, so their error is the turns' cumulative error)."""
    derived = [b - a for a, b in zip(requests, requests[1:])]
    turns = turns[: len(derived)]
    rows: list[Row] = []
    for how in FRAMINGS:
        for counting in COUNTINGS:
            adds = [turn_addition(t, i, how, counting, encoding, id_tokens) for i, t in enumerate(turns, start=1)]
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


def best_fit(rows: list[Row]) -> Row:
    """The cell whose larger turn error is smallest (the first such in table order)."""
    return min(rows, key=lambda r: r["maxAbsErrorPercent"])


def spread(rows: list[Row]) -> Spread:
    """How far the plausible cells spread: each turn's error range over every cell, and how many cells fit."""
    errors = [r["errorPercent"] for r in rows]
    return {
        "cells": len(rows),
        "cellsWithinTolerance": sum(r["maxAbsErrorPercent"] <= TOLERANCE_PERCENT for r in rows),
        "tolerancePercent": TOLERANCE_PERCENT,
        "turnErrorPercent": [[min(e[i] for e in errors), max(e[i] for e in errors)] for i in range(len(errors[0]))],
    }


def default_escapes(recorded: Recorded) -> list[dict[str, object]]:
    """Every character of the study's recorded results (every design and case) that System.Text.Json's default
    encoder writes as an escape, as the default-escaping framings write them (stjson.escapes_found)."""
    texts = [c["output"] for by_case in recorded["turns"].values() for ts in by_case.values() for t in ts for c in t]
    return stjson.escapes_found(texts, stjson.DEFAULT)


def call_ids(published: Figure[str] | None, turns: list[list[Call]], encoding: str) -> CallIds:
    """How the "with call_id" counting prices a call's id: every call at the size of the id the study publishes
    (the article's: its recorded run's first call id), else each call at its own id as conversation.turn_items
    derives it (a real model's length)."""
    if published is not None:
        value = published["value"]
        return {
            "source": f"the published id ({published['kind']})",
            "id": value,
            "characters": len(value),
            "tokensEach": [tokens.count_text(value, encoding)] * 2,
            "kind": TIKTOKEN,
        }
    ids = [i["call_id"] for n, t in enumerate(turns, 1) for i in conversation.turn_items(t, n) if "name" in i]
    sizes = [tokens.count_text(i, encoding) for i in ids] or [0]
    return {
        "source": "ids derived from each turn (tokens.call_id), a real model's length",
        "id": ids[0] if ids else None,
        "characters": len(ids[0]) if ids else 0,
        "tokensEach": [min(sizes), max(sizes)],
        "kind": TIKTOKEN,
    }


def calls_written(turns: list[list[Call]], encoding: str) -> int:
    """What the model wrote to make a conversation's tool calls: each call's name and arguments, in tokens."""
    return sum(
        tokens.count_text(c["name"], encoding)
        + tokens.count_text(json.dumps(c["arguments"], separators=(",", ":")), encoding)
        for turn in turns
        for c in turn
    )


def answer_sizes(
    answer: str | None, fields: dict[str, object] | None, entry_call: Call, encoding: str
) -> AnswerSizes | None:
    """Sizes of a plausible output of the second conversation, in tokens: its published answer alone, and the least
    the model must have written (its tool call, then the answer: in the answer contract's fields with that summary
    as one JSON object where the study keeps the contract, else the answer's text); None without a published answer."""
    if answer is None:
        return None
    written = (
        json.dumps({**fields, "customerSummary": answer}, separators=(",", ":"), ensure_ascii=False)
        if fields is not None
        else answer
    )
    return {
        "quotedSummary": tokens.count_text(answer, encoding),
        "minimalOutputs": calls_written([[entry_call]], encoding) + tokens.count_text(written, encoding),
    }


def output_bounds(
    sizes: AnswerSizes | None,
    first_output: int | None,
    first_turns: list[list[Call]],
    second_turns: list[list[Call]],
    encoding: str,
) -> Bounds:
    """The range the second conversation's outputs plausibly fall in, each bound with its derivation: at least its
    minimal outputs (answer_sizes); at most the first conversation's own output with its tool calls swapped for the
    second's (the same case answered once, with the second design's calls): first output - first calls written +
    second calls written. A bound is None where its figures are not published."""
    first_calls, second_calls = calls_written(first_turns, encoding), calls_written(second_turns, encoding)
    upper = None if first_output is None else first_output - first_calls + second_calls
    return {
        "lower": None if sizes is None else sizes["minimalOutputs"],
        "upper": upper,
        "firstOutput": first_output,
        "firstCallsWritten": first_calls,
        "secondCallsWritten": second_calls,
        "kind": f"lower {TIKTOKEN}; upper {DERIVED} minus and plus {TIKTOKEN}",
    }


def verdict(remainders: list[tuple[int, int]], lower: int | None, upper: int | None) -> Verdict | None:
    """One framing's verdict from what each counting leaves for the outputs (remainder, tokens the rebuilt turns put
    into the inputs): the bound it fails, or that it fits both (or the one given), with its margin in tokens and as a
    share of the rebuilt turns' tokens, which is what a framing error moves (comparable to the fits' tolerance)."""
    if lower is None and upper is None:
        return None
    most = max(remainders)  # the counting that leaves the most (its turns put the least into the inputs)
    least = min(remainders)
    if lower is not None and most[0] < lower:
        said, margin, turns = "fails the lower bound", lower - most[0], most[1]
    elif upper is not None and least[0] > upper:
        said, margin, turns = "fails the upper bound", least[0] - upper, least[1]
    else:
        said = "fits both bounds" if lower is not None and upper is not None else "fits the bound"
        room = [(most[0] - lower, most[1])] if lower is not None else []
        room += [(upper - least[0], least[1])] if upper is not None else []
        margin, turns = min(room)
    percent = round(margin / turns * 100, 1) if turns else 0.0
    return {
        "verdict": said,
        "marginTokens": margin,
        "marginPercent": percent,
        "withinTolerance": percent <= TOLERANCE_PERCENT,
    }


def second_test(
    turns: list[list[Call]],
    first_request: int,
    conversation_total: int,
    calls: int,
    bounds: Bounds,
    encoding: str,
    id_tokens: int | None = None,
) -> list[TestRow]:
    """Per framing: what the published total of the second conversation leaves for the model's outputs once its
    requests are rebuilt from the published first request, over every counting, and its verdict against the
    plausible output range (output_bounds)."""
    out: list[TestRow] = []
    turns = turns[: calls - 1]
    for how in FRAMINGS:
        remainders = []
        for counting in COUNTINGS:
            request, inputs = first_request, first_request
            for i, t in enumerate(turns, start=1):
                request += turn_addition(t, i, how, counting, encoding, id_tokens)
                inputs += request
            remainders.append((conversation_total - inputs, inputs - first_request * (len(turns) + 1)))
        row: TestRow = {
            "framing": how.name,
            "outputRemainder": [min(r[0] for r in remainders), max(r[0] for r in remainders)],
        }
        judged = verdict(remainders, bounds["lower"], bounds["upper"])
        if judged is not None:
            row |= {
                "verdict": judged["verdict"],
                "marginTokens": judged["marginTokens"],
                "marginPercent": judged["marginPercent"],
                "withinTolerance": judged["withinTolerance"],
            }
        out.append(row)
    return out


def build(
    recorded: Recorded, pub: PublishedFigures, answer_fields: dict[str, object] | None, encoding: str
) -> Sensitivity:
    """The sensitivity table, its best fit and spread, and the second conversation's test, each with its kind."""
    case, first, second = pub["case"], pub["designs"]["first"], pub["designs"]["second"]
    f_turns = recorded["turns"][first][case]
    requests = pub["firstRequests"]["value"]
    ids = call_ids(pub.get("callId"), f_turns[: len(requests) - 1], encoding)
    id_tokens = ids["tokensEach"][0] if pub.get("callId") else None
    rows = table(f_turns, requests, encoding, id_tokens)
    best = best_fit(rows)
    out: Sensitivity = {
        "kind": f"{TIKTOKEN} against {DERIVED}",
        "case": case,
        "designs": pub["designs"],
        "framings": [{"name": f.name, "source": f.source} for f in FRAMINGS],
        "countings": [{"name": name, "meaning": meaning} for name, meaning in COUNTINGS.items()],
        "callIds": ids,
        "defaultEscapes": {"encoder": stjson.DEFAULT, "found": default_escapes(recorded)},
        "rows": rows,
        "bestFit": {
            "framing": best["framing"],
            "counting": best["counting"],
            "additions": best["additions"],
            "errorPercent": best["errorPercent"],
            "profile": next(f.profile for f in FRAMINGS if f.name == best["framing"]),
        },
        "spread": spread(rows),
    }
    if second is not None:
        s_turns = recorded["turns"][second][case]
        sizes = answer_sizes(pub["secondAnswer"], answer_fields, s_turns[0][0], encoding)
        calls = pub["secondCalls"]["value"] or len(s_turns) + 1
        first_output = pub.get("firstOutput", {}).get("value")
        bounds = output_bounds(sizes, first_output, f_turns[: len(requests) - 1], s_turns[: calls - 1], encoding)
        tested = second_test(
            s_turns,
            pub["secondFirstRequest"]["value"],
            pub["secondConversation"]["value"],
            calls,
            bounds,
            encoding,
            id_tokens,
        )
        out["answerSizes"] = {"kind": TIKTOKEN, **sizes} if sizes else None
        out["secondTest"] = {
            "kind": f"{DERIVED} minus {TIKTOKEN}",
            "bounds": bounds,
            "tolerancePercent": TOLERANCE_PERCENT,
            "rows": tested,
            "fitting": sum(r.get("verdict") in ("fits both bounds", "fits the bound") for r in tested),
            "judged": sum("verdict" in r for r in tested),
        }
    return out


async def best_fitting_profile(study: Study, encoding: str = tokens.DEFAULT_ENCODING) -> dict[str, Any] | None:
    """The sensitivity table's best cell for the study's published conversation (its framing, counting, profile and
    errors), its turns rebuilt from the study's servers over MCP; None where the study publishes no conversation of
    several requests, or where the best framing is no client profile's."""
    which = calibration.calibrated(study.published)
    if which is None or study.published is None:
        return None
    recorded = await investigations.record(study, [which.case])
    pub = calibration.published_figures(study.published, which)
    best = build(recorded, pub, None, encoding)["bestFit"]
    # A plain dict at this boundary: recorded_runs reads its profile as a text (it is one whenever it is returned).
    return {**best} if best["profile"] else None
