"""Calibration against the conversations a study publishes ([published] in its file): the one with several requests
rebuilt turn by turn from our servers' real results under each client profile, and a second design's conversation
of the same case set beside it. For the article's study these are its ORD-1004 runs: the granular run's three
request sizes, 718, 1,005 and 1,719 input tokens, and 3,669 in all; the focused run's first request, 141 tokens
smaller, and 2,148 in all.

Everything computed from published figures alone (a difference, a sum) is "derived from published". What we
rebuild is tiktoken-estimated: the function-call items and the framed results of each turn, the tool definitions,
the question. The first request's instructions are not published: their size is solved from it, then checked
against the later requests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, NotRequired, TypedDict, TypeVar

from wismo.accounting import cost, tokens
from wismo.accounting.tokens import conversation, definitions, framing
from wismo.accounting.tokens.conversation import Prompt
from wismo.core import kinds
from wismo.core.errors import InputError
from wismo.core.kinds import DERIVED
from wismo.mcp.client.investigation import Call
from wismo.studies.published import REPORTED, Published

if TYPE_CHECKING:  # a type only: recording reaches servers, which calibration never does
    from wismo.studies.investigations import Recorded

PUBLISHED = REPORTED
ESTIMATED = tokens.LABEL
DEFINITION_METHODS = ("cookbook", "harmony")

V = TypeVar("V")


class Figure(TypedDict, Generic[V]):
    """One published figure, or one that follows from published ones, with its kind."""

    value: V
    kind: str


class Designs(TypedDict):
    """The published conversations' designs: the one calibrated on, and the one tested (None when none is)."""

    first: str
    second: str | None


class PublishedFigures(TypedDict):
    """The published figures the calibration uses (published_figures), each with its kind."""

    case: str
    designs: Designs
    source: str
    model: str
    firstRequests: Figure[list[int]]
    firstAdditions: Figure[list[int]]
    firstInput: Figure[int]
    callId: Figure[str] | None
    firstConversation: NotRequired[Figure[int]]
    firstOutput: NotRequired[Figure[int]]
    secondFirstRequest: NotRequired[Figure[int]]
    secondSmallerBy: NotRequired[Figure[int]]
    secondConversation: NotRequired[Figure[int]]
    secondCalls: NotRequired[Figure[int | None]]
    secondAnswer: NotRequired[str | None]


class CalibrationRow(TypedDict):
    """One client profile and definition method's rebuild of the published conversations (rebuild)."""

    profile: str
    definitions: str
    turnAdditions: list[int]
    derivedAdditions: list[int]
    additionErrorPercent: list[float]
    instructionsTokensSolved: int
    predictedRequests: list[int]
    publishedRequests: list[int]
    requestErrorPercent: list[float]
    definitionsFirst: int
    definitionsSecond: NotRequired[int]
    secondSmallerBy: NotRequired[int]
    publishedSmallerBy: NotRequired[int]
    secondTurnAdditions: NotRequired[list[int]]
    secondFirstRequest: NotRequired[int]
    secondLastRequest: NotRequired[int]
    secondOutputImplied: NotRequired[int]
    secondLastFromPublishedFirst: NotRequired[int]
    secondOutputImpliedFromPublishedFirst: NotRequired[int]


class Calibration(TypedDict):
    """The published conversations rebuilt under every client profile and definition method (rebuild)."""

    case: str
    designs: Designs
    published: PublishedFigures
    rows: list[CalibrationRow]
    encoding: str
    labels: dict[str, str]


@dataclass(frozen=True)
class Calibrated:
    """Which published conversations a study's calibration rests on: the case, the design whose conversation has
    several requests (the turns are fitted on it), and another design's conversation of that case (tested)."""

    case: str
    first: str
    second: str | None


def calibrated(published: Published | None) -> Calibrated | None:
    """The conversations to calibrate on: the first declared with two or more requests, and the first other design's
    conversation of the same case that gives its total; None when no conversation has two requests."""
    if published is None:
        return None
    first = next((c for c in published.conversations if len(c.requests) >= 2), None)
    if first is None:
        return None
    second = next(
        (
            c
            for c in published.conversations
            if c.case == first.case
            and c.design != first.design
            and c.total is not None
            and (c.requests or c.first_smaller_by is not None)
        ),
        None,
    )
    return Calibrated(first.case, first.design, second.design if second else None)


def published_figures(published: Published, which: Calibrated) -> PublishedFigures:
    """The published figures the calibration uses and what follows from them by arithmetic alone, each with its
    kind: the first conversation's requests, additions, input, output and total; a call id the provider returned
    (the first conversation's, else any); the second's first request (as
    published, or the first's minus how much smaller it was), smaller-by and total."""
    first = published.of(which.first, which.case)
    assert first is not None
    f = published.derived(first)
    call_id = next((c.call_id for c in (first, *published.conversations) if c.call_id), None)
    out: PublishedFigures = {
        "case": which.case,
        "designs": {"first": which.first, "second": which.second},
        "source": published.source,
        "model": published.model,
        "firstRequests": {"value": f["requests"]["value"], "kind": f["requests"]["kind"]},
        "firstAdditions": {"value": f["additions"]["value"], "kind": f["additions"]["kind"]},
        "firstInput": {"value": sum(first.requests), "kind": DERIVED},
        "callId": None if call_id is None else {"value": call_id, "kind": PUBLISHED},
    }
    if first.output_known and first.total is not None:  # the second test narrows it for the type checker
        out["firstConversation"] = {"value": f["total"]["value"], "kind": f["total"]["kind"]}
        out["firstOutput"] = {"value": first.total - sum(first.requests), "kind": DERIVED}
    if which.second is not None:
        second = published.of(which.second, which.case)
        assert second is not None
        s = published.derived(second)
        first_request = s["requests"]["value"][0]
        out["secondFirstRequest"] = {"value": first_request, "kind": s["requests"]["kind"]}
        out["secondSmallerBy"] = (
            {"value": s["firstSmallerBy"]["value"], "kind": s["firstSmallerBy"]["kind"]}
            if "firstSmallerBy" in s
            else {"value": first.requests[0] - first_request, "kind": DERIVED}
        )
        out["secondConversation"] = {"value": s["total"]["value"], "kind": s["total"]["kind"]}
        calls = s.get("calls", {"value": None, "kind": DERIVED})
        out["secondCalls"] = {"value": calls["value"], "kind": calls["kind"]}
        out["secondAnswer"] = second.answer
    return out


def additions(
    tool_turns: list[list[Call]], profile: framing.Profile, encoding: str = tokens.DEFAULT_ENCODING
) -> list[int]:
    """What each tool turn adds to the next request under a client profile (tiktoken-estimated)."""
    return list(conversation.turn_additions(tool_turns, encoding, profile))


def definition_tokens(
    tools: list[dict[str, object]], profile: framing.Profile, method: str, encoding: str = tokens.DEFAULT_ENCODING
) -> int:
    """The tools block of a request: the server's definitions as the profile sends them, counted by `method`."""
    functions = [profile.function(t) for t in tools]
    if method == "cookbook":
        return tokens.count_tools(functions, encoding)
    if method == "harmony":
        return definitions.count_definitions(functions, encoding).harmony_total
    raise InputError(f"unknown definition counting method {method!r}; use one of {', '.join(DEFINITION_METHODS)}")


def first_request_known(
    tools: list[dict[str, object]],
    profile: framing.Profile,
    method: str,
    prompt: Prompt,
    encoding: str = tokens.DEFAULT_ENCODING,
) -> int:
    """Every part of the first request but the instructions' text: definitions (counted by `method`), the
    question, the framing of both messages and the reply's priming (cookbook constants)."""
    request = conversation.first_request(prompt, tools, encoding, profile)
    without_instructions = request.total - tokens.count_text(prompt.instructions, encoding)
    return without_instructions - request.tools + definition_tokens(tools, profile, method, encoding)


def rebuild(recorded: Recorded, pub: PublishedFigures, encoding: str = tokens.DEFAULT_ENCODING) -> Calibration:
    """The published conversations rebuilt under every client profile and definition method: per-turn additions
    against the derived ones, the instructions' size solved from request 1 and checked on the later requests, and
    the second conversation's second request and output implied."""
    case, first, second = pub["case"], pub["designs"]["first"], pub["designs"]["second"]
    prompt = recorded["prompts"][case]
    f_turns, f_tools = recorded["turns"][first][case], recorded["tools"][first]
    requests = pub["firstRequests"]["value"]
    derived_adds = pub["firstAdditions"]["value"]
    rows = []
    for profile in framing.PROFILES.values():
        f_add = additions(f_turns, profile, encoding)
        for method in DEFINITION_METHODS:
            f_known = first_request_known(f_tools, profile, method, prompt, encoding)
            instructions = requests[0] - f_known  # solved: the only unpublished part of request 1
            predicted = list(cost.session(requests[0], f_add[: len(requests) - 1]).inputs)
            row: CalibrationRow = {
                "profile": profile.name,
                "definitions": method,
                "turnAdditions": f_add,
                "derivedAdditions": derived_adds,
                "additionErrorPercent": [round((a - d) / d * 100, 1) for a, d in zip(f_add, derived_adds)],
                "instructionsTokensSolved": instructions,
                "predictedRequests": predicted,
                "publishedRequests": requests,
                "requestErrorPercent": [round((p - r) / r * 100, 1) for p, r in zip(predicted, requests)],
                "definitionsFirst": definition_tokens(f_tools, profile, method, encoding),
            }
            if second is not None:
                s_turns, s_tools = recorded["turns"][second][case], recorded["tools"][second]
                s_add = additions(s_turns, profile, encoding)
                s_known = first_request_known(s_tools, profile, method, prompt, encoding)
                calls = pub["secondCalls"]["value"] or len(s_turns) + 1
                # The second conversation: its first request, then it plus each tool turn up to its published calls.
                rebuilt = cost.session(instructions + s_known, s_add[: calls - 1])
                from_published = cost.session(pub["secondFirstRequest"]["value"], s_add[: calls - 1])
                total = pub["secondConversation"]["value"]
                row |= {
                    "definitionsSecond": definition_tokens(s_tools, profile, method, encoding),
                    "secondSmallerBy": f_known - s_known,
                    "publishedSmallerBy": pub["secondSmallerBy"]["value"],
                    "secondTurnAdditions": s_add,
                    "secondFirstRequest": rebuilt.inputs[0],
                    "secondLastRequest": rebuilt.final,
                    "secondOutputImplied": total - rebuilt.total,
                    "secondLastFromPublishedFirst": from_published.final,
                    "secondOutputImpliedFromPublishedFirst": total - from_published.total,
                }
            rows.append(row)
    return {
        "case": case,
        "designs": pub["designs"],
        "published": pub,
        "rows": rows,
        "encoding": encoding,
        "labels": {
            "rows": f"{ESTIMATED} ({tokens.COOKBOOK_GPT4O.name} for items; definitions by the named method)",
            "instructionsTokensSolved": f"{DERIVED}, minus {ESTIMATED}",
            "secondOutputImplied": f"{DERIVED}, minus {ESTIMATED}",
        },
    }


def row(calibration: Calibration, profile: str, method: str = "cookbook") -> CalibrationRow:
    """The calibration row of one profile and definition method."""
    return next(r for r in calibration["rows"] if r["profile"] == profile and r["definitions"] == method)


HEAVY = "csharp-raw-element"  # the framing the share is stated against: the article's best fit (a fit, said so)


def record_types(
    recorded: Recorded, case: str, encoding: str = tokens.DEFAULT_ENCODING, heavy: str = HEAVY
) -> list[dict[str, object]]:
    """For each tool the study's designs call in one case, its first result bare and under each client profile, in
    tokens, and the share of the `heavy` framing's tokens that the framing adds: what the client's framing costs on
    the study's own results."""
    seen: dict[str, str] = {}
    for by_case in recorded["turns"].values():
        for turn in by_case.get(case, []):
            for call in turn:
                seen.setdefault(call["name"], call["output"])
    out = []
    for tool, text in seen.items():
        result = framing.text_result(text)
        counts = {name: tokens.count_text(p.output(result), encoding) for name, p in framing.PROFILES.items()}
        framed = counts[heavy]
        out.append(
            {
                "tool": tool,
                "bytes": len(text.encode("utf-8")),
                **counts,
                "framing share %": round((framed - counts[framing.PYTHON.name]) / framed * 100, 1) if framed else 0.0,
            }
        )
    return out


def framing_share(
    recorded: Recorded,
    case: str,
    instructions: int,
    encoding: str = tokens.DEFAULT_ENCODING,
    heavy: str = HEAVY,
) -> list[dict[str, object]]:
    """Per design, one case's conversation input (with `instructions` tokens of instructions) under the `heavy`
    client profile and with bare text (python), and the share of the former that comes from the client's framing
    of results rather than from the tool design (modelled)."""
    prompt = recorded["prompts"][case]
    out = []
    for design, by_case in recorded["turns"].items():
        tool_turns, tools = by_case[case], recorded["tools"][design]
        totals = {}
        for name in (framing.PYTHON.name, heavy):
            profile = framing.profile(name)
            base = instructions + first_request_known(tools, profile, "cookbook", prompt, encoding)
            totals[name] = cost.session(base, additions(tool_turns, profile, encoding)).total
        out.append(
            {
                "design": design,
                "input, bare text": totals[framing.PYTHON.name],
                f"input, {heavy} framing": totals[heavy],
                "share from framing %": round((totals[heavy] - totals[framing.PYTHON.name]) / totals[heavy] * 100, 1),
            }
        )
    return out


def case_inputs(
    recorded: Recorded, pub: PublishedFigures, profile: str, encoding: str = tokens.DEFAULT_ENCODING
) -> dict[str, int]:
    """Per published design, the published case's conversation input under a client profile: its published first
    request (so no request-1 residual is left out) plus our servers' turns rebuilt under the profile (modelled)."""
    case, first, second = pub["case"], pub["designs"]["first"], pub["designs"]["second"]
    assert second is not None  # called only where the study publishes a second design's conversation
    starts = {first: pub["firstRequests"]["value"][0], second: pub["secondFirstRequest"]["value"]}
    client = framing.profile(profile)
    return {
        d: cost.session(start, additions(recorded["turns"][d][case], client, encoding)).total
        for d, start in starts.items()
    }


def savings_against_published(
    recorded: Recorded,
    pub: PublishedFigures,
    medians: dict[str, float],
    published_median: float | None,
    encoding: str = tokens.DEFAULT_ENCODING,
) -> dict[str, object]:
    """The second design's saving set beside the study's own, like for like: on the published case, ours under each
    profile in `medians` (case_inputs) beside the published conversations' (derived from published, where both
    totals are); and the median across the cases, ours under each profile (`medians`, as the report computes its
    headline) beside the published median."""
    first, second = pub["designs"]["first"], pub["designs"]["second"]
    assert second is not None  # beside_published calls this only with a second design
    inputs = {name: case_inputs(recorded, pub, name, encoding) for name in medians}
    out: dict[str, object] = {
        "case": pub["case"],
        "first": first,
        "second": second,
        "profiles": list(medians),
        "firstRequests": {first: pub["firstRequests"]["value"][0], second: pub["secondFirstRequest"]["value"]},
        "firstRequestKinds": {first: pub["firstRequests"]["kind"], second: pub["secondFirstRequest"]["kind"]},
        "caseInputs": inputs,
        "caseSaving": {name: cost.saving_percent(i[first], i[second]) for name, i in inputs.items()},
        "medianSaving": dict(medians),
        "kind": f"{ESTIMATED} turns on published first requests, then modelled (input only)",
    }
    if "firstConversation" in pub and pub.get("secondConversation") is not None:
        totals = (pub["firstConversation"]["value"], pub["secondConversation"]["value"])
        out["publishedCaseSaving"] = {"value": cost.saving_percent(*totals), "totals": list(totals), "kind": DERIVED}
    if published_median is not None:
        out["publishedMedian"] = {
            "value": published_median,
            "kind": f"{kinds.PUBLISHED}, a median of provider-reported tokens",
        }
    return out
