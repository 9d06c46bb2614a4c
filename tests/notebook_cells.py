"""Notebook 01's cells between two headings executed in this process, as stored, with what they display recorded
(sentences, the rows of each table, charts): the hostile-input sections run on a real output without a kernel."""

import json
from pathlib import Path
from unittest import mock

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "01-equivalence.ipynb"


def run_cells(start: str, end: str, namespace: dict) -> dict:
    """Execute the code cells from the markdown cell starting with `start` up to the one starting with `end`, with
    `namespace` besides the notebook's own names; what they displayed: {"markdown": [...], "tables": [rows of each],
    "charts": n}."""
    import matplotlib

    matplotlib.use("Agg")
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    first = next(i for i, c in enumerate(cells) if "".join(c["source"]).startswith(start))
    last = next(i for i, c in enumerate(cells) if "".join(c["source"]).startswith(end))
    shown = {"markdown": [], "tables": [], "charts": 0}

    def display(obj):
        if hasattr(obj, "data") and isinstance(obj.data, str) and type(obj).__name__ == "Markdown":
            shown["markdown"].append(obj.data)
        elif type(obj).__name__ == "Shown":
            shown["charts"] += 1
        else:
            shown["tables"].append(len(obj.data))  # a reader's table (a pandas Styler): its rows

    from IPython.display import Markdown

    from wismo.reports import hostile
    from wismo.reports.render import charts, tables

    names = {"hostile": hostile, "tables": tables, "charts": charts, "Markdown": Markdown, "display": display}
    with mock.patch("IPython.display.display", display):
        from wismo.reports.render.display import show

        names = names | {"show": show} | namespace
        for cell in cells[first:last]:
            if cell["cell_type"] == "code":
                exec("".join(cell["source"]), names)
    return shown
