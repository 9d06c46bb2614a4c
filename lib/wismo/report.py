"""`make report`: execute every notebook with papermill, render each to HTML, and write an index page."""

from __future__ import annotations

import html
import json
import time
from dataclasses import dataclass
from pathlib import Path

from .paths import NOTEBOOKS, output_dir

KERNEL = "python3"
EXECUTION_TIMEOUT_S = 600
START_TIMEOUT_S = 120


@dataclass
class Rendered:
    """One executed notebook: its title, one line on what it shows, and where its copies went."""

    name: str
    title: str
    summary: str
    executed: Path
    html: Path
    seconds: float


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
    )
    return target


def to_html(executed: Path, out: Path) -> Path:
    """Render an executed notebook to a self-contained HTML page in out/html/."""
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter(template_name="lab").from_filename(str(executed))
    target = out / "html" / (executed.stem + ".html")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(body, encoding="utf-8")
    return target


def write_index(rendered: list[Rendered], out: Path) -> Path:
    """outputs/index.html: one entry per report with its title, what it shows and a link."""
    items = "\n".join(
        f'<li><a href="html/{html.escape(r.html.name)}">{html.escape(r.title)}</a>'
        f"<p>{html.escape(r.summary)}</p></li>"
        for r in rendered
    )
    page = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>wismo reports</title>"
        "<style>body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;line-height:1.5}"
        "li{margin-bottom:1rem}p{margin:.2rem 0;color:#333}</style></head><body>"
        "<h1>wismo reports</h1><p>Where is my order? A granular and a focused MCP tool design, compared.</p>"
        f"<ul>{items}</ul></body></html>\n"
    )
    target = out / "index.html"
    target.write_text(page, encoding="utf-8")
    return target


def build(notebooks: list[Path] | None = None, out: str | Path | None = None) -> list[Rendered]:
    """Execute and render every notebook (default: notebooks/*.ipynb), then write the index."""
    out_path = output_dir(out)
    paths = notebooks or sorted(NOTEBOOKS.glob("*.ipynb"))
    rendered = []
    for path in paths:
        started = time.perf_counter()
        executed = execute(path, out_path)
        page = to_html(executed, out_path)
        title, summary = notebook_info(path)
        rendered.append(Rendered(path.stem, title, summary, executed, page, time.perf_counter() - started))
        print(f"{path.name}: executed and rendered in {rendered[-1].seconds:.1f} s -> {page.relative_to(out_path)}")
    write_index(rendered, out_path)
    return rendered
