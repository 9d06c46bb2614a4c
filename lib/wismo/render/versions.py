"""What each HTML version of a report holds: the reader's keeps what a reader needs to decide, each run of forensic
cells (tagged full-only) replaced by one sentence linking to the full version, where an anchor marks the spot; both
carry the title the notebook's results give it."""

from __future__ import annotations

import re
from typing import Any

FULL_ONLY = "full-only"  # a cell's tag: forensic detail, shown in the full version only
ANCHOR = "wismo-detail-{n}"


def _tagged(cell: Any) -> bool:
    return FULL_ONLY in cell.get("metadata", {}).get("tags", [])


def _runs(cells: list[Any]) -> list[tuple[int, int]]:
    """Each maximal run of consecutive full-only cells, as (first index, index after the last)."""
    runs, start = [], None
    for i, cell in enumerate([*cells, None]):
        tagged = cell is not None and _tagged(cell)
        if tagged and start is None:
            start = i
        elif not tagged and start is not None:
            runs.append((start, i))
            start = None
    return runs


def _what(cells: list[Any]) -> str:
    """What a run of forensic cells holds, in a few words: its first cell's wismo.detail, else its first heading."""
    said = cells[0].get("metadata", {}).get("wismo", {}).get("detail")
    if said:
        return said
    for cell in cells:
        if cell.get("cell_type") == "markdown":
            for line in "".join(cell.get("source", "")).splitlines():
                if line.startswith("#"):
                    return re.sub(r"^#+\s*(\d+\.\s*)?", "", line).strip()
    return "More detail"


def for_reader(nb: Any, full_page: str, markdown_cell: Any) -> None:
    """Replace each run of full-only cells with one sentence and a link to the same place in the full version."""
    cells = list(nb.cells)
    for n, (a, b) in reversed(list(enumerate(_runs(cells), start=1))):
        what = _what(cells[a:b]).rstrip(".")
        cells[a:b] = [markdown_cell(f"*{what}: in the [full version]({full_page}#{ANCHOR.format(n=n)}).*")]
    nb.cells = cells


def for_full(nb: Any, markdown_cell: Any) -> None:
    """Mark where each run of full-only cells starts, for the reader's version to link to."""
    cells = list(nb.cells)
    for n, (a, _) in reversed(list(enumerate(_runs(cells), start=1))):
        cells.insert(a, markdown_cell(f'<a id="{ANCHOR.format(n=n)}"></a>'))
    nb.cells = cells


def retitle(nb: Any, title: str) -> None:
    """Give the page's first heading the title its results give it (the notebook keeps its own)."""
    for cell in nb.cells:
        if cell.get("cell_type") != "markdown":
            continue
        lines = "".join(cell.source).splitlines()
        for i, line in enumerate(lines):
            if line.startswith("# "):
                lines[i] = f"# {title}"
                cell.source = "\n".join(lines)
                return
