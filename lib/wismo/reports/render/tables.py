"""Tables and sentences the reports show (no figures typed by hand), and how every table is shown to a reader:
no index column, headers in words with units, thousands separators, lists as text, no cell cut short."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from wismo.accounting.cost import saving_percent
from wismo.accounting.cost.saving import amount
from wismo.core.textgrid import LIST_SEPARATOR, count, figure, plural
from wismo.studies import matching

# JSON keys as a reader's headers, with their units; a key not listed is split into words.
HEADERS = {
    "orderId": "order",
    "toolDefinitions": "tool definitions (tokens, tiktoken-estimated)",
    "base": "first request (tokens, tiktoken-estimated)",
    "additions": "added by each turn (tokens, tiktoken-estimated)",
    "inputs": "input of each model call (tokens, modelled)",
    "total": "input, all model calls (tokens, modelled)",
    "modelCalls": "model calls (count, scripted investigation)",
    "toolCalls": "tool calls (count, measured)",
    "meanResultTokens": "mean tool result (tokens, tiktoken-estimated)",
    "ratio": "reference / design input (modelled)",
    "referenceTotal": "reference input, all model calls (tokens, modelled)",
    "designTotal": "design input, all model calls (tokens, modelled)",
    "savingPercent": "design's saving (%, modelled)",
    "lines": "order lines (count)",
    "modelTurns": "model turns (count, scripted investigation)",
    "resultBytes": "tool result bytes (measured)",
    "resultTokens": "all tool results (tokens, tiktoken-estimated)",
    "largestResultTokens": "largest tool result (tokens, tiktoken-estimated)",
    "finalInput": "last call's input (tokens, modelled)",
    "totalInput": "session input (tokens, modelled)",
    "inputTokens": "input (tokens)",
    "failedFields": "fields that did not match",
    "summaryFlags": "summary claims flagged",
    "pass^k": "every repetition passed",
    "k": "repetitions (count)",
    "passed": "passed",
    "turns": "model turns (count)",
    "answered": "answered",
    "note": "what the session said",
    "bytes": "tool result bytes (measured)",
    "count": "conversations (count)",
    "pages": "pages (count, measured)",
    "examples": "examples",
    "figure": "figure",
    "published": "published",
    "computed": "computed",
    "match": "matches",
    # Client profiles (wismo.accounting.tokens.framing), as columns of tokens.
    "python": "python, bare text (tokens, tiktoken-estimated)",
    "csharp-raw-element": "csharp-raw-element (tokens, tiktoken-estimated)",
    "csharp-relaxed": "csharp-relaxed (tokens, tiktoken-estimated)",
    "framing share %": "share from framing (%, tiktoken-estimated)",
    # The framing share of a rebuilt conversation (notebook 02, section 5).
    "input, bare text": "input, bare text (tokens, modelled)",
    "input, csharp-raw-element framing": "input, csharp-raw-element framing (tokens, modelled)",
    "share from framing %": "share from framing (%, modelled)",
}


def header(key: str) -> str:
    """A JSON key as a table header: the listed words, a design's total or saving by its name, a camelCase key split
    into lower-case words; a header already in words stays as written (its units keep their case: USD)."""
    if key in HEADERS:
        return HEADERS[key]
    for suffix, words in (("SavingPercent", "saving (%, modelled)"), ("Total", "input (tokens, modelled)")):
        if key.endswith(suffix) and key != suffix:  # a design's figures are modelled from tiktoken estimates
            return f"{key.removesuffix(suffix)} {words}"
    if " " in key or not re.search(r"[a-z][A-Z]", key):
        return key
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key).lower()


def _plain(value: object) -> object:
    """A numpy or pandas scalar as the Python value it holds; NaN (pandas' stand-in for nothing) as None."""
    if hasattr(value, "item") and not isinstance(value, (list, tuple, Mapping, str)):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    return value


def money(value: float) -> str:
    """Dollars in a table, named (a dollar sign in a notebook's output is read as maths): cents from ten cents up,
    else three significant digits (USD 0.00107)."""
    return f"USD {value:,.2f}" if abs(value) >= 0.1 or value == 0 else f"USD {value:.3g}"


def cell(value: object, decimals: int = 1, usd: bool = False) -> str:
    """One value as a reader sees it, formatted here and nowhere else: counts (and whole floats) as integers with
    thousands separators, a fixed number of decimals for the rest, dollars with their sign when `usd`, lists of
    numbers joined by " · " (a comma would read as a thousands separator), objects as text, yes/no for booleans, a
    dash for nothing (None or NaN)."""
    value = _plain(value)
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if usd and isinstance(value, (int, float)):
        return money(value)
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return count(int(value))
    if isinstance(value, float):
        return figure(value, decimals)
    if isinstance(value, (list, tuple)):
        if not value:
            return "none"
        numbers = all(isinstance(_plain(v), (int, float)) and not isinstance(v, bool) for v in value)
        return (LIST_SEPARATOR if numbers else ", ").join(cell(v, decimals, usd) for v in value)
    if isinstance(value, Mapping):
        return "; ".join(f"{header(str(k))}: {cell(v, decimals, usd)}" for k, v in value.items())
    return str(value)


# A cell that is one token with a hyphen (ORD-1004, RSV-1004-B, a run's folder name) must not break at it.
_IDENTIFIER = re.compile(r"^[^\s]*[A-Za-z0-9]-[A-Za-z0-9][^\s]*$")


def _columns(
    rows: Iterable[Mapping[str, object]] | pd.DataFrame, columns: Iterable[str] | None
) -> dict[str, list[object]]:
    """The chosen columns, each as its list of values exactly as given: never through a DataFrame's column types,
    which turn a column of counts holding one None into floats (3.0) and the None into NaN."""
    if isinstance(rows, pd.DataFrame):
        return {str(c): [_plain(v) for v in rows[c]] for c in (list(columns) if columns is not None else rows.columns)}
    rows = list(rows)
    keys = list(columns) if columns is not None else list(dict.fromkeys(k for r in rows for k in r))
    return {k: [r.get(k) for r in rows] for k in keys}


def show(
    rows: Iterable[Mapping[str, object]] | pd.DataFrame, columns: Iterable[str] | None = None, decimals: int = 1
) -> object:
    """A table for the reader: the chosen columns, headers in words, every cell as text in full, no index; numbers
    right-aligned under right-aligned headers, words left under left, identifiers never broken at a hyphen."""
    data = _columns(rows, columns)
    heads = [header(k) for k in data]
    shown = pd.DataFrame(
        {h: [cell(v, decimals, usd="USD" in h) for v in values] for h, values in zip(heads, data.values())}
    )
    numeric = [
        i
        for i, values in enumerate(data.values())
        if values
        and all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in values)
        and any(v is not None for v in values)
    ]
    styles = [{"selector": "th.col_heading", "props": "text-align: left; vertical-align: bottom;"}] + [
        {"selector": f"th.col_heading.col{i}", "props": "text-align: right;"} for i in numeric
    ]
    return (
        shown.style.hide(axis="index")
        .set_table_styles(styles)
        .set_properties(**{"white-space": "pre-wrap", "text-align": "left", "vertical-align": "top"})
        .set_properties(subset=[heads[i] for i in numeric], **{"text-align": "right"})
        .map(lambda text: "white-space: nowrap;" if _IDENTIFIER.match(text) and len(text) <= 48 else "")
    )


ANNOTATIONS = {
    ("readOnlyHint", True): "read-only",
    ("readOnlyHint", False): "may change data",
    ("openWorldHint", False): "closed-world",
    ("openWorldHint", True): "open-world",
    ("destructiveHint", True): "destructive",
    ("destructiveHint", False): "not destructive",
    ("idempotentHint", True): "idempotent",
    ("idempotentHint", False): "not idempotent",
}


def annotations_in_words(annotations: Mapping[str, Any]) -> str:
    """A tool's MCP annotations as words (read-only, closed-world), read-only first; a title as itself."""
    order = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"]
    words = [
        ANNOTATIONS.get((k, v), f"{header(k)}: {cell(v)}")
        for k, v in sorted(annotations.items(), key=lambda kv: (order.index(kv[0]) if kv[0] in order else 9, kv[0]))
        if k != "title"
    ]
    if "title" in annotations:
        words.insert(0, f"titled {annotations['title']!r}")
    return ", ".join(words) or "none"


def tools_table(result: dict[str, Any]) -> Any:
    """One row per tool per design: its argument, annotations and description, as tools/list gave them."""
    rows = []
    for design, tools in result["tools"].items():
        for tool in tools:
            schema = tool["inputSchema"]
            rows.append(
                {
                    "design": design,
                    "tool": tool["name"],
                    "arguments": ", ".join(f"{k} ({v.get('type')})" for k, v in schema.get("properties", {}).items()),
                    "required": ", ".join(schema.get("required", [])),
                    "annotations": annotations_in_words(tool.get("annotations", {})),
                    "description": tool.get("description", ""),
                }
            )
    return show(rows)


def tools_sentence(result: dict[str, Any]) -> str:
    """What each server offers, counted from its tools/list: how many tools, how many of them read-only and how
    many the investigation calls, and whether any declares an output schema (structured results)."""
    parts = []
    for design, tools in result["tools"].items():
        read_only = sum(bool(t.get("annotations", {}).get("readOnlyHint")) for t in tools)
        structured = sum("outputSchema" in t for t in tools)
        called = {c["tool"] for r in result["cases"] for c in r[design]["toolCalls"]}
        parts.append(
            f"**{design}** offers {count(len(tools))} tool{'s' if len(tools) != 1 else ''} ({read_only} marked "
            f"read-only, {structured} with an output schema), of which the investigation called "
            f"{', '.join(f'`{t}`' for t in sorted(called)) or 'none'}"
        )
    return "; ".join(parts) + " (as each server's tools/list says)."


def parity_table(result: dict[str, Any]) -> Any:
    """Per case, the verdict and bytes on every transport (bytes per design in the study's order); one sentence
    instead when only one transport ran."""
    parity = result["transportParity"]
    if len(parity["transports"]) < 2:
        from IPython.display import Markdown

        return Markdown(f"Only {parity['transports'][0]} ran, so there is no table of transports to compare.")
    names = " / ".join(result["summary"]["designs"])
    words = {"same": "same on every transport"}
    rows = [
        {words.get(k, k.replace(": bytes", f": bytes ({names}, measured)")): v for k, v in r.items()}
        for r in parity["cases"]
    ]
    return show(rows)


def cases_table(result: dict[str, Any], unfriendly: bool = False) -> Any:
    """One row per case: input, verdict, and bytes and calls for each design (measured)."""
    names = result["summary"]["designs"]
    match = result.get("study", {}).get("match", "equal")
    if unfriendly and not result["summary"]["unfriendly"]:
        from IPython.display import Markdown

        return Markdown("The study declares no unfriendly inputs.")
    rows = []
    for r in result["cases"]:
        if r["unfriendly"] != unfriendly:
            continue
        row = {
            "case": r["label"],
            "input": r["input"],
            "outcome": r["outcome"],
            "verdict": matching.match(match).verdict if r["equal"] else "DIFFERENT",
        }
        row |= {f"{d} calls (measured)": r[d]["calls"] for d in names}
        row |= {f"{d} bytes (measured)": r[d]["bytes"] for d in names}
        if unfriendly:
            row["error sentence (every design)"] = r[names[0]]["error"] or "none: evidence returned"
        else:
            row["first difference"] = r["differences"][0]["path"] if r["differences"] else "none"
        rows.append(row)
    return show(rows)


def summary_sentence(result: dict[str, Any]) -> str:
    """The comparison's verdict in one Markdown sentence, every number from the result."""
    s = result["summary"]
    ref = s["reference"]
    others = [d for d in s["designs"] if d != ref]
    g = s["bytes"][ref]
    against = "; ".join(
        f"{d} {plural(s['calls'][d], 'tool call')} and {s['bytes'][d]:,} bytes of text "
        f"({' '.join(amount(saving_percent(g, s['bytes'][d]) if g else 0.0))} bytes)"
        for d in others
    )
    unfriendly = (
        f" Of the {s['unfriendly']} unfriendly inputs, {s['unfriendlyRejectedAlike']} were rejected alike and "
        f"{s['unfriendlyEvidenceAlike']} returned alike with their missing records marked "
        f"({s['unfriendlyAgreeing']}/{s['unfriendly']} treated alike)."
        if s["unfriendly"]
        else " The study declares no unfriendly inputs."
    )
    match = result.get("study", {}).get("match", "equal")
    verdict = matching.match(match).agreeing.format(ref=ref)
    return (
        f"**{s['casesEqual']}/{plural(s['cases'], 'case')} {verdict}**, {plural(len(s['designs']), 'design')}, over "
        f"{result['transport']} (protocol revision {result['protocolRevision']}).{unfriendly} Across the cases the "
        f"{ref} design made {plural(s['calls'][ref], 'tool call')} and returned {g:,} bytes of text; {against}; "
        "all measured."
    )
