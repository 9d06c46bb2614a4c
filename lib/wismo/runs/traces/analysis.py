"""Trace files analysed: what was read, the recurring chains, and per chain what a focused tool would save, each
figure labelled (provider-reported: the traced model calls' own usage; modelled: the cumulative-context model applied
to it), priced at the traced model's price where the price library has one."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, cast

from wismo.core.errors import InputError
from wismo.core.kinds import MODELLED, PROVIDER
from wismo.core.textgrid import plural
from wismo.runs.traces import chains, conversations, otlp, prediction
from wismo.runs.traces.partitioned import CHUNK

PER_CONVERSATIONS = 1000  # savings are stated per this many conversations
# How a chain's replacement is modelled: the accounting of report 02 where the study gives the replacing tool, else
# the history's resends alone.
ONE_ACCOUNTING = "the study's definitions and focused results under the python profile, counted as report 02 counts"
RESENDS = "the history's resends alone: the definitions and the focused result's envelope left out"
IMPORTED = "imported traces"


def label(kinds: Iterable[str]) -> str:
    """What the traced token counts are: provider-reported unless the spans say otherwise (wismo's own loop's)."""
    return f"{', '.join(sorted(set(kinds))) or PROVIDER} ({IMPORTED})"


SCHEMA = "wismo.traces/1"  # what traces.json says it is: what marks a folder an earlier run wrote


def duplicated(read: dict[str, object]) -> str:
    """The spans read more than once, said with where they come from, or nothing when there were none."""
    n = int(cast("int", read.get("duplicateSpans", 0)))  # absent from an older run's traces.json
    if not n:
        return ""
    many = n != 1
    return (
        f"{plural(n, 'span')} repeated the trace and span id of one already read in "
        f"{'their' if many else 'its'} conversation (a file given twice under two names, or a Collector that sent a "
        f"batch again) and {'were' if many else 'was'} counted once."
    )


def unattached(read: dict[str, object]) -> str:
    """The tool calls no model call could be given, said with the fix, or nothing when every one was attached."""
    n = read.get("toolCallsWithoutModelCall", 0)
    if not n:
        return ""
    return (
        f"{n:,} tool call{'s' if n != 1 else ''} could not be attached to a model call: their spans share no trace and "
        "no gen_ai.conversation.id with any model call's, so no chain counts them. Propagate the trace context into "
        "the tool calls (run them inside the agent's span), or set gen_ai.conversation.id on both."
    )


# What turns content capture on for the OpenTelemetry GenAI instrumentations (the openai-v2 one among them).
CAPTURE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true"


def no_links(result: dict[str, Any]) -> str:
    """Why no chain has links, in one sentence, with what to turn on where it is the capture."""
    longer = [c for c in result["chains"] if len(c["tools"]) > 1]
    if not longer:
        return "no conversation calls two tools or more, so there is no chain for one focused tool to replace."
    if not any(c["linksCaptured"] for c in longer):
        return (
            "the traces did not capture the tool calls' arguments and results (content capture off), so no link "
            f"between them can be found; turn on the instrumentation's content capture (for the GenAI ones, {CAPTURE})."
        )
    return "no argument of a later call took a value an earlier result of its conversation held."


def spans(paths: Sequence[str | Path]) -> Iterator[otlp.Span]:
    """Every span of the files, file after file."""
    return itertools.chain.from_iterable(map(otlp.read, paths))  # no generator of ours between: run per span


def _price(models: Iterable[str], price_model: str | None) -> dict[str, object]:
    """The input price the saving is charged at: the traced model's (the first the library prices), else the one
    asked for with --price-model, else none, saying why."""
    from wismo.accounting.cost import prices

    tried = sorted(set(models))
    for model in tried:
        try:
            return {"priced": True, "as": model, "traced": True, **prices.lookup(model).as_dict()}
        except prices.UnknownModel:
            continue
    if price_model:
        return {"priced": True, "as": price_model, "traced": False, **prices.lookup(price_model).as_dict()}
    return {"priced": False, "why": f"{prices.LIBRARY} {prices.version()} has no price for {', '.join(tried)}"}


def _saving(summary: dict[str, Any], price: dict[str, object], tokens: str) -> dict[str, object]:
    """A chain's saving per conversation and per 1,000 conversations, in tokens and, when priced, in USD: by the one
    accounting where a replacement was predicted (over the cases it was predicted for), else by the history resends
    alone (said so: it leaves the definitions and the result's envelope out)."""
    today, mean, how = summary["inputTokensMean"], summary["inputTokensSavedMean"], RESENDS
    predicted = summary.get("predicted") or []
    if predicted:
        first = predicted[0]
        by_case = {prediction.case_key(c): v for c, v in zip(summary["cases"], summary["inputTokensByCase"])}
        pairs = [(by_case[k], v) for k, v in first["byCase"].items() if k in by_case]
        if pairs:
            today = round(sum(a for a, _ in pairs) / len(pairs), 2)
            mean = round(today - sum(b for _, b in pairs) / len(pairs), 2)
            how = f"{ONE_ACCOUNTING}, replaced by {first['tool']}"
    bounds = None
    if not predicted and summary.get("estimated"):
        # No study names the tool: the saving between what the estimate's bounds leave, the smaller one stated.
        e = summary["estimated"]
        today, how = e["inputToday"], prediction.ESTIMATED
        bounds = [round(today - e["mostInput"], 2), round(today - e["leastInput"], 2)]
        mean = bounds[0]
    out: dict[str, object] = {
        "inputTokensPerConversationToday": today,
        "inputTokensPerConversationReplaced": round(today - mean, 2),
        "inputTokensSavedPerConversation": mean,
        f"inputTokensSavedPer{PER_CONVERSATIONS}": round(mean * PER_CONVERSATIONS, 2),
        "label": {"today": tokens, "replaced": MODELLED, "saved": MODELLED},
        "model": how,
        **({"savedBounds": bounds} if bounds else {}),
    }
    if price["priced"]:
        out[f"usdSavedPer{PER_CONVERSATIONS}"] = round(mean * PER_CONVERSATIONS * price["inputPerMTok"] / 1e6, 6)
    return out


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.title() for w in rest)


def _facts(
    paths: Sequence[str | Path],
    tally: conversations.Tally,
    idle_ns: int,
    replacements: Sequence[prediction.Replacement],
    keep: bool,
    jobs: int,
    dask: str | None,
    part_bytes: int,
) -> Iterator[tuple[chains.Facts, conversations.Conversation | None]]:
    """What each of the files' conversations adds to its chain, with the conversation when `keep`: in one pass in this
    process, or partitioned on local workers or a Dask cluster."""
    if jobs <= 1 and dask is None:
        for conversation in conversations.conversations(spans(paths), tally, idle_ns, None if keep else chains.READ):
            yield chains.facts(conversation, replacements), conversation
        return
    from distributed import Client

    from wismo.runs.traces import partitioned

    cluster = None if dask else partitioned.local_cluster(jobs)
    try:
        try:
            client = Client(dask or cluster)
        except OSError as exc:  # no scheduler there (TimeoutError), or the address cannot be reached
            if dask is None:
                raise
            raise InputError(f"--dask {dask}: no Dask scheduler answered there ({exc}).") from None
        with client:
            yield from partitioned.run(client, [str(p) for p in paths], idle_ns, tally, replacements, keep, part_bytes)
    finally:  # the client closed first, its data released: workers that leave then take nothing with them
        if cluster is not None:
            cluster.close()


def analyse(
    paths: Sequence[str | Path],
    idle_s: float = conversations.IDLE_NS / 1e9,
    price_model: str | None = None,
    each: Callable[[conversations.Conversation], object] | None = None,
    replacements: Sequence[prediction.Replacement] = (),
    jobs: int = 1,
    dask: str | None = None,
    part_bytes: int | None = None,
) -> dict[str, Any]:
    """The analysis of the trace files (JSON-ready), read in one pass that holds only the conversations open at
    once; `each` is given every conversation as it completes; each of `replacements` (prediction.from_study) is
    predicted for the chains of its tools and checked against the conversations that used it; with `jobs` above 1
    the conversations are built on that many local worker processes, with `dask` (a scheduler's address) on that Dask
    cluster (runs.traces.partitioned), an uncompressed file of lines read in byte ranges of `part_bytes` (default
    partitioned.CHUNK). TraceUnreadable names the first bad line."""
    tally = conversations.Tally()
    counted = chains.Chains(replacements)
    models: set[str] = set()
    providers: set[str] = set()
    kinds: set[str] = set()
    found = _facts(
        paths, tally, int(idle_s * 1e9), counted.replacements, each is not None, jobs, dask, part_bytes or CHUNK
    )
    for facts, conversation in found:
        counted.add_facts(facts)
        models |= facts.models
        providers |= facts.providers
        kinds |= facts.kinds
        if each is not None and conversation is not None:
            each(conversation)
    ranked, total = counted.ranked(), counted.total
    summaries = []
    for chain in ranked:
        summary = chain.summary(total)
        summary["price"] = _price(summary["models"], price_model)
        summary["saving"] = _saving(summary, summary["price"], label(kinds))
        for entry in summary["byModel"]:
            # Each model apart, at its own price (or the one asked for), never pooled with another model's.
            price = _price([entry["model"]], price_model)
            if price["priced"]:
                usd = entry["savedInputPerConversation"] * PER_CONVERSATIONS * price["inputPerMTok"] / 1e6
                entry |= {f"usdPer{PER_CONVERSATIONS}": round(usd, 6), "pricedAs": price["as"]}
            else:
                entry |= {f"usdPer{PER_CONVERSATIONS}": None, "unpriced": price["why"]}
        summaries.append(summary)
    linked = [s for s in summaries if s["links"]]
    checked = prediction.checks(summaries)
    return {
        "schema": SCHEMA,
        "files": [str(p) for p in paths],
        "read": {_camel(k): v for k, v in asdict(tally).items()},
        "conversations": total,
        "models": sorted(models),
        "providers": sorted(providers),
        "chains": summaries,
        "topLinkedChain": summaries.index(linked[0]) if linked else None,
        "checks": checked,
        "replacements": [
            {"tool": r.tool, "replaces": sorted(r.chain), "profile": r.profile, "source": r.source}
            for r in replacements
        ],
        "labels": {
            "tokens": label(kinds),
            "saving": MODELLED,
            "model": (
                "the cumulative-context model on the traced requests: with a chain replaced by one call returning the "
                "same records, the records' tokens are kept (every later request still carries them) and each extra "
                "turn's request, which resends the whole history, is no longer made"
            ),
        },
    }
