"""Floors: separate processes that do nothing but move the bytes, measured in the same run as what they floor.

A JSON-lines echo over a pipe, an HTTP/1.1 echo on 127.0.0.1 (both run `python -m wismo.bench.echo`), an
interpreter that answers one line, and one empty notebook executed and rendered through the report machinery.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path

from wismo.bench.procfs import cpu_ms, per_call
from wismo.core.processes import interpreter, piped
from wismo.mcp.client.process import DEVNULL, start
from wismo.mcp.client.raw import HttpConnection, read_line


def echo_command(mode: str, *modules: str) -> list[str]:
    """The command of the echo process in `mode` (see wismo.bench.echo)."""
    return [interpreter(), "-m", "wismo.bench.echo", mode, *modules]


class _Echo(ABC):
    """An echo process: time round trips through it, and its CPU per round trip from /proc."""

    proc: subprocess.Popen[bytes]

    @abstractmethod
    def round_trip(self, payload: bytes) -> float:
        """Send one payload and read it back; the elapsed ms."""

    def measure(self, payload: bytes, warmup: int, calls: int) -> tuple[list[float], float | None]:
        """After `warmup` round trips, `calls` timed ones: the samples (ms) and the echo's CPU ms per call."""
        for _ in range(warmup):
            self.round_trip(payload)
        before = cpu_ms(self.proc.pid)
        samples = [self.round_trip(payload) for _ in range(calls)]
        return samples, per_call(before, cpu_ms(self.proc.pid), calls)

    @abstractmethod
    def close(self) -> None:
        """Stop the echo process."""

    def __enter__(self) -> _Echo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class PipeEcho(_Echo):
    """Echoes JSON lines over its stdin and stdout: the floor of a stdio round trip."""

    def __init__(self) -> None:
        self.proc = start(echo_command("pipe"), os.environ, None)

    def round_trip(self, payload: bytes) -> float:
        """Write one line, read it back; the elapsed ms."""
        started = time.perf_counter()
        piped(self.proc.stdin).write(payload)
        piped(self.proc.stdin).flush()
        read_line(piped(self.proc.stdout))
        return (time.perf_counter() - started) * 1000

    def close(self) -> None:
        """End its input and wait for it."""
        piped(self.proc.stdin).close()
        self.proc.wait(10)
        piped(self.proc.stdout).close()


class HttpEcho(_Echo):
    """Echoes HTTP/1.1 POST bodies on 127.0.0.1 over one kept-alive connection: the floor of an HTTP round trip."""

    def __init__(self) -> None:
        self.proc = start(echo_command("http"), os.environ, None, stdin=DEVNULL)
        self.conn = HttpConnection(int(read_line(piped(self.proc.stdout))))

    def round_trip(self, payload: bytes) -> float:
        """POST one JSON body and read the whole response; the elapsed ms."""
        started = time.perf_counter()
        self.conn.post(payload.strip())
        return (time.perf_counter() - started) * 1000

    def close(self) -> None:
        """Close the connection; the echo exits when it sees that."""
        self.conn.close()
        self.proc.wait(10)
        piped(self.proc.stdout).close()


def echo_for(transport: str) -> _Echo:
    """The echo floor of a transport: 'stdio' or 'http'."""
    return PipeEcho() if transport == "stdio" else HttpEcho()


def echo_name(transport: str) -> str:
    """What the echo floor of a transport is, in words."""
    return "raw JSON-lines echo over a pipe" if transport == "stdio" else "raw HTTP/1.1 echo on 127.0.0.1"


EMPTY_NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# empty\n"]},
        {
            "cell_type": "code",
            "execution_count": None,
            "metadata": {"tags": ["parameters"]},
            "outputs": [],
            "source": ["output_dir = ''\n"],
        },
    ],
    "metadata": {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    },
    "nbformat": 4,
    "nbformat_minor": 5,
}


def write_empty_notebook(folder: str | Path) -> Path:
    """Write the empty notebook (a title and a parameters cell) into `folder`; its path."""
    path = Path(folder) / "empty.ipynb"
    path.write_text(json.dumps(EMPTY_NOTEBOOK), encoding="utf-8")
    return path


def notebooks_command(notebooks: Sequence[str | Path], out: str | Path) -> list[str]:
    """The command that executes and renders just these notebooks into `out`, as `wismo report` does for all."""
    return [interpreter(), "-m", "wismo.bench.build_notebooks", str(out), *map(str, notebooks)]


def warm_command() -> list[str]:
    """The command that imports what the notebooks use, so that caches exist before anything is timed."""
    return [interpreter(), "-m", "wismo.bench.build_notebooks", "--warm"]
