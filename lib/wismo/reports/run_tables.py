"""The recorded-runs report's tables (notebook 03): scores case by case, and the conversations a study publishes
beside its recorded runs, every figure with its kind and the published ones with where they were published."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from wismo.accounting.cost import saving
from wismo.core.kinds import MEASURED, PUBLISHED
from wismo.runs import summaries
from wismo.runs.records import Manifest
from wismo.runs.summaries import CaseRow
from wismo.studies.declaration import Study
from wismo.studies.published import REPORTED

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
COUNTED = f"{MEASURED} ({PUBLISHED})"  # a count or a time the publishing run measured, as its source printed it
PUBLISHED_VALUE = "published (provider-reported or measured)"


def scores_by_case(rows: Sequence[CaseRow], order: list[str] | None = None) -> list[dict[str, object]]:
    """One line per design (in `order`, a study's) and case: repetitions passed, how the conversations ended, and
    every failure spelled out (the fields that did not match, the summary claims flagged), instead of one row per
    repetition."""
    out: list[dict[str, object]] = []
    for design in summaries.designs_in(rows, order):
        for case in dict.fromkeys(r["case"] for r in rows):
            mine = [r for r in rows if r["design"] == design and r["case"] == case]
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
                    "case": case,
                    "passed": f"{sum(bool(r['passed']) for r in mine)}/{len(mine)}"
                    if any(r["passed"] is not None for r in mine)
                    else "not scored (no expected answer)",
                    "ended": ", ".join(outcomes),
                    "failures": "; ".join(failures) or "none",
                    "summary claims flagged": "; ".join(flags) or "none",
                }
            )
    return out


def _elapsed_arithmetic(row: CaseRow, manifest: Manifest) -> str:
    """How a modelled elapsed time was computed, in numbers: requests x overhead + tokens x rates."""
    m = manifest["latencyModel"]
    if not m or row["modelledElapsedMs"] is None:
        return "measured"
    return (
        f"modelled: {row['turns']} requests x {m['overhead_ms']:g} ms + {row['inputTokens']:,} input tokens x "
        f"{m['per_input_token_ms']:g} ms + {row['outputTokens']:,} output tokens x {m['per_output_token_ms']:g} ms "
        f"= {row['modelledElapsedMs']:,.0f} ms"
    )


def _change(median: dict[str, Any], design: str, base: str, comparable: bool) -> float | None:
    """One design's median against another's in %, as summaries.medians computes it (None where it cannot be)."""
    value, ref = median.get(design), median.get(base)
    if not comparable or ref in (None, 0) or value is None:
        return None
    return cast("float | None", round((value - ref) / ref * 100, 1))


def against_published(
    study: Study,
    rows: Sequence[CaseRow],
    kind: dict[str, str],
    manifests: list[Manifest],
    medians: list[dict[str, Any]],
    comparable: bool = True,
) -> list[dict[str, object]]:
    """Each conversation the study publishes (design and case) beside the first repetition of the same design and
    case in these runs: model turns, tool calls, tokens and elapsed seconds, where published; then the published
    median savings beside ours (no change of ours when the runs are not comparable). Each side says what its figure
    is, and each published figure where it was published; for scripted runs, which figures the script fixes and
    the arithmetic of the modelled elapsed time."""
    published = study.published
    assert published is not None
    by_design = {m["design"]: m for m in manifests}
    out = []

    def add(figure: str, value: object, value_is: str, path: str | None, ours: object, ours_are: str) -> None:
        out.append(
            {
                "figure": figure,
                PUBLISHED_VALUE: value,
                "published figure is": value_is,
                "published in": published.cited(path),
                "wismo": ours,
                "wismo figure is": ours_are,
            }
        )

    for c in published.conversations:
        mine = next((r for r in rows if (r["design"], r["case"], r["repetition"]) == (c.design, c.case, 1)), None)
        name = f"{c.design} {c.case}"
        if c.calls is not None:
            add(f"{name} model turns", c.calls, COUNTED, c.ref("calls"), mine and mine["turns"], kind["turns"])
        if c.tool_calls is not None:
            ours: object = mine and mine["toolCalls"]
            add(f"{name} tool calls", c.tool_calls, COUNTED, c.ref("tool_calls"), ours, kind["turns"])
        if c.total is not None:
            ours = mine and mine["totalTokens"]
            add(f"{name} tokens, whole conversation", c.total, REPORTED, c.ref("total"), ours, kind["tokens"])
        if c.elapsed_s is not None:
            modelled = mine and mine["modelledElapsedMs"]
            add(
                f"{name} elapsed seconds",
                c.elapsed_s,
                COUNTED,
                c.ref("elapsed_s"),
                round(modelled / 1000, 3) if modelled else None,
                _elapsed_arithmetic(mine, by_design[c.design])
                if mine and modelled
                else "no latency model: the harness's wall time is no model's elapsed time"
                if mine
                else "",
            )
    pair = published.compared()
    if pair is None:
        return out
    base, other = pair
    med = {m["measure"]: m for m in medians}
    refs = dict(published.refs)
    savings = (  # the published key, our measure, the figure in words, the word for less, the kinds
        ("median_saving_percent", "totalTokens", "median tokens, input and output", "fewer", REPORTED, "tokens"),
        ("median_elapsed_saving_percent", "modelledElapsedMs", "median elapsed time", "less", COUNTED, "elapsed"),
    )
    for key, measure, words, fewer, value_is, ours_are in savings:
        value = getattr(published, key)
        if value is None:
            continue
        change = _change(med[measure], other, base, comparable)
        ours = None if change is None else saving.change(change, fewer)
        said = " ".join(saving.amount(value, fewer))
        add(f"{other} against {base}: {words}", said, value_is, refs.get(key), ours, kind[ours_are])
    return out
