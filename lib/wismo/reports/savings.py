"""Each design's saving against the reference, case by case and as the median across the cases: the context-cost
report's headline figure, declared once for its tables, sentences and index card."""

from __future__ import annotations

from statistics import median
from typing import Any

from wismo.cost import saving_percent


def ratios(rows: list[dict[str, Any]], key: str, reference: str) -> list[dict[str, Any]]:
    """Per case and design other than the reference: the reference's total, the design's, their ratio and the
    design's saving in percent."""
    by = {(r["design"], r[key]): r for r in rows}
    designs = [d for d in dict.fromkeys(r["design"] for r in rows) if d != reference]
    out = []
    for case in dict.fromkeys(r[key] for r in rows):
        ref = by[(reference, case)]["total"]
        for design in designs:
            total = by[(design, case)]["total"]
            out.append(
                {
                    key: case,
                    "design": design,
                    "referenceTotal": ref,
                    "designTotal": total,
                    "ratio": round(ref / total, 3),
                    "savingPercent": saving_percent(ref, total),
                }
            )
    return out


def median_savings(ratio_rows: list[dict[str, Any]]) -> dict[str, float]:
    """Each design's median input-token saving against the reference across the cases (the headline's figure)."""
    by: dict[str, list[float]] = {}
    for r in ratio_rows:
        by.setdefault(r["design"], []).append(r["savingPercent"])
    return {d: median(v) for d, v in by.items()}
