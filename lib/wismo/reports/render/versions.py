"""The two HTML versions of a report: the reader's keeps what a reader needs to decide, each run of forensic cells
(tagged full-only) replaced by one sentence linking to the full version, where an anchor marks the spot; both carry
the title the notebook's results give it and a bar linking the index, the other version and the other reports."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, cast

from wismo.core.paths import NOTEBOOKS

TEMPLATES = Path(__file__).parent / "templates"
FULL, READER = "Full version with code", "Reader's version: narrative, tables and charts"

FULL_ONLY = "full-only"  # a cell's tag: forensic detail, shown in the full version only
ANCHOR = "wismo-detail-{n}"


def _tagged(cell: Any) -> bool:
    return FULL_ONLY in cell.get("metadata", {}).get("tags", [])


def _runs(cells: list[object]) -> list[tuple[int, int]]:
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
        return cast("str", said)
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


def _drop_stderr(nb: Any) -> None:
    """Remove stderr streams (progress bars, warnings): the reader's version shows narrative and results only."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.outputs if not (o.output_type == "stream" and o.name == "stderr")]


def to_html(executed: Path, out: Path, reader: bool = False, title: str | None = None) -> Path:
    """Render an executed notebook to one self-contained HTML page in out/html/: full, or the reader's version
    (without its forensic cells, each run of them one linked sentence)."""
    import nbformat
    from nbconvert import HTMLExporter
    from nbconvert.preprocessors import CoalesceStreamsPreprocessor

    nb = nbformat.read(executed, as_version=4)
    # A progress bar is one stream output per refresh; merged, its carriage returns leave only the final state.
    nb, _ = CoalesceStreamsPreprocessor().preprocess(nb, {})
    full_page = f"{executed.stem}.html"
    reader_page = f"{executed.stem}-reader.html"
    if reader:
        _drop_stderr(nb)
        for_reader(nb, full_page, nbformat.v4.new_markdown_cell)
    else:
        for_full(nb, nbformat.v4.new_markdown_cell)
    if title:
        retitle(nb, title)
    nb.metadata["title"] = (title or executed.stem) + (" (reader's version)" if reader else " (with code)")
    exporter = HTMLExporter(
        template_name="wismo",
        extra_template_basedirs=[str(TEMPLATES)],
        exclude_input=reader,
        exclude_input_prompt=reader,
        exclude_output_prompt=reader,
    )
    links = {
        "index_href": "../index.html",
        "this_version": READER if reader else FULL,
        "other_href": full_page if reader else reader_page,
        "other_version": FULL if reader else "Reader's version",
        "pages": [
            {"href": f"{stem}-reader.html", "name": name, "current": stem == executed.stem} for stem, name in _pages()
        ],
    }
    body, _ = exporter.from_notebook_node(nb, resources={"wismo": links})
    target = out / "html" / (reader_page if reader else full_page)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(body, encoding="utf-8")
    return target


def _pages() -> list[tuple[str, str]]:
    """Every report's page stem and its short name ("02 context cost"), for the bar that links the pages."""
    return [(p.stem, p.stem.replace("-", " ", 1).replace("-", " ")) for p in sorted(NOTEBOOKS.glob("*.ipynb"))]
