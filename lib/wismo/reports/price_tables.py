"""The tables notebook 02 shows in its caching, price and call-strategy sections, from context-cost.json: every
header in words with its unit and kind, every figure as the result holds it (render.tables formats it)."""

from __future__ import annotations

from typing import Any, cast

from wismo.accounting.cost.saving import amount
from wismo.reports import reference


def _first(result: dict[str, Any]) -> dict[str, Any]:
    """The first (charted) model's price row."""
    return cast("dict[str, object]", result["prices"][0])


def tokens_priced(provider: str, encoding: str) -> str:
    """What the tokens a model is priced on are here: an OpenAI model's are counted in its own encoding; any other
    provider's are `encoding` estimates, since its own tokenizer differs."""
    if provider == "openai":
        return f"{encoding} (the model's own encoding), tiktoken-estimated"
    return f"{encoding} estimates: {provider.capitalize()}'s own tokenizer differs, so its count will too"


def prices_table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Each model's prices per million tokens, its cache rule, and where the price comes from."""
    return [
        {
            "model": p["model"],
            "provider": p["provider"],
            "input (USD per million tokens, published)": p["inputPerMTok"],
            "cached input (USD per million tokens, published)": p["cachedInputPerMTok"],
            "cache write (USD per million tokens, published)": p["cacheWritePerMTok"],
            "output (USD per million tokens, published)": p["outputPerMTok"],
            "tokens priced": tokens_priced(p["provider"], result["method"]["encoding"]),
            "cache rule": f"{p['cachePolicy']['name']}: from {p['cachePolicy']['threshold']:,} tokens, "
            f"in steps of {p['cachePolicy']['granularity']:,}",
            "price from": p["source"]
            + (
                f" (base prices shown; a request of {p['tierStartsAt']:,} tokens or more pays more)"
                if p["tiered"]
                else ""
            ),
        }
        for p in result["prices"]
    ]


def caching_table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The case study's sessions per model: price without caching, with every prefix a hit, with every prefix a miss,
    the resent history's price both ways, and the broad/scoped ratio both ways."""
    n = result["pricing"]["conversations"]
    out = []
    for r in result["caching"]["caseStudy"]:
        for d in ("broad", "scoped"):
            out.append(
                {
                    "model": r["model"],
                    "case study design": d,
                    f"no caching (USD per {n:,} sessions, modelled)": r[d]["none"],
                    f"every prefix a hit (USD per {n:,} sessions, modelled)": r[d]["hit"],
                    f"every prefix a miss (USD per {n:,} sessions, modelled)": r[d]["miss"],
                    f"resent history, no caching (USD per {n:,} sessions, modelled)": r[d]["resentNone"],
                    f"resent history, cached (USD per {n:,} sessions, modelled)": r[d]["resentHit"],
                    "broad / scoped price, no caching (ratio, modelled)": r["ratioNone"],
                    "broad / scoped price, cached (ratio, modelled)": r["ratioHit"],
                }
            )
    return out


def prefix_table(result: dict[str, Any]) -> list[dict[str, object]]:
    """Our servers' focus case's conversations under the first model's rule: each call's input, the longest prefix a
    later call could read, and what is read."""
    model = _first(result)["model"]
    return [
        {
            "design": c["design"],
            "call strategy": c["strategy"],
            "input of each model call (tokens, tiktoken-estimated)": c["inputs"],
            "longest prefix a later call could read (tokens, modelled)": c["longestPrefix"],
            "threshold (tokens, documented)": c["threshold"],
            "read from the cache at each call (tokens, modelled)": c["read"],
        }
        for c in result["caching"]["calls"]
        if c["model"] == model
    ]


def price_table(result: dict[str, Any]) -> list[dict[str, object]]:
    """USD per n conversations of the focus case, per model and design, with and without caching."""
    n, how = result["pricing"]["conversations"], result["pricing"]["strategy"]
    cell = {(r["model"], r["design"], r["caching"]): r["dollars"] for r in result["pricePerConversations"]}
    designs = list(dict.fromkeys(r["design"] for r in result["pricePerConversations"]))
    provider = {p["model"]: p["provider"] for p in result["prices"]}
    return [
        {
            "model": m,
            "tokens priced": tokens_priced(provider[m], result["method"]["encoding"]),
            "client profile": result["pricing"]["profile"],
            "call strategy": how,
            **{
                f"{d}, {mode} (USD per {n:,} conversations, modelled)": cell.get((m, d, mode))
                for d in designs
                for mode in ("no caching", "every prefix a hit")
            },
        }
        for m in result["pricing"]["models"]
    ]


def strategy_table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The focus case per design and call strategy: requests, tool calls, input, output."""
    return [
        {
            "design": c["design"],
            "call strategy": c["strategy"],
            "model requests (count, modelled)": c["requests"],
            "tool calls (count, measured)": c["toolCalls"],
            "input, all requests (tokens, modelled)": c["totalInput"],
            "output (tokens, tiktoken-estimated)": sum(c["outputs"]),
        }
        for c in result["conversations"]
    ]


def fewer(measure: str) -> str:
    """The word for less of a measure: fewer tokens, less money."""
    return "less" if measure == "dollars" else "fewer"


def strategy_saving_table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Each design's saving against the reference under each call strategy, for the focus case (input and price)
    and for every generated order size (input), in words: which design, which figure, on which case, how much."""
    ref, model = reference(result), _first(result)["model"]
    what = {"totalInput": "input, all requests (tokens)", "dollars": f"price on {model} (USD)"}
    case = result["pricing"]["case"]
    return [
        {
            "case": case
            if r.get("lines") is None
            else f"generated, {r['lines']:,} line" + ("s" if r["lines"] != 1 else ""),
            "design": r["design"],
            f"saving against {ref} on": what.get(r["measure"], r["measure"]),
            "parallel calls (modelled)": " ".join(amount(r["parallel %"], fewer(r["measure"]))),
            "one call per request (modelled)": " ".join(amount(r["sequential %"], fewer(r["measure"]))),
            "points added by one call per request (percentage points, modelled)": r[
                "points added by one call per request"
            ],
        }
        for r in result["callStrategy"]["cases"] + result["callStrategy"]["scale"]
    ]
