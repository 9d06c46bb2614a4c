"""The recorded-runs report (notebook 03): a study's verified runs, scored and summarised, every design against the
study's reference, beside the conversations the study publishes; its JSON is recorded-runs.json."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio

from wismo import runs
from wismo.accounting.cost import saving
from wismo.core.errors import InputError
from wismo.core.jsonfmt import write_stable
from wismo.core.kinds import SCRIPTED, TIKTOKEN
from wismo.core.paths import report_dir
from wismo.core.textgrid import numbers
from wismo.reports import check, run_groups
from wismo.reports.analyses import sensitivity
from wismo.reports.params import Param, ParameterError, defaults
from wismo.reports.params import checked as check_parameters
from wismo.reports.run_costs import PER_CONVERSATIONS, Fitted, run_costs
from wismo.reports.run_tables import MEASURES, against_published, scores_by_case
from wismo.runs import summaries
from wismo.runs.records import Manifest
from wismo.studies.declaration import Study, chosen
from wismo.studies.published import REPORTED

OUTPUT = "recorded-runs.json"
PARAMETERS = {
    "run_ids": Param(None, "texts", optional=True),  # run folder names; None: the newest of each design and model
    "runs_dir": Param(None, "text", optional=True),  # where the runs are; None: the study's runs folder
    "focus_order": Param(None, "text", optional=True),  # the case drawn turn by turn; None: the study's focus
    "study": Param(None, "text", optional=True),  # a study file; None: data/studies/where-is-my-order.toml
    "output_dir": Param(None, "text", optional=True),  # None: the build's folder, or a scratch one by hand
    "reference_model": Param("gpt-4.1-mini", "text"),  # the price scripted runs (which have no model) get
    "price_date": Param(None, "date", optional=True),  # prices looked up for this date; None: the data's own
}
DEFAULTS = defaults(PARAMETERS)
REPORT = "the recorded-runs report"


class NotTheStudysRun(InputError):
    """A run the report refuses for its study: `run` (its folder's name), `study` (the study's file name), `why` (in
    words), and the fact behind it: `named` (the study file its manifest names) or `design` (one the study lacks)."""

    def __init__(self, run: str, study: Study, why: str, named: str | None = None, design: str | None = None) -> None:
        super().__init__(f"run {run} is not a run of the study {study.path.name}: {why}.")
        self.run, self.study, self.why, self.named, self.design = run, study.path.name, why, named, design

    def _render_traceback_(self) -> list[str]:
        # IPython shows this instead of a traceback: the reader sees the sentence alone.
        return [f"{type(self).__name__}: {self}"]


def checked(params: Mapping[str, object] | None) -> dict[str, Any]:
    """The report's parameters checked against their declarations before any run is read, the study read and the
    focus found among its cases (one sentence)."""
    p = check_parameters(params, PARAMETERS, REPORT)
    study = chosen(p["study"])
    keys = [study.case_key(c) for c in study.cases]
    if p["focus_order"] is not None and p["focus_order"] not in keys:
        raise ParameterError(
            REPORT, "focus_order", p["focus_order"], f"it must be a case of the study: {', '.join(keys)}"
        )
    return p


def kinds(manifests: list[Manifest]) -> dict[str, str]:
    """What the runs' figures are, for every place they are shown: scripted runs are named as such at the number;
    each kind is said once (the client profile once, after the kind it qualifies)."""
    backends = sorted({m["backend"] for m in manifests})
    profiles = sorted({p for m in manifests if (p := summaries.token_counting(m))})
    where = "" if all(summaries.token_counting(m) for m in manifests) else " where the run records one"
    counted = f" ({', '.join(profiles)} profile{where})" if profiles else ""
    tokens_are = ", ".join(sorted({m["figures"]["tokens"] for m in manifests})) + counted
    scripted = backends == ["scripted"]
    stand_in = not run_groups.live_model(manifests)
    if backends == [runs.IMPORTED]:
        providers = sorted({p for m in manifests for p in m["source"]["providers"]})
        tokens_are = tokens_are + " (imported traces" + (f"; provider {', '.join(providers)})" if providers else ")")
    latency = [bool(m["latencyModel"]) for m in manifests]
    return {
        "runs": SCRIPTED
        if scripted
        else f"imported traces of a stand-in model, {SCRIPTED}"
        if stand_in
        else "imported traces"
        if backends == [runs.IMPORTED]
        else f"model runs ({', '.join(backends)})",
        "turns": f"{SCRIPTED}: fixed by the script's rules" if stand_in else "measured",
        "tokens": f"{SCRIPTED}, {tokens_are}" if stand_in else tokens_are,
        "elapsed": "modelled (a stated latency model)"
        if all(latency)
        else "modelled where a run has a latency model, else measured"
        if any(latency)
        else f"measured: the stand-in loop's own time, {SCRIPTED}"
        if stand_in
        else "measured",
        "scores": f"{SCRIPTED}: scored against the expectations"
        if stand_in
        else "measured: scored against the expectations",
    }


def study_block(study: Study) -> dict[str, object]:
    """What recorded-runs.json says of its study: title, file, case key, reference and every design."""
    return {
        "title": study.title,
        "file": study.path.name,
        "key": study.key,
        "reference": study.reference,
        "designs": list(study.designs),
    }


def of_study(run: runs.Run, study: Study) -> runs.Run:
    """The run, if it is one of the study's; NotTheStudysRun otherwise. A manifest without a study block (the
    shipped runs were recorded before manifests carried one, and are never edited) is taken as the study's whose
    runs folder holds it, provided its instructions are the study's."""
    m = run.manifest
    about = m.get("study")
    named = about.get("file") if about else None
    if named is not None and named != study.path.name:
        raise NotTheStudysRun(m["runId"], study, f"it was recorded for {named}", named=named)
    if named is None and m["instructionsSha256"] != runs.sha256(study.instructions.encode("utf-8")):
        raise NotTheStudysRun(m["runId"], study, "its manifest names no study and its instructions are not the study's")
    if m["design"] not in study.designs:
        why = f"its design {m['design']} is none of the study's ({', '.join(study.designs)})"
        raise NotTheStudysRun(m["runId"], study, why, design=m["design"])
    return run


def headline(group: dict[str, Any], manifests: list[Manifest]) -> dict[str, object]:
    """A group's key figures per design (the index shows them): median turns, each other design's median change in
    tokens against the reference and, where every run has a latency model, in modelled elapsed time; the cases
    where every repetition passed, where any was scored; the price of 1,000 conversations; and the client profile
    its tokens were counted under."""
    ref = group["study"]["reference"]
    med = {r["measure"]: r for r in group["medians"]}
    others = [d for d in group["designs"] if d != ref]
    per = f"usdPer{PER_CONVERSATIONS}"
    priced: dict[str, object] = {}
    for c in group["costs"]:
        priced.setdefault(c["design"], c.get(per))
    profiles = sorted({p for x in manifests if (p := summaries.token_counting(x))})
    refitted: dict[str, object] = {}
    for c in group["costs"]:
        if "fitted" in c:
            refitted.setdefault(c["design"], c["fitted"][per])
    out: dict[str, object] = {
        "turns": {d: med["turns"][d] for d in group["designs"]},
        "saving": {s["design"]: s["medianPercent"] for s in group["saving"]},
        per: {d: priced.get(d) for d in group["designs"]},
        "profile": f"{', '.join(profiles)} profile" if profiles else "client profile not recorded by these runs",
    }
    if refitted:
        fitted = next(c["fitted"]["profile"] for c in group["costs"] if "fitted" in c)
        out[f"{per}Fitted"] = {d: refitted.get(d) for d in group["designs"]}
        out["fittedProfile"] = f"{fitted} profile"
    # Left out, not shown as n/a, where a figure does not exist: no model's elapsed time, no expected answer.
    if all(x["latencyModel"] for x in manifests):
        out["elapsedChange"] = {d: med["modelledElapsedMs"][summaries.change_key(d, ref)] for d in others}
    if group["passK"]:
        out["passK"] = {"passed": sum(p["pass^k"] for p in group["passK"]), "of": len(group["passK"])}
    return out


def runs_of_estimates(run: runs.Run) -> bool:
    """Whether a run's tokens are estimates counted under a client profile (so another profile can recount them)."""
    figures = run.manifest["figures"]
    return figures["tokens"] == TIKTOKEN and bool(figures.get("tokenCounting"))


def _has_focus(loaded: list[runs.Run], design: str, focus: str) -> bool:
    # orderId is the run format's name for a trace's case key (wismo.run/1; the shipped runs are never edited).
    return any(
        t["orderId"] == focus and t["repetition"] == 1 and t["design"] == design for r in loaded for t in r.traces
    )


def fitted_profile(study: Study) -> Fitted | None:
    """The client profile that fits the study's published conversation best, found as report 02 finds it (its
    servers over MCP), with the study's instructions; None where the study publishes no such conversation."""
    if not study.meets("published"):
        return None
    with ThreadPoolExecutor(1) as pool:  # a loop of its own: in a notebook one is already running
        best = pool.submit(anyio.run, functools.partial(sensitivity.best_fitting_profile, study)).result()
    return Fitted(best["profile"], study.instructions) if best else None


def _group(
    loaded: list[runs.Run],
    study: Study,
    focus: str,
    reference_model: str,
    price_date: str | None,
    fitted: Fitted | None = None,
) -> dict[str, object]:
    """Every figure of one group of runs (one backend and model): never pooled with another group's."""
    manifests = [r.manifest for r in loaded]
    rows = summaries.case_rows(loaded)
    order = list(study.designs)
    kind = kinds(manifests)
    # Runs that differ in repetitions or latency model are shown side by side, never compared.
    differ = summaries.differences(manifests)
    reply = "model replied" if run_groups.live_model(manifests) else "scripted reply"
    present = summaries.designs_in(rows, order)
    shown = [d for d in present if _has_focus(loaded, d, focus)]
    medians = summaries.medians(rows, study.reference, order, comparable=not differ)
    first = manifests[0]
    group = {
        "backend": first["backend"],
        "model": first["model"],
        "label": f"imported traces, model {first['model']}"
        if first["backend"] == runs.IMPORTED
        else f"{first['backend']} backend, model {first['model']}",
        "server": first.get("server"),
        "study": study_block(study),
        "designs": [study.reference, *(d for d in present if d != study.reference)],
        "kinds": kind,
        "comparable": not differ,
        "differences": differ,
        "runs": [
            {
                "run": m["runId"],
                "design": m["design"],
                "backend": m["backend"],
                "model": m["model"],
                "protocol": m["protocolRevision"],
                "cases": m["totals"]["cases"],
                "repetitions": m["repetitions"],
                "tokens are": m["figures"]["tokens"]
                + (f" ({p} profile)" if (p := summaries.token_counting(m)) else ""),
                "latency model": summaries.latency_in_words(m["latencyModel"]),
            }
            for m in manifests
        ],
        "tokensAre": kind["tokens"],
        "cases": rows,
        "medians": medians,
        "passK": summaries.pass_k(rows, order),
        "outcomes": summaries.outcomes(rows, order),
        "scoresByCase": scores_by_case(rows, order),
        "growth": sorted(summaries.growth(loaded, focus), key=lambda g: order.index(g["design"])),
        "transcripts": {
            d: [
                {(reply if k == "model replied" else k): v for k, v in step.items()}
                for step in summaries.transcript(loaded, d, focus)
            ]
            for d in shown
        },
        "answers": {d: summaries.answer_of(loaded, d, focus) for d in shown},
        "againstPublished": against_published(study, rows, kind, manifests, medians, comparable=not differ)
        if study.published is not None
        else [],
        "costs": run_costs(loaded, reference_model, price_date, fitted),
    }
    group["liveModel"] = run_groups.live_model(manifests)
    group["saving"] = run_groups.run_savings(rows, study, kind["tokens"]) if not differ else []
    group["headline"] = headline(group, manifests)
    return group


def build(params: Mapping[str, object] | None = None) -> dict[str, object]:
    """Load and verify the study's runs (a run that does not verify, or is another study's, is refused), group them
    by backend and model (scripted first), score and summarise each group apart, write the JSON."""
    p = checked(params)
    study = chosen(p["study"])
    folder = p["runs_dir"] or study.runs_folder
    loaded = [of_study(runs.load(f), study) for f in summaries.selected_runs(p["run_ids"], folder)]
    if not loaded:
        raise runs.RunInvalid(
            f"no recorded runs under {folder}; `wismo evaluate --study {study.path} both 3` records scripted ones."
        )
    focus = p["focus_order"] or study.focus_key
    fitted = fitted_profile(study) if any(runs_of_estimates(r) for r in loaded) else None
    keys = sorted({(r.manifest["backend"], r.manifest["model"]) for r in loaded}, key=lambda k: (k[0] != "scripted", k))
    built = [
        _group(
            [r for r in loaded if (r.manifest["backend"], r.manifest["model"]) == key],
            study,
            focus,
            p["reference_model"],
            p["price_date"],
            fitted,
        )
        for key in keys
    ]
    # Live models' runs lead; the stand-in's follow, scripted before its imported traces.
    groups = [g for g in built if g["liveModel"]] + [g for g in built if not g["liveModel"]]
    for i, g in enumerate(groups):
        g["repeats"] = next((e["label"] for e in groups[:i] if run_groups.repeated(g, e)), None)
    live = any(g["liveModel"] for g in groups)
    result: dict[str, object] = {
        "study": study_block(study),
        "focus": focus,
        "groups": groups,
        "title": run_groups.TITLE if live else run_groups.SCRIPTED_TITLE,
        "banner": run_groups.banner(groups, study),
    }
    if study.published is not None:
        result["published"] = {
            "source": study.published.source,
            "model": study.published.model,
            "kind": REPORTED,
            **({"reference": study.published.reference} if study.published.reference else {}),
        }
    write_stable(report_dir(p["output_dir"]) / OUTPUT, result)
    return result


def check_resent_history(result: dict[str, Any], group: dict[str, Any]) -> str:
    """The claim about one case turn by turn, for every design: each later request resends everything the earlier
    ones carried, so its input is larger; then how many requests each design's conversation took against the
    reference's, as found."""
    focus, ref = result["focus"], group["study"]["reference"]
    growth = {g["design"]: g for g in group["growth"]}
    if not growth:
        return f"No conversation of {focus} in these runs; nothing to check."
    grows = all(b > a for g in growth.values() for a, b in zip(g["inputs"], g["inputs"][1:]))
    claim = check(
        grows,
        f"for {focus} every later request of each design's conversation resends all earlier ones",
        "; ".join(f"{d} inputs {numbers(g['inputs'])}" for d, g in growth.items()) + f" tokens ({group['tokensAre']})",
    )
    return f"{claim} {requests_statement(focus, ref, growth)}"


def same_requests(group: dict[str, Any], earlier: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The earlier group whose conversation of the focus case sent the very requests this group's did, design by
    design, token for token (the imported traces of the scripted loop do), else None."""
    inputs = {g["design"]: g["inputs"] for g in group["growth"]}
    return next((e for e in earlier if inputs and {g["design"]: g["inputs"] for g in e["growth"]} == inputs), None)


def resent_history(result: dict[str, object], group: dict[str, Any], earlier: list[dict[str, object]]) -> str:
    """check_resent_history for one group; where an earlier group sent the same requests, said in one sentence
    naming both instead of again."""
    claim = check_resent_history(result, group)
    same = same_requests(group, earlier)
    if same is None:
        return claim
    return (
        f"The {group['label']} sent for {result['focus']} the very requests the {same['label']} did, token for token "
        f"({group['kinds']['tokens']} against {same['kinds']['tokens']}), so the same holds."
    )


def requests_statement(focus: str, ref: str, growth: dict[str, dict[str, Any]]) -> str:
    """How many requests each design's conversation of the focus case took, each against the reference's."""
    n = {d: len(g["inputs"]) for d, g in growth.items()}
    if ref not in n:
        said = "; ".join(f"{d} {k}" for d, k in n.items())
        return f"Requests in the conversation of {focus}: {said} (no {ref} conversation of it to set them against)."

    def against(d: str) -> str:
        diff = n[d] - n[ref]
        return f"{d} {n[d]}, " + ("as many" if diff == 0 else f"{abs(diff)} {'more' if diff > 0 else 'fewer'}")

    others = "".join(f"; {against(d)}" for d in n if d != ref)
    return f"Requests in the conversation of {focus}: {ref} (the reference) {n[ref]}{others}."


def medians_table(group: dict[str, Any]) -> list[dict[str, Any]]:
    """A group's medians for the reader: each measure in words with its unit and kind, counts without decimals, and
    each other design's change against the reference (none when the runs are not comparable)."""
    ref, shown = group["study"]["reference"], group["designs"]
    out = []
    for m in group["medians"]:
        if all(m[d] is None for d in shown):
            continue
        what = MEASURES.get(m["measure"], m["measure"])
        if "tokens" in m["measure"].lower():
            what += f" ({group['kinds']['tokens']})"

        def whole(v: Any) -> object:
            return int(v) if isinstance(v, float) and v.is_integer() else v

        row = {"median per conversation": what, **{d: whole(m[d]) for d in shown}}
        if group.get("comparable", True):  # runs that differ are shown apart, with no change across them
            fewer = "less" if m["measure"] in ("modelledElapsedMs", "wallMs") else "fewer"
            row |= {
                f"{d} against {ref}": saving.change(m[summaries.change_key(d, ref)], fewer) for d in shown if d != ref
            }
            if m["measure"] == "inputTokens":
                # The one saving (the median of the per-case savings), as every report gives it.
                row |= {f"{s['design']} against {ref}": s["says"].removeprefix("uses ") for s in group["saving"]}
        out.append(row)
    return out
