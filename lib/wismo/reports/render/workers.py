"""The notebooks of a build executed one at a time in this process, or on a pool of forked worker processes, each
reported as it finishes; what finished, what failed and what never ran is kept for the index of a failed build."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wismo.core import processes
from wismo.core.errors import InputError
from wismo.core.progress import bar, say
from wismo.reports.render.index_page import Rendered

JOBS_ENV = "WISMO_REPORT_JOBS"
Task = Callable[
    [Path, Path, dict[str, object] | None], Rendered
]  # build_one: a notebook, the output folder, the parameters


@dataclass
class Progress:
    """What a build has done so far: each finished notebook's Rendered, the notebooks that failed with their
    errors (the first failure first) and those never started."""

    done: dict[Path, Rendered] = field(default_factory=dict)
    failed: list[tuple[Path, BaseException]] = field(default_factory=list)
    not_run: list[Path] = field(default_factory=list)


def jobs_wanted(jobs: int | str | None = None) -> int:
    """How many notebooks run at once: `jobs` if given, else WISMO_REPORT_JOBS, else the cores this process may use."""
    if jobs is None:
        jobs = (
            os.environ.get(JOBS_ENV)
            or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count())
            or 1
        )
    try:
        count = int(jobs)
    except (TypeError, ValueError):
        count = 0
    if count < 1:
        raise InputError(
            f"the number of notebooks run at once must be a whole number of at least 1, not {jobs!r} "
            f"(from --jobs or {JOBS_ENV})."
        )
    return count


def pool(jobs: int) -> ProcessPoolExecutor:
    """Worker processes, forked where the platform allows: they inherit papermill and nbconvert already imported.
    Ctrl-C is for this process to act on (it stops the workers itself), and a worker dies with this process, even
    when it is killed (processes.as_worker)."""
    context = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    return ProcessPoolExecutor(
        max_workers=jobs, mp_context=context, initializer=processes.as_worker, initargs=(os.getpid(),)
    )


def report_done(progress: Any, rendered: Rendered, out: Path) -> None:
    """Advance the bar and say, at once, where one notebook's pages went."""
    progress.update(1)
    say(
        progress,
        f"{rendered.executed.name}: executed in {rendered.duration_s:.1f} s -> "
        f"{rendered.reader.relative_to(out)}, {rendered.html.relative_to(out)}",
    )


def one_at_a_time(
    task: Task, paths: list[Path], out: Path, parameters: dict[str, object] | None, record: Progress
) -> None:
    """Every notebook in this process, in order (no pool to start, which keeps the one-notebook floor what it was);
    the first failure is recorded and raised."""
    with bar(len(paths), "reports", unit="notebook") as progress:
        for k, path in enumerate(paths):
            progress.set_postfix_str(path.stem)
            try:
                record.done[path] = task(path, out, parameters)
            except Exception as exc:
                record.failed.append((path, exc))
                record.not_run.extend(paths[k + 1 :])
                raise
            report_done(progress, record.done[path], out)


def in_parallel(
    task: Task,
    paths: list[Path],
    order: list[Path],
    out: Path,
    jobs: int,
    parameters: dict[str, object] | None,
    record: Progress,
) -> None:
    """Every notebook on a pool of `jobs` processes, started in `order`, each reported as it finishes; on the first
    failure the queued ones are cancelled, the running ones finish (recorded too), and that failure is raised."""
    import nbconvert  # noqa: F401  (imported once here, inherited by every forked worker)

    workers = pool(jobs)
    try:
        # Submitted (so forked) before the progress bar exists: no bar thread is copied into a worker.
        futures: dict[Future[Rendered], Path] = {workers.submit(task, p, out, parameters): p for p in order}
        with bar(len(paths), "reports", unit="notebook") as progress:
            pending = set(futures)
            while pending:
                # FIRST_COMPLETED, not FIRST_EXCEPTION: the latter waits for all of them when none fails, and the bar
                # and every notebook's line would arrive together at the end.
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in sorted(finished, key=lambda f: paths.index(futures[f])):
                    if (error := f.exception()) is not None:
                        record.failed.append((futures[f], error))
                    else:
                        record.done[futures[f]] = f.result()
                        report_done(progress, record.done[futures[f]], out)
                if record.failed:
                    break
        if record.failed:
            record.not_run.extend(p for f, p in futures.items() if f in pending and f.cancel())
            _finish_running(futures, pending, record)
            raise record.failed[0][1]
    finally:
        # After an interrupt the workers are gone already (stopped with every process below this one).
        workers.shutdown(wait=True, cancel_futures=True)


def _finish_running(futures: dict[Future[Rendered], Path], pending: set[Future[Rendered]], record: Progress) -> None:
    """Wait for the notebooks still running when one failed, recording each as done or failed."""
    for f in wait(f for f in pending if not f.cancelled()).done:
        if (error := f.exception()) is not None:
            record.failed.append((futures[f], error))
        else:
            record.done[futures[f]] = f.result()
