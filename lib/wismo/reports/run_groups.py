"""Which groups of a study's runs a reader is shown, and how they are named: a live model's or the scripted
stand-in's (its imported traces too), each design's input-token saving by the one saving function, a group that
repeats an earlier one said once, and the report's title and banner that follow from them."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median
from typing import Any

from wismo import runs
from wismo.accounting.cost import saving
from wismo.runs.records import Manifest
from wismo.runs.summaries import CaseRow
from wismo.runs.traces.conventions import STAND_IN_PROVIDERS
from wismo.studies.declaration import Study


def live_model(manifests: Sequence[Manifest]) -> bool:
    """Whether a model answered these runs: not wismo's scripted stand-in, nor imported traces of a stand-in."""
    if all(m["backend"] == "scripted" for m in manifests):
        return False
    if all(m["backend"] == runs.IMPORTED for m in manifests):
        providers = {p for m in manifests for p in m["source"]["providers"]}
        return bool(providers - STAND_IN_PROVIDERS)
    return True


def run_savings(rows: Sequence[CaseRow], study: Study, tokens_are: str) -> list[dict[str, object]]:
    """Each design's input-token saving against the reference over these runs, by the one saving function
    (cost.saving): per case the median of its repetitions, then the median across the cases."""
    per: dict[tuple[str, str], list[int]] = {}
    for r in rows:
        if r["inputTokens"] is not None:
            per.setdefault((r["design"], r["case"]), []).append(r["inputTokens"])
    totals = {k: median(v) for k, v in per.items()}
    found = saving.savings({tokens_are: totals}, study.reference, tokens_are) if totals else []
    return [s.as_dict() for s in found if s.per_case]


TITLE = "Recorded runs: turns, tool calls, tokens and scores"
SCRIPTED_TITLE = "Scripted runs: no model"


def banner(groups: list[dict[str, Any]], study: Study) -> str:
    """One line under the title: which runs are a model's and which the scripted stand-in's, and how to record a
    live model's runs where there are none."""
    live = [g["label"] for g in groups if g["liveModel"]]
    stand_ins = [g["label"] for g in groups if not g["liveModel"]]
    if not live:
        return (
            "No model ran: every run here is the scripted stand-in, which asks for the calls the study declares and "
            "writes its answer from the evidence by fixed rules, so turns, calls and scores are fixed by its script. "
            f"`wismo evaluate --study {study.path.name} both 3 MODEL openai` records a live model's runs."
        )
    return f"Live model runs: {'; '.join(live)}" + (
        f"; then the scripted stand-in's ({'; '.join(stand_ins)})." if stand_ins else "."
    )


def _conversations(group: dict[str, Any]) -> dict[tuple[str, str], tuple[Any, ...]]:
    """Each design's and case's first conversation as turns, tool calls and input tokens."""
    return {
        (r["design"], r["case"]): (r["turns"], r["toolCalls"], r["inputTokens"])
        for r in group["cases"]
        if r["repetition"] == 1
    }


def repeated(group: dict[str, object], earlier: dict[str, object]) -> bool:
    """Whether every conversation of `group` is one of `earlier`'s, case for case, in turns, calls and input tokens
    (imported traces of the scripted loop repeat its runs): such a group is said once, not shown again."""
    mine, theirs = _conversations(group), _conversations(earlier)
    return bool(mine) and all(theirs.get(k) == v for k, v in mine.items())


def shown(result: dict[str, Any]) -> list[dict[str, object]]:
    """The groups a reader is shown: every group but those that repeat an earlier one."""
    return [g for g in result["groups"] if not g.get("repeats")]


def repeats_sentence(result: dict[str, Any]) -> str:
    """One sentence for each group left unshown because it repeats an earlier one, or nothing."""
    return " ".join(
        f"The {g['label']} hold the same conversations as the {g['repeats']}, case for case (turns, calls and input "
        "tokens), so they are not shown again."
        for g in result["groups"]
        if g.get("repeats")
    )
