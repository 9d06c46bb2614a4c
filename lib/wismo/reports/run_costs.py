"""Recorded runs priced (notebook 03): each run from its own tokens, request by request, and the checks and table
the notebook shows of it."""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median
from typing import Any

from wismo import runs
from wismo.accounting.cost import prices, saving
from wismo.core.kinds import SCRIPTED, TIKTOKEN
from wismo.reports import check
from wismo.runs.records import RequestRecord
from wismo.runs.recount import recount

PER_CONVERSATIONS = 1000
CACHE_WRITES = "cache writes are not recorded apart: priced as ordinary input"


def _usage(request: RequestRecord) -> prices.CallUsage:
    """One recorded request's tokens as a provider bills them (cached reads apart; writes not recorded)."""
    u = request["usage"]
    return prices.CallUsage(u["inputTokens"], u["cachedInputTokens"], 0, u["outputTokens"])


@dataclass(frozen=True)
class Fitted:
    """The client profile that fits the study's published conversation best, and the study's instructions, with
    which runs of estimated tokens are recounted (runs.recount) and priced a second time."""

    profile: str
    instructions: str


def run_costs(
    loaded: list[runs.Run], reference_model: str, price_date: str | None = None, fitted: Fitted | None = None
) -> list[dict[str, object]]:
    """Each run priced from its own recorded tokens, request by request, under its model's price when genai-prices
    knows the model; scripted runs (no model) under the reference model, and labelled so. With `fitted`, each run
    whose tokens are estimates under another profile is also recounted under the fitted one and priced (`fitted`),
    after its recount under its own profile is checked to give its recorded tokens."""
    out = []
    for run in loaded:
        m = run.manifest
        scripted = m["backend"] == "scripted"
        model = reference_model if scripted else m["model"]
        stand_in = m["backend"] == runs.IMPORTED and not _priced(m["model"], price_date)
        model = reference_model if stand_in else model
        tokens_are = f"{SCRIPTED}, {m['figures']['tokens']}" if scripted else m["figures"]["tokens"]
        row: dict[str, object] = {
            "run": m["runId"],
            "design": m["design"],
            "backend": m["backend"],
            "model": m["model"],
            "tokensAre": tokens_are,
            "conversations": len(run.traces),
        }
        try:
            price = prices.lookup(model, on=price_date)
        except prices.UnknownModel as exc:
            out.append(
                row
                | {
                    "pricedAs": None,
                    "label": f"not priced: {exc}",
                    "priceSource": f"not priced: {exc}",
                    f"usdPer{PER_CONVERSATIONS}": None,
                }
            )
            continue
        usages = [[_usage(q) for q in t["requests"]] for t in run.traces]
        each = [prices.charge(price, u) for u in usages]
        row |= {
            "pricedAs": model,
            "price": price.as_dict(),
            "priceSource": price.source,
            "label": f"priced from {tokens_are} tokens as {model}"
            + (
                " (a reference model: scripted runs have no model)"
                if scripted
                else f" (a reference model: the traced model {m['model']} has no price)"
                if stand_in
                else " (the run's model)"
            ),
            "cacheWrites": "none: the scripted backend has no cache" if scripted else CACHE_WRITES,
            "inputTokens": sum(u.input for c in usages for u in c),
            "cachedInputTokens": sum(u.read for c in usages for u in c),
            "outputTokens": sum(u.output for c in usages for u in c),
            "largestRequest": max((u.input for c in usages for u in c), default=0),
            "totalUsd": round(sum(each), 9),
            "medianUsd": round(median(each), 9) if each else None,
            f"usdPer{PER_CONVERSATIONS}": round(sum(each) / len(each) * PER_CONVERSATIONS, 6) if each else None,
        }
        if fitted is not None and each:
            row |= _refitted(run, usages, price, fitted)
        out.append(row)
    return out


def _priced(model: str, on: str | None) -> bool:
    """Whether the price library prices a model."""
    try:
        prices.lookup(model, on=on)
    except prices.UnknownModel:
        return False
    return True


def _refitted(
    run: runs.Run, usages: list[list[prices.CallUsage]], price: prices.Price, fitted: Fitted
) -> dict[str, object]:
    """The run recounted under the fitted profile and priced as before (outputs as recorded), where its tokens are
    estimates counted under another profile; its recount under its own profile must give its recorded inputs."""
    counting = run.manifest["figures"].get("tokenCounting")
    own = counting.get("profile") if counting else None
    if run.manifest["figures"]["tokens"] != TIKTOKEN or counting is None or own is None or own == fitted.profile:
        return {}
    encoding = counting["encoding"]
    recorded = [[u.input for u in c] for c in usages]
    if recount(run, fitted.instructions, own, encoding) != recorded:
        check(False, "a run recounted under its own profile gives its recorded input tokens", run.manifest["runId"])
    inputs = recount(run, fitted.instructions, fitted.profile, encoding)
    each = [
        prices.charge(price, [prices.CallUsage(i, 0, 0, u.output) for i, u in zip(ins, c)])
        for ins, c in zip(inputs, usages)
    ]
    return {
        "fitted": {
            "profile": fitted.profile,
            "ownProfile": own,
            "ownRecountMatches": True,
            "inputTokens": sum(map(sum, inputs)),
            "kind": f"{TIKTOKEN}, recounted under the {fitted.profile} profile",
            f"usdPer{PER_CONVERSATIONS}": round(sum(each) / len(each) * PER_CONVERSATIONS, 6),
        }
    }


def check_costs(group: dict[str, Any]) -> str:
    """The claim that each run is priced from its own tokens at its model's listed prices: the sum of its requests
    priced one by one equals its token totals at the per-million prices (where no request reaches a size tier)."""
    priced = [c for c in group["costs"] if c["pricedAs"]]
    for c in priced:
        price = prices.from_dict(c["price"])
        if not price.flat_for(c["largestRequest"]):
            continue  # a request in a size tier: its totals at base prices would not be its price
        whole = float(
            prices.flat(price, prices.CallUsage(c["inputTokens"], c["cachedInputTokens"], 0, c["outputTokens"]))
        )
        if abs(whole - c["totalUsd"]) > 1e-6:
            check(
                False,
                "each run's price is its tokens at its model's per-million prices",
                f"{c['run']}: USD {c['totalUsd']:.6f} request by request, USD {whole:.6f} from its totals",
            )
    if not priced:
        return "No run's model has a price in genai-prices; nothing to check."
    refit = [c for c in priced if "fitted" in c]
    recounted = (
        " "
        + check(
            all(c["fitted"]["ownRecountMatches"] for c in refit),
            "each run recounted under its own profile gives its recorded input tokens, request by request, so its "
            "recount under another profile changes nothing but the framing",
            "; ".join(f"{c['run']}: {c['inputTokens']:,} tokens under {c['fitted']['ownProfile']}" for c in refit),
        )
        if refit
        else ""
    )
    return (
        check(
            True,
            "each run is priced from its own tokens at its model's per-million prices",
            _priced_runs(priced),
        )
        + recounted
    )


def _priced_runs(priced: list[dict[str, Any]]) -> str:
    """Each priced run's price per n conversations, and how it was priced: once for all when they share it."""
    per = f"usdPer{PER_CONVERSATIONS}"
    labels = list(dict.fromkeys(c["label"] for c in priced))
    if len(labels) == 1:
        return (
            "; ".join(f"{c['run']}: {prices.usd(c[per])} per {PER_CONVERSATIONS:,} conversations" for c in priced)
            + f"; {'each' if len(priced) > 1 else 'it'} {labels[0]}"
        )
    return "; ".join(
        f"{c['run']}: {prices.usd(c[per])} per {PER_CONVERSATIONS:,} conversations, {c['label']}" for c in priced
    )


def cost_answer(group: dict[str, Any]) -> str:
    """The cost section's one-line answer, from the figures: each design's price of 1,000 conversations against the
    reference's (each run on its own where the runs are not comparable)."""
    priced: dict[str, dict[str, Any]] = {}
    for c in group["costs"]:
        if c["pricedAs"]:
            priced.setdefault(c["design"], c)
    ref = group["study"]["reference"]
    others = [d for d in group["designs"] if d != ref and d in priced]
    per = f"usdPer{PER_CONVERSATIONS}"
    g = priced.get(ref)
    if g is None:
        return f"No priced {ref} run in this group, so no design's price is set against the reference's."
    if not others:
        return f"Only the {ref} design has a priced run in this group; no other design's price to set against it."
    if not group.get("comparable", True):
        each = ", ".join(f"{prices.usd(priced[d][per])} {d}" for d in others)
        return (
            f"Priced as {g['pricedAs']}, {PER_CONVERSATIONS:,} conversations cost {prices.usd(g[per])} {ref} and "
            f"{each}, each run on its own; no saving is computed across them, since the runs differ in "
            f"{' and '.join(d['property'] for d in group['differences'])} ({g['priceSource']})."
        )
    each = "; ".join(
        f"with {d} {prices.usd(priced[d][per])}, {saving.change((priced[d][per] - g[per]) / g[per] * 100, 'less')} "
        f"than {ref}"
        for d in others
    )
    profile = group.get("headline", {}).get("profile")
    counted = f", {profile}" if profile else ""
    refit = {c["design"]: c["fitted"] for c in group["costs"] if "fitted" in c}
    beside = (
        f" Recounted under the {refit[ref]['profile']} profile, the one that fits the study's published conversation "
        f"best (a fit), the same conversations cost {prices.usd(refit[ref][per])} {ref}; "
        + "; ".join(f"{prices.usd(refit[d][per])} {d}" for d in others if d in refit)
        + " (tiktoken-estimated, recounted)."
        if ref in refit
        else ""
    )
    return (
        f"Priced as {g['pricedAs']}, {PER_CONVERSATIONS:,} conversations with the {ref} design, the reference, cost "
        f"{prices.usd(g[per])}; {each} ({g['label']}{counted}; {g['priceSource']}).{beside}"
    )


def costs_table(group: dict[str, object]) -> list[dict[str, object]]:
    """Each run's price as a reader's table, without the columns every run shares (costs_shared says those)."""
    rows = _cost_rows(group)
    shared = _shared(rows)
    return [{k: v for k, v in r.items() if k not in shared or k in ("run", "design")} for r in rows]


def costs_shared(group: dict[str, object]) -> str:
    """What every run of the costs table shares (the model, what it was priced as, from which tokens and prices), in
    one sentence, so the table keeps to the page."""
    shared = {k: v for k, v in _shared(_cost_rows(group)).items() if k not in ("run", "design")}
    return "Every run here: " + "; ".join(f"{k} {v}" for k, v in shared.items()) + "." if shared else ""


def _shared(rows: list[dict[str, object]]) -> dict[str, object]:
    """The columns whose value is the same in every row, with that value."""
    return {k: v for k, v in rows[0].items() if all(r.get(k) == v for r in rows)} if rows else {}


def _cost_rows(group: dict[str, Any]) -> list[dict[str, object]]:
    """Each run's price: what was priced, as which model, from which tokens."""
    per = f"usdPer{PER_CONVERSATIONS}"
    return [
        {
            "run": c["run"],
            "design": c["design"],
            "model": c["model"],
            "priced as": c["pricedAs"] or "not priced",
            "tokens are": c["tokensAre"],
            "conversations": c["conversations"],
            "input (tokens)": c.get("inputTokens"),
            "cached input (tokens)": c.get("cachedInputTokens"),
            "output (tokens)": c.get("outputTokens"),
            f"USD per {PER_CONVERSATIONS:,} conversations": c.get(per),
            **(
                {
                    f"recounted under the {c['fitted']['profile']} profile: input (tokens, tiktoken-estimated)": c[
                        "fitted"
                    ]["inputTokens"],
                    f"recounted: USD per {PER_CONVERSATIONS:,} conversations": c["fitted"][per],
                }
                if "fitted" in c
                else {}
            ),
            "median USD per conversation": c.get("medianUsd"),
            "price from": c["priceSource"],
            "cache writes": c.get("cacheWrites", "–"),
        }
        for c in group["costs"]
    ]
