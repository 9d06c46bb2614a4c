"""The answer contract: the JSON object every answer must be, declared once for the instructions, the scorer and
the loop's answer check."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    """One key of the answer: how the instructions show its value, and whether the scorer compares it."""

    name: str
    shape: str  # the value as the instructions show it
    scored: bool = True

    @property
    def is_list(self) -> bool:
        """Whether the value is a list (scored as a set: order ignored, duplicates rejected)."""
        return self.shape == "[...]"


ANSWER = (
    Field("deliveredSkus", "[...]"),
    Field("outstandingSkus", "[...]"),
    Field("delayReasons", "[...]"),
    Field("deliveryEstimate", '"YYYY-MM-DD" or null'),
    Field("missingEvidence", "[...]"),
    Field("customerSummary", '"..."', scored=False),  # free text, checked against the evidence, never scored
)
DELAY_REASONS = ("carrier_delay", "stock_shortage", "payment_not_captured")

KEYS = tuple(f.name for f in ANSWER)  # every key the answer's JSON object must hold
SCORED = tuple(f.name for f in ANSWER if f.scored)  # the five structured fields
LISTS = tuple(f.name for f in ANSWER if f.scored and f.is_list)


def shape() -> str:
    """The answer's JSON object as the instructions show it."""
    return "{" + ", ".join(f'"{f.name}": {f.shape}' for f in ANSWER) + "}"
