"""Tables and sentences the reports show (no figures typed by hand), and how every table is shown to a reader:
no index column, headers in words with units, thousands separators, lists as text, no cell cut short."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from wismo.core.textgrid import count, figure

# JSON keys as a reader's headers, with their units; a key not listed is split into words.
HEADERS = {
    "orderId": "order",
    "toolDefinitions": "tool definitions (tokens)",
    "base": "first request (tokens)",
    "additions": "added by each turn (tokens)",
    "inputs": "input of each model call (tokens)",
    "total": "input, all model calls (tokens)",
    "modelCalls": "model calls",
    "toolCalls": "tool calls",
    "meanResultTokens": "mean tool result (tokens)",
    "granularTotal": "granular input (tokens)",
    "focusedTotal": "focused input (tokens)",
    "ratio": "granular / focused",
    "focusedSavingPercent": "focused saving (%)",
    "lines": "order lines",
    "modelTurns": "model turns",
    "resultBytes": "tool result bytes",
    "resultTokens": "all tool results (tokens)",
    "largestResultTokens": "largest tool result (tokens)",
    "finalInput": "last call's input (tokens)",
    "totalInput": "session input (tokens)",
    "inputTokens": "input (tokens)",
    "failedFields": "fields that did not match",
    "summaryFlags": "summary claims flagged",
    "pass^k": "every repetition passed",
    "k": "repetitions",
    "passed": "passed",
    "turns": "model turns",
    "answered": "answered",
    "note": "what the session said",
    "bytes": "bytes",
    "examples": "examples",
    "figure": "figure",
    "published": "published",
    "computed": "computed",
    "match": "matches",
    # Client profiles (wismo.tokens.framing), as columns of tokens.
    "python": "python, bare text (tokens)",
    "csharp-raw-element": "csharp-raw-element (tokens)",
    "csharp-relaxed": "csharp-relaxed (tokens)",
    "framing share %": "share from framing (%)",
}


def header(key: str) -> str:
    """A JSON key as a table header: the listed words, a design's total or saving by its name, else camelCase split
    into lower-case words."""
    if key in HEADERS:
        return HEADERS[key]
    for suffix, words in (("SavingPercent", "saving (%)"), ("Total", "input (tokens)")):
        if key.endswith(suffix) and key != suffix:
            return f"{key.removesuffix(suffix)} {words}"
    return HEADERS.get(key) or re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key).lower()


def cell(value: Any, decimals: int = 1) -> str:
    """One value as a reader sees it: counts with thousands separators, a fixed number of decimals for the rest,
    lists and objects as text, yes/no for booleans, a dash for nothing."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return count(value)
    if isinstance(value, float):
        return figure(value, decimals)
    if isinstance(value, (list, tuple)):
        return ", ".join(cell(v, decimals) for v in value) if value else "none"
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {cell(v, decimals)}" for k, v in value.items())
    return str(value)


def show(
    rows: Iterable[Mapping[str, Any]] | pd.DataFrame, columns: Iterable[str] | None = None, decimals: int = 1
) -> Any:
    """A table for the reader: the chosen columns, headers in words, every cell as text in full, no index."""
    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    if columns is not None:
        frame = frame[list(columns)]
    shown = pd.DataFrame({header(str(c)): [cell(v, decimals) for v in frame[c]] for c in frame.columns})
    numeric = [
        header(str(c))
        for c in frame.columns
        if frame[c].map(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)).all()
    ]
    return (
        shown.style.hide(axis="index")
        .set_properties(**{"white-space": "pre-wrap", "text-align": "left", "vertical-align": "top"})
        .set_properties(subset=numeric, **{"text-align": "right"})
    )


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
                    "annotations": ", ".join(
                        f"{k}: {str(v).lower()}" for k, v in sorted(tool.get("annotations", {}).items())
                    ),
                    "description": tool.get("description", ""),
                }
            )
    return show(rows)


def parity_table(result: dict[str, Any]) -> Any:
    """Per case, the verdict and bytes on every transport (bytes per design in the study's order); one sentence
    instead when only one transport ran."""
    parity = result["transportParity"]
    if len(parity["transports"]) < 2:
        from IPython.display import Markdown

        return Markdown(f"Only {parity['transports'][0]} ran, so there is no table of transports to compare.")
    names = " / ".join(result["summary"]["designs"])
    rows = [{k.replace(": bytes", f": bytes ({names})"): v for k, v in r.items()} for r in parity["cases"]]
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
            "verdict": ("equal" if match == "equal" else "holds the reference's") if r["equal"] else "DIFFERENT",
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
        f"{d} {s['calls'][d]} tool calls and {s['bytes'][d]:,} bytes of text "
        f"({((s['bytes'][d] - g) / g * 100 if g else 0.0):+.1f}% bytes)"
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
    verdict = "equal" if match == "equal" else f"holding the {ref} design's evidence"
    return (
        f"**{s['ordersEqual']}/{s['orders']} cases {verdict}** over {result['transport']} "
        f"(protocol revision {result['protocolRevision']}).{unfriendly} Across the cases the {ref} design made "
        f"{s['calls'][ref]} tool calls and returned {g:,} bytes of text; {against}; all measured."
    )
