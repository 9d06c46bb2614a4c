"""Tables and sentences the reports show, built from a comparison result (no figures typed by hand)."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd


def tools_table(result: dict[str, Any]) -> pd.DataFrame:
    """One row per tool per design: its argument, annotations and description, as tools/list gave them."""
    rows = []
    for design, tools in result["tools"].items():
        for tool in tools:
            schema = tool["inputSchema"]
            rows.append({
                "design": design,
                "tool": tool["name"],
                "arguments": ", ".join(f"{k} ({v.get('type')})" for k, v in schema.get("properties", {}).items()),
                "required": ", ".join(schema.get("required", [])),
                "annotations": json.dumps(tool.get("annotations", {}), sort_keys=True),
                "description": tool.get("description", ""),
            })
    return pd.DataFrame(rows)


def cases_table(result: dict[str, Any], unfriendly: bool = False) -> pd.DataFrame:
    """One row per case: input, verdict, and bytes and calls for each design (measured)."""
    rows = []
    for r in result["cases"]:
        if r["unfriendly"] != unfriendly:
            continue
        rows.append({
            "case": r["label"],
            "input": r["input"],
            "outcome": r["outcome"],
            "equal": "equal" if r["equal"] else "DIFFERENT",
            "granular calls": r["granular"]["calls"],
            "focused calls": r["focused"]["calls"],
            "granular bytes": r["granular"]["bytes"],
            "focused bytes": r["focused"]["bytes"],
            "error (both designs)" if unfriendly else "first difference": (
                (r["granular"]["error"] or "") if unfriendly else (r["differences"][0]["path"] if r["differences"] else "")
            ),
        })
    return pd.DataFrame(rows)


def summary_sentence(result: dict[str, Any]) -> str:
    """The comparison's verdict in one Markdown sentence, every number from the result."""
    s = result["summary"]
    g, f = s["bytes"]["granular"], s["bytes"]["focused"]
    change = (f - g) / g * 100 if g else 0.0
    return (
        f"**{s['ordersEqual']}/{s['orders']} order cases equal** over {result['transport']} "
        f"(protocol revision {result['protocolRevision']}); {s['unfriendlyAgreeing']}/{s['unfriendly']} unfriendly "
        f"inputs treated the same by both designs. Across the order cases the granular script made "
        f"{s['calls']['granular']} tool calls and the focused one {s['calls']['focused']}; the focused design "
        f"returned {f:,} bytes of JSON text against {g:,} ({change:+.1f}%), all measured."
    )
