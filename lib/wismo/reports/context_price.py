"""The context-cost report carried to what teams pay (notebook 02, sections 6 to 8): prompt caching on the
cumulative-context model, the price of 1,000 conversations under genai-prices' prices, and how the model calls
tools. context_cost.build calls `build`; its keys go into context-cost.json beside the report's others."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wismo import cost
from wismo.agent.scripted import STUDY_ANSWER
from wismo.analyses import strategy, sweep
from wismo.client import investigation
from wismo.cost import caching, prices
from wismo.domain.generate import order_id as generated_order
from wismo.reports.params import Param, defaults
from wismo.servers.designs import names as design_names
from wismo.tokens import conversation, framing

PARAMETERS = {
    "models": Param(["gpt-4.1-mini", "gpt-4.1", "gpt-4o-mini", "claude-sonnet-4-5"], "texts"),  # first is charted
    # {model: {input, cachedInput, cacheWrite, output}} USD per million tokens, for a model genai-prices lacks
    "prices": Param(None, "table", optional=True),
    "price_date": Param(None, "date", optional=True),  # prices looked up for this date; None: the data's own
    "cache_threshold": Param(None, "whole", optional=True),  # minimum cacheable prefix; None: documented
    "cache_granularity": Param(None, "count", optional=True),  # a cached prefix's step; None: documented
    "strategy": Param(strategy.PARALLEL, "text", choices=lambda: strategy.STRATEGIES),  # how tools are called
    "scale_sizes": Param([1, 10, 100, 1000], "counts", empty=True),  # generated order sizes (lines) priced
    "conversations": Param(1000, "count"),  # prices are per this many conversations
}
DEFAULTS = defaults(PARAMETERS)
# What each caching mode assumes about the cache (wismo.cost.caching states the assumption).
MODES = {"none": "no caching", "hit": "every prefix a hit", "miss": "every prefix a miss"}
CURVE_CALLS = tuple(range(1, 16))
LABEL = "modelled (tiktoken-estimated tokens, genai-prices prices)"


def _models(p: Mapping[str, Any]) -> list[tuple[prices.Price, caching.Policy]]:
    """Each chosen model's price and its provider's cache policy (threshold and granularity as the parameters say)."""
    if not p["models"]:
        raise ValueError("the price sections need at least one model in `models`")
    out = []
    for price in prices.resolve(p["models"], p["prices"], p["price_date"]):
        policy = caching.for_model(price.provider, price.model).with_limits(
            p["cache_threshold"], p["cache_granularity"]
        )
        out.append((price, policy))
    return out


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


def conversations(
    recorded: dict[str, Any], order: str, encoding: str, profile: str, key: str = "orderId", answer: str | None = None
) -> list[dict[str, Any]]:
    """Per design and call strategy, the focus case's conversation: requests, input of each (counted directly under
    the client profile) and output of each (the scripted model's, tiktoken-estimated; `answer` is its reply when the
    study has no answer contract)."""
    client = framing.profile(profile)
    asked = recorded.get("prompts", {}).get(order, order)
    rows = []
    for design, by_order in recorded["turns"].items():
        for how in strategy.STRATEGIES:
            arranged = strategy.arrange(by_order[order], how)
            conv = conversation.conversation(asked, recorded["tools"][design], arranged, encoding, client)
            rows.append(
                {
                    "design": design,
                    "strategy": how,
                    key: order,
                    "requests": len(conv.requests),
                    "toolCalls": sum(len(t) for t in arranged),
                    "inputs": list(conv.requests),
                    "outputs": strategy.outputs(order, arranged, encoding, answer),
                    "totalInput": sum(conv.requests),
                }
            )
    return rows


def price_rows(
    convs: list[dict[str, Any]],
    models: list[tuple[prices.Price, caching.Policy]],
    n: int,
    modes: Sequence[str] = ("none", "hit"),
    key: str = "orderId",
) -> list[dict[str, Any]]:
    """Every conversation priced on every model under each caching mode, per n conversations."""
    rows = []
    for c in convs:
        for price, policy in models:
            for mode in modes:
                p = priced(c["inputs"], c["outputs"], price, policy, mode, n)
                rows.append(
                    {
                        "model": price.model,
                        "design": c["design"],
                        "strategy": c["strategy"],
                        **{k: c[k] for k in (key, "lines", "fitsWindow") if k in c},
                        **p,
                    }
                )
    return rows


async def measure_scale(
    sizes: Sequence[int], encoding: str, progress: Any = None
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every scale design over notebook 04's generated orders, each conversation taken both ways: requests, input
    of each call (as notebook 04 counts it, python profile) and output of each; and where the turns came from (the
    build's shared measurement, or measured here)."""
    measured, source = await sweep.generated_turns(list(sizes), None, progress)
    rows = []
    for design in sweep.scale_designs():
        for n in sizes:
            oid = generated_order(n)
            tools, tool_turns = measured[design][n].tools, measured[design][n].turns
            for how in strategy.STRATEGIES:
                arranged = strategy.arrange(tool_turns, how)
                row = sweep.account(design, n, tools, arranged, encoding)
                rows.append(
                    {
                        "design": design,
                        "strategy": how,
                        "lines": n,
                        "orderId": oid,
                        "requests": len(row["inputs"]),
                        "toolCalls": row["toolCalls"],
                        "inputs": row["inputs"],
                        "totalInput": row["totalInput"],
                        "largestInput": max(row["inputs"]),
                        "longestPrefix": caching.longest_prefix(row["inputs"]),
                        "outputs": strategy.outputs(oid, arranged, encoding),
                    }
                )
    return rows, source


PAIR = ("granular", "focused")  # the article's: the reference design, and the one whose saving is stated


def _saving(totals: Mapping[str, float], how: str, pair: tuple[str, str] = PAIR) -> float | None:
    """The compared design's saving against the reference one, in percent, for one strategy."""
    g, f = totals.get((pair[0], how)), totals.get((pair[1], how))
    return None if not g or f is None else round((g - f) / g * 100, 1)


def savings(
    rows: list[dict[str, Any]], key: str, by: Sequence[str] = (), pair: tuple[str, str] = PAIR
) -> list[dict[str, Any]]:
    """The compared design's saving against the reference under each strategy (per group of `by`), and how many
    points a model that calls tools one per request adds to it."""
    groups: dict[tuple[Any, ...], dict[tuple[str, str], float]] = {}
    for r in rows:
        groups.setdefault(tuple(r[b] for b in by), {})[(r["design"], r["strategy"])] = r[key]
    out = []
    for group, totals in groups.items():
        par, seq = _saving(totals, strategy.PARALLEL, pair), _saving(totals, strategy.SEQUENTIAL, pair)
        out.append(
            {
                **dict(zip(by, group)),
                "measure": key,
                "parallel %": par,
                "sequential %": seq,
                "points added by one call per request": None if par is None or seq is None else round(seq - par, 1),
            }
        )
    return out


def _article_cache(article: dict[str, Any], models: list[tuple[prices.Price, caching.Policy]]) -> dict[str, Any]:
    """What the cache model predicts for the article's published granular ORD-1004 requests under OpenAI's rule,
    beside the cached input tokens the article reported."""
    requests = article["ORD-1004"]["granular"]["inputTokensPerRequest"]
    policy = next((pol for price, pol in models if price.provider == "openai"), caching.AUTOMATIC)
    calls = caching.apply(requests, policy)
    return {
        "requests": requests,
        "policy": policy.as_dict(),
        "predictedRead": [c.read for c in calls],
        "longestPrefix": caching.longest_prefix(requests),
        "articleMedianCachedInput": article["medians"]["cachedInputTokens"],
        "documentedPolicy": (policy.threshold, policy.granularity)
        == (caching.AUTOMATIC.threshold, caching.AUTOMATIC.granularity),
    }


async def build(
    p: Mapping[str, Any],
    cs: dict[str, Any],
    recorded: dict[str, Any],
    order: str,
    article: dict[str, Any] | None,
    window: int,
    progress: Any = None,
    study: Any = None,
) -> dict[str, Any]:
    """Every figure of the caching, price and call-strategy sections (the keys context_cost.build adds). With the
    article's figures (`article`), also the scoped design and notebook 04's generated orders; for any other study,
    its own designs on its focus case."""
    models = _models(p)
    strategy.check_name(p["strategy"])
    n = p["conversations"]
    key = study.key if study is not None else "orderId"
    pair = study.pair if study is not None else PAIR
    answer = None if article is not None else STUDY_ANSWER
    extra = [d for d in design_names(scale=True) if d not in recorded["turns"]] if article is not None else []
    more = await investigation.record([order], design_names=tuple(extra)) if extra else {"tools": {}, "turns": {}}
    everything = {
        "tools": {**recorded["tools"], **more["tools"]},
        "turns": {d: {order: t[order]} for d, t in {**recorded["turns"], **more["turns"]}.items()},
        "prompts": recorded.get("prompts", {}),
    }
    convs = conversations(everything, order, p["encoding"], p["profile"], key, answer)
    scale_rows, source = (
        await measure_scale(p["scale_sizes"], p["encoding"], progress)
        if p["scale_sizes"] and article is not None
        else ([], None)
    )
    for r in scale_rows:
        r["fitsWindow"] = r["largestInput"] <= window
    first, first_policy = models[0]
    chosen = [c for c in convs if c["strategy"] == p["strategy"]]
    per = price_rows(chosen, models, n, key=key)
    by = {(r["model"], r["design"], r["caching"]): r["dollars"] for r in per}
    policy_of = {price.model: policy for price, policy in models}
    priced_designs = list(everything["turns"])
    out = {
        "priceLibrary": {
            "name": prices.LIBRARY,
            "version": prices.version(),
            "dataDate": prices.data_date(),
            "pricedOn": p["price_date"] or prices.data_date(),
        },
        "prices": [{**price.as_dict(), "cachePolicy": policy.as_dict()} for price, policy in models],
        "pricing": {
            "conversations": n,
            "strategy": p["strategy"],
            "order": order,
            "profile": p["profile"],
            "label": LABEL,
            "assumption": caching.ASSUMPTION,
            "models": [price.model for price, _ in models],
        },
        "caching": {
            "caseStudy": case_study_caching(cs, models, n),
            "curve": curve(cs, first, first_policy, n),
            "calls": [
                {
                    "design": c["design"],
                    "strategy": c["strategy"],
                    "model": price.model,
                    "policy": policy.name,
                    "threshold": policy.threshold,
                    "inputs": c["inputs"],
                    "read": [x.read for x in caching.apply(c["inputs"], policy)],
                    "write": [x.write for x in caching.apply(c["inputs"], policy)],
                    "longestPrefix": caching.longest_prefix(c["inputs"]),
                }
                for c in convs
                for price, policy in models
            ],
            **({"article": _article_cache(article, models)} if article is not None else {}),
            "scaleStarts": scale_starts(scale_rows, first_policy),
        },
        "pricePerConversations": per + price_rows(chosen, models, n, ("miss",), key),
        "priceHeadline": {
            "model": first.model,
            "order": order,
            "conversations": n,
            "strategy": p["strategy"],
            **{d: by.get((first.model, d, MODES["none"])) for d in priced_designs},
            **{f"{d}Cached": by.get((first.model, d, MODES["hit"])) for d in priced_designs},
            "policy": policy_of[first.model].name,
        },
        "strategyHeadline": strategy_headline(convs, order, pair),
        "conversations": convs,
        "scaleRows": [
            {k: v for k, v in r.items() if k not in ("inputs", "outputs")} | {"output": sum(r["outputs"])}
            for r in scale_rows
        ],
        "scalePrices": price_rows([r for r in scale_rows if r["strategy"] == p["strategy"]], models, n),
        "callStrategy": {
            "order": savings(convs, "totalInput", pair=pair)
            + savings(price_rows(convs, models[:1], n, ("none",), key), "dollars", pair=pair),
            "scale": savings(scale_rows, "totalInput", ("lines",)),
        },
        # Where the generated orders' turns came from: a fact about this run, kept out of comparisons.
        "timings": {"generatedOrders": source},
    }
    return out


def strategy_headline(convs: list[dict[str, Any]], order: str, pair: tuple[str, str] = PAIR) -> dict[str, Any]:
    """The focus case's reference requests both ways and the compared design's saving of input both ways (for the
    index)."""
    by = {(c["design"], c["strategy"]): c for c in convs}
    saving = savings(convs, "totalInput", pair=pair)[0]
    ref = pair[0]
    return {
        "order": order,
        f"{ref}Parallel": by[(ref, strategy.PARALLEL)]["requests"],
        f"{ref}Sequential": by[(ref, strategy.SEQUENTIAL)]["requests"],
        "savingParallel": saving["parallel %"],
        "savingSequential": saving["sequential %"],
    }


def scale_starts(rows: list[dict[str, Any]], policy: caching.Policy) -> list[dict[str, Any]]:
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
