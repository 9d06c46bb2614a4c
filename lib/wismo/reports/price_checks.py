"""What notebook 02 shows after its caching, price and call-strategy sections: the checks (each "Checked: ..." or
an error naming the numbers), the tables, and the one-line answers, all computed from context-cost.json."""

from __future__ import annotations

from typing import Any, cast

from wismo.accounting.cost import caching, prices
from wismo.accounting.cost.saving import amount, says
from wismo.accounting.tokens import framing
from wismo.core.textgrid import numbers
from wismo.reports import check, reference
from wismo.reports.analyses import strategy

# The section's tables, shown through this module as the notebook names them.
from wismo.reports.price_tables import (  # noqa: F401
    caching_table,
    prefix_table,
    price_table,
    prices_table,
    strategy_saving_table,
    strategy_table,
)

TOLERANCE_USD = 1e-9  # two ways of pricing the same calls must agree to the nano-dollar


def _first(result: dict[str, Any]) -> dict[str, Any]:
    """The first (charted) model's price row."""
    return cast("dict[str, object]", result["prices"][0])


def check_quadratic(result: dict[str, Any]) -> str:
    """The claim that caching prices the quadratic term (the history each call resends) at the cached-input price
    instead of removing it: per model and case-study design, the resent history with caching costs the cached-input
    price for every resent token, plus the ordinary price for under one increment per call that the rounding leaves."""
    cs, n = result["caseStudy"], result["pricing"]["conversations"]
    details = []
    for row, price in zip(result["caching"]["caseStudy"], result["prices"]):
        policy = price["cachePolicy"]
        for design in ("broad", "scoped"):
            d, calls = row[design], cs["calls"]
            if min(cs[design]["inputs"][:-1], default=0) < policy["threshold"]:
                return (
                    f"Parameters put a case-study prefix under the {policy['threshold']:,}-token threshold; "
                    "this check does not apply."
                )
            low = d["resent"] * price["cachedInputPerMTok"] / prices.PER * n
            slack = (
                (calls - 1)
                * (policy["granularity"] - 1)
                * (price["inputPerMTok"] - price["cachedInputPerMTok"])
                / prices.PER
                * n
            )
            if not low - TOLERANCE_USD <= d["resentHit"] <= low + slack + TOLERANCE_USD:
                check(
                    False,
                    "caching prices the resent history at the cached-input price",
                    f"{row['model']} {design}: USD {d['resentHit']:,.4f} outside USD {low:,.4f} to "
                    f"USD {low + slack:,.4f}",
                )
        b = row["broad"]
        details.append(
            f"{row['model']} {prices.usd(b['resentNone'])} to {prices.usd(b['resentHit'])} "
            f"({row['readPriceShare']:.0%} price)"
        )
    return check(
        True,
        "caching does not remove the quadratic term: it prices the history each call resends at the "
        "cached-input price, within under one increment per call",
        f"the broad session's resent history per {n:,} sessions: " + "; ".join(details) + "; modelled",
    )


def check_published_cache(result: dict[str, Any]) -> str:
    """The claim that the cache model agrees with the provider: under OpenAI's documented rule the published
    requests read from the cache what the provider reported as cached input (for the article, nothing: no prefix of
    its granular ORD-1004 requests reaches the threshold)."""
    a = result["caching"]["published"]
    if not a["documentedPolicy"]:
        return "The threshold or granularity differs from OpenAI's documented rule; the comparison does not apply."
    predicted = sum(a["predictedRead"])
    return check(
        predicted == a["publishedCachedInput"],
        f"the cache model predicts the cached input reported for the published {a['design']} {a['case']} requests",
        f"requests {numbers(a['requests'])} (provider-reported, published): longest prefix "
        f"{a['longestPrefix']:,} tokens, threshold {a['policy']['threshold']:,}, so {predicted} tokens read "
        f"(modelled); cached input reported: {a['publishedCachedInput']}",
    )


def check_prices(result: dict[str, Any]) -> str:
    """The claim that genai-prices' calc_price charges cache reads and writes as per-million arithmetic does: every
    focus-order conversation, under every caching mode, priced both ways on every model the library prices."""
    compared = 0
    for row in result["prices"]:
        price = prices.from_dict(row)
        if not price.from_library or not all(price.flat_for(max(c["inputs"])) for c in result["conversations"]):
            continue
        policy = caching.from_dict(row["cachePolicy"])
        for c in result["conversations"]:
            for hits in (True, False):
                usage = prices.usages(caching.apply(c["inputs"], policy, hits), c["outputs"])
                by_library, by_hand = prices.charge(price, usage), float(sum(prices.flat(price, u) for u in usage))
                if abs(by_library - by_hand) > TOLERANCE_USD:
                    check(
                        False,
                        "calc_price charges cache reads and writes at the per-million prices",
                        f"{price.model} {c['design']} {c['strategy']}: USD {by_library:.9f} by the library, "
                        f"USD {by_hand:.9f} by hand",
                    )
                compared += 1
    lib = result["priceLibrary"]
    return check(
        compared > 0,
        "genai-prices' calc_price charges uncached input, cache reads, cache writes and output at "
        "the per-million prices it lists",
        f"{compared} pricings (conversations x models x cache bounds) agree both ways to {TOLERANCE_USD:g} USD; "
        f"{lib['name']} {lib['version']}, "
        f"price data of {lib['dataDate']}",
    )


def check_strategy(result: dict[str, Any]) -> str:
    """The claim about call strategies: one call per request makes one request per tool call plus the answer, and
    never processes less input than asking for a turn's calls at once."""
    rows = result["conversations"] + result["scaleRows"]
    by = {(r["design"], r.get("lines"), r["strategy"]): r for r in rows}
    for r in rows:
        if r["strategy"] == strategy.SEQUENTIAL:
            par = by[(r["design"], r.get("lines"), strategy.PARALLEL)]
            if r["requests"] != r["toolCalls"] + 1 or r["totalInput"] < par["totalInput"]:
                check(
                    False,
                    "one call per request makes a request per tool call and processes at least as much input",
                    f"{r['design']} {r.get('lines') or r.get('orderId')}: {r['requests']} requests for "
                    f"{r['toolCalls']} calls, "
                    f"{r['totalInput']:,} vs {par['totalInput']:,} input tokens in parallel",
                )
    ref = reference(result)
    order = result["pricing"]["case"]
    counts: dict[str, dict[str, int]] = {}
    for r in result["conversations"]:
        counts.setdefault(r["design"], {})[r["strategy"]] = r["requests"]
    said = "; ".join(
        f"{d} {c[strategy.PARALLEL]} requests in parallel, {c[strategy.SEQUENTIAL]} one call per request"
        for d, c in counts.items()
    )
    return check(
        True,
        "a model calling one tool per request makes one request per tool call plus the answer, and never "
        "processes less input",
        f"{order} ({ref} the reference): {said}; all {len(rows)} conversations, every design"
        + (" and generated order size" if result["scaleRows"] else ""),
    )


def answer_caching(result: dict[str, Any]) -> str:
    """Section 6's one-line answer, from the figures: the case study's sessions where the study reproduces them,
    then the study's own conversations and, on generated orders, where caching starts."""
    first = _first(result)
    calls = [c for c in result["caching"]["calls"] if c["model"] == first["model"]]
    longest, read = max(c["longestPrefix"] for c in calls), sum(sum(c["read"]) for c in calls)
    threshold = first["cachePolicy"]["threshold"]
    ours = (
        f"Our {result['pricing']['case']} conversations never reach the {threshold:,}-token threshold (longest prefix "
        f"{longest:,} tokens), so caching saves them nothing"
        if not read
        else f"Our {result['pricing']['case']} conversations read {read:,} tokens from the cache in all, over every "
        "design and "
        f"call strategy (threshold {threshold:,} tokens)"
    )

    def at(lines: int | None) -> str:
        return "never" if not lines else f"{lines:,} line" + ("s" if lines > 1 else "")

    def starts(how: str) -> str:
        return ", ".join(
            f"{s['design']} {at(s['first order size cached (lines)'])}"
            for s in result["caching"]["scaleStarts"]
            if s["strategy"] == how
        )

    parallel, sequential = starts(strategy.PARALLEL), starts(strategy.SEQUENTIAL)
    scale = (
        "; on generated orders, caching starts, with every tool call of a turn in one request (parallel calls), at "
        + parallel
        + (f", and with one tool call per request (sequential calls), at {sequential}" if sequential else "")
        if parallel
        else ""
    )
    case_study = ""
    if "caseStudy" in result["caching"]:
        row = result["caching"]["caseStudy"][0]
        case_study = (
            f"On {row['model']}, caching cuts the case study's broad session from {prices.usd(row['broad']['none'])} "
            f"to {prices.usd(row['broad']['hit'])} per {result['pricing']['conversations']:,} sessions but only "
            f"prices its resent history at {row['readPriceShare']:.0%}: the quadratic term stays, and the ratio moves "
            f"from {row['ratioNone']:.1f} to {row['ratioHit']:.1f}. "
        )
    return f"{case_study}{ours}{scale} (modelled, every prefix a hit)."


def assumption_sentence(result: dict[str, Any]) -> str:
    """What the every-prefix-a-hit assumption is worth, per model, for the case study's broad session."""
    n = result["pricing"]["conversations"]
    parts = [
        f"{r['model']} {prices.usd(r['broad']['hit'])} if every prefix is a hit, {prices.usd(r['broad']['miss'])} if "
        "every "
        f"one is a miss, {prices.usd(r['broad']['none'])} without caching"
        for r in result["caching"]["caseStudy"]
    ]
    return (
        f"What the assumption is worth, for {n:,} of the case study's broad sessions: "
        + "; ".join(parts)
        + ". The truth lies between the first two: automatic caching never costs more than none, explicit "
        "breakpoints can, when their writes are evicted before they are read (modelled)."
    )


def answer_price(result: dict[str, Any]) -> str:
    """Section 7's one-line answer, from the figures."""
    h = result["priceHeadline"]
    uncached = [r for r in result["pricePerConversations"] if r["caching"] == "no caching"]
    cheap, dear = min(uncached, key=lambda r: r["dollars"]), max(uncached, key=lambda r: r["dollars"])
    priced = list(dict.fromkeys(r["design"] for r in result["pricePerConversations"]))
    cell = {(r["model"], r["design"], r["caching"]): r["dollars"] for r in result["pricePerConversations"]}
    dearer = [
        (m, d)
        for (m, d, mode) in cell
        if mode == "every prefix a hit" and cell[(m, d, mode)] > cell[(m, d, "no caching")]
    ]
    text = (
        f"{h['conversations']:,} {h['case']} conversations on {h['model']} cost "
        + ", ".join(f"{prices.usd(h[d])} {d}" for d in priced)
        + f" ({h['strategy']} calls, {result['pricing']['profile']} profile, modelled); with every prefix a hit "
        + ", ".join(f"{prices.usd(h[d + 'Cached'])} {d}" for d in priced)
        + f". Across models, from {prices.usd(cheap['dollars'])} ({cheap['design']} on {cheap['model']}) to "
        f"{prices.usd(dear['dollars'])} ({dear['design']} on {dear['model']})"
    )
    if dearer:
        text += (
            "; caching makes "
            + ", ".join(
                f"{d} on {m} dearer ({prices.usd(cell[(m, d, 'no caching')])} to "
                f"{prices.usd(cell[(m, d, 'every prefix a hit')])})"
                for m, d in dearer
            )
            + ": a breakpoint writes the last request at the write premium and no later call reads it"
        )
    return text + "." + beside_price(result)


def beside_price(result: dict[str, Any]) -> str:
    """The headline price under the profile that fits the published conversation best, and at the published
    conversation's own tokens, where the study publishes one (else nothing)."""
    h, said = result["priceHeadline"], ""
    if "fitted" in h:
        f = h["fitted"]
        designs = [d for d in f if d != "profile"]
        said += (
            f" With results framed as the best-fitting profile, {f['profile']} (a fit, section 5), they cost "
            + ", ".join(f"{prices.usd(f[d])} {d}" for d in designs)
            + "."
        )
    if "publishedTokens" in h:
        t = h["publishedTokens"]
        said += (
            f" At the published {t['design']} {t['case']} conversation's own tokens ({t['input']:,} input and "
            f"{t['output']:,} output, provider-reported on {t['publishedModel']}), {h['conversations']:,} of it cost "
            f"{prices.usd(t['dollars'])} on {t['model']} ({t['kind']})."
        )
    return said


def answer_scale(result: dict[str, Any]) -> str:
    """The price at the largest generated order, per design, on the first model."""
    model = _first(result)["model"]
    rows = [r for r in result["scalePrices"] if r["model"] == model]
    if not rows:
        return "No generated orders were priced (scale_sizes is empty)."
    largest = max(r["lines"] for r in rows)
    at = {(r["design"], r["caching"]): r["dollars"] for r in rows if r["lines"] == largest}
    designs = list(dict.fromkeys(d for d, _ in at))
    over = [r["design"] for r in rows if r["lines"] == largest and r["caching"] == "no caching" and not r["fitsWindow"]]
    return (
        f"At {largest:,} lines, {result['pricing']['conversations']:,} conversations on {model} cost "
        + ", ".join(
            f"{prices.usd(at[(d, 'no caching')])} {d} ({prices.usd(at[(d, 'every prefix a hit')])} cached)"
            for d in designs
        )
        + f" ({result['pricing']['strategy']} calls, {framing.PYTHON.name} profile as notebook 04 counts, modelled)"
        + (
            f"; in the {' and '.join(over)} sessions some call exceeds the "
            f"{result['pricing']['contextWindow']:,}-token window, so such a "
            "session could not run as priced"
            if over
            else ""
        )
        + "."
    )


def saves(percent: float, what: str = "input tokens") -> str:
    """A saving in the words every report uses (cost.saving): "uses 42% fewer input tokens", "uses 1.2x more"."""
    return says(percent, what)


def answer_strategy(result: dict[str, Any]) -> str:
    """Section 8's one-line answer, from the figures: each design's saving against the reference under both call
    strategies, in tokens and in price."""
    ref, order = reference(result), result["pricing"]["case"]
    rows = result["callStrategy"]["cases"]
    tokens_rows = {r["design"]: r for r in rows if r["measure"] == "totalInput"}
    dollars_rows = {r["design"]: r for r in rows if r["measure"] == "dollars"}
    parts = []
    for design, t in tokens_rows.items():
        par, seq = t["parallel %"], t["sequential %"]
        if par >= 0 and seq >= 0:
            how = (
                "none of its saving depends on parallel calls, which only narrow it"
                if seq >= par
                else f"parallel calls widen it by {par - seq:.1f} points"
            )
        else:
            how = "it adds input whichever way the model calls tools"
        d = dollars_rows[design]
        parts.append(
            f"on {order}, with every call of a turn asked at once, the {design} design {saves(par)} than {ref}, and "
            f"with one call per request {' '.join(amount(seq))} ({' '.join(amount(d['parallel %'], 'less'))} and "
            f"{' '.join(amount(d['sequential %'], 'less'))} money on {_first(result)['model']}): {how}"
        )
    text = "; ".join(parts)
    largest = [
        r
        for r in result["callStrategy"]["scale"]
        if r["lines"] == max((x["lines"] for x in result["callStrategy"]["scale"]), default=0)
    ]
    if largest:
        text += f"; at {largest[0]['lines']:,} lines " + ", ".join(
            f"{r['design']} {saves(r['parallel %'])} with the calls of a turn asked at once and "
            f"{' '.join(amount(r['sequential %']))} with one call per request"
            for r in largest
        )
    return text[0].upper() + text[1:] + " (modelled)."
