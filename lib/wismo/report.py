"""`make report`: execute every notebook with papermill, render a reader's and a full HTML version, write an index."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from . import figures as key_figures
from . import index_page
from .figures import Figure
from .paths import NOTEBOOKS, output_dir
from .progress import bar

KERNEL = "python3"
EXECUTION_TIMEOUT_S = 600
START_TIMEOUT_S = 120
TEMPLATES = Path(__file__).parent / "templates"
# The kernel's only start-up warning is that it talks plain TCP on localhost; it would break the progress bar.
KERNEL_ARGUMENTS = ["--IPKernelApp.log_level=ERROR"]
FULL, READER = "Full version with code", "Reader's version: narrative, tables and charts"


@dataclass
class Rendered:
    """One executed notebook: its title, what it shows, its key figures, when it ran, and where its copies went."""

    name: str
    title: str
    summary: str
    executed: Path
    html: Path
    reader: Path
    ran_at: str = ""
    duration_s: float = 0.0
    figures: list[Figure] = field(default_factory=list)


def notebook_info(path: Path) -> tuple[str, str]:
    """The notebook's title (its first heading) and its one-line summary (metadata wismo.summary)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    summary = nb.get("metadata", {}).get("wismo", {}).get("summary", "")
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if line.startswith("# "):
                    return line[2:].strip(), summary
    return path.stem, summary


def execute(path: Path, out: Path, parameters: dict | None = None) -> Path:
    """Run one notebook headless with papermill into out/notebooks/; raises if any cell fails."""
    import papermill

    target = out / "notebooks" / path.name
    target.parent.mkdir(parents=True, exist_ok=True)
    papermill.execute_notebook(
        str(path), str(target),
        parameters={"output_dir": str(out), **(parameters or {})},
        kernel_name=KERNEL, cwd=str(path.parent), progress_bar=False,
        execution_timeout=EXECUTION_TIMEOUT_S, start_timeout=START_TIMEOUT_S,
        extra_arguments=KERNEL_ARGUMENTS,
    )
    return target


def _drop_stderr(nb) -> None:
    """Remove stderr streams (progress bars, warnings): the reader's version shows narrative and results only."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.outputs if not (o.output_type == "stream" and o.name == "stderr")]


def to_html(executed: Path, out: Path, reader: bool = False, title: str | None = None) -> Path:
    """Render an executed notebook to one self-contained HTML page in out/html/: full, or the reader's version."""
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
    nb.metadata["title"] = (title or executed.stem) + (" (reader's version)" if reader else " (with code)")
    exporter = HTMLExporter(
        template_name="wismo", extra_template_basedirs=[str(TEMPLATES)],
        exclude_input=reader, exclude_input_prompt=reader, exclude_output_prompt=reader,
    )
    links = {"index_href": "../index.html", "this_version": READER if reader else FULL,
             "other_href": full_page if reader else reader_page, "other_version": FULL if reader else "Reader's version"}
    body, _ = exporter.from_notebook_node(nb, resources={"wismo": links})
    target = out / "html" / (reader_page if reader else full_page)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(body, encoding="utf-8")
    return target


def ran(executed: Path) -> tuple[str, float]:
    """When the executed notebook finished (papermill's end_time, ISO 8601) and how long it took, in seconds."""
    meta = json.loads(executed.read_text(encoding="utf-8")).get("metadata", {}).get("papermill", {})
    return meta.get("end_time") or "", float(meta.get("duration") or 0.0)


def render(path: Path, executed: Path, out: Path) -> Rendered:
    """Both HTML versions of an executed notebook, with its key figures read from the JSON it wrote."""
    title, summary = notebook_info(path)
    nb = json.loads(path.read_text(encoding="utf-8"))
    found = key_figures.key_figures(nb, out, path.name)
    ran_at, duration = ran(executed)
    return Rendered(path.stem, title, summary, executed, to_html(executed, out, title=title),
                    to_html(executed, out, reader=True, title=title), ran_at, duration, found)


def write_index(rendered: list[Rendered], out: Path) -> Path:
    """outputs/index.html: one entry per report with its title, what it shows, key figures and links."""
    target = out / "index.html"
    target.write_text(index_page.render(rendered, out), encoding="utf-8")
    return target


def build(notebooks: list[Path] | None = None, out: str | Path | None = None) -> list[Rendered]:
    """Execute and render every notebook (default: notebooks/*.ipynb), then write the index."""
    out_path = output_dir(out)
    paths = notebooks or sorted(NOTEBOOKS.glob("*.ipynb"))
    rendered = []
    with bar(len(paths), "reports", unit="notebook") as progress:
        for path in paths:
            progress.set_postfix_str(path.stem)
            rendered.append(render(path, execute(path, out_path), out_path))
            progress.update(1)
            progress.write(f"{path.name}: executed in {rendered[-1].duration_s:.1f} s -> "
                           f"{rendered[-1].reader.relative_to(out_path)}, {rendered[-1].html.relative_to(out_path)}")
    write_index(rendered, out_path)
    return rendered
