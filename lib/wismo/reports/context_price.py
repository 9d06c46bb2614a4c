"""The context-cost report carried to what teams pay (notebook 02, sections 6 to 8): prompt caching on the
cumulative-context model, the price of 1,000 conversations under genai-prices' prices, and how the model calls
tools. context_cost.build calls `build`; its keys go into context-cost.json beside the report's others."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from wismo.accounting.cost import caching, prices
from wismo.accounting.tokens import conversation, framing
from wismo.core.errors import InputError
from wismo.domain.generate import order_id as generated_order
from wismo.mcp.servers import designs as design_registry
from wismo.mcp.servers.designs import names as design_names
from wismo.reports.analyses import strategy, sweep
from wismo.reports.caching_figures import (
    MODES,
    ScaleRow,
    case_study_caching,
    curve,
    priced,
    published_cache,
    scale_starts,
)
from wismo.reports.params import Param, defaults

if TYPE_CHECKING:  # types only: the recording is imported where a study is recorded, the study where it is read
    from wismo.reports.analyses.sweep import MeasurementSource
    from wismo.studies.declaration import Study
    from wismo.studies.investigations import Recorded

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
LABEL = "modelled (tiktoken-estimated tokens, genai-prices prices)"


def _models(p: Mapping[str, Any]) -> list[tuple[prices.Price, caching.Policy]]:
    """Each chosen model's price and its provider's cache policy (threshold and granularity as the parameters say)."""
    if not p["models"]:
        raise InputError("the price sections need at least one model in `models`")
    out = []
    for price in prices.resolve(p["models"], p["prices"], p["price_date"]):
        policy = caching.for_model(price.provider, price.model).with_limits(
            p["cache_threshold"], p["cache_granularity"]
        )
        out.append((price, policy))
    return out


def conversations(
    recorded: Recorded, order: str, encoding: str, profile: str, key: str, answers: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Per design and call strategy, the focus case's conversation: requests, input of each (counted directly under
    the client profile) and output of each (the scripted model's calls, then `answers[design]`, its reply;
    tiktoken-estimated)."""
    client = framing.profile(profile)
    asked = recorded["prompts"][order]
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
                    "outputs": strategy.outputs(arranged, answers[design], encoding),
                    "totalInput": sum(conv.requests),
                }
            )
    return rows


def price_rows(
    convs: Sequence[Mapping[str, Any]],
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
    sizes: Sequence[int], encoding: str, progress: object = None
) -> tuple[list[ScaleRow], MeasurementSource]:
    """Every scale design over notebook 04's generated orders, each conversation taken both ways: requests, input
    of each call (as notebook 04 counts it, python profile) and output of each; and where the turns came from (the
    build's shared measurement, or measured here)."""
    from wismo.runs.agent.scripted import answer

    measured, source = await sweep.generated_turns(list(sizes), None, progress)
    rows: list[ScaleRow] = []
    for design in sweep.scale_designs():
        how_design = design_registry.get(design).investigation
        for n in sizes:
            tools, tool_turns = measured[design][n].tools, measured[design][n].turns
            said = answer(how_design, tool_turns)
            for how in strategy.STRATEGIES:
                arranged = strategy.arrange(tool_turns, how)
                row = sweep.account(design, n, tools, arranged, encoding)
                rows.append(
                    {
                        "design": design,
                        "strategy": how,
                        "lines": n,
                        "orderId": generated_order(n),
                        "requests": len(row["inputs"]),
                        "toolCalls": row["toolCalls"],
                        "inputs": row["inputs"],
                        "totalInput": row["totalInput"],
                        "largestInput": max(row["inputs"]),
                        "longestPrefix": caching.longest_prefix(row["inputs"]),
                        "outputs": strategy.outputs(arranged, said, encoding),
                    }
                )
    return rows, source


def _saving(totals: Mapping[tuple[str, str], float], how: str, reference: str, design: str) -> float | None:
    """A design's saving against the reference one, in percent, for one strategy."""
    g, f = totals.get((reference, how)), totals.get((design, how))
    return None if not g or f is None else round((g - f) / g * 100, 1)


def savings(
    rows: Sequence[Mapping[str, Any]], key: str, reference: str, by: Sequence[str] = ()
) -> list[dict[str, object]]:
    """Each design's saving against the reference under each strategy (per group of `by`), and how many points a
    model that calls tools one per request adds to it."""
    groups: dict[tuple[object, ...], dict[tuple[str, str], float]] = {}
    for r in rows:
        groups.setdefault(tuple(r[b] for b in by), {})[(r["design"], r["strategy"])] = r[key]
    out = []
    for group, totals in groups.items():
        for design in dict.fromkeys(d for d, _ in totals):
            if design == reference:
                continue
            par = _saving(totals, strategy.PARALLEL, reference, design)
            seq = _saving(totals, strategy.SEQUENTIAL, reference, design)
            out.append(
                {
                    **dict(zip(by, group)),
                    "design": design,
                    "measure": key,
                    "parallel %": par,
                    "sequential %": seq,
                    "points added by one call per request": None if par is None or seq is None else round(seq - par, 1),
                }
            )
    return out


async def build(
    p: Mapping[str, Any],
    cs: dict[str, object] | None,
    recorded: Recorded,
    order: str,
    window: int,
    study: Study,
    progress: object = None,
    fitted: str | None = None,
) -> dict[str, object]:
    """Every figure of the caching, price and call-strategy sections (the keys context_cost.build adds), for the
    study's designs on its focus case; with the case study (`cs`) where the study reproduces it, and where wismo
    serves every design, the other designs it serves and notebook 04's generated orders too. `fitted`, the client
    profile that fits the study's published conversation best, prices the headline a second time beside the run's."""
    from wismo.domain.prompts import INSTRUCTIONS
    from wismo.runs.agent.scripted import answer
    from wismo.studies.investigations import record

    models = _models(p)
    strategy.check_name(p["strategy"])
    n, key, ref = p["conversations"], study.key, study.reference
    served = study.meets("served")
    extra = [d for d in design_names(scale=True) if d not in recorded["turns"]] if served else []
    nothing: Recorded = {"tools": {}, "turns": {}, "prompts": {}}
    more = await record(study.narrowed([ref, *extra]), [order]) if extra else nothing
    everything: Recorded = {
        "tools": {**recorded["tools"], **{d: more["tools"][d] for d in extra}},
        "turns": {
            d: {order: t[order]} for d, t in {**recorded["turns"], **{d: more["turns"][d] for d in extra}}.items()
        },
        "prompts": recorded["prompts"],
    }
    contract = study.instructions == INSTRUCTIONS
    hows = {
        **{d: study.designs[d].investigation for d in study.designs},
        **{d: design_registry.get(d).investigation for d in extra},
    }
    answers = {d: answer(hows[d], everything["turns"][d][order], contract) for d in everything["turns"]}
    convs = conversations(everything, order, p["encoding"], p["profile"], key, answers)
    scale_rows, source = (
        await measure_scale(p["scale_sizes"], p["encoding"], progress) if p["scale_sizes"] and served else ([], None)
    )
    for r in scale_rows:
        r["fitsWindow"] = r["largestInput"] <= window
    first, first_policy = models[0]
    fitted = fitted if fitted != p["profile"] else None
    chosen = [c for c in convs if c["strategy"] == p["strategy"]]
    per = price_rows(chosen, models, n, key=key)
    by = {(r["model"], r["design"], r["caching"]): r["dollars"] for r in per}
    policy_of = {price.model: policy for price, policy in models}
    priced_designs = list(everything["turns"])
    caching_block: dict[str, object] = {
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
        "scaleStarts": scale_starts(scale_rows, first_policy),
    }
    if cs is not None:
        caching_block["caseStudy"] = case_study_caching(cs, models, n)
        caching_block["curve"] = curve(cs, first, first_policy, n)
    if (published := published_cache(study, models)) is not None:
        caching_block["published"] = published
    return {
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
            "case": order,
            "profile": p["profile"],
            "contextWindow": window,
            "label": LABEL,
            "assumption": caching.ASSUMPTION,
            "models": [price.model for price, _ in models],
        },
        "caching": caching_block,
        "pricePerConversations": per + price_rows(chosen, models, n, ("miss",), key),
        "priceHeadline": {
            "model": first.model,
            "case": order,
            "conversations": n,
            "strategy": p["strategy"],
            **{d: by.get((first.model, d, MODES["none"])) for d in priced_designs},
            **{f"{d}Cached": by.get((first.model, d, MODES["hit"])) for d in priced_designs},
            "policy": policy_of[first.model].name,
            **(
                {"fitted": fitted_prices(everything, order, p, key, answers, fitted, (first, first_policy))}
                if fitted
                else {}
            ),
            **({"publishedTokens": at} if (at := published_price(study, first, first_policy, n)) else {}),
        },
        "strategyHeadline": strategy_headline(convs, order, ref),
        "conversations": convs,
        "scaleRows": [
            {k: v for k, v in r.items() if k not in ("inputs", "outputs")} | {"output": sum(r["outputs"])}
            for r in scale_rows
        ],
        "scalePrices": price_rows([r for r in scale_rows if r["strategy"] == p["strategy"]], models, n),
        "callStrategy": {
            "cases": savings(convs, "totalInput", ref)
            + savings(price_rows(convs, models[:1], n, ("none",), key), "dollars", ref),
            "scale": savings(scale_rows, "totalInput", design_registry.REFERENCE, ("lines",)),
        },
        # Where the generated orders' turns came from: a fact about this run, kept out of comparisons.
        "timings": {"generatedOrders": source},
    }


def strategy_headline(convs: list[dict[str, object]], order: str, reference: str) -> dict[str, object]:
    """The focus case's reference requests both ways, and each design's saving of input both ways (for the
    index)."""
    by = {(c["design"], c["strategy"]): c for c in convs}
    return {
        "case": order,
        "reference": reference,
        "referenceParallel": by[(reference, strategy.PARALLEL)]["requests"],
        "referenceSequential": by[(reference, strategy.SEQUENTIAL)]["requests"],
        "designs": {
            s["design"]: {"savingParallel": s["parallel %"], "savingSequential": s["sequential %"]}
            for s in savings(convs, "totalInput", reference)
        },
    }


def fitted_prices(
    recorded: Recorded,
    order: str,
    p: Mapping[str, Any],
    key: str,
    answers: Mapping[str, str],
    profile: str,
    model: tuple[prices.Price, caching.Policy],
) -> dict[str, object]:
    """The headline's price (the first model, chosen call strategy, no caching) with results framed by another client
    profile: per design, USD per the report's number of conversations."""
    convs = [
        c
        for c in conversations(recorded, order, p["encoding"], profile, key, answers)
        if c["strategy"] == p["strategy"]
    ]
    rows = price_rows(convs, [model], p["conversations"], ("none",), key)
    return {"profile": profile, **{r["design"]: r["dollars"] for r in rows}}


def published_price(study: Study, price: prices.Price, policy: caching.Policy, n: int) -> dict[str, object] | None:
    """The study's published conversation whose every request and total are published, priced at its
    provider-reported tokens on `price` (no caching; its output, total minus requests, as one call's): what the
    headline's price is at the study's own tokens."""
    published = study.published
    conv = next(
        (c for c in (published.conversations if published else ()) if len(c.requests) >= 2 and c.output_known),
        None,
    )
    if published is None or conv is None or conv.total is None:  # the last two: narrowed for the type checker
        return None
    requests, output = list(conv.requests), conv.total - sum(conv.requests)
    outputs = [0] * (len(requests) - 1) + [output]
    return {
        "design": conv.design,
        "case": conv.case,
        "input": sum(requests),
        "output": output,
        "model": price.model,
        "publishedModel": published.model,
        "dollars": priced(requests, outputs, price, policy, "none", n)["dollars"],
        "kind": "derived from published tokens, priced (modelled)",
    }
