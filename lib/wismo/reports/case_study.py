"""The case study's cumulative-context model computed from its assumptions (notebook 02, section 1), and checked
against the figures it published when run on exactly those assumptions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wismo.accounting import cost
from wismo.core.errors import ClaimFailed


def case_study(base: int, rs: Sequence[int], calls: int, window: int, target: int) -> dict[str, object]:
    """Sessions of the case study's two designs (broad r, scoped r) and every figure it derives from them."""
    r_broad, r_scoped = rs
    broad, scoped = cost.uniform(base, r_broad, calls), cost.uniform(base, r_scoped, calls)
    return {
        "base": base,
        "calls": calls,
        "contextWindow": window,
        "target": target,
        "rBroad": r_broad,
        "rScoped": r_scoped,
        "broad": {
            "inputs": list(broad.inputs),
            "cumulative": broad.cumulative(),
            "total": broad.total,
            "final": broad.final,
            "nextCall": cost.next_call_input(broad, r_broad),
            "failsAtCall": cost.first_failing_calls(base, r_broad, window),
            "meetsTarget": broad.total <= target,
        },
        "scoped": {
            "inputs": list(scoped.inputs),
            "cumulative": scoped.cumulative(),
            "total": scoped.total,
            "final": scoped.final,
            "nextCall": cost.next_call_input(scoped, r_scoped),
            "failsAtCall": cost.first_failing_calls(base, r_scoped, window),
            "meetsTarget": scoped.total <= target,
        },
        "ratio": cost.ratio(broad, scoped),
        "sumOfTurnIndices": sum(range(calls)),
    }


def check_case_study(
    computed: dict[str, Any], published: dict[str, Any], printed: list[str] | None = None
) -> list[dict[str, object]]:
    """Compare each computed figure with the published one (marking those the source printed, not only implied);
    raise ClaimFailed on any difference."""
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
    rows = [
        {
            "figure": k,
            "published": published[k],
            "printed by the source": printed is None or k in printed,
            "computed": v,
            "match": published[k] == v,
        }
        for k, v in pairs
    ]
    bad = [r for r in rows if not r["match"]]
    if bad:
        detail = "; ".join(
            f"{r['figure']}: computed {r['computed']} but the case study published {r['published']}" for r in bad
        )
        raise ClaimFailed("the case study's published figures reproduce", detail, detail)
    return rows


def case_study_from_reference(ref: dict[str, Any]) -> dict[str, Any]:
    """The case study computed from its own published assumptions."""
    a = ref["assumptions"]
    return case_study(a["base"], (a["rBroad"], a["rScoped"]), a["calls"], a["contextWindow"], a["targetTokens"])


def parameters(
    ref: dict[str, Any],
    base: int | None,
    result_sizes: Sequence[int] | None,
    calls: int | None,
    context_window: int | None,
    target: int | None,
) -> dict[str, Any]:
    """The notebook's parameters with every None replaced by the case study's own assumption."""
    a = ref["assumptions"]
    return {
        "base": a["base"] if base is None else base,
        "rs": (a["rBroad"], a["rScoped"]) if result_sizes is None else tuple(result_sizes),
        "calls": a["calls"] if calls is None else calls,
        "window": a["contextWindow"] if context_window is None else context_window,
        "target": a["targetTokens"] if target is None else target,
    }


def reproduce(cs: dict[str, object], ref: dict[str, Any]) -> list[dict[str, Any]] | None:
    """Check the computed case study against the published figures, when run on the published assumptions."""
    a = ref["assumptions"]
    same = (cs["base"], cs["rBroad"], cs["rScoped"], cs["calls"], cs["contextWindow"], cs["target"]) == (
        a["base"],
        a["rBroad"],
        a["rScoped"],
        a["calls"],
        a["contextWindow"],
        a["targetTokens"],
    )
    return check_case_study(cs, ref["published"], ref["source"].get("printed")) if same else None
