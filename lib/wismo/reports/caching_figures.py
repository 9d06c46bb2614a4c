"""The caching figures of notebook 02's section 6: the case study's two sessions priced with and without caching,
the published requests under the cache rule, and where caching starts on generated orders. context_price.build
gathers them into context-cost.json."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from wismo.accounting import cost
from wismo.accounting.cost import caching, prices
from wismo.reports.analyses import strategy

if TYPE_CHECKING:  # a type only: the study is read where the report is built
    from wismo.studies.declaration import Study

CURVE_CALLS = tuple(range(1, 16))
# What each caching mode assumes about the cache (wismo.accounting.cost.caching states the assumption).
MODES = {"none": "no caching", "hit": "every prefix a hit", "miss": "every prefix a miss"}


class Priced(TypedDict):
    """One conversation's tokens split by the cache under a caching mode, and its price (priced)."""

    input: int
    read: int
    write: int
    uncached: int
    output: int
    firstCachedCall: int | None
    caching: str
    dollars: float


class SessionPrices(TypedDict):
    """One case-study session priced on one model, without and with caching (case_study_caching)."""

    total: int
    resent: int
    read: int
    write: int
    firstCachedCall: int | None
    none: float
    hit: float
    miss: float
    resentNone: float
    resentHit: float


class CaseStudyCaching(TypedDict):
    """Per model, the case study's two sessions priced without and with caching (case_study_caching)."""

    model: str
    policy: str
    broad: SessionPrices
    scoped: SessionPrices
    ratioNone: float
    ratioHit: float
    readPriceShare: float


class CurvePoint(TypedDict):
    """One point of the caching curve: a case-study session of so many calls, priced one way (curve)."""

    design: str
    calls: int
    caching: str
    dollars: float


class PublishedCache(TypedDict):
    """The published requests under the cache rule, beside the cached input reported (published_cache)."""

    design: str
    case: str
    requests: list[int]
    policy: Mapping[str, object]  # the cache policy as caching.Policy.as_dict gives it
    predictedRead: list[int]
    longestPrefix: int
    publishedCachedInput: int
    documentedPolicy: bool


class ScaleRow(TypedDict):
    """One generated order's conversation, one design and call strategy (context_price.measure_scale)."""

    design: str
    strategy: str
    lines: int
    orderId: str
    requests: int
    toolCalls: int
    inputs: list[int]
    totalInput: int
    largestInput: int
    longestPrefix: int
    outputs: list[int]
    fitsWindow: NotRequired[bool]  # added by context_price.build, against the context window


# Where caching starts per design and strategy (scale_starts); its keys are headers, hence this form.
ScaleStart = TypedDict(
    "ScaleStart",
    {
        "design": str,
        "strategy": str,
        "policy": str,
        "first order size cached (lines)": int | None,
        "at call": int | None,
    },
)


def priced(
    inputs: Sequence[int],
    outputs: Sequence[int],
    price: prices.Price,
    policy: caching.Policy,
    mode: str,
    conversations: int = 1,
) -> Priced:
    """One conversation's tokens split by the cache under `mode`, and what `conversations` of it cost in USD."""
    calls = caching.apply(inputs, None if mode == "none" else policy, hits=mode != "miss")
    dollars = prices.charge(price, prices.usages(calls, outputs))
    totals = caching.totals(calls)
    return {
        "input": totals["input"],
        "read": totals["read"],
        "write": totals["write"],
        "uncached": totals["uncached"],
        "output": sum(outputs),
        "firstCachedCall": caching.first_hit(calls),
        "caching": MODES[mode],
        "dollars": round(dollars * conversations, 6),
    }


def case_study_caching(
    cs: dict[str, Any], models: list[tuple[prices.Price, caching.Policy]], n: int
) -> list[CaseStudyCaching]:
    """Per model: the case study's two sessions priced without and with caching (output ignored, as in the case study),
    the quadratic term (the history resent, total minus the last call) priced both ways, and the broad/scoped ratio."""
    rows: list[CaseStudyCaching] = []
    for price, policy in models:
        sessions: dict[str, SessionPrices] = {}
        for design in ("broad", "scoped"):
            inputs = cs[design]["inputs"]
            zero = [0] * len(inputs)
            none, hit, miss = (priced(inputs, zero, price, policy, m, n) for m in MODES)
            resent = cs[design]["total"] - cs[design]["final"]
            sessions[design] = {
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
        broad, scoped = sessions["broad"], sessions["scoped"]
        rows.append(
            {
                "model": price.model,
                "policy": policy.name,
                "broad": broad,
                "scoped": scoped,
                "ratioNone": round(broad["none"] / scoped["none"], 2),
                "ratioHit": round(broad["hit"] / scoped["hit"], 2),
                "readPriceShare": round(price.cached_input / price.input, 4),
            }
        )
    return rows


def curve(cs: dict[str, Any], price: prices.Price, policy: caching.Policy, n: int) -> list[CurvePoint]:
    """The case study's sessions of 1 to 15 calls on one model: USD per n sessions, without caching and with it."""
    out: list[CurvePoint] = []
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


def published_cache(study: Study, models: list[tuple[prices.Price, caching.Policy]]) -> PublishedCache | None:
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


def scale_starts(rows: list[ScaleRow], policy: caching.Policy) -> list[ScaleStart]:
    """Per design and strategy, the smallest generated order whose conversation reads anything from the cache."""
    out: list[ScaleStart] = []
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
