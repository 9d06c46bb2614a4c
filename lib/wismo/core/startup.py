"""How a wismo command starts fast: its imports run with the cyclic garbage collector paused."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager


def started_as(command: str) -> bool:
    """Whether this process was started as `wismo COMMAND`, not a program calling that command's code."""
    return sys.argv[1:2] == [command]


@contextmanager
def collector_paused(active: bool = True) -> Iterator[None]:
    """Run the block with the cyclic garbage collector off; then, if it was on, freeze what the block built and turn
    it back on. Not `active`: the block runs as it is.

    Importing the MCP SDK builds tens of thousands of objects that live as long as the process, and the collector ran
    over them again and again as they were made (what that cost a server's start: the README's server-start figures).
    Frozen, later collections skip them; the little cyclic garbage the block left stays with them (687 objects in a
    server's start). Reference counting, which frees everything else, is untouched. Not for a program that calls a
    command's code: it would freeze that program's own objects (started_as)."""
    was_on = gc.isenabled()
    if active:
        gc.disable()
    try:
        yield
    finally:
        if active and was_on:
            gc.freeze()
            gc.enable()
