"""One module per notebook: its parameters, `build(params) -> dict` writing its JSON, and the checks it shows.

Notebooks call, display and check; they compute nothing themselves."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from wismo.core.errors import ClaimFailed

# notebook stem -> (report module, the JSON file its build writes)
REPORTS = {
    "01-equivalence": ("wismo.reports.equivalence", "deterministic-comparison.json"),
    "02-context-cost": ("wismo.reports.context_cost", "context-cost.json"),
    "03-recorded-runs": ("wismo.reports.recorded_runs", "recorded-runs.json"),
    "04-scale": ("wismo.reports.scale", "scale.json"),
    "05-traces": ("wismo.reports.trace_chains", "traces.json"),
}


def check(holds: bool, claim: str, detail: str) -> str:
    """A visible check: the claim when it holds (to display), else ClaimFailed naming the claim and numbers."""
    if not holds:
        raise ClaimFailed(claim, detail)
    return f"Checked: {claim} ({detail})."


def reference(result: Mapping[str, Any]) -> str:
    """The reference design of the study a result belongs to (every result carries its "study" block)."""
    return cast("str", result["study"]["reference"])


def compared(result: Mapping[str, Any]) -> list[str]:
    """The designs a result sets against its reference, in the study's order."""
    return [d for d in result["study"]["designs"] if d != reference(result)]


def case_key(result: Mapping[str, Any]) -> str:
    """The field that names a case in the result's rows: its study's key."""
    return cast("str", result["study"]["key"])
