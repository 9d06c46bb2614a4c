"""`make report`: execute every notebook with papermill, render a reader's and a full HTML version, write an index.

Notebooks run in parallel, each in its own worker process with its own kernel, as many at once as there are
cores (or --jobs, or WISMO_REPORT_JOBS); each worker also renders its notebook, and the index is written once
every notebook has been executed and rendered, in the notebooks' order. All of it is written into a staging folder
beside the output folder, which replaces the previous build only once every notebook succeeded (staging.py).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from papermill.exceptions import PapermillExecutionError

from wismo.core import processes
from wismo.core.environ import temporary_env
from wismo.core.errors import WismoError
from wismo.core.paths import ARTICLE_STUDY, BUILD_ENV, NOTEBOOKS, OUTPUTS, output_dir
from wismo.reports.analyses import measurements
from wismo.reports.render import figures, index_page
from wismo.reports.render.index_page import Rendered
from wismo.reports.render.staging import Staged, Staging, sentence
from wismo.reports.render.versions import to_html
from wismo.reports.render.workers import JOBS_ENV, Progress, in_parallel, jobs_wanted, one_at_a_time

__all__ = [
    "JOBS_ENV",
    "NotebookFailed",
    "Rendered",
    "build",
    "execute",
    "jobs_wanted",
    "render",
    "shared_measurements",
    "to_html",
    "write_index",
]

KERNEL = "python3"
EXECUTION_TIMEOUT_S = 600
START_TIMEOUT_S = 120
# The kernel's only start-up warning is that it talks plain TCP on localhost; it would break the progress bar.
KERNEL_ARGUMENTS = ["--IPKernelApp.log_level=ERROR"]
MEASUREMENTS = ".measurements"  # under the output folder: the generated orders measured once per build
EQUIVALENCE = "01-equivalence"  # the report that shows make fuzz's results where a build has them
SOCKETS_ENV = "WISMO_KERNEL_SOCKETS"  # the build's folder for its kernels' sockets and connection files
# A fresh clone's build has no last run to order by: these, the longest notebooks by far, start first; started by
# name, 04 began third and ended the build alone on one core (docs/reports.md gives the figures).
HEAVIEST_FIRST = ("04-scale", "02-context-cost")


class NotebookFailed(WismoError, PapermillExecutionError):  # type: ignore[misc]  # papermill ships no types
    """Papermill's error for a failed cell, with the notebook it happened in named first; `staged`, once build()
    raises it, is the staging folder it left for the reader (staging.Staged)."""

    staged: Staged | None = None

    def __init__(
        self,
        notebook: str,
        cell_index: object,
        exec_count: object,
        source: object,
        ename: object,
        evalue: object,
        traceback: object,
    ) -> None:
        super().__init__(cell_index, exec_count, source, ename, evalue, traceback)
        self.notebook = notebook
        # args rebuild the error on the far side of a process boundary (pickle calls the class with them).
        self.args = (notebook, cell_index, exec_count, source, ename, evalue, traceback)

    def __str__(self) -> str:
        return (
            f"notebook {self.notebook} failed at In [{self.exec_count}]: {self.ename}: {self.evalue}"
            + super().__str__()
        )


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


def for_study(path: Path, study: Any) -> object:
    """The notebook to execute for a study: without the cells whose need (metadata wismo.needs, one of the study's
    NEEDS) the study does not declare, each left-out run of them replaced by the sentence its first cell gives
    (wismo.leftOut) and why it is left out, so the reader is told what is not there and what would bring it."""
    import nbformat

    from wismo.studies.declaration import NEEDS

    nb = nbformat.read(path, as_version=4)
    cells = []
    for cell in nb.cells:
        need = cell.metadata.get("wismo", {}).get("needs")
        if need is None or study.meets(need):
            cells.append(cell)
            continue
        said = cell.metadata.get("wismo", {}).get("leftOut")
        if said:
            note = nbformat.v4.new_markdown_cell(f"*{said} It is left out because {NEEDS[need]}.*")
            note.id = f"{cell.id}-left-out"
            cells.append(note)
    nb.cells = cells
    return nb


def _ipc_kernel_manager() -> type:
    """A kernel manager whose kernels talk over Unix sockets in a private temporary folder, not TCP: a TCP port the
    client picks is bound by the kernel only later, and another process may take it in between (seen here as
    "Address already in use" from a kernel's heartbeat when many notebooks start at once)."""
    from jupyter_client.manager import AsyncKernelManager

    # The asynchronous manager, as nbclient's own default: the synchronous one runs its coroutines on a thread of
    # its own, which a forked build worker inherits the record of but not the thread, and waits for forever.
    class IpcKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs: object) -> None:
            super().__init__(**kwargs)
            self.transport = "ipc"
            # In the build's folder, if any, which the build removes even when it has to kill the kernel.
            self._sockets = tempfile.mkdtemp(prefix="wismo-kernel-", dir=os.environ.get(SOCKETS_ENV) or None)
            self.ip = os.path.join(self._sockets, "kernel")
            self.connection_file = os.path.join(self._sockets, "kernel.json")

        async def _async_cleanup_resources(self, restart: bool = False) -> None:
            await super()._async_cleanup_resources(restart)
            if not restart:
                shutil.rmtree(self._sockets, ignore_errors=True)

    return IpcKernelManager


def execute(path: Path, out: Path, parameters: dict[str, Any] | None = None) -> Path:
    """Run one notebook headless with papermill into out/notebooks/ (for the study named in the parameters, if
    any); raises if any cell fails."""
    import papermill

    from wismo.studies.declaration import load

    target = out / "notebooks" / path.name
    target.parent.mkdir(parents=True, exist_ok=True)
    study = load((parameters or {}).get("study") or ARTICLE_STUDY)
    declared = papermill.inspect_notebook(str(path))
    # Only the parameters this notebook declares: the same set is handed to every notebook of a build.
    given = {k: v for k, v in (parameters or {}).items() if k in declared}
    papermill.execute_notebook(
        for_study(path, study),
        str(target),
        parameters={"output_dir": str(out), **given},
        kernel_name=KERNEL,
        cwd=str(path.parent),
        progress_bar=False,
        execution_timeout=EXECUTION_TIMEOUT_S,
        start_timeout=START_TIMEOUT_S,
        extra_arguments=KERNEL_ARGUMENTS,
        kernel_manager_class=_ipc_kernel_manager(),
    )
    return target


def ran(executed: Path) -> tuple[str, float]:
    """When the executed notebook finished (papermill's end_time, ISO 8601) and how long it took, in seconds."""
    meta = json.loads(executed.read_text(encoding="utf-8")).get("metadata", {}).get("papermill", {})
    return meta.get("end_time") or "", float(meta.get("duration") or 0.0)


def render(path: Path, executed: Path, out: Path, study: object = None) -> Rendered:
    """Both HTML versions of an executed notebook, with the key figures its study declares what they need for read
    from the JSON it wrote (default study: the article's)."""
    from wismo.studies.declaration import load

    title, summary = notebook_info(path)
    nb = json.loads(path.read_text(encoding="utf-8"))
    title = figures.title(nb, out) or title
    found = figures.key_figures(nb, out, path.name, study or load(ARTICLE_STUDY))
    ran_at, duration = ran(executed)
    return Rendered(
        path.stem,
        title,
        summary,
        executed,
        to_html(executed, out, title=title),
        to_html(executed, out, reader=True, title=title),
        ran_at,
        duration,
        found,
    )


def write_index(
    rendered: list[Rendered],
    out: Path,
    title: str | None = None,
    failure: index_page.Failure | None = None,
    intro: str = "",
    left_out: tuple[str, ...] = (),
    study: str | None = None,
) -> Path:
    """outputs/index.html: the study's answer first (where the context-cost report wrote it), then one entry per
    report with its title, what it shows, key figures and links, the reports left out with why (and, for a build
    that stopped, why and what of the failed report was written)."""
    from wismo.reports import hostile, verdict

    target = out / "index.html"
    from wismo.reports.render import charts
    from wismo.studies.declaration import load

    article = study is None or Path(study).resolve() == ARTICLE_STUDY.resolve()
    found = None if failure is not None else verdict.answer(out, os.path.relpath(study) if study else "", article)
    if found is not None:
        charts.use_study(load(study or ARTICLE_STUDY))  # the answer's picture in the study's own colours
    if article and failure is None and any(r.name == EQUIVALENCE for r in rendered):
        left_out = (*left_out, *filter(None, [hostile.left_out(out)]))
    # Written aside and moved into place, so a reader never finds half an index.
    partial = target.with_name(".index.html.partial")
    page = index_page.render(rendered, out, title, failure, intro, left_out, found)
    partial.write_text(page, encoding="utf-8")
    partial.replace(target)
    return target


def build_one(path: Path, out: Path, parameters: dict[str, Any] | None = None) -> Rendered:
    """Execute and render one notebook; a failed cell raises NotebookFailed naming the notebook."""
    try:
        executed = execute(path, out, parameters)
    except PapermillExecutionError as exc:
        raise NotebookFailed(path.name, *exc.args) from None
    except Exception as exc:
        exc.add_note(f"while executing notebook {path.name}")
        raise
    from wismo.studies.declaration import load

    return render(path, executed, out, load((parameters or {}).get("study") or ARTICLE_STUDY))


def _longest_first(paths: list[Path], out: Path) -> list[Path]:
    """The notebooks by their last run's duration, longest first (never run: first, HEAVIEST_FIRST's before the
    others, each group in its order): a long notebook started last would end the build alone on one core. The last
    run is the one in `out`, else the one in the checkout's outputs/."""

    def last(path: Path) -> float:
        for folder in (out, OUTPUTS):
            try:
                return ran(folder / "notebooks" / path.name)[1] or float("inf")
            except (OSError, ValueError):
                continue  # not run there, or left unreadable: only an ordering hint is lost
        return float("inf")

    def hint(path: Path) -> int:
        return HEAVIEST_FIRST.index(path.stem) if path.stem in HEAVIEST_FIRST else len(HEAVIEST_FIRST)

    return sorted(paths, key=lambda p: (-last(p), hint(p)))


@contextmanager
def shared_measurements(out: Path) -> Iterator[Path]:
    """A fresh OUT/.measurements named in WISMO_MEASUREMENTS for as long as the build runs: the kernels inherit it,
    so the notebooks measure the generated orders over MCP once between them in this build (analyses/measurements.py).
    Emptied first: every build measures anew."""
    folder = out / MEASUREMENTS
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    # The kernels also learn that the build asked for this folder: only then may a report write into outputs/.
    with temporary_env(**{measurements.ENV: str(folder), BUILD_ENV: str(out)}):
        yield folder


@contextmanager
def kernel_sockets() -> Iterator[Path]:
    """A private temporary folder for the build's kernels' sockets and connection files, named to the workers in
    WISMO_KERNEL_SOCKETS and removed when the build ends: a kernel stopped by an interrupt removes nothing itself."""
    folder = Path(tempfile.mkdtemp(prefix="wismo-build-"))
    try:
        with temporary_env(**{SOCKETS_ENV: str(folder)}):
            yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _as_far_as_it_ran(path: Path, out: Path) -> list[Path]:
    """A failed notebook's executed copy in `out` and, when it can be rendered (one cut off mid-write cannot), both
    its HTML versions as far as it ran."""
    executed = out / "notebooks" / path.name
    if not executed.is_file():
        return []
    title = notebook_info(path)[0]
    try:
        return [executed, to_html(executed, out, reader=True, title=title), to_html(executed, out, title=title)]
    except Exception:  # the executed copy is still there to read
        return [executed]


def _left_for_the_reader(staging: Staging, record: Progress, paths: list[Path], exc: Exception, title: Any) -> Staged:
    """A failed build's staging folder made readable: the failed notebook rendered as far as it ran, and an index of
    the reports written and of the one that failed, with why in one sentence."""
    failed = record.failed[0][0] if record.failed else None
    said = sentence(exc, failed.name if failed else None)
    failure = index_page.Failure(said, staging.target, not_run=[p.stem for p in record.not_run])
    if failed is not None:
        failure.name, failure.title = failed.stem, notebook_info(failed)[0]
        failure.pages = _as_far_as_it_ran(failed, staging.folder)
    written = [record.done[p] for p in paths if p in record.done]
    return Staged(staging.folder, write_index(written, staging.folder, title, failure), staging.target, said)


def build(
    notebooks: list[Path] | None = None,
    out: str | Path | None = None,
    jobs: int | str | None = None,
    parameters: dict[str, Any] | None = None,
    title: str | None = None,
    intro: str = "",
    left_out: tuple[str, ...] = (),
) -> list[Rendered]:
    """Execute and render every notebook (default: notebooks/*.ipynb), `jobs` at a time (default: jobs_wanted()),
    with the same `parameters` each, into a staging folder beside `out`, write the index (headed `title`), then
    replace what `out` held of the previous build (staging.Staging). A failure is raised as it was, carrying `staged`
    (staging.Staged: the staging folder, left with an index of what was written and why it stopped); SIGINT or
    SIGTERM stops every kernel and server, removes the staging folder and raises processes.Interrupted. Either way
    `out` is left as it was."""
    target = output_dir(out)
    paths = list(notebooks or sorted(NOTEBOOKS.glob("*.ipynb")))
    workers = min(jobs_wanted(jobs), len(paths))
    record = Progress()
    staging = Staging.beside(target)
    with processes.interruptible(target, cleanup=staging.discard) as guard:
        staging.make()
        try:
            with shared_measurements(staging.folder), kernel_sockets():
                if workers > 1:
                    order = _longest_first(paths, target)
                    in_parallel(build_one, paths, order, staging.folder, workers, parameters, record)
                else:
                    one_at_a_time(build_one, paths, staging.folder, parameters, record)
            rendered = [record.done[p] for p in paths]
            write_index(rendered, staging.folder, title, None, intro, left_out, (parameters or {}).get("study"))
            with guard.too_late():  # begun, the replace is finished: a few renames
                staging.replace()
        except Exception as exc:
            try:
                # Whatever the exception, it carries the folder (cli.parsing reads it back with getattr).
                setattr(exc, "staged", _left_for_the_reader(staging, record, paths, exc, title))  # noqa: B010
            except Exception as unwritten:  # the failure is still the one to raise
                exc.add_note(f"the staging folder {staging.folder} could not be indexed: {unwritten}")
            raise
    return [
        dataclasses.replace(
            r, executed=staging.rebased(r.executed), html=staging.rebased(r.html), reader=staging.rebased(r.reader)
        )
        for r in rendered
    ]
