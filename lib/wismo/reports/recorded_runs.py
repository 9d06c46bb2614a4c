"""The recorded-runs report (notebook 03): verified runs of the designs, scored and summarised beside the
article's published run; its JSON is recorded-runs.json."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wismo import runs
from wismo.core import reference
from wismo.core.jsonfmt import write_stable
from wismo.core.kinds import SCRIPTED
from wismo.core.paths import report_dir
from wismo.core.textgrid import numbers
from wismo.reports import check
from wismo.reports.params import Param, defaults
from wismo.reports.params import checked as check_parameters
from wismo.reports.run_costs import run_costs
from wismo.runs import summaries

OUTPUT = "recorded-runs.json"
PARAMETERS = {
    "run_ids": Param(None, "texts", optional=True),  # run folder names; None: the newest of each design and model
    "runs_dir": Param(None, "text", optional=True),  # where the runs are; None means data/runs
    "focus_order": Param("ORD-1004", "text"),  # the case drawn turn by turn and shown as transcripts
    "output_dir": Param(None, "text", optional=True),  # None: the build's folder, or a scratch one by hand
    "reference_model": Param("gpt-4.1-mini", "text"),  # the price scripted runs (which have no model) get
    "price_date": Param(None, "date", optional=True),  # prices looked up for this date; None: the data's own
}
DEFAULTS = defaults(PARAMETERS)
REPORT = "the recorded-runs report"


def checked(params: Mapping[str, Any] | None) -> dict[str, Any]:
    """The report's parameters checked against their declarations before any run is read (one sentence)."""
    return check_parameters(params, PARAMETERS, REPORT)


def kinds(manifests: list[dict[str, Any]]) -> dict[str, str]:
    """What the runs' figures are, for every place they are shown: scripted runs are named as such at the number;
    each kind is said once (the client profile once, after the kind it qualifies)."""
    backends = sorted({m["backend"] for m in manifests})
    profiles = sorted({p for m in manifests if (p := summaries.token_counting(m))})
    where = "" if all(summaries.token_counting(m) for m in manifests) else " where the run records one"
    counted = f" ({', '.join(profiles)} profile{where})" if profiles else ""
    tokens_are = ", ".join(sorted({m["figures"]["tokens"] for m in manifests})) + counted
    scripted = backends == ["scripted"]
    latency = [bool(m["latencyModel"]) for m in manifests]
    return {
        "runs": SCRIPTED if scripted else f"model runs ({', '.join(backends)})",
        "turns": f"{SCRIPTED}: fixed by the script's rules" if scripted else "measured",
        "tokens": f"{SCRIPTED}, {tokens_are}" if scripted else tokens_are,
        "elapsed": "modelled (a stated latency model)"
        if all(latency)
        else "modelled where a run has a latency model, else measured"
        if any(latency)
        else "measured",
        "scores": f"{SCRIPTED}: scored against the expectations"
        if scripted
        else "measured: scored against the expectations",
    }


def _group(
    loaded: list[Any], focus_order: str, article: dict[str, Any], reference_model: str, price_date: str | None
) -> dict[str, Any]:
    """Every figure of one group of runs (one backend and model): never pooled with another group's."""
    rows = summaries.case_rows(loaded)
    kind = kinds([r.manifest for r in loaded])
    study = next((r.manifest["study"] for r in loaded if r.manifest.get("study")), None)
    pair = summaries.pair_of([r.manifest for r in loaded])
    # Runs that differ in repetitions or latency model are shown side by side, never compared.
    differ = summaries.differences([r.manifest for r in loaded])
    reply = "scripted reply" if kind["runs"] == SCRIPTED else "model replied"
    first = loaded[0].manifest
    return {
        "backend": first["backend"],
        "model": first["model"],
        "label": f"{first['backend']} backend, model {first['model']}",
        "server": first.get("server"),
        "kinds": kind,
        "comparable": not differ,
        "differences": differ,
        "runs": [
            {
                "run": r.manifest["runId"],
                "design": r.manifest["design"],
                "backend": r.manifest["backend"],
                "model": r.manifest["model"],
                "protocol": r.manifest["protocolRevision"],
                "cases": r.manifest["totals"]["cases"],
                "repetitions": r.manifest["repetitions"],
                "tokens are": r.manifest["figures"]["tokens"]
                + (f" ({p} profile)" if (p := summaries.token_counting(r.manifest)) else ""),
                "latency model": summaries.latency_in_words(r.manifest["latencyModel"]),
            }
            for r in loaded
        ],
        "tokensAre": kind["tokens"],
        "cases": rows,
        "medians": summaries.medians(rows, pair, comparable=not differ),
        "passK": summaries.pass_k(rows),
        "outcomes": summaries.outcomes(rows),
        "scoresByCase": scores_by_case(rows),
        "growth": summaries.growth(loaded, focus_order),
        "transcripts": {
            d: [
                {(reply if k == "model replied" else k): v for k, v in step.items()}
                for step in summaries.transcript(loaded, d, focus_order)
            ]
            for d in summaries.designs_in(rows)
            if any(
                t["orderId"] == focus_order and t["repetition"] == 1 and t["design"] == d
                for r in loaded
                for t in r.traces
            )
        },
        "answers": {
            d: summaries.answer_of(loaded, d, focus_order)
            for d in summaries.designs_in(rows)
            if any(
                t["orderId"] == focus_order and t["repetition"] == 1 and t["design"] == d
                for r in loaded
                for t in r.traces
            )
        },
        "againstArticle": []
        if study
        else against_article(rows, article, kind, [r.manifest for r in loaded], comparable=not differ),
        "costs": run_costs(loaded, reference_model, price_date),
        # A study's runs: the study, and which pair of its designs the medians compare.
        **({"study": {**study, "pair": list(pair)}} if study else {}),
    }


def build(params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Load and verify the runs (a run that does not verify is refused), group them by backend and model (scripted
    first), score and summarise each group apart, write the JSON."""
    p = checked(params)
    loaded = [runs.load(folder) for folder in summaries.selected_runs(p["run_ids"], p["runs_dir"])]
    if not loaded:
        raise runs.RunInvalid(
            f"no recorded runs under {p['runs_dir'] or runs.RUNS}; `make runs` records the scripted ones"
        )
    article = reference.load("where-is-my-order")
    keys = sorted({(r.manifest["backend"], r.manifest["model"]) for r in loaded}, key=lambda k: (k[0] != "scripted", k))
    groups = [
        _group(
            [r for r in loaded if (r.manifest["backend"], r.manifest["model"]) == key],
            p["focus_order"],
            article,
            p["reference_model"],
            p["price_date"],
        )
        for key in keys
    ]
    result = {"focusOrder": p["focus_order"], "articleSource": article["source"], "groups": groups}
    write_stable(report_dir(p["output_dir"]) / OUTPUT, result)
    return result


def check_resent_history(result: dict[str, Any], group: dict[str, Any]) -> str:
    """The claim about one case turn by turn: the granular conversation has one request more than the focused one,
    and each later request carries everything the earlier one did plus the newest turn."""
    growth = {g["design"]: g for g in group["growth"]}
    ref, other = summaries.group_pair(group)
    g, f = growth.get(ref), growth.get(other)
    if g is None or f is None:
        return f"No {ref} and {other} pair for this case in the selected runs; nothing to check."
    grows = all(b > a for rows in (g, f) for a, b in zip(rows["inputs"], rows["inputs"][1:]))
    if "study" in group:  # a study's designs need not differ by one request: the claim is the resending alone
        return check(
            grows,
            f"for {result['focusOrder']} every request of both conversations resends all earlier ones",
            f"{ref} inputs {numbers(g['inputs'])}; {other} {numbers(f['inputs'])} tokens ({group['tokensAre']})",
        )
    holds = len(g["inputs"]) == len(f["inputs"]) + 1 and grows
    return check(
        holds,
        f"for {result['focusOrder']} the granular conversation takes one request more, and every request "
        "resends all earlier ones",
        f"granular inputs {numbers(g['inputs'])}; focused {numbers(f['inputs'])} tokens ({group['tokensAre']})",
    )


def scores_by_case(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per design and order: repetitions passed, how the conversations ended, and every failure spelled
    out (the fields that did not match, the summary claims flagged), instead of one row per repetition."""
    out = []
    for design in summaries.designs_in(rows):
        for order_id in dict.fromkeys(r["orderId"] for r in rows):
            mine = [r for r in rows if r["design"] == design and r["orderId"] == order_id]
            if not mine:
                continue
            failures = [
                f"repetition {r['repetition']}: {', '.join(r['failedFields'])}" for r in mine if r["failedFields"]
            ]
            flags = [f"repetition {r['repetition']}: {'; '.join(r['summaryFlags'])}" for r in mine if r["summaryFlags"]]
            outcomes = sorted({r["outcome"] for r in mine})
            out.append(
                {
                    "design": design,
                    "order": order_id,
                    "passed": f"{sum(bool(r['passed']) for r in mine)}/{len(mine)}"
                    if any(r["passed"] is not None for r in mine)
                    else "not scored (no expected answer)",
                    "ended": ", ".join(outcomes),
                    "failures": "; ".join(failures) or "none",
                    "summary claims flagged": "; ".join(flags) or "none",
                }
            )
    return out


def _elapsed_arithmetic(row: dict[str, Any], manifest: dict[str, Any]) -> str:
    """How a modelled elapsed time was computed, in numbers: requests x overhead + tokens x rates."""
    m = manifest["latencyModel"]
    if not m or row["modelledElapsedMs"] is None:
        return "measured"
    return (
        f"modelled: {row['turns']} requests x {m['overhead_ms']:g} ms + {row['inputTokens']:,} input tokens x "
        f"{m['per_input_token_ms']:g} ms + {row['outputTokens']:,} output tokens x {m['per_output_token_ms']:g} ms "
        f"= {row['modelledElapsedMs']:,.0f} ms"
    )


def against_article(
    rows: list[dict[str, Any]],
    article: dict[str, Any],
    kind: dict[str, str],
    manifests: list[dict[str, Any]],
    comparable: bool = True,
) -> list[dict[str, Any]]:
    """The article's published ORD-1004 conversations and medians beside ours, each side saying what its figure is;
    for scripted runs, which figures the script fixes and the arithmetic of the modelled elapsed time; no median
    change of ours when the runs are not comparable."""
    pub, source = article["ORD-1004"], article["source"]["figureSections"]
    by_design = {m["design"]: m for m in manifests}
    out = []

    def add(figure: str, value: Any, section: str, ours: Any, ours_are: str) -> None:
        out.append(
            {
                "figure": figure,
                "article (provider-reported or measured, published)": value,
                "article section": source.get(section, ""),
                "wismo": ours,
                "wismo figure is": ours_are,
            }
        )

    for design in ("granular", "focused"):
        mine = next(
            (r for r in rows if r["design"] == design and r["orderId"] == "ORD-1004" and r["repetition"] == 1), None
        )
        add(
            f"{design} ORD-1004 model turns",
            pub[design]["modelTurns"],
            f"ORD-1004.{design}.modelTurns",
            mine and mine["turns"],
            kind["turns"],
        )
        add(
            f"{design} ORD-1004 tool calls",
            pub[design]["toolCalls"],
            f"ORD-1004.{design}.toolCalls",
            mine and mine["toolCalls"],
            kind["turns"],
        )
        add(
            f"{design} ORD-1004 tokens, whole conversation",
            pub[design]["conversationTokens"],
            f"ORD-1004.{design}.conversationTokens",
            mine and mine["totalTokens"],
            kind["tokens"],
        )
        modelled = mine and mine["modelledElapsedMs"]
        add(
            f"{design} ORD-1004 elapsed seconds",
            pub[design]["elapsedSeconds"],
            f"ORD-1004.{design}.elapsedSeconds",
            round(modelled / 1000, 3) if modelled else None,
            _elapsed_arithmetic(mine, by_design[design])
            if modelled
            else "no latency model: the harness's wall time is no model's elapsed time"
            if mine
            else "",
        )
    med = {m["measure"]: m for m in summaries.medians(rows, comparable=comparable)}
    tokens_change = med["totalTokens"]["focused vs granular %"]
    add(
        "focused: fewer median tokens, %",
        article["medians"]["focusedFewerTokensPercent"],
        "medians.focusedFewerTokensPercent",
        None if tokens_change is None else -tokens_change,
        kind["tokens"],
    )
    change = med["modelledElapsedMs"]["focused vs granular %"]
    add(
        "focused: lower median elapsed time, %",
        article["medians"]["focusedLowerElapsedPercent"],
        "medians.focusedLowerElapsedPercent",
        None if change is None else -change,
        kind["elapsed"],
    )
    return out


MEASURES = {
    "turns": "model turns (count)",
    "toolCalls": "tool calls (count)",
    "resultBytes": "tool result bytes (measured)",
    "inputTokens": "input tokens",
    "outputTokens": "output tokens",
    "totalTokens": "tokens, input + output",
    "wallMs": "wall time of the loop, ms (measured)",
    "modelledElapsedMs": "elapsed time, ms (modelled)",
}


def medians_table(group: dict[str, Any]) -> list[dict[str, Any]]:
    """A group's medians for the reader: each measure in words with its unit and kind, counts without decimals."""
    ref, other = summaries.group_pair(group)
    out = []
    for m in group["medians"]:
        if m[ref] is None and m[other] is None:
            continue
        what = MEASURES.get(m["measure"], m["measure"])
        if "tokens" in m["measure"].lower():
            what += f" ({group['kinds']['tokens']})"
        whole = lambda v: int(v) if isinstance(v, float) and v.is_integer() else v  # noqa: E731
        row = {"median per conversation": what, ref: whole(m[ref]), other: whole(m[other])}
        if group.get("comparable", True):  # runs that differ are shown apart, with no change across them
            row[f"{other} vs {ref} (%)"] = m[summaries.change_key((ref, other))]
        out.append(row)
    return out
