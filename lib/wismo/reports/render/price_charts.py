"""The price charts of notebook 02 (caching, prices per model and as orders grow, call strategy): a design keeps its
colour, a line style says how it was priced or called."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator
from matplotlib.typing import LineStyleType

from wismo.reports.render.charts import CASE_STUDY_COLORS, DESIGN_COLORS, designs_present, legend_below, thousands

if TYPE_CHECKING:  # a type only: the figures are computed where the report is built
    from wismo.reports.caching_figures import CurvePoint

# Line styles of the price charts: the same design, priced two ways or called two ways.
_STYLES: dict[str, LineStyleType] = {"no caching": "-", "every prefix a hit": "--", "parallel": "-", "sequential": "--"}


def _style_legend(
    ax: Axes, styles: Iterable[str], designs_shown: Iterable[str], title: str, extra: Iterable[Artist] = ()
) -> None:
    """One legend: a coloured line per design, then a grey line per style, then any extra handles."""
    from matplotlib.lines import Line2D

    handles: list[Artist] = [Line2D([], [], color=DESIGN_COLORS[d], label=d) for d in designs_shown]
    handles += [Line2D([], [], color="grey", linestyle=_STYLES[s], label=s) for s in styles] + list(extra)
    ax.legend(handles=handles, title=title, frameon=False, fontsize=8)


def caching_curve(curve: list[CurvePoint], model: str, conversations: int) -> Figure:
    """The case study's sessions of 1 to 15 calls on one model: price without caching (solid) and with every
    prefix a hit (dashed), for its broad and scoped designs."""
    fig, ax = plt.subplots(figsize=(9, 4.2), layout="constrained")
    for design in ("broad", "scoped"):
        for mode in ("no caching", "every prefix a hit"):
            mine = [r for r in curve if r["design"] == design and r["caching"] == mode]
            ax.plot(
                [r["calls"] for r in mine],
                [r["dollars"] for r in mine],
                color=CASE_STUDY_COLORS[design],
                linestyle=_STYLES[mode],
                marker="o",
                markersize=3,
                label=f"{design} tools, {mode}",
            )
    ax.set(
        title=f"The case study's sessions on {model}, input priced, with and without prompt caching (modelled)",
        xlabel="model calls per session",
        ylabel=f"USD per {conversations:,} sessions",
    )
    thousands(ax)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(frameon=False, fontsize=8)
    return fig


def _styled_lines(
    rows: list[dict[str, Any]],
    style_key: str,
    styles: tuple[str, ...],
    value: Callable[[dict[str, Any]], float],
    title: str,
    ylabel: str,
    legend_title: str,
    marker: str | None = "o",
    extra: Iterable[Artist] = (),
) -> tuple[Figure, Axes]:
    """Log-log lines of a value against the order's lines: a colour per design, a line style per value of style_key."""
    fig, ax = plt.subplots(figsize=(9, 4.2), layout="constrained")
    shown = designs_present(r["design"] for r in rows)
    for design in shown:
        for style in styles:
            line = sorted(
                (r for r in rows if r["design"] == design and r[style_key] == style), key=lambda r: r["lines"]
            )
            ax.plot(
                [r["lines"] for r in line],
                [value(r) for r in line],
                color=DESIGN_COLORS[design],
                linestyle=_STYLES[style],
                marker=marker,
                markersize=4,
            )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set(title=title, xlabel="order size (item lines, log scale)", ylabel=ylabel)
    _style_legend(ax, styles, shown, legend_title, extra)
    ax.spines[["top", "right"]].set_visible(False)
    return fig, ax


def prefix_by_size(rows: list[dict[str, object]], threshold: int) -> Figure:
    """Log-log: the longest prefix a later call could read, against the order's lines, per design and call
    strategy, with the cache threshold: above the line, caching starts."""
    fig, ax = _styled_lines(
        rows,
        "strategy",
        ("parallel", "sequential"),
        lambda r: max(r["longestPrefix"], 1),
        "Longest prefix a later call could read from the cache (tiktoken-estimated, modelled)",
        "tokens (log scale)",
        "design, call strategy",
    )
    ax.axhline(threshold, color="black", linestyle=":", linewidth=1)
    ax.text(
        0.01, threshold * 1.15, f"cache threshold {threshold:,} tokens", fontsize=8, transform=ax.get_yaxis_transform()
    )
    return fig


def price_per_conversations(rows: list[dict[str, Any]], models: list[str], conversations: int, order: str) -> Figure:
    """Bars per model and design: USD per n conversations of one order without caching; a black diamond marks the
    price with every prefix a hit."""
    fig, ax = plt.subplots(figsize=(10, 4.2), layout="constrained")
    cell = {(r["model"], r["design"], r["caching"]): r["dollars"] for r in rows}
    shown = designs_present(r["design"] for r in rows)
    width = 0.76 / len(shown)
    for i, design in enumerate(shown):
        xs = [x + (i - (len(shown) - 1) / 2) * width for x in range(len(models))]
        bars = ax.bar(
            xs, [cell[(m, design, "no caching")] for m in models], width, color=DESIGN_COLORS[design], label=design
        )
        ax.bar_label(bars, fmt="${:,.2f}", fontsize=8, padding=2)
        ax.scatter(
            xs, [cell[(m, design, "every prefix a hit")] for m in models], marker="D", color="black", s=14, zorder=3
        )
    ax.scatter([], [], marker="D", color="black", s=14, label="every prefix a hit")
    ax.set_xticks(range(len(models)), models, fontsize=9)
    ax.set(
        title=f"{conversations:,} {order} conversations per model and design, priced (modelled)",
        ylabel=f"USD per {conversations:,} conversations",
        xlabel="model (genai-prices prices)",
    )
    ax.margins(y=0.15)
    ax.spines[["top", "right"]].set_visible(False)
    handles, labels = ax.get_legend_handles_labels()
    designs_first = sorted(range(len(labels)), key=lambda i: labels[i] not in shown)  # then the diamond
    legend_below(
        fig,
        "design (bars: no caching)",
        handles=[handles[i] for i in designs_first],
        labels=[labels[i] for i in designs_first],
        fontsize=8,
    )
    return fig


def price_by_size(rows: list[dict[str, Any]], model: str, conversations: int) -> Figure:
    """Log-log: USD per n conversations against the order's lines, per design, without caching (solid) and with
    every prefix a hit (dashed); hollow markers where some call exceeds the context window."""
    from matplotlib.lines import Line2D

    mine = [r for r in rows if r["model"] == model]
    hollow = Line2D(
        [], [], color="grey", marker="o", markerfacecolor="white", linestyle="", label="a call exceeds the window"
    )
    fig, ax = _styled_lines(
        mine,
        "caching",
        ("no caching", "every prefix a hit"),
        lambda r: r["dollars"],
        f"Price of {conversations:,} conversations on {model} as orders grow (modelled)",
        f"USD per {conversations:,} conversations (log scale)",
        "design, caching",
        None,
        [hollow],
    )
    for fits in (True, False):
        points = [r for r in mine if r["fitsWindow"] == fits]
        ax.scatter(
            [r["lines"] for r in points],
            [r["dollars"] for r in points],
            s=18,
            zorder=3,
            facecolors=[DESIGN_COLORS[r["design"]] if fits else "white" for r in points],
            edgecolors=[DESIGN_COLORS[r["design"]] for r in points],
        )
    return fig


def strategy_by_size(rows: list[dict[str, object]]) -> Figure:
    """Log-log: input tokens of the whole session against the order's lines, per design, with every call of a turn
    in one request (solid) and one call per request (dashed)."""
    return _styled_lines(
        rows,
        "strategy",
        ("parallel", "sequential"),
        lambda r: r["totalInput"],
        "Input tokens of the whole session by call strategy (tiktoken-estimated, modelled)",
        "input tokens, all requests (log scale)",
        "design, call strategy",
    )[0]


def prefix_by_call(calls: list[dict[str, Any]], model: str, threshold: int) -> Figure:
    """The cache prefix curve of the focus case's conversations: per design and call (parallel calls), each
    request's input (solid) and the prefix it could read from the cache under the model's rule (dashed), beside
    the threshold under which nothing is read."""
    fig, ax = plt.subplots(figsize=(9, 4.2), layout="constrained")
    mine = [c for c in calls if c["model"] == model and c["strategy"] == "parallel"]
    shown = designs_present(c["design"] for c in mine)
    for c in mine:
        xs = range(1, len(c["inputs"]) + 1)
        color = DESIGN_COLORS[c["design"]]
        ax.plot(xs, c["inputs"], color=color, marker="o", markersize=4, linestyle="-")
        ax.plot(xs, c["read"], color=color, marker="x", markersize=5, linestyle="--")
    ax.axhline(threshold, color="grey", linewidth=0.8, linestyle=":")
    ax.annotate(f"cache threshold {threshold:,}", (1, threshold), textcoords="offset points", xytext=(2, 4), fontsize=8)
    ax.set(
        title=f"Each request's input and the prefix it could read from the cache on {model} (modelled)",
        xlabel="model request of the conversation",
        ylabel="tokens",
    )
    locator = ax.xaxis.get_major_locator()
    if isinstance(locator, MaxNLocator):  # matplotlib's default, AutoLocator, is one
        locator.set_params(integer=True)
    thousands(ax)
    ax.spines[["top", "right"]].set_visible(False)
    from matplotlib.lines import Line2D

    extra = [
        Line2D([], [], color="grey", linestyle="-", marker="o", label="input of the request"),
        Line2D([], [], color="grey", linestyle="--", marker="x", label="prefix read from the cache"),
    ]
    handles = [Line2D([], [], color=DESIGN_COLORS[d], label=d) for d in shown] + extra
    ax.legend(handles=handles, frameon=False, fontsize=8)
    return fig


def strategy_per_design(conversations: list[dict[str, Any]], case: str) -> Figure:
    """Bars per design: the focus case's input tokens, all requests, with every call of a turn in one request and
    with one call per request."""
    fig, ax = plt.subplots(figsize=(9, 4.2), layout="constrained")
    shown = designs_present(c["design"] for c in conversations)
    by = {(c["design"], c["strategy"]): c["totalInput"] for c in conversations}
    width = 0.38
    for i, how in enumerate(("parallel", "sequential")):
        xs = [x + (i - 0.5) * width for x in range(len(shown))]
        bars = ax.bar(
            xs,
            [by[(d, how)] for d in shown],
            width,
            color=[DESIGN_COLORS[d] for d in shown],
            hatch="" if how == "parallel" else "//",
            edgecolor="white" if how == "parallel" else "black",
            label=f"{how} calls",
        )
        ax.bar_label(bars, fmt="{:,.0f}", fontsize=8, padding=2)
    ax.set_xticks(range(len(shown)), shown)
    ax.set(
        title=f"{case}: input tokens of the whole conversation by call strategy (tiktoken-estimated, modelled)",
        xlabel="design",
        ylabel="input tokens, all requests",
    )
    thousands(ax)
    ax.spines[["top", "right"]].set_visible(False)
    from matplotlib.patches import Patch

    handles = [
        Patch(facecolor="lightgrey", edgecolor="white", label="every call of a turn at once (parallel)"),
        Patch(facecolor="lightgrey", edgecolor="black", hatch="//", label="one call per request (sequential)"),
    ]
    legend_below(fig, "call strategy", handles=handles, labels=[h.get_label() for h in handles])
    return fig
