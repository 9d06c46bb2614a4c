"""Each design's ratio to the reference, case by case (the context-cost report's ratios table); the saving itself
is cost.saving's."""

from __future__ import annotations

from typing import Any

from wismo.accounting.cost import saving_percent


def ratios(rows: list[dict[str, Any]], key: str, reference: str) -> list[dict[str, object]]:
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
