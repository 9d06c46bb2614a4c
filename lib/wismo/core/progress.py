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
