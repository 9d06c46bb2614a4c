"""The figures of the context-cost report: the case study reproduced, then the model applied to our servers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import cost, reference, tokens, turns


class ReproductionFailed(AssertionError):
    """A computed figure disagrees with the one the source published; the message names both."""


def case_study(base: int, rs: Sequence[int], calls: int, window: int, target: int) -> dict[str, Any]:
    """Sessions of the case study's two designs (broad r, scoped r) and every figure it derives from them."""
    r_broad, r_scoped = rs
    broad, scoped = cost.uniform(base, r_broad, calls), cost.uniform(base, r_scoped, calls)
    return {
        "base": base, "calls": calls, "contextWindow": window, "target": target, "rBroad": r_broad, "rScoped": r_scoped,
        "broad": {"inputs": list(broad.inputs), "cumulative": broad.cumulative(), "total": broad.total,
                  "final": broad.final, "nextCall": cost.next_call_input(broad, r_broad),
                  "failsAtCall": cost.first_failing_calls(base, r_broad, window), "meetsTarget": broad.total <= target},
        "scoped": {"inputs": list(scoped.inputs), "cumulative": scoped.cumulative(), "total": scoped.total,
                   "final": scoped.final, "nextCall": cost.next_call_input(scoped, r_scoped),
                   "failsAtCall": cost.first_failing_calls(base, r_scoped, window), "meetsTarget": scoped.total <= target},
        "ratio": cost.ratio(broad, scoped),
        "sumOfTurnIndices": sum(range(calls)),
    }


def check_case_study(computed: dict[str, Any], published: dict[str, Any]) -> list[dict[str, Any]]:
    """Compare each computed figure with the published one; raise ReproductionFailed on any difference."""
    pairs = [
        ("broadTotal", computed["broad"]["total"]),
        ("broadFinalCall", computed["broad"]["final"]),
        ("scopedTotal", computed["scoped"]["total"]),
        ("ratio", round(computed["ratio"], 1)),
        ("broadNextCallAfterSeventhTool", computed["broad"]["nextCall"]),
        ("scopedNextCallAfterSeventhTool", computed["scoped"]["nextCall"]),
        ("scopedMeetsTarget", computed["scoped"]["meetsTarget"]),
        ("broadMeetsTarget", computed["broad"]["meetsTarget"]),
        ("sumOfTurnIndices", computed["sumOfTurnIndices"]),
    ]
    rows = [{"figure": k, "published": published[k], "computed": v, "match": published[k] == v} for k, v in pairs]
    bad = [r for r in rows if not r["match"]]
    if bad:
        raise ReproductionFailed("; ".join(f"{r['figure']}: computed {r['computed']} but the case study published {r['published']}" for r in bad))
    return rows


def case_study_from_reference(ref: dict[str, Any]) -> dict[str, Any]:
    """The case study computed from its own published assumptions."""
    a = ref["assumptions"]
    return case_study(a["base"], (a["rBroad"], a["rScoped"]), a["calls"], a["contextWindow"], a["targetTokens"])


def our_servers(recorded: dict[str, Any], encoding_name: str = tokens.DEFAULT_ENCODING) -> list[dict[str, Any]]:
    """Per order and design: base, per-turn additions, per-call input counted directly and via the model."""
    rows = []
    for design, by_order in recorded["turns"].items():
        tool_list = recorded["tools"][design]
        for order_id, tool_turns in by_order.items():
            conv = turns.conversation(order_id, tool_list, tool_turns, encoding_name)
            modelled = cost.session(conv.base, conv.additions)
            if modelled.inputs != conv.requests:
                raise ReproductionFailed(f"{design} {order_id}: the model gives {modelled.inputs} but counting each request gives {conv.requests}")
            r = sum(conv.result_tokens) / len(conv.result_tokens)
            rows.append({
                "design": design, "orderId": order_id, "modelCalls": modelled.calls,
                "toolCalls": sum(len(t) for t in tool_turns),
                "toolDefinitions": tokens.count_tools([tokens.mcp_tool_to_function(t) for t in tool_list], encoding_name),
                "base": conv.base, "additions": list(conv.additions), "inputs": list(modelled.inputs),
                "total": modelled.total, "final": modelled.final, "meanResultTokens": round(r, 1),
            })
    return rows


def ratios(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per order: granular total, focused total, their ratio and the focused saving in percent."""
    by = {(r["design"], r["orderId"]): r for r in rows}
    out = []
    for order_id in dict.fromkeys(r["orderId"] for r in rows):
        g, f = by[("granular", order_id)]["total"], by[("focused", order_id)]["total"]
        out.append({"orderId": order_id, "granularTotal": g, "focusedTotal": f, "ratio": round(g / f, 3),
                    "focusedSavingPercent": round((g - f) / g * 100, 1)})
    return out


def against_article(rows: list[dict[str, Any]], article: dict[str, Any], order_id: str = "ORD-1004") -> list[dict[str, Any]]:
    """Our ORD-1004 estimates beside the article's provider-reported figures, with the difference."""
    pub = article[order_id]
    g = next(r for r in rows if r["design"] == "granular" and r["orderId"] == order_id)
    f = next(r for r in rows if r["design"] == "focused" and r["orderId"] == order_id)
    figures = [(f"granular call {k} input", pub["granular"]["inputTokensPerRequest"][k - 1], g["inputs"][k - 1]) for k in (1, 2, 3)]
    figures += [
        ("granular input, all calls", sum(pub["granular"]["inputTokensPerRequest"]), g["total"]),
        ("focused first request smaller by", pub["focused"]["firstRequestSmallerByTokens"], g["inputs"][0] - f["inputs"][0]),
        ("granular turn-2 addition (get_order call + result)", pub["granular"]["inputTokensPerRequest"][1] - pub["granular"]["inputTokensPerRequest"][0], g["additions"][0]),
        ("granular turn-3 addition (4 calls + results)", pub["granular"]["inputTokensPerRequest"][2] - pub["granular"]["inputTokensPerRequest"][1], g["additions"][1]),
    ]
    return [{"figure": name, "article (provider-reported)": published, "wismo (tiktoken-estimated)": ours,
             "difference": ours - published, "difference %": round((ours - published) / published * 100, 1)}
            for name, published, ours in figures]


def load_references() -> tuple[dict[str, Any], dict[str, Any]]:
    """The case study's and the article's published figures."""
    return reference.load("case-study-003"), reference.load("article-000")


# A grid wide enough to show both of the case study's designs and where the window gives out.
DEFAULT_SWEEP_RS = (250, 500, 1000, 1500, 2000, 3000, 5000, 8000, 12000, 18000, 25000, 40000)
DEFAULT_SWEEP_CALLS = tuple(range(1, 16))


def parameters(ref: dict[str, Any], base: int | None, result_sizes: Sequence[int] | None, calls: int | None,
               context_window: int | None, target: int | None) -> dict[str, Any]:
    """The notebook's parameters with every None replaced by the case study's own assumption."""
    a = ref["assumptions"]
    return {
        "base": a["base"] if base is None else base,
        "rs": (a["rBroad"], a["rScoped"]) if result_sizes is None else tuple(result_sizes),
        "calls": a["calls"] if calls is None else calls,
        "window": a["contextWindow"] if context_window is None else context_window,
        "target": a["targetTokens"] if target is None else target,
    }


def reproduce(cs: dict[str, Any], ref: dict[str, Any]) -> list[dict[str, Any]] | None:
    """Check the computed case study against the published figures, when run on the published assumptions."""
    a = ref["assumptions"]
    same = (cs["base"], cs["rBroad"], cs["rScoped"], cs["calls"], cs["contextWindow"], cs["target"]) == (
        a["base"], a["rBroad"], a["rScoped"], a["calls"], a["contextWindow"], a["targetTokens"])
    return check_case_study(cs, ref["published"]) if same else None
