"""How a study compares each design's evidence with the reference's: the three matches a study file can name, what
each requires, the differences it reports and how its verdict is worded."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from wismo.core import jsondiff, pairing


@dataclass(frozen=True)
class Match:
    """One way of comparing evidence: its name in a study file, the rule in a sentence, a case's verdict in a table
    when the rule holds, and the differences it reports (reference first)."""

    name: str
    rule: str  # what every other design's evidence must do, after "the reference is X, and ..."
    verdict: str  # a table's verdict cell for a case where the rule holds
    agreeing: str  # "6/6 cases {agreeing}", {ref} naming the reference design
    agree: str  # "all inputs {agree} in every design", {ref} naming the reference design
    find: Callable[[object, object, tuple[str, str]], list[dict[str, object]]]

    def differences(self, reference: object, other: object, names: tuple[str, str]) -> list[dict[str, object]]:
        """Where `other` breaks the rule against `reference`, as {path, names[0]: value, names[1]: value}."""
        return self.find(reference, other, names)


MATCHES = {
    m.name: m
    for m in (
        Match(
            "equal",
            "every design's evidence must equal the reference's",
            "equal",
            "equal",
            "give equal evidence",
            jsondiff.differences,
        ),
        Match(
            "contains",
            "every other design's evidence must hold the reference's (match = contains)",
            "holds the reference's",
            "holding the {ref} design's evidence",
            "hold the {ref} design's evidence",
            jsondiff.missing_from,
        ),
        Match(
            "text",
            "every text of the reference's evidence must occur in some text of every other design's, each with the rest"
            " of its record (match = text)",
            "holds the reference's texts",
            "holding every text of the {ref} design's evidence",
            "hold every text of the {ref} design's evidence",
            pairing.text_held,
        ),
    )
}
DEFAULT = "equal"


def without(value: object, keys: tuple[str, ...]) -> object:
    """The value with every object key in `keys` left out, at any depth (a clock's field, say).

    >>> without({"id": 1, "checkedAt": "12:00", "items": [{"checkedAt": "x", "n": 2}]}, ("checkedAt",))
    {'id': 1, 'items': [{'n': 2}]}
    """
    if not keys:
        return value
    if isinstance(value, dict):
        return {k: without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [without(v, keys) for v in value]
    return value


def said(difference: dict[str, object], reference: str) -> str:
    """One difference in a sentence, the reference design's value first: 'at loans[0].due, granular has "2026-12-09"
    and focused "2026-12-02"' (or "which occurs in no text of ...", or "... not together with the rest of its
    record")."""
    other, value = next((k, v) for k, v in difference.items() if k not in ("path", "record", reference))
    ours = f"at {difference['path']}, {reference} has {_short(difference[reference])}"
    if value == jsondiff.NOT_FOUND:
        return f"{ours}, which occurs in no text of {other}'s"
    if value == pairing.NOT_TOGETHER:
        return f"{ours}, which {other} gives, but not together with the rest of its record {difference['record']}"
    return f"{ours} and {other} {_short(value)}"


def _short(value: object, limit: int = 120) -> str:
    """A value in a sentence, as JSON, shortened."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def match(name: str | None) -> Match:
    """The match a study names (the default when it names none)."""
    return MATCHES[name or DEFAULT]
