"""One function per chart; the two designs keep the same colours in every report."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import matplotlib
import matplotlib.colors
import matplotlib.patches
import matplotlib.pyplot as plt
import matplotlib.ticker
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine

from wismo.mcp.servers import designs

if TYPE_CHECKING:
    from wismo.studies.declaration import Study


class _DesignColors(Mapping[str, str]):
    """Each design's colour: a study's own (use_study), else the registry's (wismo.mcp.servers.designs), read live so a
    design registered later has one too."""

    def __init__(self) -> None:
        self.study: dict[str, str] = {}

    def __getitem__(self, name: str) -> str:
        if name not in self:
            raise KeyError(name)  # as a Mapping does, so get() and `in` work for a design with no colour
        return self.study[name] if name in self.study else designs.get(name).color

    def __contains__(self, name: object) -> bool:
        return name in self.study or name in designs.colors()

    def __iter__(self) -> Iterator[str]:
        return iter({**designs.colors(), **self.study})

    def __len__(self) -> int:
        return len({**designs.colors(), **self.study})


# Colour-blind-safe (Okabe-Ito), declared once per design in the registry (or the study file) and used everywhere.
DESIGN_COLORS = _DesignColors()


def use_study(study: Study) -> None:
    """Draw the study's designs in the colours its file declares (the registry's for the designs wismo serves)."""
    DESIGN_COLORS.study = dict(study.colors())


def designs_present(names: Iterable[str]) -> list[str]:
    """The designs among `names`: a study's in its order, else in registry order (granular, focused, scoped, then
    registered ones)."""
    wanted = list(dict.fromkeys(names))
    order = [*DESIGN_COLORS.study, *(d for d in designs.registered() if d not in DESIGN_COLORS.study)]
    return [d for d in order if d in wanted] + [d for d in wanted if d not in order]


def legend_below(fig: Figure, title: str | None = None, **options: Any) -> None:
    """The figure's legend in one row under its axes, so a reader meets the title first and the legend clear of every
    bar and bar label (inside the axes, "best" still lands on a bar where the tallest ones stand; above them, it runs
    into the title)."""
    handles, labels = fig.axes[0].get_legend_handles_labels()
    handles, labels = options.pop("handles", handles), options.pop("labels", labels)
    fig.legend(handles, labels, title=title, loc="outside lower center", ncols=len(handles), frameon=False, **options)


# Constrained layout leaves ~8 px between side-by-side panels: a y-label then reads as the left panel's.
PANEL_GAP = {"w_pad": 0.06, "wspace": 0.08}


def _panel_gap(fig: Figure) -> None:
    """PANEL_GAP between the panels of a figure made with layout="constrained"."""
    layout = fig.get_layout_engine()
    if not isinstance(layout, ConstrainedLayoutEngine):
        raise TypeError("_panel_gap is for figures made with layout='constrained'")
    layout.set(w_pad=PANEL_GAP["w_pad"], wspace=PANEL_GAP["wspace"])


def _paired_bars(labels: list[str], values: dict[str, list[float]], title: str, ylabel: str, xlabel: str) -> Figure:
    """Side-by-side bars per label, one colour per design, each bar annotated with its value."""
    fig, ax = plt.subplots(figsize=(10, 4), layout="constrained")
    shown = designs_present(values)
    width = 0.76 / len(shown)
    for i, design in enumerate(shown):
        xs = [x + (i - (len(shown) - 1) / 2) * width for x in range(len(labels))]
        bars = ax.bar(xs, values[design], width, label=design, color=DESIGN_COLORS[design])
        ax.bar_label(bars, fmt="{:,.0f}", fontsize=8, padding=2)
    ax.set_xticks(range(len(labels)), labels, fontsize=9)
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.set_xlabel(xlabel)
    thousands(ax)
    ax.margins(y=0.15)
    ax.spines[["top", "right"]].set_visible(False)
    legend_below(fig, "design")
    return fig


def _order_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The comparison rows of real orders (the unfriendly inputs are not charted)."""
    return [r for r in result["cases"] if not r["unfriendly"]]


def _case_labels(rows: list[dict[str, Any]]) -> list[str]:
    """Two-line tick labels: the input over the case name."""
    return [f"{r['input'].strip(chr(34))}\n{r['label']}" for r in rows]


def bytes_per_case(result: dict[str, Any]) -> Figure:
    """Bar chart: UTF-8 bytes of text returned per case, per design (the reference's links all followed)."""
    rows = _order_rows(result)
    values = {d: [r[d]["bytes"] for r in rows] for d in designs_present(result["summary"]["designs"])}
    return _paired_bars(
        _case_labels(rows),
        values,
        "Evidence returned per case (measured)",
        "bytes of text in tool results",
        "case",
    )


def calls_per_case(result: dict[str, Any]) -> Figure:
    """Bar chart: MCP tools/call requests needed per case, per design."""
    rows = _order_rows(result)
    values = {d: [r[d]["calls"] for r in rows] for d in designs_present(result["summary"]["designs"])}
    fig = _paired_bars(
        _case_labels(rows),
        values,
        "MCP interactions per case (measured)",
        "tools/call requests (count)",
        "case",
    )
    fig.axes[0].yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))  # counts: whole ticks
    return fig


# The case study's two designs are not ours: they get their own pair of colours.
CASE_STUDY_COLORS = {"broad": "#CC79A7", "scoped": "#009E73"}


def thousands(ax: Axes, axis: str = "y") -> None:
    """Format an axis with thousands separators."""
    fmt = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}")
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(fmt)


def case_study_sessions(cs: dict[str, Any]) -> Figure:
    """Two panels: input tokens of each call against the window, and cumulative input against the target."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
    _panel_gap(fig)
    calls = list(range(1, cs["calls"] + 1))
    width = 0.4
    for i, name in enumerate(("broad", "scoped")):
        xs = [c + (i - 0.5) * width for c in calls]
        left.bar(
            xs,
            cs[name]["inputs"],
            width,
            color=CASE_STUDY_COLORS[name],
            label=f"{name} tools (r = {cs['r' + name.capitalize()]:,})",
        )
        right.plot(
            calls,
            cs[name]["cumulative"],
            marker="o",
            color=CASE_STUDY_COLORS[name],
            label=f"{name}: {cs[name]['total']:,} in all",
        )
    left.axhline(cs["contextWindow"], color="black", linestyle="--", linewidth=1)
    left.text(0.6, cs["contextWindow"] * 1.02, f"context window {cs['contextWindow']:,}", fontsize=8)
    right.axhline(cs["target"], color="black", linestyle=":", linewidth=1)
    right.text(1, cs["target"] * 1.05, f"session target {cs['target']:,}", fontsize=8)
    left.set(
        title="Input tokens of each model call (modelled)", xlabel="model call k", ylabel="input tokens", xticks=calls
    )
    right.set(
        title="Input tokens processed so far (modelled)",
        xlabel="model call k",
        ylabel="cumulative input tokens",
        xticks=calls,
    )
    for ax in (left, right):
        thousands(ax)
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
                ax.add_patch(
                    matplotlib.patches.Rectangle(
                        (xi - 0.5, yi - 0.5), 1, 1, fill=False, hatch="///", edgecolor="white", linewidth=0
                    )
                )
    ax.set_xticks(range(len(rs)), [f"{r:,}" for r in rs], rotation=45, fontsize=8)
    ax.set_yticks(range(len(ns)), [str(n) for n in ns], fontsize=8)
    ax.set(
        title=f"Input tokens processed per session (modelled); hatched: a call exceeds the {window:,}-token window",
        xlabel="r: tokens added per turn (tool result size)",
        ylabel="model calls per session",
    )
    fig.colorbar(image, ax=ax, label="total input tokens (log scale)")
    return fig


def growth_per_call(
    rows: list[dict[str, Any]], order_id: str, label: str = "tiktoken-estimated", key: str = "orderId"
) -> Figure:
    """Stacked input of each model call for one case: base, resent earlier turns, the newest turn."""
    fig, ax = plt.subplots(figsize=(9, 4.2), layout="constrained")
    x: float = 0
    ticks = []
    for design in designs_present(r["design"] for r in rows if r[key] == order_id):
        row = next(r for r in rows if r["design"] == design and r[key] == order_id)
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
    handles = [
        matplotlib.patches.Patch(facecolor="grey", alpha=a, hatch=h, label=label)
        for a, h, label in (
            (0.35, None, "base: instructions, tool definitions, question"),
            (0.65, "..", "earlier turns, resent"),
            (1.0, None, "newest turn: calls and results"),
        )
    ]
    ax.legend(handles=handles, frameon=False, fontsize=8, loc="upper left")
    ax.set(
        title=f"{order_id}: input tokens of each model call ({label})",
        ylabel="input tokens",
        xlabel="model call, by design",
    )
    thousands(ax)
    ax.margins(y=0.12)
    ax.spines[["top", "right"]].set_visible(False)
    return fig


def totals_per_case(rows: list[dict[str, Any]], key: str = "orderId") -> Figure:
    """Bar chart: input tokens processed per investigation, per design and case (estimated)."""
    orders = list(dict.fromkeys(r[key] for r in rows))
    by = {(r["design"], r[key]): r["total"] for r in rows}
    values = {d: [by[(d, o)] for o in orders] for d in designs_present(r["design"] for r in rows)}
    return _paired_bars(
        orders,
        values,
        "Input tokens per investigation, all model calls (tiktoken-estimated)",
        "input tokens",
        f"case ({key})",
    )


def recorded_medians(rows: list[dict[str, Any]], label: str, runs: str = "recorded") -> Figure:
    """Small multiples: per design, the median per conversation of turns, tool calls, result bytes and tokens."""
    panels = [
        ("turns", "model turns", "count"),
        ("toolCalls", "tool calls", "count"),
        ("resultBytes", "tool result bytes", "bytes (measured)"),
        ("totalTokens", "tokens, input + output", f"tokens ({label})"),
    ]
    if all(r["modelledElapsedMs"] is not None for r in rows):
        panels.append(("modelledElapsedMs", "elapsed time", "ms (modelled)"))
    # Under 12 inches wide so the chart is shown at full size on a laptop-width page.
    fig, axes = plt.subplots(1, len(panels), figsize=(2.2 * len(panels) + 0.8, 3.8), layout="constrained")
    _panel_gap(fig)
    shown = designs_present(r["design"] for r in rows)
    for ax, (key, title, unit) in zip(axes, panels):
        values = []
        for design in shown:
            vals = sorted(r[key] for r in rows if r["design"] == design)
            values.append(
                vals[len(vals) // 2] if len(vals) % 2 else (vals[len(vals) // 2 - 1] + vals[len(vals) // 2]) / 2
            )
        bars = ax.bar(shown, values, color=[DESIGN_COLORS[d] for d in shown])
        ax.bar_label(bars, fmt="{:,.0f}", fontsize=9)
        ax.set_title(f"median {title}", fontsize=10)
        # A long kind ("tokens (scripted (no model), tiktoken-estimated)") on two lines: one would take a panel's
        # width off its bars.
        ax.set_ylabel(textwrap.fill(unit, 28), fontsize=9)
        ax.margins(y=0.15)
        ax.spines[["top", "right"]].set_visible(False)
        thousands(ax)
        if unit == "count":
            ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    fig.suptitle(f"Recorded runs ({runs}): median per conversation, by design")
    return fig


def scale_lines(
    rows: list[dict[str, Any]], key: str, title: str, ylabel: str, lines: dict[str, float] | None = None
) -> Figure:
    """Log-log lines of one measure against the order's line count, one line per design, with reference lines."""
    fig, ax = plt.subplots(figsize=(9, 4.2), layout="constrained")
    for design in designs_present(r["design"] for r in rows):
        mine = sorted((r for r in rows if r["design"] == design), key=lambda r: r["lines"])
        ax.plot(
            [r["lines"] for r in mine], [r[key] for r in mine], marker="o", color=DESIGN_COLORS[design], label=design
        )
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
PROFILE_COLORS = {"python": "#56B4E9", "csharp-raw-element": "#D55E00", "csharp-relaxed": "#CC79A7"}


def framing_by_record(rows: list[dict[str, Any]], case: str) -> Figure:
    """Bars per record type: tokens of the same result as each client profile frames it (tiktoken-estimated), for
    one case (`case` as the axis names it: the study's key and its value)."""
    fig, ax = plt.subplots(figsize=(10, 4), layout="constrained")
    profiles = [p for p in PROFILE_COLORS if p in rows[0]]
    width = 0.76 / len(profiles)
    for i, name in enumerate(profiles):
        xs = [x + (i - (len(profiles) - 1) / 2) * width for x in range(len(rows))]
        bars = ax.bar(xs, [r[name] for r in rows], width, label=name, color=PROFILE_COLORS[name])
        ax.bar_label(bars, fmt="{:,.0f}", fontsize=8, padding=2)
    ax.set_xticks(range(len(rows)), [f"{r['tool']}\n{r['bytes']:,} bytes" for r in rows], fontsize=9)
    ax.set(
        title="One result, three client framings: tokens the model reads (tiktoken-estimated)",
        ylabel="tokens of the function output",
        xlabel=f"tool result ({case}), with its bytes of text",
    )
    thousands(ax)
    ax.margins(y=0.15)
    ax.spines[["top", "right"]].set_visible(False)
    legend_below(fig, "client profile")
    return fig


def session_memory(bound: dict[str, Any], before: dict[str, Any] | None = None) -> Figure:
    """The server's memory above its start as abandoned Streamable HTTP sessions accumulate, on wismo's limits
    (and on the SDK's defaults, measured the same way, when given), beside the bound."""
    fig, ax = plt.subplots(figsize=(8, 3.8), layout="constrained")
    lines = [(bound, DESIGN_COLORS[bound["design"]], "o", "wismo's limits")]
    if before is not None:
        lines.append((before, "grey", "s", "the SDK's defaults"))
    for run, color, marker, name in lines:
        points = run["curve"]
        ax.plot(
            [p["sessions"] for p in points],
            [p["rssAboveStartMb"] for p in points],
            marker=marker,
            color=color,
            label=f"{name}: at most {run['maxSessions']:,} sessions, {run['idleTimeoutS'] / 60:g} min idle",
        )
    ax.axhline(bound["boundMb"], color="black", linestyle="--", linewidth=1)
    ax.annotate(f"bound: {bound['boundMb']:g} MB", (0, bound["boundMb"]), xytext=(4, 4), textcoords="offset points")
    top = max([bound["boundMb"], *(p["rssAboveStartMb"] for run, *_ in lines for p in run["curve"])])
    ax.set(
        title=f"{bound['design']} server over Streamable HTTP: memory as sessions are abandoned (measured)",
        xlabel="sessions opened and abandoned",
        ylabel="resident memory above start (MB)",
        ylim=(0, top * 1.15),
    )
    thousands(ax, "x")
    ax.spines[["top", "right"]].set_visible(False)
    legend_below(fig)
    return fig
