"""A study's cases and unfriendly inputs: each a label and its fields (any JSON values), read from [[cases]] and
[[unfriendly]]."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wismo.core.templates import ITEM
from wismo.domain.answer import SCORED
from wismo.studies.problems import Problems, text

CASE_RESERVED = ("label", "expect")


@dataclass(frozen=True)
class StudyCase:
    """One input of the study: its label, its fields (any JSON values), whether it is unfriendly, and the answer
    the scorer expects, when the study gives one."""

    label: str
    fields: dict[str, object]
    unfriendly: bool = False
    expect: dict[str, object] | None = None

    def value(self, key: str) -> object:
        """The value of one field (None when the case lacks it)."""
        return self.fields.get(key)

    @property
    def shown(self) -> str:
        """The input as a report shows it: each field quoted, escaped and shortened when long."""
        from wismo.domain.ids import MAX_ID_LENGTH, quote

        def one(value: object) -> str:
            if isinstance(value, str) and len(value) > MAX_ID_LENGTH:
                return f"{quote(value, 12)} ({len(value)} characters)"
            import json

            return quote(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

        if len(self.fields) == 1:
            return one(next(iter(self.fields.values())))
        return ", ".join(f"{k}={one(v)}" for k, v in self.fields.items())


def expanded(value: Any) -> object:
    """A literal value, or {repeat, times, prefix} for an input too long to write out."""
    generated = (
        isinstance(value, dict)
        and set(value) <= {"repeat", "times", "prefix"}
        and isinstance(value.get("repeat"), str)
        and isinstance(value.get("times"), int)
        and 0 <= value["times"] <= 10**7
    )
    return str(value.get("prefix", "")) + value["repeat"] * value["times"] if generated else value


def read_cases(r: Problems, raw: dict[str, object], key: str, required: bool) -> list[StudyCase]:
    """The [[cases]] (or [[unfriendly]]) array: a label and at least one field each."""
    rows = raw.get(key)
    if rows is None:
        if required:
            r.say("top level", f"{key} is missing: declare at least one, as a [[{key}]] table")
        return []
    if not isinstance(rows, list) or not all(isinstance(x, dict) for x in rows):
        return []  # the schema said
    out = []
    for i, row in enumerate(rows, start=1):
        where = f"{key}[{i}]"
        label = text(row, "label")
        expect = row.get("expect")
        if expect is not None and (key == "unfriendly" or not isinstance(expect, dict)):
            r.say(
                where, "expect must be a table of the answer's fields, and only cases (not unfriendly inputs) have one"
            )
            expect = None
        elif expect is not None and set(expect) != set(SCORED):
            r.say(
                where,
                f"expect gives {', '.join(sorted(expect)) or 'nothing'}; the five-field scorer needs exactly "
                f"{', '.join(SCORED)}",
            )
            expect = None
        fields = {k: expanded(v) for k, v in row.items() if k not in CASE_RESERVED}
        if ITEM in fields:
            r.say(where, f"a case cannot have a field named {ITEM}: {{{ITEM}}} is the value a link follows")
        if not fields:
            r.say(where, "a case needs at least one field besides label (the values its templates take)")
        if label:
            out.append(StudyCase(label, fields, key == "unfriendly", expect))
    return out


def check_unique(r: Problems, cases: list[StudyCase]) -> None:
    """Every label once: labels name cases in every table and in the exit's sentence."""
    seen: set[str] = set()
    for case in cases:
        if case.label in seen:
            r.say("top level", f'the label "{case.label}" is given to two cases; every label must be unique')
        seen.add(case.label)
