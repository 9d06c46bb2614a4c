"""The sentences and small tables the notebooks show around their figures, built from a report's result: every
number in them read from the result, none typed, so a notebook cell only displays them."""

from __future__ import annotations

from statistics import median
from typing import Any


def case_study_table(cs: dict[str, Any]) -> list[dict[str, Any]]:
    """The case study's sessions call by call: input and cumulative input of each design (modelled)."""
    return [
        {
            "model call k": k,
            "broad: input (tokens, modelled)": b,
            "broad: cumulative (tokens, modelled)": bc,
            "scoped: input (tokens, modelled)": s,
            "scoped: cumulative (tokens, modelled)": sc,
        }
        for k, b, bc, s, sc in zip(
            range(1, cs["calls"] + 1),
            cs["broad"]["inputs"],
            cs["broad"]["cumulative"],
            cs["scoped"]["inputs"],
            cs["scoped"]["cumulative"],
        )
    ]


def case_study_sentence(cs: dict[str, Any]) -> str:
    """What the case study's two sessions come to, in one Markdown paragraph (modelled)."""
    return (
        f"Broad tools process **{cs['broad']['total']:,}** input tokens in {cs['calls']} calls and scoped tools "
        f"**{cs['scoped']['total']:,}**, a ratio of **{cs['ratio']:.1f}** (modelled). The broad session's last call "
        f"carries {cs['broad']['final']:,} tokens; one more tool call would carry {cs['broad']['nextCall']:,} into the "
        f"next call, over the {cs['contextWindow']:,}-token window (broad sessions fail at call "
        f"{cs['broad']['failsAtCall']}), "
        f"against {cs['scoped']['nextCall']:,} for scoped tools. Scoped tools "
        f"{'meet' if cs['scoped']['meetsTarget'] else 'miss'} the {cs['target']:,}-token goal; broad tools "
        f"{'meet' if cs['broad']['meetsTarget'] else 'miss'} it."
    )


def study_intro(study: Any) -> str:
    """What a study compares, in one Markdown paragraph: its file, question, designs, cases and match."""
    designs = "; ".join(
        f"**{name}** ({d.target}{'' if d.serve else ', ' + str(d.transport)}: first {d.investigation.entry}"
        + (
            ", then " + ", ".join(f"{x.tool} for each {x.key}" for x in d.investigation.links)
            if d.investigation.links
            else ", page by page"
            if d.investigation.cursor
            else ", one call"
        )
        + ")"
        for name, d in study.designs.items()
    )
    match = (
        "every design's evidence must equal the reference's"
        if study.match == "equal"
        else "every other design's evidence must hold the reference's (match = contains)"
    )
    return (
        f"Study **{study.title}** (`{study.path.name}`). The question: *{study.question}*. Designs: {designs}. "
        f"{len(study.cases)} cases and {len(study.unfriendly)} unfriendly inputs; the reference is "
        f"**{study.reference}**, and {match}." + (f" {study.description}" if study.description else "")
    )


def saving_sentence(ratios: list[dict[str, Any]]) -> str:
    """The compared design's median input-token saving across the cases (tiktoken-estimated, modelled)."""
    key = next(k for k in ratios[0] if k.endswith("SavingPercent"))
    saving = median(r[key] for r in ratios)
    return (
        f"Median saving of the {key.removesuffix('SavingPercent')} design across these cases: **{saving:.1f}%** "
        f"of input tokens (tiktoken-estimated, modelled conversation without the final answer's output)."
    )


def framing_sentence(shares: list[dict[str, Any]]) -> str:
    """The share of each rebuilt conversation's input that comes from the client's framing (modelled)."""
    return (
        "Framing alone accounts for "
        + " and ".join(
            f"**{r['share from framing %']:.1f}%** of the {r['design']} conversation's input" for r in shares
        )
        + " (modelled from tiktoken estimates)."
    )


def medians_sentence(group: dict[str, Any]) -> str:
    """One group of runs' medians, focused against granular, each with the kind of its figure."""
    m = {r["measure"]: r for r in group["medians"]}
    elapsed = (
        f"{m['modelledElapsedMs']['focused vs granular %']:+.1f}% elapsed time ({group['kinds']['elapsed']})."
        if m["modelledElapsedMs"]["focused"] is not None
        else f"{m['wallMs']['focused vs granular %']:+.1f}% elapsed time (measured)."
    )
    return (
        f"**{group['label']}**: the focused design needed a median of {m['turns']['focused']:g} model turns against "
        f"{m['turns']['granular']:g} ({group['kinds']['turns']}), {m['totalTokens']['focused vs granular %']:+.1f}% "
        "tokens "
        f"({group['kinds']['tokens']}) and " + elapsed
    )


def pass_k_sentence(group: dict[str, Any]) -> str:
    """One group of runs' pass^k per design, and the summary claims flagged."""
    per = {
        d: [p for p in group["passK"] if p["design"] == d] for d in dict.fromkeys(p["design"] for p in group["passK"])
    }
    return (
        f"**{group['label']}**: pass^k, every repetition passed ({group['kinds']['scores']}): "
        + "; ".join(f"{d} {sum(p['pass^k'] for p in ps)}/{len(ps)} order cases" for d, ps in per.items())
        + f"; summary claims flagged: {sum(len(r['summaryFlags']) for r in group['cases'])}."
    )
