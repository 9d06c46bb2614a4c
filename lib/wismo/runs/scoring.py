"""The five-field scorer, and a separate check of the customer summary against the evidence."""

from __future__ import annotations

import json
import re
from typing import Any, TypedDict, cast

from wismo.core.paths import fixtures_dir
from wismo.domain.answer import LISTS as LIST_FIELDS
from wismo.domain.answer import SCORED as FIELDS
from wismo.runs.agent.evidence import Evidence


def load_expectations() -> dict[str, dict[str, object]]:
    """The hand-written expected assessment of each case (expectations.json in the fixtures folder)."""
    return cast(
        "dict[str, dict[str, object]]",
        json.loads((fixtures_dir() / "expectations.json").read_text(encoding="utf-8"))["cases"],
    )


class FieldScore(TypedDict):
    """One scored field: whether it matched, why not (missing, not a list of strings, duplicates, different), and
    the answer's and the expected value."""

    match: bool
    reason: str | None
    actual: object
    expected: object


class Score(TypedDict):
    """An answer scored against its case's expectation: passed when every field matched, and each field's score."""

    passed: bool
    fields: dict[str, FieldScore]


def score(answer: dict[str, object] | None, expected: dict[str, Any]) -> Score:
    """Compare the five structured fields: arrays as sets (order ignored), duplicates rejected."""
    fields: dict[str, FieldScore] = {}
    for name in FIELDS:
        want = expected[name]
        if answer is None or name not in answer:
            fields[name] = {"match": False, "reason": "missing", "actual": None, "expected": want}
            continue
        got = answer[name]
        reason: str | None
        if name in LIST_FIELDS:
            if not isinstance(got, list) or not all(isinstance(v, str) for v in got):
                match, reason = False, "not a list of strings"
            elif len(set(got)) != len(got):
                match, reason = False, "duplicates"
            else:
                match, reason = set(got) == set(want), None if set(got) == set(want) else "different"
        else:
            match, reason = got == want, None if got == want else "different"
        fields[name] = {"match": match, "reason": reason, "actual": got, "expected": want}
    return {"passed": all(f["match"] for f in fields.values()), "fields": fields}


DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
SKU = re.compile(r"\b[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+\b")
DELAY = re.compile(r"\b(delay(?:ed|s)?|late|held up)\b", re.IGNORECASE)
ID_PREFIXES = ("ORD-", "PAY-", "RSV-", "TRK-")


def summary_flags(summary: str | None, evidence: Evidence) -> list[str]:
    """Claims in the summary that the evidence does not support: unknown dates or SKUs, an unestablished delay."""
    if not summary:
        return []
    texts = evidence.texts()
    known = " ".join(texts)
    flags = []
    for date in sorted(set(DATE.findall(summary))):
        if date not in known:
            flags.append(f"date {date} appears in no record")
    for sku in sorted(set(SKU.findall(summary))):
        if not sku.startswith(ID_PREFIXES) and sku not in texts:
            flags.append(f"SKU {sku} appears in no record")
    established = (
        any(p.get("status") != "captured" for p in evidence.payments)
        or any(r.get("status") == "backordered" for r in evidence.reservations)
        or any(t.get("status") == "delayed" for t in evidence.tracking if t.get("availability") == "available")
    )
    if DELAY.search(summary) and not established:
        flags.append("asserts a delay the evidence does not establish")
    return flags


def pass_hat_k(passed_by_rep: list[bool]) -> bool:
    """pass^k: the case passes only if every one of its k repetitions passed."""
    return bool(passed_by_rep) and all(passed_by_rep)
