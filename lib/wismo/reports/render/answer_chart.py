"""The index's picture of the answer: every model request of the focus case per design, stacked by what it carries
(instructions, definitions, earlier turns resent, the newest turn), with the study's published requests marked."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import matplotlib.artist
import matplotlib.lines
import matplotlib.patches
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from wismo.reports.render.charts import DESIGN_COLORS, designs_present, thousands

# The parts of a model request, bottom to top, as the verdict's chart stacks them: (label, alpha, hatch).
REQUEST_PARTS = (
    ("instructions and question", 0.25, None),
    ("tool definitions", 0.5, "//"),
    ("history: earlier turns resent", 0.75, ".."),
    ("results: the newest turn's calls and results", 1.0, None),
)


def request_parts(row: Mapping[str, Any]) -> list[tuple[int, int, int, int]]:
    """Each request of one conversation row split into REQUEST_PARTS: instructions (the base less the definitions),
    the tool definitions, earlier turns resent, and the newest turn."""
    out = []
    for k, total in enumerate(row["inputs"], start=1):
        newest = row["additions"][k - 2] if k > 1 else 0
        out.append((row["base"] - row["toolDefinitions"], row["toolDefinitions"], total - row["base"] - newest, newest))
    return out


def answer_requests(
    rows: list[dict[str, Any]],
    case: str,
    key: str,
    profile: str,
    published: Mapping[str, list[int]] | None = None,
    published_kind: str = "published",
) -> Figure:
    """The verdict's picture: every model request of one case per design, stacked by what it carries, with the
    published requests marked where the study declares them."""
    fig, ax = plt.subplots(figsize=(9, 4.2), layout="constrained")
    x: float = 0
    ticks, marked = [], False
    for design in designs_present(r["design"] for r in rows if r[key] == case):
        row = next(r for r in rows if r["design"] == design and r[key] == case)
        color = DESIGN_COLORS[design]
        printed = list((published or {}).get(design, []))
        for k, parts in enumerate(request_parts(row), start=1):
            bottom = 0
            for value, (_, alpha, hatch) in zip(parts, REQUEST_PARTS):
                ax.bar(x, value, bottom=bottom, color=color, alpha=alpha, edgecolor=color, hatch=hatch)
                bottom += value
            ax.text(x, bottom * 1.01, f"{bottom:,}", ha="center", va="bottom", fontsize=8)
            if k <= len(printed):
                ax.plot([x - 0.42, x + 0.42], [printed[k - 1]] * 2, color="black", linewidth=2)
                ax.text(x + 0.44, printed[k - 1], f"{printed[k - 1]:,}", va="center", fontsize=8)
                marked = True
            ticks.append((x, f"{design}\nrequest {k}"))
            x += 1
        x += 0.7
    ax.set_xticks([t[0] for t in ticks], [t[1] for t in ticks], fontsize=8)
    handles: list[matplotlib.artist.Artist] = [
        matplotlib.patches.Patch(facecolor="grey", alpha=a, hatch=h, label=label) for label, a, h in REQUEST_PARTS
    ]
    if marked:
        handles.append(
            matplotlib.lines.Line2D([], [], color="black", linewidth=2, label=f"the study's request ({published_kind})")
        )
    ax.set(
        title=f"{case}: what each model request carries, per design (tiktoken-estimated, {profile} profile)",
        ylabel="input tokens per request",
        xlabel="model request, by design",
    )
    # Inside the axes, under the title, where the shorter designs leave room.
    ax.legend(handles=handles, loc="upper right", frameon=False, fontsize=8)
    thousands(ax)
    ax.margins(y=0.12)
    ax.spines[["top", "right"]].set_visible(False)
    return fig


def write_picture(out: Path, path: Path) -> Path:
    """The answer's picture from the results a build wrote into `out`, as an SVG at `path` whose bytes depend only on
    those results (no date, fixed element ids): the picture the README shows, redrawn by `make picture`."""
    from wismo.core.errors import InputError
    from wismo.reports.verdict import answer

    found = answer(out)
    if found is None:
        raise InputError(f"{out} holds no context-cost.json with a verdict: run `make report` first")
    with plt.rc_context({"svg.hashsalt": "wismo", "svg.fonttype": "path"}):
        fig = answer_requests(found.rows, found.case, found.key, found.profile, found.published)
        fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)
    return path


if __name__ == "__main__":
    import sys

    print(write_picture(Path(sys.argv[1]), Path(sys.argv[2])))
