"""Calibration against the one conversation whose provider-reported tokens are published: the article's ORD-1004
runs ("Where is my order?"), rebuilt turn by turn from our servers' real results under each client profile.

What the article published (provider-reported): the granular run's three request sizes, 718, 1,005 and 1,719
input tokens; its whole conversation, 3,669 tokens; the focused run's first request, 141 tokens smaller; its whole
conversation, 2,148 tokens. Everything computed from those alone (a difference, a sum) is "derived from
published". What we rebuild is tiktoken-estimated: the function-call items and the framed results of each turn,
the tool definitions, the question. The article's instructions text is not published: its size is solved from
the first request, then checked against the later ones.
"""

from __future__ import annotations

from typing import Any

from wismo import cost, tokens
from wismo.client import investigation
from wismo.domain import prompts
from wismo.tokens import conversation, definitions, framing

DERIVED = "derived from published"
PUBLISHED = "provider-reported (published)"
ESTIMATED = tokens.LABEL
ORDER = "ORD-1004"
DEFINITION_METHODS = ("cookbook", "harmony")


def published(article: dict[str, Any], order_id: str = ORDER) -> dict[str, Any]:
    """The article's figures for one order and what follows from them by arithmetic alone, each with its kind."""
    g, f = article[order_id]["granular"], article[order_id]["focused"]
    requests = g["inputTokensPerRequest"]
    granular_input = sum(requests)
    first_focused = requests[0] - f["firstRequestSmallerByTokens"]
    return {
        "granularRequests": {"value": requests, "kind": PUBLISHED},
        "granularConversation": {"value": g["conversationTokens"], "kind": PUBLISHED},
        "focusedSmallerBy": {"value": f["firstRequestSmallerByTokens"], "kind": PUBLISHED},
        "focusedConversation": {"value": f["conversationTokens"], "kind": PUBLISHED},
        "granularAdditions": {"value": [b - a for a, b in zip(requests, requests[1:])], "kind": DERIVED},
        "granularInput": {"value": granular_input, "kind": DERIVED},
        "granularOutput": {"value": g["conversationTokens"] - granular_input, "kind": DERIVED},
        "focusedFirstRequest": {"value": first_focused, "kind": DERIVED},
    }


def additions(
    tool_turns: list[list[investigation.Call]], profile: framing.Profile, encoding: str = tokens.DEFAULT_ENCODING
) -> list[int]:
    """What each tool turn adds to the next request under a client profile (tiktoken-estimated)."""
    return list(conversation.turn_additions(tool_turns, encoding, profile))


def definition_tokens(
    tools: list[dict[str, Any]], profile: framing.Profile, method: str, encoding: str = tokens.DEFAULT_ENCODING
) -> int:
    """The tools block of a request: the server's definitions as the profile sends them, counted by `method`."""
    functions = [profile.function(t) for t in tools]
    if method == "cookbook":
        return tokens.count_tools(functions, encoding)
    if method == "harmony":
        return definitions.count_definitions(functions, encoding).harmony_total
    raise ValueError(f"unknown definition counting method {method!r}; use one of {', '.join(DEFINITION_METHODS)}")


def first_request_known(
    tools: list[dict[str, Any]],
    profile: framing.Profile,
    method: str,
    order_id: str = ORDER,
    encoding: str = tokens.DEFAULT_ENCODING,
) -> int:
    """Every part of the first request but the instructions' text: definitions (counted by `method`), the
    question, the framing of both messages and the reply's priming (cookbook constants)."""
    request = conversation.first_request(order_id, tools, encoding, profile)
    without_instructions = request.total - tokens.count_text(prompts.INSTRUCTIONS, encoding)
    return without_instructions - request.tools + definition_tokens(tools, profile, method, encoding)


def rebuild(
    recorded: dict[str, Any], article: dict[str, Any], encoding: str = tokens.DEFAULT_ENCODING, order_id: str = ORDER
) -> dict[str, Any]:
    """The article's two ORD-1004 conversations rebuilt under every client profile and definition method: per-turn
    additions against the derived ones, the instructions' size solved from request 1 and checked on requests 2
    and 3, the focused conversation's second request and output implied, and the 141 examined."""
    pub = published(article, order_id)
    g_turns, f_turns = recorded["turns"]["granular"][order_id], recorded["turns"]["focused"][order_id]
    g_tools, f_tools = recorded["tools"]["granular"], recorded["tools"]["focused"]
    requests = pub["granularRequests"]["value"]
    derived_adds = pub["granularAdditions"]["value"]
    first_pub = pub["focusedFirstRequest"]["value"]
    rows = []
    for profile in framing.PROFILES.values():
        g_add, f_add = additions(g_turns, profile, encoding), additions(f_turns, profile, encoding)
        for method in DEFINITION_METHODS:
            g_known = first_request_known(g_tools, profile, method, order_id, encoding)
            f_known = first_request_known(f_tools, profile, method, order_id, encoding)
            instructions = requests[0] - g_known  # solved: the only unpublished part of request 1
            predicted = list(cost.session(requests[0], g_add[: len(requests) - 1]).inputs)
            # The article's focused run is two model calls: the first request, then it plus the one tool turn.
            focused = cost.session(instructions + f_known, f_add[:1])
            from_published = cost.session(first_pub, f_add[:1])
            rows.append(
                {
                    "profile": profile.name,
                    "definitions": method,
                    "turnAdditions": g_add,
                    "derivedAdditions": derived_adds,
                    "additionErrorPercent": [round((a - d) / d * 100, 1) for a, d in zip(g_add, derived_adds)],
                    "instructionsTokensSolved": instructions,
                    "predictedRequests": predicted,
                    "publishedRequests": requests,
                    "requestErrorPercent": [round((p - r) / r * 100, 1) for p, r in zip(predicted, requests)],
                    "definitionsGranular": definition_tokens(g_tools, profile, method, encoding),
                    "definitionsFocused": definition_tokens(f_tools, profile, method, encoding),
                    "focusedSmallerBy": g_known - f_known,
                    "publishedSmallerBy": pub["focusedSmallerBy"]["value"],
                    "focusedTurnAddition": f_add[0],
                    # The focused conversation two ways: from our rebuilt first request, and from the published one.
                    "focusedFirstRequest": focused.inputs[0],
                    "focusedSecondRequest": focused.final,
                    "focusedOutputImplied": pub["focusedConversation"]["value"] - focused.total,
                    "focusedSecondFromPublishedFirst": from_published.final,
                    "focusedOutputImpliedFromPublishedFirst": pub["focusedConversation"]["value"]
                    - from_published.total,
                }
            )
    return {
        "order": order_id,
        "published": pub,
        "rows": rows,
        "encoding": encoding,
        "labels": {
            "rows": f"{ESTIMATED} ({tokens.COOKBOOK_GPT4O.name} for items; definitions by the named method)",
            "instructionsTokensSolved": f"{DERIVED}, minus {ESTIMATED}",
            "focusedOutputImplied": f"{DERIVED}, minus {ESTIMATED}",
        },
    }


def row(calibration: dict[str, Any], profile: str, method: str = "cookbook") -> dict[str, Any]:
    """The calibration row of one profile and definition method."""
    return next(r for r in calibration["rows"] if r["profile"] == profile and r["definitions"] == method)


def record_types(
    recorded: dict[str, Any], encoding: str = tokens.DEFAULT_ENCODING, order_id: str = ORDER
) -> list[dict[str, Any]]:
    """For each record type of the order's investigation: its result bare and under each profile, in tokens."""
    seen: dict[str, str] = {}
    for design in ("granular", "focused"):
        for turn in recorded["turns"][design][order_id]:
            for call in turn:
                seen.setdefault(call["name"], call["output"])
    out = []
    for tool, text in seen.items():
        result = framing.text_result(text)
        counts = {name: tokens.count_text(p.output(result), encoding) for name, p in framing.PROFILES.items()}
        out.append(
            {
                "tool": tool,
                "bytes": len(text.encode("utf-8")),
                **counts,
                "framing share %": round(
                    (counts["csharp-raw-element"] - counts["python"]) / counts["csharp-raw-element"] * 100, 1
                ),
            }
        )
    return out


def framing_share(
    recorded: dict[str, Any], instructions: int, encoding: str = tokens.DEFAULT_ENCODING, order_id: str = ORDER
) -> list[dict[str, Any]]:
    """Per design, the article's conversation input (with `instructions` tokens of instructions, as solved) under
    csharp-raw-element and with bare text (python), and the share of the former that comes from the client's framing of
    results rather than from the tool design (modelled)."""
    out = []
    for design in ("granular", "focused"):
        tool_turns, tools = recorded["turns"][design][order_id], recorded["tools"][design]
        totals = {}
        for name in ("python", "csharp-raw-element"):
            profile = framing.profile(name)
            base = instructions + first_request_known(tools, profile, "cookbook", order_id, encoding)
            totals[name] = cost.session(base, additions(tool_turns, profile, encoding)).total
        out.append(
            {
                "design": design,
                "input, bare text": totals["python"],
                "input, csharp-raw-element framing": totals["csharp-raw-element"],
                "share from framing %": round(
                    (totals["csharp-raw-element"] - totals["python"]) / totals["csharp-raw-element"] * 100, 1
                ),
            }
        )
    return out
