"""How a wismo command starts and ends fast: its imports run with the cyclic garbage collector paused, and a command
that is done ends without the interpreter's teardown."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import NoReturn


def started_as(command: str) -> bool:
    """Whether this process was started as `wismo COMMAND` (the wismo script, or `python -m wismo`), not a program."""
    # A program calling a command's code may well have that command as its own first argument: the entry point tells.
    entry = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path()
    wismo = entry.name == "wismo" or (entry.name == "__main__.py" and entry.parent.name == "wismo")
    return wismo and sys.argv[1:2] == [command]


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


def exit_now(code: int) -> NoReturn:
    """End this process at once with `code`, its stdout and stderr flushed, skipping the interpreter's teardown."""
    # For a command started as itself whose work is done and whose files are closed: tearing down an interpreter that
    # has imported the SDK and loaded the encodings takes about 300 ms, longer than some commands' own work, and frees
    # nothing the operating system would not. atexit handlers and finalizers are skipped with it: nothing may be left
    # for them to do.
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # a reader that has gone, a stream already closed
            stream.flush()
    os._exit(code)
