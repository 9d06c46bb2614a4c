"""One function per chart; the two designs keep the same colours in every report."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import matplotlib
import matplotlib.colors
import matplotlib.patches
import matplotlib.pyplot as plt
import matplotlib.ticker
from matplotlib.figure import Figure

from wismo.core import designs

class _DesignColors(Mapping[str, str]):
    """Each registered design's colour (wismo.core.designs), read live so a design registered later has one too."""

    def __getitem__(self, name: str) -> str:
        return designs.get(name).color

    def __iter__(self) -> Iterator[str]:
        return iter(designs.colors())

    def __len__(self) -> int:
        return len(designs.colors())


# Colour-blind-safe (Okabe-Ito), declared once per design in the registry and used for it everywhere.
DESIGN_COLORS = _DesignColors()


def _present(names: Iterable[str]) -> list[str]:
    """The designs among `names`, in registry order (granular, focused, scoped, then registered ones)."""
    wanted = set(names)
    return [d for d in designs.registered() if d in wanted]


def _paired_bars(labels: list[str], values: dict[str, list[float]], title: str, ylabel: str, xlabel: str) -> Figure:
    """Side-by-side bars per label, one colour per design, each bar annotated with its value."""
    fig, ax = plt.subplots(figsize=(10, 4), layout="constrained")
    shown = _present(values)
    width = 0.76 / len(shown)
    for i, design in enumerate(shown):
        xs = [x + (i - (len(shown) - 1) / 2) * width for x in range(len(labels))]
        bars = ax.bar(xs, values[design], width, label=design, color=DESIGN_COLORS[design])
        ax.bar_label(bars, fmt="{:,.0f}", fontsize=8, padding=2)
    ax.set_xticks(range(len(labels)), labels, fontsize=9)
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.set_xlabel(xlabel)
    _thousands(ax)
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
    values = {d: [r[d]["bytes"] for r in rows] for d in _present(rows[0])}
    return _paired_bars(_case_labels(rows), values, "Evidence returned per case (measured)", "bytes of JSON text in tool results",
                        "order and case")


def calls_per_case(result: dict[str, Any]) -> Figure:
    """Bar chart: MCP tools/call requests needed per case, granular vs focused."""
    rows = _order_rows(result)
    values = {d: [r[d]["calls"] for r in rows] for d in _present(rows[0])}
    return _paired_bars(_case_labels(rows), values, "MCP interactions per case (measured)", "tools/call requests (count)",
                        "order and case")


# The case study's two designs are not ours: they get their own pair of colours.
CASE_STUDY_COLORS = {"broad": "#CC79A7", "scoped": "#009E73"}


def _thousands(ax: Any, axis: str = "y") -> None:
    """Format an axis with thousands separators."""
    fmt = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}")
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(fmt)


def case_study_sessions(cs: dict[str, Any]) -> Figure:
    """Two panels: input tokens of each call against the window, and cumulative input against the target."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
    calls = list(range(1, cs["calls"] + 1))
    width = 0.4
    for i, name in enumerate(("broad", "scoped")):
        xs = [c + (i - 0.5) * width for c in calls]
        left.bar(xs, cs[name]["inputs"], width, color=CASE_STUDY_COLORS[name], label=f"{name} tools (r = {cs['r' + name.capitalize()]:,})")
        right.plot(calls, cs[name]["cumulative"], marker="o", color=CASE_STUDY_COLORS[name], label=f"{name}: {cs[name]['total']:,} in all")
    left.axhline(cs["contextWindow"], color="black", linestyle="--", linewidth=1)
    left.text(0.6, cs["contextWindow"] * 1.02, f"context window {cs['contextWindow']:,}", fontsize=8)
    right.axhline(cs["target"], color="black", linestyle=":", linewidth=1)
    right.text(1, cs["target"] * 1.05, f"session target {cs['target']:,}", fontsize=8)
    left.set(title="Input tokens of each model call (modelled)", xlabel="model call k", ylabel="input tokens", xticks=calls)
    right.set(title="Input tokens processed so far (modelled)", xlabel="model call k", ylabel="cumulative input tokens", xticks=calls)
    for ax in (left, right):
        _thousands(ax)
        ax.spines[["top", "right"]].set_visible(False)
        ax.legend(frameon=False, fontsize=8)
    return fig


def sweep_heatmap(grid: list[dict[str, Any]], window: int) -> Figure:
    """Total input tokens over r and number of calls; hatched cells overflow the context window."""
    rs = sorted({g["r"] for g in grid})
    ns = sorted({g["calls"] for g in grid})
    cell = {(g["r"], g["calls"]): g for g in grid}
    values = [[cell[(r, n)]["total"] for r in rs] for n in ns]
    fig, ax = plt.subplots(figsize=(10, 4.6), layout="constrained")
    image = ax.imshow(values, origin="lower", aspect="auto", cmap="viridis", norm=matplotlib.colors.LogNorm())
    for yi, n in enumerate(ns):
        for xi, r in enumerate(rs):
            if cell[(r, n)]["overflows"]:
                ax.add_patch(matplotlib.patches.Rectangle((xi - 0.5, yi - 0.5), 1, 1, fill=False, hatch="///", edgecolor="white", linewidth=0))
    ax.set_xticks(range(len(rs)), [f"{r:,}" for r in rs], rotation=45, fontsize=8)
    ax.set_yticks(range(len(ns)), [str(n) for n in ns], fontsize=8)
    ax.set(title=f"Input tokens processed per session (modelled); hatched: a call exceeds the {window:,}-token window",
           xlabel="r: tokens added per turn (tool result size)", ylabel="model calls per session")
    fig.colorbar(image, ax=ax, label="total input tokens (log scale)")
    return fig


def growth_per_call(rows: list[dict[str, Any]], order_id: str, label: str = "tiktoken-estimated") -> Figure:
    """Stacked input of each model call for one order: base, resent earlier turns, the newest turn."""
    fig, ax = plt.subplots(figsize=(9, 4.2), layout="constrained")
    x, ticks = 0, []
    for design in _present(r["design"] for r in rows if r["orderId"] == order_id):
        row = next(r for r in rows if r["design"] == design and r["orderId"] == order_id)
        for k, total in enumerate(row["inputs"], start=1):
            newest = row["additions"][k - 2] if k > 1 else 0
            resent = total - row["base"] - newest
            color = DESIGN_COLORS[design]
            ax.bar(x, row["base"], color=color, alpha=0.35, edgecolor=color)
            ax.bar(x, resent, bottom=row["base"], color=color, alpha=0.65, edgecolor=color, hatch="..")
            ax.bar(x, newest, bottom=row["base"] + resent, color=color, edgecolor=color)
            ax.text(x, total * 1.01, f"{total:,}", ha="center", va="bottom", fontsize=8)
            ticks.append((x, f"{design}\ncall {k}"))
            x += 1
        x += 0.6
    ax.set_xticks([t[0] for t in ticks], [t[1] for t in ticks], fontsize=8)
    handles = [matplotlib.patches.Patch(facecolor="grey", alpha=a, hatch=h, label=l) for a, h, l in
               ((0.35, None, "base: instructions, tool definitions, question"), (0.65, "..", "earlier turns, resent"), (1.0, None, "newest turn: calls and results"))]
    ax.legend(handles=handles, frameon=False, fontsize=8, loc="upper left")
    ax.set(title=f"{order_id}: input tokens of each model call ({label})", ylabel="input tokens",
           xlabel="model call, by design")
    _thousands(ax)
    ax.margins(y=0.12)
    ax.spines[["top", "right"]].set_visible(False)
    return fig


def totals_per_case(rows: list[dict[str, Any]]) -> Figure:
    """Bar chart: input tokens processed per investigation, granular vs focused, per order (estimated)."""
    orders = list(dict.fromkeys(r["orderId"] for r in rows))
    by = {(r["design"], r["orderId"]): r["total"] for r in rows}
    values = {d: [by[(d, o)] for o in orders] for d in _present(r["design"] for r in rows)}
    return _paired_bars(orders, values, "Input tokens per investigation, all model calls (tiktoken-estimated)", "input tokens",
                        "order")


def recorded_medians(rows: list[dict[str, Any]], label: str, runs: str = "recorded") -> Figure:
    """Small multiples: per design, the median per conversation of turns, tool calls, result bytes and tokens."""
    panels = [("turns", "model turns", "count"), ("toolCalls", "tool calls", "count"),
              ("resultBytes", "tool result bytes", "bytes (measured)"), ("totalTokens", "tokens, input + output", f"tokens ({label})")]
    if all(r["modelledElapsedMs"] is not None for r in rows):
        panels.append(("modelledElapsedMs", "elapsed time", "ms (modelled)"))
    # Under 12 inches wide so the chart is shown at full size on a laptop-width page.
    fig, axes = plt.subplots(1, len(panels), figsize=(2.2 * len(panels) + 0.8, 3.8), layout="constrained")
    shown = _present(r["design"] for r in rows)
    for ax, (key, title, unit) in zip(axes, panels):
        values = []
        for design in shown:
            vals = sorted(r[key] for r in rows if r["design"] == design)
            values.append(vals[len(vals) // 2] if len(vals) % 2 else (vals[len(vals) // 2 - 1] + vals[len(vals) // 2]) / 2)
        bars = ax.bar(shown, values, color=[DESIGN_COLORS[d] for d in shown])
        ax.bar_label(bars, fmt="{:,.0f}", fontsize=9)
        ax.set_title(f"median {title}", fontsize=10)
        ax.set_ylabel(unit, fontsize=9)
        ax.margins(y=0.15)
        ax.spines[["top", "right"]].set_visible(False)
        _thousands(ax)
        if unit == "count":
            ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    fig.suptitle(f"Recorded runs ({runs}): median per conversation, by design")
    return fig


def scale_lines(rows: list[dict[str, Any]], key: str, title: str, ylabel: str, lines: dict[str, float] | None = None) -> Figure:
    """Log-log lines of one measure against the order's line count, one line per design, with reference lines."""
    fig, ax = plt.subplots(figsize=(9, 4.2), layout="constrained")
    for design in _present(r["design"] for r in rows):
        mine = sorted((r for r in rows if r["design"] == design), key=lambda r: r["lines"])
        ax.plot([r["lines"] for r in mine], [r[key] for r in mine], marker="o", color=DESIGN_COLORS[design], label=design)
    for label, value in (lines or {}).items():
        ax.axhline(value, color="black", linestyle="--", linewidth=1)
        # x in axes fraction, y in data: the label stays at the left edge whatever the x scale becomes.
        ax.text(0.01, value * 1.15, f"{label} {value:,.0f}", fontsize=8, transform=ax.get_yaxis_transform())
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set(title=title, xlabel="order size (item lines, log scale)", ylabel=ylabel)
    ax.legend(title="design", frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return fig


# Client profiles are not designs: their own colours (Okabe-Ito sky blue, vermillion, reddish purple).
PROFILE_COLORS = {"python": "#56B4E9", "csharp-mcp": "#D55E00", "csharp-mcp-relaxed": "#CC79A7"}


def framing_by_record(rows: list[dict[str, Any]]) -> Figure:
    """Bars per record type: tokens of the same result as each client profile frames it (tiktoken-estimated)."""
    fig, ax = plt.subplots(figsize=(10, 4), layout="constrained")
    profiles = [p for p in PROFILE_COLORS if p in rows[0]]
    width = 0.76 / len(profiles)
    for i, name in enumerate(profiles):
        xs = [x + (i - (len(profiles) - 1) / 2) * width for x in range(len(rows))]
        bars = ax.bar(xs, [r[name] for r in rows], width, label=name, color=PROFILE_COLORS[name])
        ax.bar_label(bars, fmt="{:,.0f}", fontsize=8, padding=2)
    ax.set_xticks(range(len(rows)), [f"{r['tool']}\n{r['bytes']:,} bytes" for r in rows], fontsize=9)
    ax.set(title="One result, three client framings: tokens the model reads (tiktoken-estimated)",
           ylabel="tokens of the function output", xlabel="tool result (ORD-1004), with its bytes of JSON text")
    _thousands(ax)
    ax.margins(y=0.15)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(title="client profile", frameon=False)
    return fig


# Line styles of the price charts: the same design, priced two ways or called two ways.
_STYLES = {"no caching": "-", "every prefix a hit": "--", "parallel": "-", "sequential": "--"}


def _style_legend(ax: Any, styles: Iterable[str], designs_shown: Iterable[str], title: str, extra: Iterable[Any] = ()) -> None:
    """One legend: a coloured line per design, then a grey line per style, then any extra handles."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=DESIGN_COLORS[d], label=d) for d in designs_shown]
    handles += [Line2D([], [], color="grey", linestyle=_STYLES[s], label=s) for s in styles] + list(extra)
    ax.legend(handles=handles, title=title, frameon=False, fontsize=8)


def caching_curve(curve: list[dict[str, Any]], model: str, conversations: int) -> Figure:
    """The case study's sessions of 1 to 15 calls on one model: price without caching (solid) and with every
    prefix a hit (dashed), for its broad and scoped designs."""
    fig, ax = plt.subplots(figsize=(9, 4.2), layout="constrained")
    for design in ("broad", "scoped"):
        for mode in ("no caching", "every prefix a hit"):
            mine = [r for r in curve if r["design"] == design and r["caching"] == mode]
            ax.plot([r["calls"] for r in mine], [r["dollars"] for r in mine], color=CASE_STUDY_COLORS[design],
                    linestyle=_STYLES[mode], marker="o", markersize=3, label=f"{design} tools, {mode}")
    ax.set(title=f"The case study's sessions on {model}, input priced, with and without prompt caching (modelled)",
           xlabel="model calls per session", ylabel=f"USD per {conversations:,} sessions")
    _thousands(ax)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(frameon=False, fontsize=8)
    return fig


def _styled_lines(rows: list[dict[str, Any]], style_key: str, styles: tuple[str, ...], value: Callable[[dict[str, Any]], float],
                  title: str, ylabel: str, legend_title: str, marker: str | None = "o", extra: Iterable[Any] = ()) -> tuple[Figure, Any]:
    """Log-log lines of a value against the order's lines: a colour per design, a line style per value of style_key."""
    fig, ax = plt.subplots(figsize=(9, 4.2), layout="constrained")
    shown = _present(r["design"] for r in rows)
    for design in shown:
        for style in styles:
            line = sorted((r for r in rows if r["design"] == design and r[style_key] == style), key=lambda r: r["lines"])
            ax.plot([r["lines"] for r in line], [value(r) for r in line], color=DESIGN_COLORS[design],
                    linestyle=_STYLES[style], marker=marker, markersize=4)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set(title=title, xlabel="order size (item lines, log scale)", ylabel=ylabel)
    _style_legend(ax, styles, shown, legend_title, extra)
    ax.spines[["top", "right"]].set_visible(False)
    return fig, ax


def prefix_by_size(rows: list[dict[str, Any]], threshold: int) -> Figure:
    """Log-log: the longest prefix a later call could read, against the order's lines, per design and call
    strategy, with the cache threshold: above the line, caching starts."""
    fig, ax = _styled_lines(rows, "strategy", ("parallel", "sequential"), lambda r: max(r["longestPrefix"], 1),
                            "Longest prefix a later call could read from the cache (tiktoken-estimated, modelled)",
                            "tokens (log scale)", "design, call strategy")
    ax.axhline(threshold, color="black", linestyle=":", linewidth=1)
    ax.text(0.01, threshold * 1.15, f"cache threshold {threshold:,} tokens", fontsize=8, transform=ax.get_yaxis_transform())
    return fig


def price_per_conversations(rows: list[dict[str, Any]], models: list[str], conversations: int, order: str) -> Figure:
    """Bars per model and design: USD per n conversations of one order without caching; a black diamond marks the
    price with every prefix a hit."""
    fig, ax = plt.subplots(figsize=(10, 4.2), layout="constrained")
    cell = {(r["model"], r["design"], r["caching"]): r["dollars"] for r in rows}
    shown = _present(r["design"] for r in rows)
    width = 0.76 / len(shown)
    for i, design in enumerate(shown):
        xs = [x + (i - (len(shown) - 1) / 2) * width for x in range(len(models))]
        bars = ax.bar(xs, [cell[(m, design, "no caching")] for m in models], width, color=DESIGN_COLORS[design], label=design)
        ax.bar_label(bars, fmt="${:,.2f}", fontsize=8, padding=2)
        ax.scatter(xs, [cell[(m, design, "every prefix a hit")] for m in models], marker="D", color="black", s=14, zorder=3)
    ax.scatter([], [], marker="D", color="black", s=14, label="every prefix a hit")
    ax.set_xticks(range(len(models)), models, fontsize=9)
    ax.set(title=f"{conversations:,} {order} conversations per model and design, priced (modelled)",
           ylabel=f"USD per {conversations:,} conversations", xlabel="model (genai-prices prices)")
    ax.margins(y=0.15)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(title="design (bars: no caching)", frameon=False, fontsize=8)
    return fig


def price_by_size(rows: list[dict[str, Any]], model: str, conversations: int) -> Figure:
    """Log-log: USD per n conversations against the order's lines, per design, without caching (solid) and with
    every prefix a hit (dashed); hollow markers where some call exceeds the context window."""
    from matplotlib.lines import Line2D

    mine = [r for r in rows if r["model"] == model]
    hollow = Line2D([], [], color="grey", marker="o", markerfacecolor="white", linestyle="", label="a call exceeds the window")
    fig, ax = _styled_lines(mine, "caching", ("no caching", "every prefix a hit"), lambda r: r["dollars"],
                            f"Price of {conversations:,} conversations on {model} as orders grow (modelled)",
                            f"USD per {conversations:,} conversations (log scale)", "design, caching", None, [hollow])
    for fits in (True, False):
        points = [r for r in mine if r["fitsWindow"] == fits]
        ax.scatter([r["lines"] for r in points], [r["dollars"] for r in points], s=18, zorder=3,
                   facecolors=[DESIGN_COLORS[r["design"]] if fits else "white" for r in points],
                   edgecolors=[DESIGN_COLORS[r["design"]] for r in points])
    return fig


def strategy_by_size(rows: list[dict[str, Any]]) -> Figure:
    """Log-log: input tokens of the whole session against the order's lines, per design, with every call of a turn
    in one request (solid) and one call per request (dashed)."""
    return _styled_lines(rows, "strategy", ("parallel", "sequential"), lambda r: r["totalInput"],
                         "Input tokens of the whole session by call strategy (tiktoken-estimated, modelled)",
                         "input tokens, all requests (log scale)", "design, call strategy")[0]
