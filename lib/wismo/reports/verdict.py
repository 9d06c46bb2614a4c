"""The study's one answer, as the index opens with it and every report repeats it: which design wins, by how much
(each design's saving against the reference, computed once by cost.saving and carried in context-cost.json's
verdict), what that rests on, and whether a live model ran in this build."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wismo.accounting.cost import saving
from wismo.accounting.cost.saving import says, span
from wismo.accounting.tokens import framing
from wismo.reports.analyses import calibration
from wismo.studies.declaration import Study
from wismo.studies.investigations import Recorded

COST = "context-cost.json"
RUNS = "recorded-runs.json"


def profiles(profile: str, fitted: str | None) -> list[str]:
    """The client profiles a saving's range spans: the report's, bare text and the best-fitting framing where a
    published conversation was fitted, else every packaged profile."""
    return list(dict.fromkeys([profile, framing.PYTHON.name, fitted] if fitted else [profile, *framing.PROFILES]))


def computed(
    study: Study, counted: dict[str, list[dict[str, object]]], profile: str, fitted: str | None
) -> dict[str, object]:
    """The study's one answer: each design's saving against the reference (cost.saving, the one function every report
    takes it from), per case and as the median under the report's profile, with its range across the profiles the
    conversations were `counted` under, and the study's published median beside it."""
    published = study.published
    pub = {}
    pair = published.compared() if published is not None else None
    if published is not None and published.median_saving_percent is not None and pair and pair[0] == study.reference:
        pub = {pair[1]: published.median_saving_percent}
    by = {n: saving.from_rows(rows, study.key) for n, rows in counted.items()}
    found = saving.savings(by, study.reference, profile, pub)
    return {
        "reference": study.reference,
        "profile": profile,
        "profiles": list(counted),
        "fittedProfile": fitted,
        "range": (
            f"from bare text to the best-fitting framing, {fitted}"
            if fitted
            else "across the client profiles wismo models"
        ),
        "cases": max((len(s.per_case) for s in found), default=0),
        # The requests the study publishes for its focus case, for the verdict's picture to mark.
        "publishedCase": study.focus_key,
        "publishedRequests": {
            c.design: list(c.requests)
            for c in (published.conversations if published is not None else [])
            if c.case == study.focus_key and c.requests
        },
        "savings": [s.as_dict() for s in found],
    }


def beside_published(study: Study, recorded: Recorded, found: dict[str, Any], encoding: str) -> dict[str, object]:
    """Ours like for like with the study's own saving: the verdict's medians under each of its profiles, and the
    published case's saving under each, beside the published conversations' own (empty without a second design's
    published conversation)."""
    published = study.published
    which = calibration.calibrated(published)
    if published is None or which is None or which.second is None or which.case not in recorded["prompts"]:
        return {}
    second = next(s for s in found["savings"] if s["design"] == which.second)
    medians = {name: second["byProfile"][name] for name in found["profiles"]}
    pub = calibration.published_figures(published, which)
    return calibration.savings_against_published(recorded, pub, medians, published.median_saving_percent, encoding)


@dataclass(frozen=True)
class Answer:
    """The index's opening: at most three sentences (Markdown: **bold** and `code` only) and the picture's data."""

    sentences: list[str]
    rows: list[dict[str, object]]
    case: str
    key: str
    profile: str
    published: dict[str, list[int]]


def winner(savings: list[dict[str, Any]], reference: str) -> str:
    """The design with the largest saving against the reference; the reference itself where none saves anything."""
    best = max(savings, key=lambda s: s["medianPercent"], default=None)
    return best["design"] if best is not None and best["medianPercent"] > 0 else reference


def clause(s: dict[str, Any], first: bool) -> str:
    """One design's saving in the verdict's words: its median, then its range across the client profiles."""
    subject = "it" if first else f"**{s['design']}**"
    spread = span(s["lowPercent"], s["highPercent"], "").strip()
    return f"{subject} {says(s['medianPercent'])} than **{s['reference']}**" + (
        f", {spread} across client profiles" if len(s["byProfile"]) > 1 else ""
    )


def saving_sentence(verdict: dict[str, Any]) -> str:
    """The first sentence: who wins and by how much, every design against the reference in the same shape, each
    with its range across the client profiles."""
    savings, reference = verdict["savings"], verdict["reference"]
    won = winner(savings, reference)
    ordered = sorted(savings, key=lambda s: s["design"] != won)
    if won == reference:
        return f"**{reference}**, the reference, wins: " + "; ".join(clause(s, False) for s in ordered) + "."
    return f"**{won}** wins: " + "; ".join(clause(s, i == 0) for i, s in enumerate(ordered)) + "."


def basis_sentence(verdict: dict[str, Any]) -> str:
    """The second sentence: what the figures are and rest on, and the study's published figure beside them."""
    n = verdict["cases"]
    said = (
        f"Medians of {n} case{'s' if n != 1 else ''} ({verdict['profile']} client profile; ranges {verdict['range']}), "
        "from each design's real MCP server answering every case without a model, every request counted with tiktoken"
    )
    published = [s for s in verdict["savings"] if s.get("publishedPercent") is not None]
    if published:
        said += "; the study published " + ", ".join(
            f"a median of {s['publishedPercent']:g}% fewer tokens (input and output) for {s['design']}"
            for s in published
        )
    return said + "."


def model_sentence(runs: dict[str, Any] | None, study_file: str, default_study: bool) -> str:
    """The third sentence: whether a live model ran in this build, and if none did, the command that records one."""
    groups = (runs or {}).get("groups", [])
    live = [g for g in groups if g.get("liveModel")]
    if live:
        said = []
        for g in live:
            found = "; ".join(f"{s['design']} {says(s['medianPercent'])}" for s in g.get("saving", []))
            said.append(f"{g['model']} ({g['backend']})" + (f": {found}" if found else ""))
        return "Live model runs in this build: " + "; ".join(said) + "."
    where = "" if default_study else f"--study {study_file} "
    return (
        "No live model ran in this build (the recorded runs are the scripted stand-in); "
        f"`wismo evaluate {where}both 3 MODEL openai` records one, with OPENAI_API_KEY set."
    )


def answer(out: Path, study_file: str = "", default_study: bool = True) -> Answer | None:
    """The index's opening from the JSON the reports wrote into `out`; None where the context-cost report did not."""
    try:
        cost = json.loads((out / COST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    verdict = cost.get("verdict")
    if not verdict or not verdict.get("savings"):
        return None
    try:
        runs = json.loads((out / RUNS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        runs = None
    key, case = cost["study"]["key"], cost["focusCase"]
    return Answer(
        sentences=[
            saving_sentence(verdict),
            basis_sentence(verdict),
            model_sentence(runs, study_file or cost["study"]["file"], default_study),
        ],
        rows=cost["ourServers"],
        case=case,
        key=key,
        profile=verdict["profile"],
        published=verdict.get("publishedRequests", {}) if verdict.get("publishedCase") == case else {},
    )


def case_rows(cost: dict[str, Any]) -> list[dict[str, object]]:
    """Per case: the reference's input tokens, each design's, and each design's saving in the verdict's words."""
    verdict, key = cost["verdict"], cost["study"]["key"]
    ref, profile = verdict["reference"], verdict["profile"]
    totals = {(r["design"], str(r[key])): r["total"] for r in cost["ourServers"] if r["profile"] == profile}
    rows = []
    first: dict[str, Any] = verdict["savings"][0] if verdict["savings"] else {}
    for case in first.get("perCase", {}):
        row: dict[str, Any] = {key: case, f"{ref} (input tokens)": totals[(ref, case)]}
        for s in verdict["savings"]:
            row[f"{s['design']} (input tokens)"] = totals[(s["design"], case)]
            row[f"{s['design']} against {ref}"] = says(s["perCase"][case]).removeprefix("uses ")
        rows.append(row)
    return rows
