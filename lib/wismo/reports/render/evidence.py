"""What each design gathered for each case, side by side: the evidence as it was compared (ignored keys left out), a
case to a collapsed block, the first difference marked in every design that has it."""

from __future__ import annotations

import html
import json
from typing import Any, cast

from wismo.reports.render.charts import DESIGN_COLORS

MAX_LINES = 400  # of one design's evidence shown; the rest is counted
STYLE = """<style>
.wismo-evidence details { margin: 0.3em 0; }
.wismo-evidence summary { cursor: pointer; }
.wismo-evidence .designs { display: grid; gap: 0.6em; margin: 0.4em 0 0.8em; }
.wismo-evidence pre { margin: 0; padding: 0.4em; max-height: 28em; overflow: auto; white-space: pre-wrap;
  word-break: break-word; font-size: 0.8em; background: #f7f7f7; }
.wismo-evidence h4 { margin: 0 0 0.2em; font-size: 0.9em; }
.wismo-evidence mark { background: #ffe08a; }
</style>"""


def json_lines(value: object, path: str = "", indent: int = 0, lead: str = "") -> list[tuple[str, str]]:
    """A JSON value pretty-printed, each line with the path of the value it starts (as jsondiff names paths):
    objects and lists over several lines, scalars on one.

    >>> json_lines({"a": [1, {"b": 2}]})[1:4]
    [('a', '  "a": ['), ('a[0]', '    1,'), ('a[1]', '    {')]
    """
    pad = "  " * indent
    here = path or "<root>"
    if isinstance(value, dict) and value:
        out = [(here, f"{pad}{lead}{{")]
        items = list(value.items())
        for i, (k, v) in enumerate(items):
            sub = f"{path}.{k}" if path else k
            inner = json_lines(v, sub, indent + 1, f"{json.dumps(k, ensure_ascii=False)}: ")
            out += _comma(inner, i < len(items) - 1)
        return out + [(here, f"{pad}}}")]
    if isinstance(value, list) and value:
        out = [(here, f"{pad}{lead}[")]
        for i, v in enumerate(value):
            out += _comma(json_lines(v, f"{path}[{i}]", indent + 1), i < len(value) - 1)
        return out + [(here, f"{pad}]")]
    return [(here, f"{pad}{lead}{json.dumps(value, ensure_ascii=False)}")]


def _comma(lines: list[tuple[str, str]], more: bool) -> list[tuple[str, str]]:
    """The lines of one member, with a comma after its last when another follows."""
    if more:
        path, text = lines[-1]
        return lines[:-1] + [(path, text + ",")]
    return lines


def _column(design: str, side: dict[str, object], marked: str | None, reference: bool) -> str:
    """One design's evidence for a case as HTML: its name, then its lines with the difference marked."""
    color = DESIGN_COLORS.get(design, "#555555")
    role = " (reference)" if reference else ""
    head = f'<h4 style="color: {color}">{html.escape(design)}{role}</h4>'
    if side.get("error") is not None:
        return f"{head}<pre>error: {html.escape(str(side['error']))}</pre>"
    lines = json_lines(side.get("evidence"))
    shown = []
    for path, text in lines[:MAX_LINES]:
        escaped = html.escape(text)
        shown.append(f"<mark>{escaped}</mark>" if marked is not None and path == marked else escaped)
    if len(lines) > MAX_LINES:
        shown.append(f"… {len(lines) - MAX_LINES:,} more lines")
    return head + "<pre>" + "\n".join(shown) + "</pre>"


def _case(row: dict[str, Any], names: list[str], reference: str, shared: bool) -> str:
    """One case: a collapsed block whose summary says whether the designs agree, and where first they do not; the
    reference's line at the case's first difference is marked, and each design's own first where paths are `shared`
    (match equal and contains compare value by value; under match text the path is only the reference's)."""
    diffs = row["differences"]
    first = {d: next((x["path"] for x in diffs if d in x), None) if shared else None for d in names}
    first[reference] = diffs[0]["path"] if diffs else None
    apart = [d for d in names if any(d in x for x in diffs)]
    where = f"differs first at {diffs[0]['path']} ({', '.join(apart)})" if diffs else "agrees"
    summary = f"{row['label']} ({row['input']}): {where}"
    columns = "".join(
        f"<div>{_column(d, row[d], first[d], d == reference)}</div>" for d in [reference, *names] if d in row
    )
    grid = f'<div class="designs" style="grid-template-columns: repeat({1 + len(names)}, minmax(0, 1fr))">'
    return f"<details><summary>{html.escape(summary)}</summary>{grid}{columns}</div></details>"


def lead(result: dict[str, Any], focus: str | None = None) -> dict[str, object] | None:
    """The case a reader sees first: the first whose designs disagree, else the study's focus case (by its input
    or label), else the first."""
    cases = [r for r in result["cases"] if not r["unfriendly"]]
    differing = [r for r in cases if not r["equal"]]
    if differing:
        return cast("dict[str, object] | None", differing[0])
    named = (focus, f'"{focus}"')  # a case's input shows its key's value as JSON
    focused = [r for r in cases if focus is not None and (r["label"] in named or r["input"] in named)]
    return cast("dict[str, object] | None", (focused or cases or [None])[0])


class EvidenceView:
    """Cases' evidence, design by design, as notebooks and HTML show it."""

    def __init__(self, result: dict[str, Any], rows: list[dict[str, Any]]) -> None:
        self.result, self.rows = result, rows

    def _repr_html_(self) -> str:
        s = self.result["summary"]
        reference = s["reference"]
        others = [d for d in s["designs"] if d != reference]
        shared = self.result.get("study", {}).get("match", "equal") != "text"
        cases = "".join(_case(r, others, reference, shared) for r in self.rows)
        return '<div class="wismo-evidence">' + STYLE + cases + "</div>"


def evidence_view(result: dict[str, Any], part: str = "all", focus: str | None = None) -> EvidenceView:
    """What each design gathered, side by side (collapsed, each design's first difference marked): of every case
    (`part` "all"), of the case a reader sees first ("lead", see `lead`), or of every other ("rest")."""
    cases = [r for r in result["cases"] if not r["unfriendly"]]
    first = lead(result, focus)
    if part == "lead":
        cases = [first] if first is not None else []
    elif part == "rest":
        cases = [r for r in cases if r is not first]
    return EvidenceView(result, cases)
