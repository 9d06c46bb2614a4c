"""The traces report's chart: each recurring chain's share of conversations beside its modelled saving."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

SHARE, SAVING = "#56B4E9", "#009E73"  # Okabe-Ito sky blue and bluish green: not the designs' colours


def chains_by_share_and_saving(result: dict[str, Any], top: int = 8) -> Figure:
    """Horizontal bars, one row per chain (the `top` most common): the share of conversations that show it, and the
    input tokens one focused call would save per conversation (modelled from the traced token counts)."""
    chains = result["chains"][:top]
    # A chain several models answered shows its largest model's saving, named: two models are never pooled.
    labels = [
        (c.get("shown") or " → ".join(c["tools"]) or "(no tool call)")
        + (f"\n({c['byModel'][0]['model']}, 1 of {len(c['byModel'])} models)" if len(c.get("byModel", [])) > 1 else "")
        for c in chains
    ][::-1]
    shares = [100 * c["share"] for c in chains][::-1]
    saved = [
        c["byModel"][0]["savedInputPerConversation"]
        if len(c.get("byModel", [])) > 1
        else c["saving"]["inputTokensSavedPerConversation"]
        for c in chains
    ][::-1]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 1.2 + 0.55 * len(chains)), sharey=True, layout="constrained")
    left.barh(labels, shares, color=SHARE)
    left.set_xlabel("conversations showing the chain (%)")
    left.set_title("Share of conversations (counted in the traces)", fontsize=10)
    right.barh(labels, saved, color=SAVING)
    right.set_xlabel("input tokens saved per conversation (modelled)")
    right.set_title("Saved with one focused call (modelled)", fontsize=10)
    for ax, values, unit in ((left, shares, "%"), (right, saved, "")):
        for y, v in enumerate(values):
            ax.annotate(f"{v:,.1f}{unit}", (v, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
        ax.margins(x=0.2)
    fig.suptitle("Tool-call chains in the traces: how common each is, and what one focused call would save")
    return fig
