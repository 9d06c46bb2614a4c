"""Benchmark 5: `make report` in total (its command, `wismo report`, into a scratch folder) on a warm environment,
each notebook's execution time and its heaviest cells from papermill's own record; the floor is one empty
notebook executed and rendered through the same machinery."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from wismo.bench.child import timed
from wismo.bench.floors import notebooks_command, warm_command, write_empty_notebook
from wismo.bench.settings import Settings
from wismo.bench.stats import check_ratio, figure, median, summary
from wismo.core.processes import interpreter

HEAVIEST_CELLS = 5


def papermill_durations(folder: Path) -> dict[str, dict[str, Any]]:
    """Per executed notebook in folder/notebooks: its execution seconds and each code cell's, from papermill."""
    out = {}
    for path in sorted((folder / "notebooks").glob("*.ipynb")):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        total = notebook.get("metadata", {}).get("papermill", {}).get("duration")
        if total is None:
            continue
        cells = {}
        for index, cell in enumerate(notebook.get("cells", [])):
            seconds = cell.get("metadata", {}).get("papermill", {}).get("duration")
            if cell.get("cell_type") == "code" and seconds is not None:
                # Labelled by its execution count, the In [n] a reader sees in the rendered report.
                label = cell.get("execution_count") or index
                cells[label] = {"seconds": float(seconds), "firstLine": first_statement(cell.get("source", ""))}
        out[path.stem] = {"seconds": float(total), "cells": cells}
    return out


def first_statement(source: str | list[str]) -> str:
    """The first line of a cell that says what it does: not blank, a comment, a magic or an import."""
    lines = [line.strip() for line in "".join(source).splitlines()]
    telling = [line for line in lines if line and not line.startswith(("#", "%", "import ", "from "))]
    return (telling or [line for line in lines if line] or [""])[0][:80]


def heaviest_cells(runs: list[dict[str, dict[str, Any]]], top: int = HEAVIEST_CELLS) -> list[dict[str, Any]]:
    """The code cells with the longest median execution over the runs, with their notebook and first line."""
    seen: dict[tuple[str, int], dict[str, Any]] = {}
    for run in runs:
        for name, notebook in run.items():
            for index, cell in notebook["cells"].items():
                entry = seen.setdefault(
                    (name, index), {"notebook": name, "cell": index, "firstLine": cell["firstLine"], "samples": []}
                )
                entry["samples"].append(cell["seconds"])
    ranked = sorted(seen.values(), key=lambda e: -median(e["samples"]))[:top]
    return [
        {
            "notebook": e["notebook"],
            "cell": e["cell"],
            "firstLine": e["firstLine"],
            "medianSeconds": round(median(e["samples"]), 3),
        }
        for e in ranked
    ]


def _explain_total(per_notebook: dict[str, list[float]], total_s: float) -> str:
    """Where the time of the whole report goes, notebook by notebook, from this run's own figures."""
    ranked = sorted(per_notebook.items(), key=lambda kv: -median(kv[1]))
    shares = ", ".join(f"{name} {median(v):.1f} s" for name, v in ranked)
    executing = sum(median(v) for v in per_notebook.values())
    longest = median(ranked[0][1]) if ranked else 0.0
    # The notebooks run in parallel: their executions overlap, so only the longest one bounds the wall time.
    return (
        f"{total_s:.1f} s in all: the notebooks' executions by papermill's record ({shares}) sum to {executing:.1f} s "
        f"of work, run in parallel; the longest, {longest:.1f} s, leaves {total_s - longest:.1f} s of the total to "
        "process starts, waiting for a core, rendering HTML and the index"
    )


def _explain_ratio(notebooks: int, cells: list[dict[str, object]], total_s: float, floor_s: float) -> str:
    """How much of the ratio to one empty notebook is fixed cost and how much is the notebooks' own cells."""
    heavy = "; ".join(
        f"{c['notebook']} In [{c['cell']}] ({c['firstLine']!r}) {c['medianSeconds']:.1f} s" for c in cells
    )
    return (
        f"{notebooks} notebooks at the empty notebook's fixed cost (kernel, execution, render) make "
        f"{notebooks:.2f}x on their own; their cells add {(total_s - notebooks * floor_s) / floor_s:.2f}x. "
        f"Heaviest cells: {heavy}"
    )


def bench_report(s: Settings) -> dict[str, object]:
    """5. `make report` in total and per notebook, beside one empty notebook executed and rendered."""
    totals, floors, runs = [], [], []
    per_notebook: dict[str, list[float]] = {}
    # Unmeasured warm-up: bytecode and matplotlib's font cache exist on a warm environment.
    timed(warm_command(), "the warm-up")
    for _ in range(s.reports):
        with tempfile.TemporaryDirectory(prefix="wismo-bench-report-") as out:
            command = (
                notebooks_command(s.report_notebooks, out)
                if s.report_notebooks
                else [interpreter(), "-m", "wismo", "report", "--out", out]
            )
            totals.append(timed(command, "wismo report"))
            runs.append(papermill_durations(Path(out)))
        for name, notebook in runs[-1].items():
            per_notebook.setdefault(name, []).append(notebook["seconds"])
        with tempfile.TemporaryDirectory(prefix="wismo-bench-floor-") as scratch:
            empty = write_empty_notebook(scratch)
            floors.append(timed(notebooks_command([empty], Path(scratch) / "out"), "the empty-notebook floor"))
    floor = summary(floors, unit="s", digits=3)
    total = summary(totals, unit="s", digits=3)
    what = "make report (wismo report)" if not s.report_notebooks else "report.build of the chosen notebooks"
    figures = [
        figure("floor: one empty notebook, executed and rendered", floor, None),
        figure(f"{what}, {len(per_notebook)} notebooks, total", total, floor["median"]),
    ]
    for name, samples in per_notebook.items():
        figures.append(figure(f"{name}: execution (papermill)", summary(samples, unit="s", digits=3), floor["median"]))
    cells = heaviest_cells(runs)
    return {
        "title": "5. notebooks and make report (warm environment)",
        "figures": figures,
        "runs": s.reports,
        "notebooks": list(per_notebook),
        "heaviestCells": cells,
        "targets": [
            check_ratio(
                "make report, times one empty notebook",
                total["median"] * 1000,
                floor["median"] * 1000,
                lambda: (
                    f"{_explain_total(per_notebook, total['median'])}. "
                    + _explain_ratio(len(per_notebook), cells, total["median"], floor["median"])
                ),
            ),
        ],
    }
