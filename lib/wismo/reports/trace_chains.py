"""Report 05: the chains of tool calls in an agent's OpenTelemetry traces, their links, and what a focused tool would
save (modelled from the traced token counts), with its check."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wismo.accounting.cost import saving
from wismo.core.jsonfmt import write_stable
from wismo.core.paths import report_dir
from wismo.reports import check
from wismo.reports.params import Param, ParameterError, defaults
from wismo.reports.params import checked as check_parameters
from wismo.runs.traces.conversations import IDLE_NS
from wismo.studies.declaration import chosen

OUTPUT = "traces.json"
PARAMETERS = {
    "trace_files": Param(None, "texts", optional=True),  # OTLP JSON files; None: the study's `traces`
    "study": Param(None, "text", optional=True),  # a study file; None: data/studies/where-is-my-order.toml
    "price_model": Param(None, "text", optional=True),  # the traced model has none: None, the study's published
    "idle_s": Param(IDLE_NS // 10**9, "count"),  # a conversation idle this long (span time) is complete
    "output_dir": Param(None, "text", optional=True),  # None: the build's folder, or a scratch one by hand
}
DEFAULTS = defaults(PARAMETERS)
REPORT = "the traces report"


def files(p: Mapping[str, Any]) -> list[str]:
    """The trace files the report reads: those given, else the study's."""
    if p["trace_files"]:
        return list(p["trace_files"])
    study = chosen(p["study"])
    if not study.traces:
        raise ParameterError(
            REPORT, "trace_files", None, f"give trace files: the study {study.path.name} declares none"
        )
    return [str(t) for t in study.traces]


def checked(params: Mapping[str, object] | None) -> dict[str, Any]:
    """The report's parameters checked before any file is read (ParameterError, one sentence)."""
    return check_parameters(params, PARAMETERS, REPORT)


def build(params: Mapping[str, object] | None = None) -> dict[str, object]:
    """Read the trace files, find the chains, links and savings, write the JSON."""
    from wismo.runs.traces import analysis, prediction

    p = checked(params)
    given = files(p)
    study = chosen(p["study"])
    # A traced model the price library lacks (the shipped traces' scripted one) is priced as the study's published
    # conversations' model, when it has one and no price model is given.
    price = p["price_model"] or (study.published.model if study.published and not p["trace_files"] else None)
    # The study's replacing tools are predicted for its own traces, or for any traces when the study is named.
    replacements = prediction.from_study(study) if p["study"] or not p["trace_files"] else []
    result = analysis.analyse(given, p["idle_s"], price_model=price, replacements=replacements)
    result["files"] = [Path(f).name for f in given]  # names, not paths: the same traces give the same JSON anywhere
    if result["topLinkedChain"] is not None:
        linked = result["chains"][result["topLinkedChain"]]
        largest = linked["byModel"][0]  # never two models pooled: the model with the most conversations
        result["headline"] = {
            "chain": " → ".join(linked["tools"]),
            "model": largest["model"],
            "models": len(linked["byModel"]),
            "savedPerConversation": largest["savedInputPerConversation"],
            "usdPer1000": largest["usdPer1000"],
        }
    result["observed"] = observed(result["chains"])
    write_stable(report_dir(p["output_dir"]) / OUTPUT, result)
    return result


def observed(chained: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Where the traces hold both a chain with links and a one-tool chain answering the same cases: the one tool's
    saving against the chain, by the one saving function (cost.saving), per case from the traced input tokens (the
    median of each case's conversations) and its median across the cases both answered."""
    from wismo.runs.traces import prediction

    out = []
    for chain in (c for c in chained if c["links"]):
        name = " → ".join(chain["tools"])
        for one in (c for c in chained if len(c["tools"]) == 1 and c["tools"] != chain["tools"]):
            totals = {}
            for c, label in ((chain, name), (one, one["tools"][0])):
                for case, tokens in zip(c["cases"], c.get("inputTokensByCase", [])):
                    totals[(label, prediction.case_key(case))] = tokens
            found = saving.savings({"traced": totals}, name, "traced")
            out += [s.as_dict() | {"cases": len(s.per_case)} for s in found if s.per_case]
    return out


def rows(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per chain, as the table shows it, each column saying what its figure is; a chain several models
    answered gives its saving model by model, never pooled."""
    out = []
    for chain in result["chains"]:
        saving, models = chain["saving"], chain.get("byModel", [])
        saved: object = saving["inputTokensSavedPerConversation"]
        usd: object = saving.get("usdSavedPer1000")
        if len(models) > 1:
            saved = "; ".join(f"{m['model']} {m['savedInputPerConversation']:,.1f}" for m in models)
            usd = "; ".join(
                f"{m['model']} " + (f"{m['usdPer1000']:,.4f}" if m["usdPer1000"] is not None else "unpriced")
                for m in models
            )
        out.append(
            {
                "chain (calls asked in one response in braces)": chain["shown"] or "(no tool call)",
                "conversations": chain["conversations"],
                "share %": round(100 * chain["share"], 1),
                "model turns (median)": chain["modelTurns"]["median"],
                f"input tokens per conversation ({saving['label']['today']})": saving[
                    "inputTokensPerConversationToday"
                ],
                "with one focused call (modelled)": saving["inputTokensPerConversationReplaced"]
                if len(models) <= 1
                else "per model, as saved",
                "saved per conversation (modelled)": saved,
                "USD saved per 1,000 (modelled)": usd,
            }
        )
    return out


def link_rows(chain: Mapping[str, Any]) -> list[dict[str, object]]:
    """The links of one chain: which argument took a value an earlier result held, and where."""
    return [
        {
            "argument": f"{link['tool']}.{link['argument']}",
            "value found in": f"{link['from']} result at {link['path'] or '(its text)'}",
            "conversations": link["conversations"],
        }
        for link in chain["links"]
    ]


def check_accounted(result: Mapping[str, Any]) -> str:
    """Every model call span read is in one chain's conversations, once: the chains' model calls (counted per
    conversation) against the reader's count of spans, less the spans nested in another of the same request and
    those of traces without a model call."""
    read = result["read"]
    in_chains = sum(c["modelCalls"] for c in result["chains"])
    expected = read["modelCallSpans"] - read["sameModelCallSpans"]
    return check(
        in_chains == expected,
        "every model call read is counted in exactly one chain",
        f"{in_chains:,} model calls in the chains' conversations, {expected:,} read "
        f"({read['modelCallSpans']:,} spans, {read['sameModelCallSpans']:,} of them another span of a call counted)",
    )


def read_sentence(result: Mapping[str, Any]) -> str:
    """What was read: spans by kind, conversations, the traces left out, the spans read twice and the tool calls that
    could not be attached to a model call, and what the token counts are."""
    from wismo.runs.traces import analysis

    read = result["read"]
    return (
        f"Read **{read['spans']:,} spans** from {', '.join(result['files'])}: {read['modelCallSpans']:,} model calls, "
        f"{read['toolCallSpans']:,} tool call spans ({read['sameCallSpans']:,} of them another span of a call already "
        f"counted, such as the MCP client's span inside the agent's), and {read['ignoredSpans']:,} spans that are "
        f"neither. **{result['conversations']:,} conversations**; {read['withoutModelCall']:,} traces without a model "
        f"call (a server's handshake, say) are left out. The model calls name the model "
        f"{', '.join(result['models'])} and the provider {', '.join(result['providers']) or '(none named)'}; their "
        f"token counts are {result['labels']['tokens']}."
    ) + "".join(f" {said}" for said in (analysis.duplicated(read), analysis.unattached(read)) if said)


TOLERANCE_PERCENT = 5.0  # a prediction this close to what the traces show is said to hold


def no_links_sentence(result: Mapping[str, Any]) -> str:
    """Why no chain has links, said for the reader."""
    from wismo.runs.traces import analysis

    return f"No chain has links: {analysis.no_links(dict(result))}"


def checks_sentence(result: Mapping[str, Any]) -> str:
    """Each prediction of a replaced chain beside the conversations of the same cases that used the replacement:
    said to hold within TOLERANCE_PERCENT, else said to be off, with both figures (the report goes on either way:
    how far a model is off is a finding about the traces, not a failure of the build)."""
    said = []
    for c in result.get("checks", []):
        n = c["cases"]
        both = (
            f"predicted {c['predictedInput']:,.1f} input tokens per conversation (modelled) against "
            f"{c['observedInput']:,.1f} observed ({result['labels']['tokens']}), over "
            f"{'the one case' if n == 1 else f'the {n} cases'} both hold ({c['errorPercent']:+.1f}%)"
        )
        holds = c["errorPercent"] is not None and abs(c["errorPercent"]) <= TOLERANCE_PERCENT
        verdict = f"holds within {TOLERANCE_PERCENT:g}%" if holds else f"is off by more than {TOLERANCE_PERCENT:g}%"
        said.append(
            f"{'Checked' if holds else 'Not confirmed'}: {c['chain']} replaced by {c['replacement']} {verdict}: {both}"
        )
    return "; ".join(said) + "." if said else ""


def observed_sentence(result: Mapping[str, Any]) -> str:
    """What the traces themselves show where they hold the one-tool conversations of the same cases: the saving by
    the one saving function, said as every report says it, beside the chain's modelled one."""
    said = []
    for s in result.get("observed", []):
        n = s["cases"]
        over = "the one case" if n == 1 else f"median of the {n} cases"
        said.append(
            f"**{s['design']}** {s['says']} than the chain {s['reference']}, observed in these traces "
            f"({over} both answered, {result['labels']['tokens']})"
        )
    return ("; ".join(said) + ".") if said else ""


def bounds(saving: Mapping[str, Any]) -> str:
    """An estimated saving's range, where it has one: the smaller end is the figure stated."""
    if "savedBounds" not in saving:
        return ""
    low, high = saving["savedBounds"]
    return f", at least; between {low:,.1f} and {high:,.1f}"


def saving_sentence(chain: Mapping[str, Any]) -> str:
    """A chain's modelled saving per conversation and, where priced, per 1,000 conversations, saying at what price."""
    price, saving = chain["price"], chain["saving"]
    if price["priced"]:
        named = "" if price["traced"] else "; the traced model has no price, so this is the model named to price it"
        priced = (
            f"at {price['as']}'s input price of USD {price['inputPerMTok']} per million tokens ({price['source']}"
            f"{named}): **USD {saving['usdSavedPer1000']:,.4f} per 1,000 conversations** (modelled)"
        )
    else:
        priced = f"unpriced: {price['why']}"
    return (
        f"Replacing it with one call would save **{saving['inputTokensSavedPerConversation']:,.1f} input tokens per "
        f"conversation**{bounds(saving)} (modelled by {saving.get('model', 'the history resends')}; from "
        f"{saving['inputTokensPerConversationToday']:,.1f}, {saving['label']['today']}), {priced}. `wismo traces` "
        "writes the study that checks such a tool: the traced design's entry and links as above, and a focused design "
        "to point at the new tool."
    )
