"""Progress bars for long work: in the terminal on stderr, and as a widget-free bar in notebooks."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from tqdm import tqdm


@contextmanager
def bar(total: int, label: str, unit: str = "case") -> Iterator[tqdm]:
    """A progress bar of `total` steps; text-only so it renders in terminals, notebooks and HTML alike."""
    progress = tqdm(total=total, desc=label, unit=unit, file=sys.stderr, dynamic_ncols=True, mininterval=0.2)
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
