"""Progress bars for long work: a text bar on stderr in a terminal, a widget in a notebook a person runs, and none in
a notebook the report build runs (its pages show results, not a bar's last state)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import cast

from tqdm import tqdm

from wismo.core.paths import BUILD_ENV


def in_notebook() -> bool:
    """Whether this process is a notebook's kernel (IPython's kernel shell), where a widget can be shown."""
    shell = sys.modules.get("IPython")
    ipython = shell.get_ipython() if shell is not None else None
    return type(ipython).__name__ == "ZMQInteractiveShell"


def _bar_class() -> type[tqdm]:
    """tqdm's widget bar in a notebook's kernel (tqdm.notebook, on ipywidgets), its text bar anywhere else."""
    if in_notebook():
        from tqdm.notebook import tqdm as widget

        return cast("type[object]", widget)
    return cast("type[object]", tqdm)


@contextmanager
def bar(total: int, label: str, unit: str = "case") -> Iterator[tqdm]:
    """A progress bar of `total` steps: a widget in a notebook run by hand, text on stderr in a terminal, and
    disabled in a notebook the report build runs."""
    built = bool(os.environ.get(BUILD_ENV)) and in_notebook()
    kind = _bar_class()
    options: dict[str, object] = {"total": total, "desc": label, "unit": unit, "disable": built}
    if kind is tqdm:
        options |= {"file": sys.stderr, "dynamic_ncols": True, "mininterval": 0.2}
    progress = kind(**options)
    try:
        yield progress
    finally:
        progress.close()


def say(progress: tqdm, line: str) -> None:
    """Print one line above the bar, on the bar's own stream, and flush it at once: piped (`2>&1 | cat`) or sent to
    a file, the line arrives when it is said, not when a buffer fills or the work ends."""
    # tqdm.write alone prints to stdout, which is block-buffered when it is not a terminal.
    progress.write(line, file=progress.fp)
    progress.fp.flush()
