"""Running a probe in a fresh interpreter: a bench module that prints its figures as one JSON line, or any
command whose wall time is the figure."""

from __future__ import annotations

import json
import subprocess
import time
from typing import Any, cast

from wismo.core import processes


def probe(
    module: str, *args: str, env: dict[str, str] | None = None, cwd: str | None = None, timeout_s: float = 600
) -> dict[str, Any]:
    """Run `python -m wismo.bench.<module> ARGS` and return the JSON object on the last line it prints."""
    done = subprocess.run(
        [processes.interpreter(), "-m", f"wismo.bench.{module}", *args],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env=env,
        cwd=cwd,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the probe wismo.bench.{module} {' '.join(args)} failed: {done.stderr[-1500:]}")
    return cast("dict[str, object]", json.loads(done.stdout.strip().splitlines()[-1]))


def timed(command: list[str], what: str, timeout_s: float = 1800) -> float:
    """Run a command to completion; its wall time in seconds, or an error quoting its stderr."""
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed: {done.stderr[-1500:]}")
    return elapsed
