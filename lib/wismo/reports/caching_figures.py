"""The caching figures of notebook 02's section 6: the case study's two sessions priced with and without caching,
the published requests under the cache rule, and where caching starts on generated orders. context_price.build
gathers them into context-cost.json."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wismo.accounting import cost
from wismo.accounting.cost import caching, prices
from wismo.reports.analyses import strategy

CURVE_CALLS = tuple(range(1, 16))
# What each caching mode assumes about the cache (wismo.accounting.cost.caching states the assumption).
MODES = {"none": "no caching", "hit": "every prefix a hit", "miss": "every prefix a miss"}


def priced(
    inputs: Sequence[int],
    outputs: Sequence[int],
    price: prices.Price,
    policy: caching.Policy,
    mode: str,
    conversations: int = 1,
) -> dict[str, Any]:
    """One conversation's tokens split by the cache under `mode`, and what `conversations` of it cost in USD."""
    calls = caching.apply(inputs, None if mode == "none" else policy, hits=mode != "miss")
    dollars = prices.charge(price, prices.usages(calls, outputs))
    return {
        **caching.totals(calls),
        "output": sum(outputs),
        "firstCachedCall": caching.first_hit(calls),
        "caching": MODES[mode],
        "dollars": round(dollars * conversations, 6),
    }


def case_study_caching(
    cs: dict[str, Any], models: list[tuple[prices.Price, caching.Policy]], n: int
) -> list[dict[str, Any]]:
    """Per model: the case study's two sessions priced without and with caching (output ignored, as in the case study),
    the quadratic term (the history resent, total minus the last call) priced both ways, and the broad/scoped ratio."""
    rows = []
    for price, policy in models:
        row: dict[str, Any] = {"model": price.model, "policy": policy.name}
        for design in ("broad", "scoped"):
            inputs = cs[design]["inputs"]
            zero = [0] * len(inputs)
            none, hit, miss = (priced(inputs, zero, price, policy, m, n) for m in MODES)
            resent = cs[design]["total"] - cs[design]["final"]
            row[design] = {
                "total": cs[design]["total"],
                "resent": resent,
                "read": hit["read"],
                "write": hit["write"],
                "firstCachedCall": hit["firstCachedCall"],
                "none": none["dollars"],
                "hit": hit["dollars"],
                "miss": miss["dollars"],
                "resentNone": round(resent * price.input / prices.PER * n, 6),
                "resentHit": round(
                    (hit["read"] * price.cached_input + (resent - hit["read"]) * price.input) / prices.PER * n, 6
                ),
            }
        row["ratioNone"] = round(row["broad"]["none"] / row["scoped"]["none"], 2)
        row["ratioHit"] = round(row["broad"]["hit"] / row["scoped"]["hit"], 2)
        row["readPriceShare"] = round(price.cached_input / price.input, 4)
        rows.append(row)
    return rows


def curve(cs: dict[str, Any], price: prices.Price, policy: caching.Policy, n: int) -> list[dict[str, Any]]:
    """The case study's sessions of 1 to 15 calls on one model: USD per n sessions, without caching and with it."""
    out = []
    for design in ("broad", "scoped"):
        r = cs["r" + design.capitalize()]
        for calls in CURVE_CALLS:
            inputs = cost.uniform(cs["base"], r, calls).inputs
            out += [
                {
                    "design": design,
                    "calls": calls,
                    "caching": MODES[m],
                    "dollars": priced(inputs, [0] * calls, price, policy, m, n)["dollars"],
                }
                for m in ("none", "hit")
            ]
    return out


def published_cache(study: Any, models: list[tuple[prices.Price, caching.Policy]]) -> dict[str, Any] | None:
    """What the cache model predicts for the published conversation's requests under the first OpenAI model's rule,
    beside the cached input tokens the provider reported (where the study declares them)."""
    published = study.published
    first = next((c for c in published.conversations if len(c.requests) >= 2), None) if published else None
    if first is None or first.cached_input is None:
        return None
    policy = next((pol for price, pol in models if price.provider == "openai"), caching.AUTOMATIC)
    calls = caching.apply(list(first.requests), policy)
    return {
        "design": first.design,
        "case": first.case,
        "requests": list(first.requests),
        "policy": policy.as_dict(),
        "predictedRead": [c.read for c in calls],
        "longestPrefix": caching.longest_prefix(list(first.requests)),
        "publishedCachedInput": first.cached_input,
        "documentedPolicy": (policy.threshold, policy.granularity)
        == (caching.AUTOMATIC.threshold, caching.AUTOMATIC.granularity),
    }


def scale_starts(rows: list[dict[str, Any]], policy: caching.Policy) -> list[dict[str, object]]:
    """Per design and strategy, the smallest generated order whose conversation reads anything from the cache."""
    out = []
    for design in dict.fromkeys(r["design"] for r in rows):
        for how in strategy.STRATEGIES:
            mine = sorted((r for r in rows if r["design"] == design and r["strategy"] == how), key=lambda r: r["lines"])
            first = next((r for r in mine if caching.first_hit(caching.apply(r["inputs"], policy))), None)
            out.append(
                {
                    "design": design,
                    "strategy": how,
                    "policy": policy.name,
                    "first order size cached (lines)": first and first["lines"],
                    "at call": first and caching.first_hit(caching.apply(first["inputs"], policy)),
                }
            )
    return out
