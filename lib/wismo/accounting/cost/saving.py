"""A design's saving against the reference, computed once: per case, its median across the cases, its range across
client profiles, and the one way every report says it ("uses 51% fewer input tokens", "uses 1.3x more")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import median
from typing import Any

from wismo.accounting.cost.session import saving_percent


@dataclass(frozen=True)
class Saving:
    """One design against the reference: the saving per case and its median under the headline profile, the median
    under every profile counted (`by_profile`), their range, and the study's published figure where it has one."""

    design: str
    reference: str
    profile: str
    per_case: dict[str, float]
    median: float
    by_profile: dict[str, float] = field(default_factory=dict)
    published: float | None = None

    @property
    def low(self) -> float:
        """The smallest median saving across the profiles counted."""
        return min(self.by_profile.values(), default=self.median)

    @property
    def high(self) -> float:
        """The largest median saving across the profiles counted."""
        return max(self.by_profile.values(), default=self.median)

    def as_dict(self) -> dict[str, object]:
        """The JSON form every report writes and reads back (camelCase keys, sorted on write)."""
        return {
            "design": self.design,
            "reference": self.reference,
            "profile": self.profile,
            "perCase": dict(self.per_case),
            "medianPercent": self.median,
            "byProfile": dict(self.by_profile),
            "lowPercent": self.low,
            "highPercent": self.high,
            "publishedPercent": self.published,
            "says": says(self.median),
            "sentence": f"{self.design} {says(self.median)} than {self.reference}",
            "range": span(self.low, self.high),
        }


def per_case(totals: Mapping[tuple[str, str], float], design: str, reference: str) -> dict[str, float]:
    """The design's saving against the reference for every case both have, keyed by case, in the cases' order.

    >>> per_case({("granular", "A"): 200, ("focused", "A"): 100}, "focused", "granular")
    {'A': 50.0}
    """
    cases = [c for d, c in totals if d == reference and (design, c) in totals]
    return {c: saving_percent(totals[(reference, c)], totals[(design, c)]) for c in cases}


def savings(
    totals: Mapping[str, Mapping[tuple[str, str], float]],
    reference: str,
    profile: str,
    published: Mapping[str, float] | None = None,
) -> list[Saving]:
    """Every design's Saving against the reference, from each profile's totals keyed by (design, case); `profile`
    names the headline's profile, which must be one of them; `published` gives a design's published saving.

    >>> [s.median for s in savings({"p": {("g", "A"): 10, ("f", "A"): 4}}, "g", "p")]
    [60.0]
    """
    if profile not in totals:
        raise KeyError(f"the headline profile {profile!r} was not counted (counted: {sorted(totals)})")
    designs = [d for d in dict.fromkeys(d for d, _ in totals[profile]) if d != reference]
    out = []
    for design in designs:
        medians = {
            name: round(median(cases.values()), 2)
            for name, by in totals.items()
            if (cases := per_case(by, design, reference))
        }
        out.append(
            Saving(
                design,
                reference,
                profile,
                per_case(totals[profile], design, reference),
                medians[profile],
                medians,
                (published or {}).get(design),
            )
        )
    return out


def from_rows(rows: Sequence[Mapping[str, Any]], key: str, value: str = "total") -> dict[tuple[str, str], float]:
    """Totals keyed by (design, case) from rows that name both (`key` names the case field)."""
    return {(r["design"], str(r[key])): r[value] for r in rows}


def amount(percent: float, fewer: str = "fewer") -> tuple[str, str]:
    """A saving's size and direction as words, never a negative saving: (51.05) -> ("51%", "fewer"), (-30.0) ->
    ("30%", "more"), and from twice the reference on as a multiple, (-135.0) -> ("2.4x", "more")."""
    if percent >= 0:
        return (f"{percent:.0f}%" if percent >= 1 or percent == 0 else f"{percent:.1f}%"), fewer
    times = 1 - percent / 100
    if times < 2:
        return (f"{-percent:.0f}%" if percent <= -1 else f"{-percent:.1f}%"), "more"
    return f"{times:.1f}x", "more"


def change(percent_change: float | None, fewer: str = "fewer") -> str:
    """A change against the reference (negative: less) in the saving's words: -51.0 -> "51% fewer", 30.0 ->
    "1.3x more", None -> "not compared".

    >>> change(-51.0), change(30.0, "less"), change(0.0), change(None)
    ('51% fewer', '30% more', 'the same', 'not compared')
    """
    if percent_change is None:
        return "not compared"
    if percent_change == 0:
        return "the same"
    return " ".join(amount(-percent_change, fewer))


def says(percent: float, what: str = "input tokens") -> str:
    """A saving as every page says it: "uses 51% fewer input tokens", "uses 30% more", "uses 2.4x more", never a
    negative saving.

    >>> says(51.05), says(-30.0), says(-135.0)
    ('uses 51% fewer input tokens', 'uses 30% more input tokens', 'uses 2.4x more input tokens')
    >>> says(0.0)
    'uses as many input tokens'
    """
    if percent == 0:
        return f"uses as many {what}"
    size, direction = amount(percent)
    return f"uses {size} {direction} {what}"


def span(low: float, high: float, what: str = "input tokens") -> str:
    """A range of savings in the same words: "46% to 51% fewer input tokens", one figure where both ends read
    alike, and each end with its own direction where they differ.

    >>> span(45.6, 51.05), span(51.0, 51.4)
    ('46% to 51% fewer input tokens', '51% fewer input tokens')
    >>> span(-30.0, -10.0), span(-10.0, 5.0), span(-250.0, -150.0)
    ('10% to 30% more input tokens', '10% more to 5% fewer input tokens', '2.5x to 3.5x more input tokens')
    """
    (a, da), (b, db) = amount(low), amount(high)
    if (a, da) == (b, db):
        return f"{a} {da} {what}"
    if da == db:
        # Fewer: low to high saving; more: the smaller multiple first.
        return f"{a} to {b} {da} {what}" if da == "fewer" else f"{b} to {a} {da} {what}"
    return f"{a} {da} to {b} {db} {what}"
