"""The recorded-runs report (notebook 03): verified runs of the designs, scored and summarised beside the
article's published run; its JSON is recorded-runs.json."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import reference, runs, summaries
from ..jsonfmt import write_stable
from ..paths import output_dir
from . import check, parameters

OUTPUT = "recorded-runs.json"
DEFAULTS: dict[str, Any] = {
    "run_ids": None,           # run folder names under data/runs; None means the newest run of each design and backend
    "focus_order": "ORD-1004",  # the case drawn turn by turn and shown as transcripts
    "output_dir": "outputs",
}


def build(params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Load and verify the runs (a run that does not verify is refused), score and summarise them, write the JSON."""
    p = parameters(params, DEFAULTS, "the recorded-runs report")
    loaded = [runs.load(folder) for folder in summaries.selected_runs(p["run_ids"])]
    rows = summaries.case_rows(loaded)
    article = reference.load("article-000")
    result = {
        "runs": [{"run": r.manifest["runId"], "design": r.manifest["design"], "backend": r.manifest["backend"],
                  "model": r.manifest["model"], "protocol": r.manifest["protocolRevision"], "cases": r.manifest["totals"]["cases"],
                  "repetitions": r.manifest["repetitions"], "tokensAre": r.manifest["figures"]["tokens"],
                  "latencyModel": r.manifest["latencyModel"]} for r in loaded],
        "tokensAre": loaded[0].manifest["figures"]["tokens"] if loaded else None,
        "focusOrder": p["focus_order"],
        "cases": rows, "medians": summaries.medians(rows), "passK": summaries.pass_k(rows),
        "growth": summaries.growth(loaded, p["focus_order"]),
        "transcripts": {d: summaries.transcript(loaded, d, p["focus_order"]) for d in summaries.designs_in(rows)},
        "answers": {d: summaries.answer_of(loaded, d, p["focus_order"]) for d in summaries.designs_in(rows)},
        "againstArticle": summaries.against_article(rows, article),
        "articleSource": article["source"],
    }
    write_stable(output_dir(p["output_dir"]) / OUTPUT, result)
    return result


def check_resent_history(result: dict[str, Any]) -> str:
    """The claim about one case turn by turn: the granular conversation has one request more than the focused one,
    and each later request carries everything the earlier one did plus the newest turn."""
    growth = {g["design"]: g for g in result["growth"]}
    g, f = growth.get("granular"), growth.get("focused")
    if g is None or f is None:
        return "No granular and focused pair for this case in the selected runs; nothing to check."
    grows = all(b > a for rows in (g, f) for a, b in zip(rows["inputs"], rows["inputs"][1:]))
    holds = len(g["inputs"]) == len(f["inputs"]) + 1 and grows
    return check(holds, f"for {result['focusOrder']} the granular conversation takes one request more, and every request "
                        "resends all earlier ones",
                 f"granular inputs {', '.join(f'{v:,}' for v in g['inputs'])}; focused {', '.join(f'{v:,}' for v in f['inputs'])} "
                 f"tokens ({result['tokensAre']})")
