"""How a notebook shows a chart: its finding first, then the PNG with alt text (the chart's title and that finding)."""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.figure import Figure


def title_of(fig: Figure) -> str:
    """A chart's title: the figure's suptitle, else its axes' titles joined."""
    suptitle = fig.get_suptitle() if hasattr(fig, "get_suptitle") else ""
    return suptitle or "; ".join(t for ax in fig.axes if (t := ax.get_title()))


class Shown:
    """A chart as a notebook shows it: its one-line finding, then the PNG with alt text (title and finding)."""

    def __init__(self, fig: Figure, finding: str, dpi: int = 100) -> None:
        import base64
        import io

        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
        plt.close(fig)  # drawn once, here; the inline backend must not show it again
        self.png = base64.b64encode(buffer.getvalue()).decode("ascii")
        self.finding = finding
        self.alt = f"{title_of(fig)}. {finding}"

    def _repr_mimebundle_(
        self, include: object = None, exclude: object = None
    ) -> tuple[dict[str, object], dict[str, object]]:
        return ({"image/png": self.png, "text/plain": self.alt}, {"image/png": {"alt": self.alt}})


def show(fig: Figure, finding: str) -> None:
    """Display a chart now, wherever the call stands in its cell, after the sentence saying what to see in it; its
    alt text is its title and that sentence. Returns None, so a call that ends a cell does not show it twice."""
    from IPython.display import Markdown, display

    display(Markdown(finding))
    display(Shown(fig, finding))
