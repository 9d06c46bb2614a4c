"""One function per chart; the two designs keep the same colours in every report."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

# Colour-blind-safe pair (Okabe-Ito blue and orange), used for the designs everywhere.
DESIGN_COLORS = {"granular": "#0072B2", "focused": "#E69F00"}
DESIGNS = ("granular", "focused")


def _paired_bars(labels: list[str], values: dict[str, list[float]], title: str, ylabel: str) -> Figure:
    """Side-by-side bars per label, one colour per design, each bar annotated with its value."""
    fig, ax = plt.subplots(figsize=(10, 4), layout="constrained")
    width = 0.38
    for i, design in enumerate(DESIGNS):
        xs = [x + (i - 0.5) * width for x in range(len(labels))]
        bars = ax.bar(xs, values[design], width, label=design, color=DESIGN_COLORS[design])
        ax.bar_label(bars, fmt="{:,.0f}", fontsize=8, padding=2)
    ax.set_xticks(range(len(labels)), labels, fontsize=9)
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.margins(y=0.15)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(title="design", frameon=False)
    return fig


def _order_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The comparison rows of real orders (the unfriendly inputs are not charted)."""
    return [r for r in result["cases"] if not r["unfriendly"]]


def _case_labels(rows: list[dict[str, Any]]) -> list[str]:
    """Two-line tick labels: order ID over the case name."""
    return [f"{r['input'].strip(chr(34))}\n{r['label']}" for r in rows]


def bytes_per_case(result: dict[str, Any]) -> Figure:
    """Bar chart: UTF-8 bytes of JSON text returned per case, granular (all links followed) vs focused."""
    rows = _order_rows(result)
    values = {d: [r[d]["bytes"] for r in rows] for d in DESIGNS}
    return _paired_bars(_case_labels(rows), values, "Evidence returned per case (measured)", "bytes of JSON text in tool results")


def calls_per_case(result: dict[str, Any]) -> Figure:
    """Bar chart: MCP tools/call requests needed per case, granular vs focused."""
    rows = _order_rows(result)
    values = {d: [r[d]["calls"] for r in rows] for d in DESIGNS}
    return _paired_bars(_case_labels(rows), values, "MCP interactions per case (measured)", "tools/call requests (count)")
